//! The model a plan is made for: its window, its reserve, and how its provider wants messages.

use crate::tokens::Tokenizer;

/// The four wire families Pinloom speaks: each has a file of its rules here (`family/`) and one
/// of its transport in the providers crate.
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

/// The message-order rules a provider or model template enforces (engine_anchors §2–3). They are
/// data, not code per provider, because they differ by model inside one family (Mistral inside
/// OpenAI-compatible, Gemma inside Gemini).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RoleRules {
    /// The first non-system message must be a user message (Anthropic, Gemini, Gemma, Mistral).
    pub first_user: bool,
    /// The last message must be user or tool, or an assistant marked as a prefix (Mistral).
    pub last_user_or_tool: bool,
    /// An assistant message must sit between a tool message and the next user message (Mistral:
    /// "Unexpected role 'user' after role 'tool'").
    pub assistant_between_tool_and_user: bool,
    /// Roles must strictly alternate user/assistant (Gemma templates): tool parts become text and
    /// every same-role run is merged.
    pub strict_alternation: bool,
}

impl RoleRules {
    /// Mistral's rules on its OpenAI-compatible endpoint.
    pub fn mistral() -> RoleRules {
        RoleRules {
            first_user: true,
            last_user_or_tool: true,
            assistant_between_tool_and_user: true,
            strict_alternation: false,
        }
    }

    /// A template that enforces strict alternation (Gemma).
    pub fn strict() -> RoleRules {
        RoleRules {
            first_user: true,
            last_user_or_tool: false,
            assistant_between_tool_and_user: false,
            strict_alternation: true,
        }
    }
}

/// One model as the engine sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelProfile {
    /// The provider's model id (written into request bodies).
    pub model: String,
    /// The wire family.
    pub family: ProviderFamily,
    /// The context window in tokens.
    pub context_window: u32,
    /// Tokens reserved for the reply.
    pub reserve: u32,
    /// Whether the model takes a system prompt in its native field; if not, the system context
    /// is injected into the first user message.
    pub native_system: bool,
    /// The counter plans for this model are measured with.
    pub tokenizer: Tokenizer,
    /// The agent-level system prompt.
    pub system_prompt: String,
    /// The message-order rules.
    pub role_rules: RoleRules,
    /// Tokens each message costs beyond its content (role markers, separators). OpenAI's cookbook
    /// counts 3 per message; 4 leaves room for a name or a merge separator.
    pub message_overhead: u32,
    /// Mark the stable prefix of each request for the provider's prompt cache (Anthropic's
    /// `cache_control` breakpoints: the end of the system text and the newest message before
    /// the prompt). On by default for Anthropic, whose cache is opt-in; the other families
    /// cache prefixes on their own.
    pub cache_breakpoints: bool,
    /// Whether the model takes images; images in a plan for one that does not are left out
    /// (see [`crate::family::FamilyRules::sees_images`] for the default).
    pub sees_images: bool,
}
