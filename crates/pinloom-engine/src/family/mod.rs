//! The wire families: everything that differs between providers in planning a request and in
//! shaping its body is decided here, a file per family (`openai.rs`, `anthropic.rs`,
//! `gemini.rs`, `ollama.rs`) behind one trait, [`FamilyRules`], and one table,
//! [`ProviderFamily::rules`]. Adding a family is a file here, a file of its transport in the
//! providers crate (`pinloom-providers/src/family/`), and a row in each table.
//!
//! What is shared by the bodies is `parts.rs`; the provider-neutral request they are made from is
//! `render.rs`'s.

mod anthropic;
mod gemini;
mod ollama;
mod openai;
mod parts;

use serde_json::Value;

// Named from here too: the families are what this folder is about.
pub use crate::profile::ProviderFamily;

use crate::plan::ContextPlan;
use crate::profile::{ModelProfile, RoleRules};
use crate::render::{ChatRequest, chat_request};
use crate::snapshot::{Snapshot, ToolDefinition};
use crate::tokens::Tokenizer;

/// What a wire family decides: for planning (its message-order rules, how its models are counted
/// by default, what an image costs and which models see one) and for its request's body.
pub trait FamilyRules: Sync {
    /// The message-order rules the family enforces by default.
    fn role_rules(&self) -> RoleRules;

    /// How a model of the family is counted when nothing better is known of it.
    fn default_tokenizer(&self) -> Tokenizer;

    /// Whether its requests mark where a provider may cache the prefix.
    fn marks_cache_breakpoints(&self) -> bool {
        false
    }

    /// The tokens an image of `width` × `height` pixels takes in a request, by the rule the
    /// provider documents: from the image's size in pixels, not from its bytes.
    fn image_tokens(&self, width: u32, height: u32) -> u32;

    /// Whether `model` takes images, as far as its name tells.
    fn sees_images(&self, model: &str) -> bool;

    /// `request`'s body as JSON text, written straight from the request's borrowed text (no
    /// intermediate `Value` tree); `tools` is the list `request.tools` indexes into.
    fn body_text(
        &self,
        request: &ChatRequest,
        tools: &[ToolDefinition],
        profile: &ModelProfile,
    ) -> String;
}

impl ProviderFamily {
    /// The family's rules: the one table of them.
    pub fn rules(self) -> &'static dyn FamilyRules {
        match self {
            ProviderFamily::OpenAiCompatible => &openai::OpenAi,
            ProviderFamily::Anthropic => &anthropic::Anthropic,
            ProviderFamily::Gemini => &gemini::Gemini,
            ProviderFamily::Ollama => &ollama::Ollama,
        }
    }
}

// A profile's defaults come from its family's rules.
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
            tokenizer: family.rules().default_tokenizer(),
            system_prompt: String::new(),
            role_rules: family.rules().role_rules(),
            message_overhead: 4,
            cache_breakpoints: family.rules().marks_cache_breakpoints(),
            sees_images: family.rules().sees_images(model),
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

/// The request body for the profile's wire family, as JSON text, written straight from the
/// request's borrowed text (no intermediate `Value` tree: W3's cost is this body).
pub fn request_body(plan: &ContextPlan, snapshot: &Snapshot, profile: &ModelProfile) -> String {
    let request = chat_request(plan, snapshot, profile);
    // Serializing the families' structs cannot fail: every map key is a string.
    profile.family.rules().body_text(&request, &snapshot.tools, profile)
}

/// The body of `request` in the profile's wire family; `tools` is the list `request.tools`
/// indexes into. The providers crate sends it, adding only transport fields. The same JSON as
/// [`request_body`] (keys in order), as a value to add fields to.
pub fn wire_body(request: &ChatRequest, tools: &[ToolDefinition], profile: &ModelProfile) -> Value {
    // Read back from the text, so the two can never differ: a send is not the hot path a plan's
    // preview is, and the value's keys come out sorted as the text's are written.
    serde_json::from_str(&profile.family.rules().body_text(request, tools, profile))
        .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_provider_counts_by_its_documented_rule() {
        use ProviderFamily::*;
        // OpenAI's worked examples: 1024×1024 → 768×768, 4 tiles, 765 tokens; 2048×4096 →
        // 1024×2048 → 768×1536, 6 tiles, 1105 tokens; a small image is one tile, 255.
        assert_eq!(OpenAiCompatible.rules().image_tokens(1024, 1024), 765);
        assert_eq!(OpenAiCompatible.rules().image_tokens(2048, 4096), 1105);
        assert_eq!(OpenAiCompatible.rules().image_tokens(200, 100), 255);
        // Anthropic: 1000×1000 is under both limits, 1,000,000 / 750 = 1334; a large photo is
        // scaled to about 1.15 megapixels, about 1,534 tokens.
        assert_eq!(Anthropic.rules().image_tokens(1000, 1000), 1334);
        let large = Anthropic.rules().image_tokens(4000, 3000);
        assert!((1530..=1540).contains(&large), "{large}");
        // Gemini: small images are 258; 1000×800 is 2×2 tiles.
        assert_eq!(Gemini.rules().image_tokens(384, 300), 258);
        assert_eq!(Gemini.rules().image_tokens(1000, 800), 4 * 258);
        assert_eq!(Ollama.rules().image_tokens(4000, 3000), 576);
    }

    #[test]
    fn vision_is_told_by_the_model_name() {
        use ProviderFamily::*;
        assert!(OpenAiCompatible.rules().sees_images("gpt-4o-mini"));
        assert!(OpenAiCompatible.rules().sees_images("openai/gpt-4.1"));
        assert!(!OpenAiCompatible.rules().sees_images("gpt-3.5-turbo"));
        assert!(!OpenAiCompatible.rules().sees_images("o1-mini"));
        assert!(!OpenAiCompatible.rules().sees_images("o3-mini-2025-01-31"));
        assert!(OpenAiCompatible.rules().sees_images("o3"));
        assert!(OpenAiCompatible.rules().sees_images("o4-mini"));
        assert!(Anthropic.rules().sees_images("claude-sonnet-4-20250514"));
        assert!(!Anthropic.rules().sees_images("claude-2.1"));
        assert!(Gemini.rules().sees_images("gemini-2.0-flash"));
        assert!(Ollama.rules().sees_images("llava:13b"));
        assert!(Ollama.rules().sees_images("gemma3:12b"));
        assert!(!Ollama.rules().sees_images("gemma3:1b"));
        assert!(OpenAiCompatible.rules().sees_images("gemma-3-12b-it-Q4_K_M.gguf"));
        assert!(!OpenAiCompatible.rules().sees_images("gemma-3-1b-it-Q8_0.gguf"));
        assert!(!Ollama.rules().sees_images("llama3.1:8b"));
        assert!(OpenAiCompatible.rules().sees_images("Qwen2.5-VL-7B-Instruct"));
        assert!(!OpenAiCompatible.rules().sees_images("qwen2.5-7b-instruct"));
    }
}
