//! The models Pinloom ships defaults for. Seed 004's per-model budgets come first (Claude Sonnet 4
//! and Opus 200,000 / 8,192, GPT-4o 128,000 / 4,096, Gemini 2.0 1,000,000 / 8,192, Mistral Large
//! 128,000 / 4,096); the rest are the published windows of research/engine_anchors.md §3. These
//! are starting points: the Conversation loop stores them as profiles the person edits, and a
//! model not listed gets seed 004's unknown default (100,000 / 8,192).

use pinloom_engine::profile::ModelProfile;
use pinloom_engine::tokens::{Calibration, Tokenizer};

use crate::wire::ProviderId;

/// How a model's tokens are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenizerFamily {
    /// OpenAI's o200k_base, counted exactly.
    O200k,
    /// OpenAI's cl100k_base, counted exactly.
    Cl100k,
    /// Anthropic's (no offline tokenizer): a calibrated estimate.
    Claude,
    /// Google's (no offline tokenizer): a calibrated estimate.
    Gemini,
    /// A local or other model: a calibrated estimate.
    Other,
}

impl TokenizerFamily {
    /// Every family, in the order settings list them.
    pub const ALL: [TokenizerFamily; 5] = [
        TokenizerFamily::O200k,
        TokenizerFamily::Cl100k,
        TokenizerFamily::Claude,
        TokenizerFamily::Gemini,
        TokenizerFamily::Other,
    ];

    /// The stable name stored in model profiles.
    pub fn name(self) -> &'static str {
        match self {
            TokenizerFamily::O200k => "o200k",
            TokenizerFamily::Cl100k => "cl100k",
            TokenizerFamily::Claude => "claude",
            TokenizerFamily::Gemini => "gemini",
            TokenizerFamily::Other => "other",
        }
    }

    /// The family with this stable name, if any.
    pub fn from_name(name: &str) -> Option<TokenizerFamily> {
        TokenizerFamily::ALL.into_iter().find(|family| family.name() == name)
    }

    /// The counter the engine plans with.
    pub fn tokenizer(self) -> Tokenizer {
        match self {
            TokenizerFamily::O200k => Tokenizer::O200k,
            TokenizerFamily::Cl100k => Tokenizer::Cl100k,
            TokenizerFamily::Claude => Tokenizer::Estimate(Calibration::ANTHROPIC_START),
            TokenizerFamily::Gemini => Tokenizer::Estimate(Calibration::GEMINI_START),
            TokenizerFamily::Other => Tokenizer::Estimate(Calibration::LOCAL_START),
        }
    }
}

/// One shipped model: the defaults of its profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogEntry {
    /// Who serves it.
    pub provider: ProviderId,
    /// Its id, or the prefix of its dated ids (`claude-sonnet-4` covers `claude-sonnet-4-20250514`).
    pub model: &'static str,
    /// Its context window in tokens.
    pub context_window: u32,
    /// Tokens kept free for the reply.
    pub reserve: u32,
    /// Whether it takes a system prompt in the provider's native field.
    pub native_system: bool,
    /// Whether it has a completion endpoint (buffer mode).
    pub completion: bool,
    /// How its tokens are counted.
    pub tokenizer: TokenizerFamily,
}

const fn entry(
    provider: ProviderId,
    model: &'static str,
    context_window: u32,
    reserve: u32,
    tokenizer: TokenizerFamily,
) -> CatalogEntry {
    CatalogEntry {
        provider,
        model,
        context_window,
        reserve,
        native_system: true,
        completion: false,
        tokenizer,
    }
}

use ProviderId::{Anthropic, Gemini, Mistral, OpenAi};
use TokenizerFamily::{Cl100k, Claude, O200k};

/// The shipped defaults. Longer ids come before their prefixes (`gpt-4o-mini` before `gpt-4o`),
/// since [`find`] takes the first prefix that matches.
pub const SHIPPED: &[CatalogEntry] = &[
    // Seed 004.
    entry(Anthropic, "claude-sonnet-4", 200_000, 8_192, Claude),
    entry(Anthropic, "claude-opus-4", 200_000, 8_192, Claude),
    entry(OpenAi, "gpt-4o-mini", 128_000, 4_096, O200k),
    entry(OpenAi, "gpt-4o", 128_000, 4_096, O200k),
    entry(Gemini, "gemini-2.0-flash", 1_000_000, 8_192, TokenizerFamily::Gemini),
    entry(Mistral, "mistral-large", 128_000, 4_096, TokenizerFamily::Other),
    // Published windows (engine_anchors §3).
    entry(Anthropic, "claude-haiku-4-5", 200_000, 8_192, Claude),
    entry(OpenAi, "gpt-4.1", 1_047_576, 8_192, O200k),
    entry(OpenAi, "gpt-5", 272_000, 16_384, O200k),
    entry(OpenAi, "o3-mini", 200_000, 16_384, O200k),
    entry(OpenAi, "o3", 200_000, 16_384, O200k),
    entry(OpenAi, "o4-mini", 200_000, 16_384, O200k),
    // o1-mini answers 400 to a system message (engine_anchors §3): inject it.
    CatalogEntry { native_system: false, ..entry(OpenAi, "o1-mini", 128_000, 8_192, O200k) },
    entry(OpenAi, "o1", 200_000, 16_384, O200k),
    CatalogEntry {
        completion: true,
        ..entry(OpenAi, "gpt-3.5-turbo-instruct", 4_096, 1_024, Cl100k)
    },
    entry(Gemini, "gemini-2.5-pro", 1_048_576, 8_192, TokenizerFamily::Gemini),
    entry(Gemini, "gemini-2.5-flash", 1_048_576, 8_192, TokenizerFamily::Gemini),
    // Gemma on the Gemini API rejects `systemInstruction`.
    CatalogEntry {
        native_system: false,
        ..entry(Gemini, "gemma-3", 128_000, 8_192, TokenizerFamily::Gemini)
    },
];

/// The shipped entry for `model` at `provider`: an exact id, else the first listed prefix.
pub fn find(provider: ProviderId, model: &str) -> Option<&'static CatalogEntry> {
    let listed = || SHIPPED.iter().filter(move |entry| entry.provider == provider);
    listed()
        .find(|entry| entry.model == model)
        .or_else(|| listed().find(|entry| model.starts_with(entry.model)))
}

/// The profile `model` at `provider` starts with: the engine's rules for its family and name
/// (role rules, Gemma's and o1-mini's injection), then the catalog's window, reserve, system
/// support and tokenizer where the model is listed. Local servers' windows come from the server
/// itself ([`crate::ollama`]); until then they get seed 004's unknown default.
pub fn profile(provider: ProviderId, model: &str) -> ModelProfile {
    let mut profile = ModelProfile::shipped(provider.family(), model);
    if let Some(entry) = find(provider, model) {
        profile.context_window = entry.context_window;
        profile.reserve = entry.reserve;
        profile.native_system = entry.native_system;
        profile.tokenizer = entry.tokenizer.tokenizer();
    }
    profile
}

/// Whether `model` at `provider` can continue a document (buffer mode): Ollama and the local
/// OpenAI-compatible servers always can; hosted chat models only where listed.
pub fn completion_supported(provider: ProviderId, model: &str) -> bool {
    match provider {
        ProviderId::Ollama | ProviderId::LmStudio | ProviderId::Vllm | ProviderId::LlamaCpp => true,
        ProviderId::Anthropic | ProviderId::Gemini => false,
        _ => find(provider, model).is_some_and(|entry| entry.completion),
    }
}
