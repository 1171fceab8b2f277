//! The models Pinloom ships defaults for. Seed 004's five (Claude Sonnet 4 and Opus, GPT-4o,
//! Gemini 2.0, Mistral Large) take the budgets the engine's `ModelProfile::shipped` holds; the
//! rest carry the published windows of research/engine_anchors.md §3. These are starting points:
//! the application layer stores them as profiles the person edits, and a model not listed gets
//! seed 004's unknown default (100,000 / 8,192).
use pinloom_engine::profile::ModelProfile;
use pinloom_engine::tokens::{Calibration, CharHeuristic, Tokenizer};

use crate::wire::ProviderId;

/// How a model's tokens are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenizerFamily {
    /// OpenAI's o200k_base, counted exactly.
    O200k,
    /// OpenAI's cl100k_base, counted exactly.
    Cl100k,
    /// Meta's Llama 3 (3, 3.1, 3.2, 3.3), counted exactly.
    Llama3,
    /// Qwen 2, 2.5 and 3, counted exactly.
    Qwen,
    /// Anthropic's (no offline tokenizer): a calibrated estimate.
    Claude,
    /// Google's (no offline tokenizer): a calibrated estimate.
    Gemini,
    /// A local or other model: a calibrated estimate.
    Other,
    /// ThreadMind's fixed heuristic, 3.5 characters per token, never calibrated: counts that
    /// match ThreadMind's own.
    ThreeAndAHalfChars,
    /// A fixed 4 characters per token, never calibrated.
    FourChars,
}

impl TokenizerFamily {
    /// Every family, in the order settings list them.
    pub const ALL: [TokenizerFamily; 9] = [
        TokenizerFamily::O200k,
        TokenizerFamily::Cl100k,
        TokenizerFamily::Llama3,
        TokenizerFamily::Qwen,
        TokenizerFamily::Claude,
        TokenizerFamily::Gemini,
        TokenizerFamily::Other,
        TokenizerFamily::ThreeAndAHalfChars,
        TokenizerFamily::FourChars,
    ];

    /// The stable name stored in model profiles.
    pub fn name(self) -> &'static str {
        match self {
            TokenizerFamily::O200k => "o200k",
            TokenizerFamily::Cl100k => "cl100k",
            TokenizerFamily::Llama3 => "llama3",
            TokenizerFamily::Qwen => "qwen",
            TokenizerFamily::Claude => "claude",
            TokenizerFamily::Gemini => "gemini",
            TokenizerFamily::Other => "other",
            TokenizerFamily::ThreeAndAHalfChars => CharHeuristic::ThreeAndAHalfChars.as_str(),
            TokenizerFamily::FourChars => CharHeuristic::FourChars.as_str(),
        }
    }

    /// The family with this stable name, if any.
    pub fn from_name(name: &str) -> Option<TokenizerFamily> {
        TokenizerFamily::ALL.into_iter().find(|family| family.name() == name)
    }

    /// How an open model served locally (Ollama, llama.cpp, vLLM, LM Studio) is counted, judged
    /// by its name as those servers spell it (`llama3.1:8b`, `meta-llama/Llama-3.1-8B-Instruct`,
    /// `qwen2.5-7b-instruct`, `gpt-oss:20b`): exactly for the families whose vocabulary Pinloom
    /// has, by the calibrated estimate otherwise. Names that only resemble a family (Llama 2,
    /// Llama 4, Qwen 1) are estimated, since their vocabularies differ.
    pub fn for_open_model(model: &str) -> TokenizerFamily {
        let name = model.to_lowercase();
        if names_version(&name, "llama", '3') {
            TokenizerFamily::Llama3
        } else if names_version(&name, "qwen", '2')
            || names_version(&name, "qwen", '3')
            || names_word(&name, "qwq")
        {
            TokenizerFamily::Qwen
        } else if names_word(&name, "gpt-oss") || names_word(&name, "gpt_oss") {
            // GPT-OSS's harmony encoding counts ordinary text as o200k does.
            TokenizerFamily::O200k
        } else {
            TokenizerFamily::Other
        }
    }

    /// How Ollama's model `name` is counted, from what `/api/show` says of its tokenizer
    /// (`tokenizer.ggml.pre`: `llama-bpe` is Llama 3's pre-tokenizer, `qwen2` Qwen's), else from
    /// its name.
    pub fn for_gguf(pre_tokenizer: Option<&str>, name: &str) -> TokenizerFamily {
        match pre_tokenizer {
            Some("llama-bpe") => TokenizerFamily::Llama3,
            Some("qwen2") => TokenizerFamily::Qwen,
            _ => TokenizerFamily::for_open_model(name),
        }
    }

    /// The counter the engine plans with.
    pub fn tokenizer(self) -> Tokenizer {
        match self {
            TokenizerFamily::O200k => Tokenizer::O200k,
            TokenizerFamily::Cl100k => Tokenizer::Cl100k,
            TokenizerFamily::Llama3 => Tokenizer::Llama3,
            TokenizerFamily::Qwen => Tokenizer::Qwen,
            TokenizerFamily::Claude => Tokenizer::Estimate(Calibration::ANTHROPIC_START),
            TokenizerFamily::Gemini => Tokenizer::Estimate(Calibration::GEMINI_START),
            TokenizerFamily::Other => Tokenizer::Estimate(Calibration::LOCAL_START),
            TokenizerFamily::ThreeAndAHalfChars => {
                Tokenizer::Chars(CharHeuristic::ThreeAndAHalfChars)
            }
            TokenizerFamily::FourChars => Tokenizer::Chars(CharHeuristic::FourChars),
        }
    }
}

/// One shipped model: what its profile starts with beyond the engine's own rules by model name
/// (seed 004's budgets, role rules, and injection for models without a system prompt, which
/// `ModelProfile::shipped` applies and this table does not repeat).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogEntry {
    /// Who serves it.
    pub provider: ProviderId,
    /// Its id, or the prefix of its dated ids (`claude-sonnet-4` covers `claude-sonnet-4-20250514`).
    pub model: &'static str,
    /// Its context window and reply reserve in tokens; `None` for seed 004's five models, whose
    /// budgets the engine ships.
    pub budget: Option<(u32, u32)>,
    /// Whether it has a completion endpoint (buffer mode).
    pub completion: bool,
    /// How its tokens are counted.
    pub tokenizer: TokenizerFamily,
}

/// A model whose budget seed 004 gives (the engine holds it).
const fn seed_004(
    provider: ProviderId,
    model: &'static str,
    tokenizer: TokenizerFamily,
) -> CatalogEntry {
    CatalogEntry { provider, model, budget: None, completion: false, tokenizer }
}

/// A model with its published window and the reserve Pinloom gives it.
const fn published(
    provider: ProviderId,
    model: &'static str,
    context_window: u32,
    reserve: u32,
    tokenizer: TokenizerFamily,
) -> CatalogEntry {
    CatalogEntry {
        provider,
        model,
        budget: Some((context_window, reserve)),
        completion: false,
        tokenizer,
    }
}

use ProviderId::{Anthropic, Gemini, Mistral, OpenAi};
use TokenizerFamily::{Cl100k, Claude, O200k};

/// The shipped defaults. Longer ids come before their prefixes (`gpt-4o-mini` before `gpt-4o`),
/// since [`find`] takes the first prefix that matches.
pub const SHIPPED: &[CatalogEntry] = &[
    seed_004(Anthropic, "claude-sonnet-4", Claude),
    seed_004(Anthropic, "claude-opus-4", Claude),
    seed_004(OpenAi, "gpt-4o-mini", O200k),
    seed_004(OpenAi, "gpt-4o", O200k),
    seed_004(Gemini, "gemini-2.0-flash", TokenizerFamily::Gemini),
    seed_004(Mistral, "mistral-large", TokenizerFamily::Other),
    // Published windows (engine_anchors §3).
    published(Anthropic, "claude-haiku-4-5", 200_000, 8_192, Claude),
    published(OpenAi, "gpt-4.1", 1_047_576, 8_192, O200k),
    published(OpenAi, "gpt-5", 272_000, 16_384, O200k),
    published(OpenAi, "o3-mini", 200_000, 16_384, O200k),
    published(OpenAi, "o3", 200_000, 16_384, O200k),
    published(OpenAi, "o4-mini", 200_000, 16_384, O200k),
    // o1-mini answers 400 to a system message; the engine's rules inject it.
    published(OpenAi, "o1-mini", 128_000, 8_192, O200k),
    published(OpenAi, "o1", 200_000, 16_384, O200k),
    CatalogEntry {
        completion: true,
        ..published(OpenAi, "gpt-3.5-turbo-instruct", 4_096, 1_024, Cl100k)
    },
    published(Gemini, "gemini-2.5-pro", 1_048_576, 8_192, TokenizerFamily::Gemini),
    published(Gemini, "gemini-2.5-flash", 1_048_576, 8_192, TokenizerFamily::Gemini),
    // Gemma on the Gemini API rejects `systemInstruction`; the engine's rules inject it.
    published(Gemini, "gemma-3", 128_000, 8_192, TokenizerFamily::Gemini),
];

/// The shipped entry for `model` at `provider`: an exact id, else the first listed prefix.
pub fn find(provider: ProviderId, model: &str) -> Option<&'static CatalogEntry> {
    let listed = || SHIPPED.iter().filter(move |entry| entry.provider == provider);
    listed()
        .find(|entry| entry.model == model)
        .or_else(|| listed().find(|entry| model.starts_with(entry.model)))
}

/// The profile `model` at `provider` starts with: the engine's rules for its family and name
/// (seed 004's budgets, role rules, Gemma's and o1-mini's injection), then the catalog's window,
/// reserve and tokenizer where the model is listed. Local servers' windows come from the server
/// itself ([`crate::ollama`]); until then they get seed 004's unknown default.
pub fn profile(provider: ProviderId, model: &str) -> ModelProfile {
    let mut profile = ModelProfile::shipped(provider.family(), model);
    if let Some(entry) = find(provider, model) {
        if let Some((window, reserve)) = entry.budget {
            (profile.context_window, profile.reserve) = (window, reserve);
        }
        profile.tokenizer = entry.tokenizer.tokenizer();
    } else if provider.is_local() {
        profile.tokenizer = TokenizerFamily::for_open_model(model).tokenizer();
    }
    profile
}

/// Whether `name` holds `word` at the start of a word (so `codellama` is not `llama`).
fn names_word(name: &str, word: &str) -> bool {
    word_ends(name, word).next().is_some()
}

/// Where each whole-word-start occurrence of `word` in `name` ends.
fn word_ends<'a>(name: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    name.match_indices(word)
        .filter(|(at, _)| !name[..*at].chars().next_back().is_some_and(char::is_alphanumeric))
        .map(|(at, _)| at + word.len())
}

/// Whether `name` holds `word` followed by major version `version` (`llama3`, `llama-3.1`,
/// `Llama 3`), and not a longer number (`llama-30b` is the first LLaMA).
fn names_version(name: &str, word: &str, version: char) -> bool {
    word_ends(name, word).any(|end| {
        let mut rest = name[end..].trim_start_matches(['-', '_', ' ', '.']).chars();
        rest.next() == Some(version) && !rest.next().is_some_and(|next| next.is_ascii_digit())
    })
}

/// Whether `model` at `provider` can continue a document (buffer mode): Ollama and the local
/// OpenAI-compatible servers always can; hosted chat models only where listed.
pub fn completion_supported(provider: ProviderId, model: &str) -> bool {
    match provider {
        local if local.is_local() => true,
        ProviderId::Anthropic | ProviderId::Gemini => false,
        _ => find(provider, model).is_some_and(|entry| entry.completion),
    }
}

#[cfg(test)]
mod tests {
    use super::TokenizerFamily::{self, Llama3, O200k, Other, Qwen};

    #[test]
    fn open_models_are_counted_by_their_family() {
        let cases: &[(&str, TokenizerFamily)] = &[
            ("llama3.2:latest", Llama3),
            ("llama3.1:8b-instruct-q4_K_M", Llama3),
            ("meta-llama/Llama-3.1-8B-Instruct", Llama3),
            ("Meta-Llama-3-8B-Instruct-GGUF", Llama3),
            ("hermes3:8b", Other),
            ("hf.co/NousResearch/Hermes-3-Llama-3.1-8B-GGUF:Q4_K_M", Llama3),
            ("qwen2.5:7b", Qwen),
            ("Qwen/Qwen2.5-Coder-32B-Instruct", Qwen),
            ("qwen3:30b-a3b", Qwen),
            ("qwen-2.5-7b-instruct", Qwen),
            ("qwq:32b", Qwen),
            ("gpt-oss:20b", O200k),
            ("openai/gpt-oss-120b", O200k),
            // Other vocabularies, whatever the name resembles.
            ("codellama:34b", Other),
            ("llama2:13b", Other),
            ("llama-30b", Other),
            ("meta-llama/Llama-4-Scout-17B-16E", Other),
            ("tinyllama", Other),
            ("qwen:7b", Other),
            ("qwen1.5-7b-chat", Other),
            ("deepseek-r1:latest", Other),
            ("mistral-nemo", Other),
        ];
        for (model, family) in cases {
            assert_eq!(TokenizerFamily::for_open_model(model), *family, "{model}");
        }
    }

    #[test]
    fn ollama_names_the_pre_tokenizer_and_it_wins_over_the_name() {
        assert_eq!(TokenizerFamily::for_gguf(Some("llama-bpe"), "my-finetune"), Llama3);
        assert_eq!(TokenizerFamily::for_gguf(Some("qwen2"), "my-finetune"), Qwen);
        assert_eq!(TokenizerFamily::for_gguf(Some("smaug-bpe"), "llama3:8b"), Llama3);
        assert_eq!(TokenizerFamily::for_gguf(None, "mistral"), Other);
    }
}
