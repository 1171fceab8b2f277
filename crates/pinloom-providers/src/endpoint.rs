//! Who answers and where: the providers Pinloom knows by name, and the address a request goes
//! to. Its own file, since every other part of the crate (errors, keys, requests, the catalog)
//! names a provider.

use pinloom_engine::family::ProviderFamily;

/// The providers Pinloom knows by name. Several share a wire family; they differ in their default
/// address, whether they need a key, and where that key is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderId {
    /// OpenAI's API.
    OpenAi,
    /// OpenRouter (OpenAI-shaped, with comment keep-alives and errors inside the stream).
    OpenRouter,
    /// Mistral's API (OpenAI-shaped, strict message order).
    Mistral,
    /// LM Studio's local server.
    LmStudio,
    /// A vLLM server.
    Vllm,
    /// A llama.cpp server.
    LlamaCpp,
    /// Anthropic's Messages API.
    Anthropic,
    /// Google's Gemini API.
    Gemini,
    /// A local Ollama.
    Ollama,
}

impl ProviderId {
    /// Every provider, in the order settings list them.
    pub const ALL: [ProviderId; 9] = [
        ProviderId::OpenAi,
        ProviderId::Anthropic,
        ProviderId::Gemini,
        ProviderId::OpenRouter,
        ProviderId::Mistral,
        ProviderId::Ollama,
        ProviderId::LmStudio,
        ProviderId::Vllm,
        ProviderId::LlamaCpp,
    ];

    /// The wire family it speaks.
    pub fn family(self) -> ProviderFamily {
        match self {
            ProviderId::Anthropic => ProviderFamily::Anthropic,
            ProviderId::Gemini => ProviderFamily::Gemini,
            ProviderId::Ollama => ProviderFamily::Ollama,
            _ => ProviderFamily::OpenAiCompatible,
        }
    }

    /// The name people know it by, used in every message about it.
    pub fn display_name(self) -> &'static str {
        match self {
            ProviderId::OpenAi => "OpenAI",
            ProviderId::OpenRouter => "OpenRouter",
            ProviderId::Mistral => "Mistral",
            ProviderId::LmStudio => "LM Studio",
            ProviderId::Vllm => "vLLM",
            ProviderId::LlamaCpp => "llama.cpp server",
            ProviderId::Anthropic => "Anthropic",
            ProviderId::Gemini => "Gemini",
            ProviderId::Ollama => "Ollama",
        }
    }

    /// The stable name stored in profiles and used as the keyring entry's user.
    pub fn name(self) -> &'static str {
        match self {
            ProviderId::OpenAi => "openai",
            ProviderId::OpenRouter => "openrouter",
            ProviderId::Mistral => "mistral",
            ProviderId::LmStudio => "lmstudio",
            ProviderId::Vllm => "vllm",
            ProviderId::LlamaCpp => "llamacpp",
            ProviderId::Anthropic => "anthropic",
            ProviderId::Gemini => "gemini",
            ProviderId::Ollama => "ollama",
        }
    }

    /// Whether it is a server on the person's machine or network running open models (Ollama,
    /// LM Studio, vLLM, llama.cpp): their prompt counts leave out what their cache kept, they cut
    /// a context that exceeds their own window without an error, and their models' names say
    /// which open family they are.
    pub fn is_local(self) -> bool {
        matches!(
            self,
            ProviderId::Ollama | ProviderId::LmStudio | ProviderId::Vllm | ProviderId::LlamaCpp
        )
    }

    /// The provider with this stable name, if any.
    pub fn from_name(name: &str) -> Option<ProviderId> {
        ProviderId::ALL.into_iter().find(|provider| provider.name() == name)
    }

    /// Where it listens unless the person says otherwise.
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderId::OpenAi => "https://api.openai.com/v1",
            ProviderId::OpenRouter => "https://openrouter.ai/api/v1",
            ProviderId::Mistral => "https://api.mistral.ai/v1",
            ProviderId::LmStudio => "http://127.0.0.1:1234/v1",
            ProviderId::Vllm => "http://127.0.0.1:8000/v1",
            ProviderId::LlamaCpp => "http://127.0.0.1:8080/v1",
            ProviderId::Anthropic => "https://api.anthropic.com/v1",
            ProviderId::Gemini => "https://generativelanguage.googleapis.com/v1beta",
            ProviderId::Ollama => "http://127.0.0.1:11434",
        }
    }

    /// The environment variable that may hold its key instead of the keyring; `None` for local
    /// servers, which take none.
    pub fn key_variable(self) -> Option<&'static str> {
        match self {
            ProviderId::OpenAi => Some("OPENAI_API_KEY"),
            ProviderId::OpenRouter => Some("OPENROUTER_API_KEY"),
            ProviderId::Mistral => Some("MISTRAL_API_KEY"),
            ProviderId::Anthropic => Some("ANTHROPIC_API_KEY"),
            ProviderId::Gemini => Some("GEMINI_API_KEY"),
            ProviderId::LmStudio | ProviderId::Vllm | ProviderId::LlamaCpp | ProviderId::Ollama => {
                None
            }
        }
    }
}

/// Where requests go: a provider and its base address (the default, or the person's own, such as
/// a proxy or a local server on another port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The provider.
    pub provider: ProviderId,
    /// The base address, without a trailing slash.
    pub base_url: String,
}

impl Endpoint {
    /// The provider at its default address.
    pub fn new(provider: ProviderId) -> Endpoint {
        Endpoint { provider, base_url: provider.default_base_url().to_owned() }
    }

    /// The provider at another address.
    pub fn at(provider: ProviderId, base_url: &str) -> Endpoint {
        Endpoint { provider, base_url: base_url.trim_end_matches('/').to_owned() }
    }
}
