//! Building requests: pure functions from an endpoint, a model profile and the engine's wire body
//! to the URL, headers and JSON a provider expects. No key is added here, so a [`WireRequest`] can
//! be shown to the person ("what was sent") and logged without leaking one; the client adds the
//! key's header at the last moment.

use pinloom_engine::profile::{ModelProfile, ProviderFamily};
use pinloom_engine::render::{ChatRequest, wire_body};
use pinloom_engine::snapshot::ToolDefinition;
use serde_json::{Value, json};

pub use crate::endpoint::{Endpoint, ProviderId};
use crate::error::ProviderError;

/// The per-model sampling settings a profile carries; unset ones are left to the provider.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sampling {
    /// Temperature.
    pub temperature: Option<f32>,
    /// Nucleus sampling.
    pub top_p: Option<f32>,
    /// The most tokens the reply may have; the profile's reserve when unset.
    pub max_output_tokens: Option<u32>,
}

/// What is asked of the model.
#[derive(Debug, Clone, Copy)]
pub enum Task<'a> {
    /// A chat reply to a finished request (dialogue mode, summaries).
    Chat {
        /// The request, system placement and role rules already applied by the engine.
        request: &'a ChatRequest,
        /// The tool definitions `request.tools` indexes into.
        tools: &'a [ToolDefinition],
    },
    /// A continuation of a document (buffer mode), on a completion endpoint.
    Complete {
        /// The document to continue.
        prompt: &'a str,
    },
}

/// How the reply's bytes are framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// Server-sent events (OpenAI-compatible, Anthropic, Gemini with `alt=sse`).
    ServerSentEvents,
    /// One JSON object per line (Ollama).
    JsonLines,
}

/// A request ready to send, without its key.
#[derive(Debug, Clone, PartialEq)]
pub struct WireRequest {
    /// The provider it goes to.
    pub provider: ProviderId,
    /// The model asked.
    pub model: String,
    /// The full address.
    pub url: String,
    /// Headers other than the key's.
    pub headers: Vec<(&'static str, String)>,
    /// The JSON body.
    pub body: Value,
    /// How the reply is framed.
    pub framing: Framing,
    /// Whether the reply is a completion (text) rather than a chat message.
    pub completion: bool,
}

/// How many of the likeliest tokens at each place a continuation asks for.
pub const TOP_TOKENS: u32 = 5;

/// Builds the request for `task` to `endpoint` with `profile`'s model and settings.
///
/// A completion asked of a family with no completion endpoint (Anthropic, Gemini) is an error
/// that says which models can do buffer mode.
pub fn build(
    endpoint: &Endpoint,
    profile: &ModelProfile,
    sampling: Sampling,
    task: Task<'_>,
) -> Result<WireRequest, ProviderError> {
    let base = endpoint.base_url.trim_end_matches('/');
    let family = endpoint.provider.family();
    let max_output = sampling.max_output_tokens.unwrap_or(profile.reserve);
    let mut headers = vec![("content-type", "application/json".to_owned())];
    let (url, mut body, framing, completion) = match (family, task) {
        (ProviderFamily::OpenAiCompatible, Task::Chat { request, tools }) => {
            let mut body = wire_body(request, tools, profile);
            // OpenAI sends usage only when asked, as a last chunk with no choices. Mistral puts
            // usage in its last chunk unasked and validates request fields strictly, so the
            // field is left out there rather than risk a refusal.
            if endpoint.provider != ProviderId::Mistral {
                body["stream_options"] = json!({"include_usage": true});
            }
            if let Some(max) = sampling.max_output_tokens {
                // OpenAI's reasoning models refuse `max_tokens`; other servers only know it.
                let field = match endpoint.provider {
                    ProviderId::OpenAi => "max_completion_tokens",
                    _ => "max_tokens",
                };
                body[field] = json!(max);
            }
            (format!("{base}/chat/completions"), body, Framing::ServerSentEvents, false)
        }
        (ProviderFamily::OpenAiCompatible, Task::Complete { prompt }) => {
            let mut body = json!({
                "model": profile.model,
                "prompt": prompt,
                "max_tokens": max_output,
                "stream": true,
                "stream_options": {"include_usage": true},
            });
            // Each token's probability and the likeliest others at its place, which the loom
            // shows on hover and branches from. Asked only of servers whose completions
            // endpoint documents it (OpenAI's caps it at 5); others may refuse a field they
            // do not know.
            if matches!(
                endpoint.provider,
                ProviderId::OpenAi | ProviderId::Vllm | ProviderId::LlamaCpp
            ) {
                body["logprobs"] = json!(TOP_TOKENS);
            }
            (format!("{base}/completions"), body, Framing::ServerSentEvents, true)
        }
        (ProviderFamily::Anthropic, Task::Chat { request, tools }) => {
            headers.push(("anthropic-version", "2023-06-01".to_owned()));
            let mut body = wire_body(request, tools, profile);
            body["max_tokens"] = json!(max_output);
            (format!("{base}/messages"), body, Framing::ServerSentEvents, false)
        }
        (ProviderFamily::Gemini, Task::Chat { request, tools }) => {
            let mut body = wire_body(request, tools, profile);
            body["generationConfig"] = json!({"maxOutputTokens": max_output});
            // Gemini's model list names models `models/<id>`; either form is accepted here.
            let model = profile.model.trim_start_matches("models/");
            let url = format!("{base}/models/{model}:streamGenerateContent?alt=sse");
            (url, body, Framing::ServerSentEvents, false)
        }
        (ProviderFamily::Ollama, Task::Chat { request, tools }) => {
            let body = wire_body(request, tools, profile);
            (format!("{base}/api/chat"), body, Framing::JsonLines, false)
        }
        (ProviderFamily::Ollama, Task::Complete { prompt }) => {
            // `raw`: the document is continued as written, not wrapped in the chat template.
            let body = json!({
                "model": profile.model,
                "prompt": prompt,
                "raw": true,
                "stream": true,
                "options": {"num_ctx": profile.context_window},
                // Ollama versions that know the fields report them; earlier ones ignore them.
                "logprobs": true,
                "top_logprobs": TOP_TOKENS,
            });
            (format!("{base}/api/generate"), body, Framing::JsonLines, true)
        }
        (ProviderFamily::Anthropic | ProviderFamily::Gemini, Task::Complete { .. }) => {
            return Err(ProviderError::NoCompletionEndpoint {
                provider: endpoint.provider.display_name(),
            });
        }
    };
    apply_sampling(family, &mut body, sampling, max_output);
    Ok(WireRequest {
        provider: endpoint.provider,
        model: profile.model.clone(),
        url,
        headers,
        body,
        framing,
        completion,
    })
}

/// Puts the sampling settings where each family reads them. Ollama's output cap is
/// `num_predict`; Ollama's `num_ctx` is already in the body, sized to the profile's window.
fn apply_sampling(family: ProviderFamily, body: &mut Value, sampling: Sampling, max_output: u32) {
    let mut set = |path: &[&str], value: Value| {
        let mut at = &mut *body;
        for key in &path[..path.len() - 1] {
            if !at.get(*key).is_some_and(Value::is_object) {
                at[*key] = json!({});
            }
            at = &mut at[*key];
        }
        at[path[path.len() - 1]] = value;
    };
    let (temperature, top_p): (&[&str], &[&str]) = match family {
        ProviderFamily::OpenAiCompatible | ProviderFamily::Anthropic => {
            (&["temperature"], &["top_p"])
        }
        ProviderFamily::Gemini => {
            (&["generationConfig", "temperature"], &["generationConfig", "topP"])
        }
        ProviderFamily::Ollama => (&["options", "temperature"], &["options", "top_p"]),
    };
    if let Some(value) = sampling.temperature {
        set(temperature, json!(value));
    }
    if let Some(value) = sampling.top_p {
        set(top_p, json!(value));
    }
    if family == ProviderFamily::Ollama && sampling.max_output_tokens.is_some() {
        set(&["options", "num_predict"], json!(max_output));
    }
}
