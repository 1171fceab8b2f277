//! The model a plan is made for: its window, its reserve, and how its provider wants messages.

// Named from here too, where it has always been named: a profile says which family it speaks.
pub use crate::family::ProviderFamily;
use crate::tokens::{Calibration, Tokenizer};

/// The message-order rules a provider or model template enforces (engine_anchors §2–3). They are
/// data, not code per provider, because they differ by model inside one family (Mistral inside
/// OpenAI-compatible, Gemma inside Gemini).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    /// The rules a family enforces by default.
    pub fn for_family(family: ProviderFamily) -> RoleRules {
        let first_user = matches!(family, ProviderFamily::Anthropic | ProviderFamily::Gemini);
        RoleRules {
            first_user,
            last_user_or_tool: false,
            assistant_between_tool_and_user: false,
            strict_alternation: false,
        }
    }

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
    /// (see [`crate::images::sees_images`] for the default).
    pub sees_images: bool,
}

impl ModelProfile {
    /// Seed 004's default for models it does not know: a 100,000-token window with 8,192 reserved,
    /// counted with a conservative estimate.
    pub fn unknown(family: ProviderFamily, model: &str) -> ModelProfile {
        ModelProfile {
            model: model.to_owned(),
            family,
            context_window: 100_000,
            reserve: 8_192,
            native_system: true,
            tokenizer: default_tokenizer(family),
            system_prompt: String::new(),
            role_rules: RoleRules::for_family(family),
            message_overhead: 4,
            cache_breakpoints: family == ProviderFamily::Anthropic,
            sees_images: crate::images::sees_images(family, model),
        }
    }

    /// Seed 004's shipped per-model budgets, when `model` is one of them; the unknown default
    /// otherwise. Editable afterwards: profiles are data.
    pub fn shipped(family: ProviderFamily, model: &str) -> ModelProfile {
        let mut profile = ModelProfile::unknown(family, model);
        let known: &[(&str, u32, u32)] = &[
            ("claude-sonnet-4", 200_000, 8_192),
            ("claude-opus", 200_000, 8_192),
            ("gpt-4o", 128_000, 4_096),
            ("gemini-2.0", 1_000_000, 8_192),
            ("mistral-large", 128_000, 4_096),
        ];
        if let Some((_, window, reserve)) =
            known.iter().find(|(prefix, ..)| model.starts_with(prefix))
        {
            profile.context_window = *window;
            profile.reserve = *reserve;
        }
        if model.starts_with("gpt-4o") || model.starts_with("gpt-4.1") || model.starts_with("gpt-5")
        {
            profile.tokenizer = Tokenizer::O200k;
        } else if model.starts_with("gpt-4") || model.starts_with("gpt-3.5") {
            profile.tokenizer = Tokenizer::Cl100k;
        }
        if model.starts_with("mistral") {
            profile.role_rules = RoleRules::mistral();
        }
        if model.starts_with("gemma") {
            profile.native_system = false;
            profile.role_rules = RoleRules::strict();
        }
        if model.starts_with("o1-mini") || model.starts_with("o1-preview") {
            profile.native_system = false;
        }
        profile
    }
}

fn default_tokenizer(family: ProviderFamily) -> Tokenizer {
    match family {
        ProviderFamily::OpenAiCompatible => Tokenizer::O200k,
        ProviderFamily::Anthropic => Tokenizer::Estimate(Calibration::ANTHROPIC_START),
        ProviderFamily::Gemini => Tokenizer::Estimate(Calibration::GEMINI_START),
        ProviderFamily::Ollama => Tokenizer::Estimate(Calibration::LOCAL_START),
    }
}
