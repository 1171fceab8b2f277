//! Provider failures as errors a person can act on.
//!
//! Each provider reports errors its own way (engine_anchors §3): OpenAI-shaped
//! `{"error":{"message","type","code"}}`, Mistral's `{"object":"error",…}`, Anthropic's
//! `{"type":"error","error":{"type","message"}}`, Gemini's `{"error":{"code","status","details"}}`
//! and Ollama's `{"error":"…"}`, before the stream or inside it. [`classify`] reads them all into
//! one [`ProviderError`] whose message says what happened and what to do next.

use std::time::Duration;

use serde_json::Value;

use crate::endpoint::ProviderId;

/// What went wrong talking to a provider.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// The key was refused.
    #[error(
        "{provider} refused the API key ({detail}). Check the key in Settings → Provider keys{env}."
    )]
    WrongKey {
        /// The provider.
        provider: &'static str,
        /// What it said.
        detail: String,
        /// `, or set VARIABLE` when the key may come from the environment.
        env: String,
    },
    /// No key is set for a provider that needs one.
    #[error("No API key for {provider}: add one in Settings → Provider keys{env}.")]
    MissingKey {
        /// The provider.
        provider: &'static str,
        /// `, or set VARIABLE` when the key may come from the environment.
        env: String,
    },
    /// The key holds characters no HTTP header can carry.
    #[error(
        "The API key for {provider} holds characters no request can carry (a line break, a \
         control character): paste it again in Settings → Provider keys."
    )]
    KeyUnusable {
        /// The provider.
        provider: &'static str,
    },
    /// The account has no credit or its quota is spent; retrying will not help.
    #[error(
        "{provider} says the account has no credit or quota left ({detail}). Add credit or raise \
         the quota on {provider}'s billing page, then send again."
    )]
    NoCredit {
        /// The provider.
        provider: &'static str,
        /// What it said.
        detail: String,
    },
    /// The request is longer than the model's window.
    #[error(
        "The request is too long for {model}{numbers}: {detail}. Exclude or prune messages, lower \
         the window in this model's profile so Pinloom trims more, or choose a model with a \
         larger window."
    )]
    ContextTooLong {
        /// The model.
        model: String,
        /// ` (210266 tokens, limit 200000)` when the provider gave the numbers.
        numbers: String,
        /// What it said.
        detail: String,
    },
    /// The model takes no system prompt in its native field.
    #[error(
        "{model} does not take a system prompt ({detail}). Turn off \"native system prompt\" in \
         its profile: Pinloom will put the system context into the first message instead."
    )]
    SystemUnsupported {
        /// The model.
        model: String,
        /// What the provider said.
        detail: String,
    },
    /// The model does not exist at this provider.
    #[error(
        "{provider} has no model \"{model}\" ({detail}). Check the model id in its profile, or \
         refresh the model list."
    )]
    ModelNotFound {
        /// The provider.
        provider: &'static str,
        /// The model asked for.
        model: String,
        /// What it said.
        detail: String,
    },
    /// Too many requests; `retry_after` says when the provider will take one again.
    #[error("{provider} is rate limiting requests{}: {detail}. Wait, then send again.", until(*.retry_after))]
    RateLimited {
        /// The provider.
        provider: &'static str,
        /// How long it asked to wait, when it said.
        retry_after: Option<Duration>,
        /// What it said.
        detail: String,
    },
    /// The provider is overloaded (Anthropic's 529).
    #[error("{provider} is overloaded right now ({detail}). Try again in a minute.")]
    Overloaded {
        /// The provider.
        provider: &'static str,
        /// What it said.
        detail: String,
    },
    /// A server error on the provider's side.
    #[error(
        "{provider} failed with HTTP {status} ({detail}). This is on its side; try again later."
    )]
    Server {
        /// The provider.
        provider: &'static str,
        /// The HTTP status.
        status: u16,
        /// What it said.
        detail: String,
    },
    /// Any other refusal of the request.
    #[error("{provider} refused the request with HTTP {status}: {detail}")]
    Rejected {
        /// The provider.
        provider: &'static str,
        /// The HTTP status.
        status: u16,
        /// What it said.
        detail: String,
    },
    /// An error the provider sent inside a stream that had started (HTTP 200).
    #[error("{cause} The text received before it is kept.")]
    InStream {
        /// The error, read as if it had come before the stream.
        cause: Box<ProviderError>,
    },
    /// A frame that cannot be read.
    #[error(
        "{provider} sent something Pinloom cannot read ({detail}). The text received so far is \
         kept; if this repeats, the address may point at a server of another kind."
    )]
    Malformed {
        /// The provider.
        provider: &'static str,
        /// What was wrong, with the start of the frame.
        detail: String,
    },
    /// The stream ended before the reply said it was finished.
    #[error(
        "The connection to {provider} ended before the reply finished ({detail}). The text received so far is kept."
    )]
    StreamBroken {
        /// The provider.
        provider: &'static str,
        /// What happened.
        detail: String,
    },
    /// The stream ended before any of the reply arrived, with no error said. llama.cpp's Python
    /// server (llama-cpp-python) does this when the request is longer than the context it was
    /// started with: it answers 200, opens the stream, and closes it empty.
    #[error(
        "{provider} closed the reply without sending any of it, and said no error. A local server \
         does this when the request is longer than the context it was started with (llama.cpp's \
         n_ctx, its -c or --n_ctx option): lower the window in this model's profile to that size so \
         Pinloom trims to it, or start the server with a larger context."
    )]
    ClosedWithoutReply {
        /// The provider.
        provider: &'static str,
    },
    /// No connection could be made.
    #[error(
        "Could not reach {provider} at {url} ({detail}). Check that the server is running and the address is right."
    )]
    Unreachable {
        /// The provider.
        provider: &'static str,
        /// The address tried.
        url: String,
        /// What failed.
        detail: String,
    },
    /// The reply went on longer than any reply should take (a server trickling forever).
    #[error("{provider} was still writing after {} minutes, longer than any reply takes; what arrived is kept, marked incomplete. Send again, or ask for less.", .took.as_secs() / 60)]
    ReplyTooLong {
        /// The provider.
        provider: &'static str,
        /// How long the reply had gone on.
        took: Duration,
    },
    /// Nothing arrived in time.
    #[error("{provider} sent nothing for {} s {phase}; the request was stopped. Send again, or raise the timeout in Settings if the model is slow to start.", .waited.as_secs())]
    TimedOut {
        /// The provider.
        provider: &'static str,
        /// `while connecting`, `before answering` or `in the middle of the reply`.
        phase: &'static str,
        /// How long Pinloom waited.
        waited: Duration,
    },
    /// Buffer mode asked of a family with no completion endpoint.
    #[error(
        "{provider} has no completion endpoint, which buffer mode needs. Use an OpenAI-compatible \
         server or Ollama for buffer-mode trees."
    )]
    NoCompletionEndpoint {
        /// The provider.
        provider: &'static str,
    },
    /// Buffer mode asked of a profile whose completion endpoint is turned off, although its
    /// provider may have one.
    #[error(
        "the profile \"{profile}\" is set up without a completion endpoint, which buffer mode \
         needs. If its server has one (vLLM, llama.cpp, LM Studio and Ollama do), turn on \
         \"Completion endpoint\" in Budget; otherwise choose another model for buffer-mode trees."
    )]
    CompletionEndpointOff {
        /// The profile's name.
        profile: String,
    },
    /// The OS keyring could not be used.
    #[error("The OS keyring is not available ({detail}). {alternative}")]
    KeyringUnavailable {
        /// What failed.
        detail: String,
        /// What to do instead.
        alternative: String,
    },
    /// The HTTP client itself could not be made (its TLS setup failed).
    #[error("Pinloom could not start its HTTP client ({detail}); please report this.")]
    HttpClient {
        /// What failed.
        detail: String,
    },
    /// The person stopped the reply.
    #[error("The reply was stopped.")]
    Cancelled,
}

fn until(retry_after: Option<Duration>) -> String {
    match retry_after {
        Some(wait) => format!(" for the next {} s", wait.as_secs().max(1)),
        None => String::new(),
    }
}

impl ProviderError {
    /// A stable code for the boundary's `{ code, message }`.
    pub fn code(&self) -> &'static str {
        match self {
            ProviderError::WrongKey { .. } => "wrongKey",
            ProviderError::MissingKey { .. } => "missingKey",
            ProviderError::KeyUnusable { .. } => "keyUnusable",
            ProviderError::NoCredit { .. } => "noCredit",
            ProviderError::ContextTooLong { .. } => "contextTooLong",
            ProviderError::SystemUnsupported { .. } => "systemUnsupported",
            ProviderError::ModelNotFound { .. } => "modelNotFound",
            ProviderError::RateLimited { .. } => "rateLimited",
            ProviderError::Overloaded { .. } => "overloaded",
            ProviderError::Server { .. } => "providerServerError",
            ProviderError::Rejected { .. } => "requestRejected",
            ProviderError::InStream { .. } => "errorInStream",
            ProviderError::Malformed { .. } => "malformedStream",
            ProviderError::StreamBroken { .. } => "streamBroken",
            ProviderError::ClosedWithoutReply { .. } => "closedWithoutReply",
            ProviderError::Unreachable { .. } => "unreachable",
            ProviderError::TimedOut { .. } => "timedOut",
            ProviderError::ReplyTooLong { .. } => "replyTooLong",
            ProviderError::NoCompletionEndpoint { .. } => "noCompletionEndpoint",
            ProviderError::CompletionEndpointOff { .. } => "completionEndpointOff",
            ProviderError::KeyringUnavailable { .. } => "keyringUnavailable",
            ProviderError::HttpClient { .. } => "httpClientFailed",
            ProviderError::Cancelled => "cancelled",
        }
    }

    /// Whether sending the same request again later may succeed, and how long the provider asked
    /// to wait. Never for a refused key, spent credit or quota, or a malformed request.
    pub fn retry(&self) -> Option<Option<Duration>> {
        match self {
            ProviderError::RateLimited { retry_after, .. } => Some(*retry_after),
            ProviderError::Overloaded { .. }
            | ProviderError::Server { .. }
            | ProviderError::Unreachable { .. } => Some(None),
            ProviderError::InStream { cause } => cause.retry().map(|_| None),
            // Named one by one, so a new kind of failure is decided here, not defaulted.
            ProviderError::WrongKey { .. }
            | ProviderError::MissingKey { .. }
            | ProviderError::KeyUnusable { .. }
            | ProviderError::NoCredit { .. }
            | ProviderError::ContextTooLong { .. }
            | ProviderError::SystemUnsupported { .. }
            | ProviderError::ModelNotFound { .. }
            | ProviderError::Rejected { .. }
            | ProviderError::Malformed { .. }
            | ProviderError::StreamBroken { .. }
            | ProviderError::ClosedWithoutReply { .. }
            | ProviderError::TimedOut { .. }
            | ProviderError::ReplyTooLong { .. }
            | ProviderError::NoCompletionEndpoint { .. }
            | ProviderError::CompletionEndpointOff { .. }
            | ProviderError::KeyringUnavailable { .. }
            | ProviderError::HttpClient { .. }
            | ProviderError::Cancelled => None,
        }
    }
}

/// `, or set VARIABLE` for providers whose key may come from the environment.
pub(crate) fn env_hint(provider: ProviderId) -> String {
    provider.key_variable().map(|variable| format!(", or set {variable}")).unwrap_or_default()
}

/// What an error body says, read in every provider's shape.
#[derive(Debug, Default)]
struct Said {
    message: String,
    /// `type` / `code` / `status` / `reason` values, lower-cased, to match on.
    kinds: Vec<String>,
    /// Gemini's `RetryInfo.retryDelay`.
    retry_delay: Option<Duration>,
}

fn said(body: &str) -> Said {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return Said { message: body.trim().to_owned(), ..Said::default() };
    };
    let mut said = Said::default();
    // The error object: `error` (OpenAI, Anthropic, Gemini, OpenRouter), or the body itself
    // (Mistral's `{"object":"error",…}`); Ollama's `error` is a plain string.
    let error = match value.get("error") {
        Some(Value::String(message)) => {
            said.message = message.clone();
            return said;
        }
        Some(error @ Value::Object(_)) => error,
        _ => &value,
    };
    said.message = error.get("message").and_then(Value::as_str).unwrap_or_default().to_owned();
    for key in ["type", "code", "status"] {
        match error.get(key) {
            Some(Value::String(kind)) => said.kinds.push(kind.to_lowercase()),
            Some(Value::Number(code)) => said.kinds.push(code.to_string()),
            _ => {}
        }
    }
    if let Some(kind) =
        error.pointer("/metadata/error_type").and_then(Value::as_str).map(str::to_lowercase)
    {
        said.kinds.push(kind);
    }
    for detail in error.get("details").and_then(Value::as_array).into_iter().flatten() {
        if let Some(reason) = detail.get("reason").and_then(Value::as_str) {
            said.kinds.push(reason.to_lowercase());
        }
        if let Some(delay) = detail.get("retryDelay").and_then(Value::as_str) {
            said.retry_delay = parse_seconds(delay.trim_end_matches('s'));
        }
        for violation in detail.get("violations").and_then(Value::as_array).into_iter().flatten() {
            if let Some(id) = violation.get("quotaId").and_then(Value::as_str) {
                said.kinds.push(id.to_lowercase());
            }
        }
    }
    if said.message.is_empty() {
        said.message = body.trim().to_owned();
    }
    said
}

fn parse_seconds(text: &str) -> Option<Duration> {
    let seconds: f64 = text.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

/// Error detail is shown to the person and kept with the node: long bodies are cut, and a key the
/// provider echoes back ("Incorrect API key provided: sk-…") is blanked.
pub(crate) fn clean_detail(detail: &str, key: Option<&str>) -> String {
    let mut detail = detail.trim().to_owned();
    if let Some(key) = key.filter(|key| key.len() >= 8) {
        detail = detail.replace(key, "[the key]");
        // A provider may echo a shortened key; its first 12 characters are enough to blank it.
        let head: String = key.chars().take(12).collect();
        if head.len() >= 8 {
            detail = detail.replace(&head, "[the key]");
        }
    }
    const LIMIT: usize = 400;
    if detail.chars().count() > LIMIT {
        detail = detail.chars().take(LIMIT).collect::<String>() + "…";
    }
    if detail.is_empty() { "no detail given".to_owned() } else { detail }
}

/// Reads the numbers out of a context-overflow message: "prompt is too long: 210266 tokens >
/// 200000 maximum", "maximum context length is 128000 tokens. However, you requested 130000".
fn overflow_numbers(message: &str) -> String {
    let numbers: Vec<u64> = message
        .split(|c: char| !c.is_ascii_digit())
        .filter(|part| part.len() >= 3)
        .filter_map(|part| part.parse().ok())
        .collect();
    match numbers.as_slice() {
        [] | [_] => String::new(),
        [first, .., last] => {
            let (sent, limit) = if first > last { (first, last) } else { (last, first) };
            format!(" ({sent} tokens, limit {limit})")
        }
    }
}

/// The failure an HTTP error status and body from `provider` describes.
pub fn classify(
    provider: ProviderId,
    model: &str,
    status: u16,
    retry_after: Option<Duration>,
    body: &str,
    key: Option<&str>,
) -> ProviderError {
    let name = provider.display_name();
    let said = said(body);
    let detail = clean_detail(&said.message, key);
    let kind = |wanted: &[&str]| said.kinds.iter().any(|kind| wanted.contains(&kind.as_str()));
    let lower = said.message.to_lowercase();
    let too_long = kind(&["context_length_exceeded", "request_too_large"])
        || status == 413
        || ["prompt is too long", "maximum context length", "context length", "context window"]
            .iter()
            .any(|phrase| lower.contains(phrase))
        || lower.contains("exceed context limit");
    if status == 401
        || kind(&["authentication_error", "api_key_invalid", "invalid_api_key"])
        || (status == 403
            && kind(&["permission_error", "permission_denied"])
            && lower.contains("key"))
    {
        return ProviderError::WrongKey { provider: name, detail, env: env_hint(provider) };
    }
    if status == 402
        || kind(&["insufficient_quota", "billing_error", "billing_not_active"])
        || (provider == ProviderId::Gemini
            && status == 429
            && said.kinds.iter().any(|kind| kind.contains("perday")))
    {
        return ProviderError::NoCredit { provider: name, detail };
    }
    if too_long {
        return ProviderError::ContextTooLong {
            model: model.to_owned(),
            numbers: overflow_numbers(&said.message),
            detail,
        };
    }
    if status == 400 && lower.contains("system") && kind(&["unsupported_value"])
        || lower.contains("developer instruction is not enabled")
        || lower.contains("system role not supported")
    {
        return ProviderError::SystemUnsupported { model: model.to_owned(), detail };
    }
    if status == 404
        || kind(&["not_found_error", "model_not_found"])
        || (lower.contains("model") && lower.contains("not found"))
        || lower.contains("invalid model")
    {
        return ProviderError::ModelNotFound { provider: name, model: model.to_owned(), detail };
    }
    if status == 429 || kind(&["rate_limit_error", "rate_limit_exceeded", "resource_exhausted"]) {
        return ProviderError::RateLimited {
            provider: name,
            retry_after: retry_after.or(said.retry_delay),
            detail,
        };
    }
    if status == 529 || kind(&["overloaded_error"]) {
        return ProviderError::Overloaded { provider: name, detail };
    }
    if status >= 500 || status == 408 {
        return ProviderError::Server { provider: name, status, detail };
    }
    ProviderError::Rejected { provider: name, status, detail }
}

/// The failure an error object inside a started stream describes (Anthropic's `error` event,
/// OpenRouter's `error` field), read as [`classify`] reads a body, and wrapped in
/// [`InStream`](ProviderError::InStream) so the text already received is kept.
pub fn classify_in_stream(
    provider: ProviderId,
    model: &str,
    error: &Value,
    key: Option<&str>,
) -> ProviderError {
    let body = serde_json::json!({ "error": error }).to_string();
    let status = match error.get("code").and_then(Value::as_u64) {
        Some(code) => u16::try_from(code).unwrap_or(500),
        // Without a status, an error in a started stream is the provider failing mid-reply
        // (OpenRouter's `server_error`, Anthropic's `api_error`); typed ones such as
        // `overloaded_error` or `rate_limit_error` are still read by their type.
        None => 500,
    };
    let cause = classify(provider, model, status, None, &body, key);
    ProviderError::InStream { cause: Box::new(cause) }
}
