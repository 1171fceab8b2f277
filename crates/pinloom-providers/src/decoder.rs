//! A reply stream's decoder, and what every family's decoding shares: the events a reply tells,
//! its usage and tokens, JSON read with the key blanked from what is shown, errors inside a
//! stream classified, and the two shapes of a token's log-probabilities. The families' own
//! frames are read in `family/`; feeding the decoder frames is `decode.rs`.

use serde::Serialize;
use serde_json::Value;

use crate::endpoint::ProviderId;
use crate::error::{ProviderError, classify_in_stream};

/// What a reply stream tells, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplyEvent {
    /// More of the reply's text.
    Text(String),
    /// The provider is waiting before trying again.
    Retrying {
        /// The try about to be made (2 for the first retry).
        attempt: u32,
        /// How long it waits first.
        wait: std::time::Duration,
        /// Why.
        reason: String,
    },
    /// What has arrived so far is saved: a crash now would lose nothing before it. Sent by the
    /// application layer, which keeps a streaming reply's draft, never by a provider.
    Saved {
        /// How many characters of the reply are saved.
        characters: u64,
    },
}

/// The token usage a provider reported for one reply.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Tokens of the request, as the provider counted them, cached ones included: Anthropic's
    /// three input counts are added up here so every family means the same. Ollama counts only
    /// what it evaluated, so a prompt prefix it kept from the previous request is not in it.
    pub input_tokens: Option<u64>,
    /// Tokens of the reply.
    pub output_tokens: Option<u64>,
    /// Input tokens read from the provider's prompt cache, when it says (included in
    /// `input_tokens`).
    pub cached_input_tokens: Option<u64>,
    /// Input tokens written to the provider's prompt cache, when it says (Anthropic's
    /// `cache_creation_input_tokens`; included in `input_tokens`).
    pub cache_write_input_tokens: Option<u64>,
}

/// One generated token with its log-probability and the most likely tokens at its place, as a
/// provider that was asked for them reports them (buffer-mode continuations).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct TokenChoice {
    /// The token's text.
    pub token: String,
    /// Its natural log-probability.
    pub logprob: f64,
    /// The most likely tokens at its place (it among them, usually), most likely first.
    pub top: Vec<(String, f64)>,
}

/// The most tokens kept for one reply: a runaway continuation keeps its text, not a log of
/// every token's alternatives beyond this.
pub const MAX_TOKEN_CHOICES: usize = 8_192;

/// What one frame contributed.
#[derive(Debug, Default, PartialEq)]
pub struct Decoded {
    /// Text to append.
    pub text: String,
    /// Whether this frame is the stream's explicit end (`[DONE]`, `message_stop`, Ollama's
    /// `done`), after which nothing needs reading. Gemini has none: its stream ends at EOF.
    pub finished: bool,
}

/// A stream decoder for one family and task.
pub struct Decoder {
    pub(crate) provider: ProviderId,
    pub(crate) model: String,
    /// Whether the reply is a completion (text) rather than a chat message.
    pub(crate) completion: bool,
    /// The key, only to blank it from error details.
    pub(crate) key: Option<String>,
    /// The usage so far (Anthropic reports input at the start and output at the end).
    pub usage: Usage,
    /// Why the reply stopped, as the provider said (`stop`, `end_turn`, `length`, …).
    pub finish_reason: Option<String>,
    /// Whether the provider said the reply is complete (a finish reason, an end marker).
    pub finished: bool,
    /// The generated tokens with their alternatives, when the provider reported them.
    pub tokens: Vec<TokenChoice>,
}

pub(crate) fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The tokens of one completion chunk's `logprobs`, in either shape servers send: the legacy
/// completions one (`tokens`, `token_logprobs`, `top_logprobs` as one object per token, which
/// OpenAI, vLLM and llama-cpp-python send) or the chat one (`content`, a list of entries, which
/// llama.cpp's own server sends on its completions endpoint too).
pub(crate) fn completion_choices(logprobs: &Value) -> Vec<TokenChoice> {
    if let Some(entries) = logprobs.get("content").and_then(Value::as_array) {
        return entries.iter().filter_map(entry_choice).collect();
    }
    let tokens = logprobs.get("tokens").and_then(Value::as_array);
    let chosen = logprobs.get("token_logprobs").and_then(Value::as_array);
    let tops = logprobs.get("top_logprobs").and_then(Value::as_array);
    let (Some(tokens), Some(chosen)) = (tokens, chosen) else { return Vec::new() };
    tokens
        .iter()
        .zip(chosen)
        .enumerate()
        .filter_map(|(i, (token, logprob))| {
            let token = token.as_str()?.to_owned();
            let logprob = logprob.as_f64()?;
            let mut top: Vec<(String, f64)> = tops
                .and_then(|tops| tops.get(i))
                .and_then(Value::as_object)
                .map(|top| {
                    top.iter().filter_map(|(t, lp)| Some((t.clone(), lp.as_f64()?))).collect()
                })
                .unwrap_or_default();
            top.sort_by(|a, b| b.1.total_cmp(&a.1));
            Some(TokenChoice { token, logprob, top })
        })
        .collect()
}

/// One `{token, logprob, top_logprobs: [{token, logprob}]}` entry (OpenAI's chat shape,
/// llama.cpp's server, Ollama).
pub(crate) fn entry_choice(entry: &Value) -> Option<TokenChoice> {
    let token = entry.get("token")?.as_str()?.to_owned();
    let logprob = entry.get("logprob")?.as_f64()?;
    let mut top: Vec<(String, f64)> = entry
        .get("top_logprobs")
        .and_then(Value::as_array)
        .map(|alternatives| {
            alternatives
                .iter()
                .filter_map(|a| {
                    Some((a.get("token")?.as_str()?.to_owned(), a.get("logprob")?.as_f64()?))
                })
                .collect()
        })
        .unwrap_or_default();
    top.sort_by(|a, b| b.1.total_cmp(&a.1));
    Some(TokenChoice { token, logprob, top })
}

impl std::fmt::Debug for Decoder {
    // By hand, so the key it holds for blanking is never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("completion", &self.completion)
            .field("usage", &self.usage)
            .field("finish_reason", &self.finish_reason)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl Decoder {
    /// A decoder for a reply from `provider`'s `model`; `completion` for buffer-mode replies.
    pub fn new(provider: ProviderId, model: &str, completion: bool, key: Option<&str>) -> Decoder {
        Decoder {
            provider,
            model: model.to_owned(),
            completion,
            key: key.map(str::to_owned),
            usage: Usage::default(),
            finish_reason: None,
            finished: false,
            tokens: Vec::new(),
        }
    }

    /// The provider whose stream this decodes.
    pub fn provider(&self) -> ProviderId {
        self.provider
    }

    pub(crate) fn json(&self, data: &str) -> Result<Value, ProviderError> {
        serde_json::from_str(data).map_err(|error| ProviderError::Malformed {
            provider: self.provider.display_name(),
            detail: self
                .blank(&format!("{error} in {:?}", data.chars().take(120).collect::<String>())),
        })
    }

    /// `detail` as it may be shown: cut, and the key blanked if the server echoed it.
    pub(crate) fn blank(&self, detail: &str) -> String {
        crate::error::clean_detail(detail, self.key.as_deref())
    }

    pub(crate) fn in_stream(&self, error: &Value) -> ProviderError {
        classify_in_stream(self.provider, &self.model, error, self.key.as_deref())
    }

    pub(crate) fn keep_tokens(&mut self, choices: impl IntoIterator<Item = TokenChoice>) {
        let room = MAX_TOKEN_CHOICES.saturating_sub(self.tokens.len());
        self.tokens.extend(choices.into_iter().take(room));
    }
}
