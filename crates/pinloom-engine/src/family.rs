//! The wire families a model may speak: what differs between providers in how a request is
//! shaped and what an image costs is decided per family.

/// The four wire families Pinloom speaks; the providers crate has one adapter for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderFamily {
    /// OpenAI Chat Completions and everything shaped like it (OpenRouter, Mistral, LM Studio,
    /// vLLM, llama.cpp server).
    OpenAiCompatible,
    /// Anthropic Messages.
    Anthropic,
    /// Gemini generateContent.
    Gemini,
    /// Ollama's native `/api/chat`.
    Ollama,
}
