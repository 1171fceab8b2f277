//! Pinloom's provider adapters: the only crate that talks to the network.
//!
//! Each wire family gets one streaming adapter (the Providers issue builds them); everything that
//! reaches a model goes through here, and nothing here knows about the store.

#![deny(missing_docs)]

/// The wire formats Pinloom speaks. Many providers share one: OpenRouter, Mistral, LM Studio,
/// vLLM and the llama.cpp server all speak OpenAI's chat completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireFamily {
    /// OpenAI's chat completions (and completions, for buffer mode).
    OpenAiCompatible,
    /// Anthropic's Messages API.
    AnthropicMessages,
    /// Google's Gemini `streamGenerateContent`.
    Gemini,
    /// Ollama's native `/api/chat` and `/api/generate`.
    Ollama,
}

impl WireFamily {
    /// Every family, in the order settings list them.
    pub const ALL: [WireFamily; 4] = [
        WireFamily::OpenAiCompatible,
        WireFamily::AnthropicMessages,
        WireFamily::Gemini,
        WireFamily::Ollama,
    ];

    /// The stable name stored in model profiles and shown in exports.
    pub fn name(self) -> &'static str {
        match self {
            WireFamily::OpenAiCompatible => "openai-compatible",
            WireFamily::AnthropicMessages => "anthropic-messages",
            WireFamily::Gemini => "gemini",
            WireFamily::Ollama => "ollama",
        }
    }

    /// The family with this stable name, if any.
    pub fn from_name(name: &str) -> Option<WireFamily> {
        WireFamily::ALL.into_iter().find(|family| family.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::WireFamily;

    #[test]
    fn every_family_round_trips_through_its_stored_name() {
        for family in WireFamily::ALL {
            assert_eq!(WireFamily::from_name(family.name()), Some(family));
        }
        assert_eq!(WireFamily::from_name("openai"), None, "names are exact, not prefixes");
    }
}
