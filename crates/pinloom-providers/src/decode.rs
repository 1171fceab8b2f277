//! Decoding reply streams: pure, one decoder per wire family, fed one frame at a time (an SSE
//! event from `eventsource-stream`, or one NDJSON line from [`JsonLines`]). Decoders never panic
//! on any input; every fuzz target drives them with arbitrary bytes.

use bytes::Bytes;
use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::{FutureExt, Stream, StreamExt, stream};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::error::{ProviderError, classify_in_stream};
use crate::wire::ProviderId;
use pinloom_engine::profile::ProviderFamily;

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
    provider: ProviderId,
    model: String,
    completion: bool,
    /// The key, only to blank it from error details.
    key: Option<String>,
    /// The usage so far (Anthropic reports input at the start and output at the end).
    pub usage: Usage,
    /// Why the reply stopped, as the provider said (`stop`, `end_turn`, `length`, …).
    pub finish_reason: Option<String>,
    /// Whether the provider said the reply is complete (a finish reason, an end marker).
    pub finished: bool,
    /// The generated tokens with their alternatives, when the provider reported them.
    pub tokens: Vec<TokenChoice>,
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

    /// Decodes one SSE event (`event` is its type, empty when the frame gave none).
    pub fn event(&mut self, event: &str, data: &str) -> Result<Decoded, ProviderError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(Decoded::default());
        }
        match self.provider.family() {
            ProviderFamily::OpenAiCompatible => {
                if data == "[DONE]" {
                    self.finished = true;
                    return Ok(Decoded { finished: true, ..Decoded::default() });
                }
                let value = self.json(data)?;
                self.openai(&value)
            }
            ProviderFamily::Anthropic => {
                let value = self.json(data)?;
                self.anthropic(event, &value)
            }
            ProviderFamily::Gemini => {
                let value = self.json(data)?;
                self.gemini(&value)
            }
            ProviderFamily::Ollama => self.line(data),
        }
    }

    /// Decodes one NDJSON line (Ollama).
    pub fn line(&mut self, line: &str) -> Result<Decoded, ProviderError> {
        let line = line.trim();
        if line.is_empty() {
            return Ok(Decoded::default());
        }
        let value = self.json(line)?;
        if let Some(error) = value.get("error") {
            return Err(self.in_stream(&serde_json::json!({ "message": text_of(error) })));
        }
        let text = if self.completion {
            value.get("response").and_then(Value::as_str)
        } else {
            value.pointer("/message/content").and_then(Value::as_str)
        };
        let mut decoded = Decoded { text: text.unwrap_or_default().to_owned(), finished: false };
        if self.completion
            && let Some(entries) = value.get("logprobs").and_then(Value::as_array)
        {
            self.keep_tokens(entries.iter().filter_map(entry_choice));
        }
        if value.get("done").and_then(Value::as_bool) == Some(true) {
            self.usage.input_tokens = value.get("prompt_eval_count").and_then(Value::as_u64);
            self.usage.output_tokens = value.get("eval_count").and_then(Value::as_u64);
            self.finish_reason =
                value.get("done_reason").and_then(Value::as_str).map(str::to_owned);
            self.finished = true;
            decoded.finished = true;
        }
        Ok(decoded)
    }

    fn json(&self, data: &str) -> Result<Value, ProviderError> {
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

    fn in_stream(&self, error: &Value) -> ProviderError {
        classify_in_stream(self.provider, &self.model, error, self.key.as_deref())
    }

    fn openai(&mut self, value: &Value) -> Result<Decoded, ProviderError> {
        // OpenRouter reports a failure mid-stream as an `error` field with HTTP 200.
        if let Some(error) = value.get("error").filter(|error| !error.is_null()) {
            return Err(self.in_stream(error));
        }
        let mut decoded = Decoded::default();
        if let Some(choice) = value.get("choices").and_then(Value::as_array).and_then(|c| c.first())
        {
            let text =
                if self.completion { choice.get("text") } else { choice.pointer("/delta/content") };
            decoded.text = text.and_then(Value::as_str).unwrap_or_default().to_owned();
            if self.completion
                && let Some(logprobs) = choice.get("logprobs").filter(|l| l.is_object())
            {
                self.keep_tokens(completion_choices(logprobs));
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(reason.to_owned());
                // Complete, though usage and `[DONE]` may follow; some servers send no `[DONE]`.
                self.finished = true;
            }
        }
        if let Some(usage) = value.get("usage").filter(|usage| usage.is_object()) {
            self.usage.input_tokens = usage.get("prompt_tokens").and_then(Value::as_u64);
            self.usage.output_tokens = usage.get("completion_tokens").and_then(Value::as_u64);
            self.usage.cached_input_tokens =
                usage.pointer("/prompt_tokens_details/cached_tokens").and_then(Value::as_u64);
        }
        Ok(decoded)
    }

    fn keep_tokens(&mut self, choices: impl IntoIterator<Item = TokenChoice>) {
        let room = MAX_TOKEN_CHOICES.saturating_sub(self.tokens.len());
        self.tokens.extend(choices.into_iter().take(room));
    }

    fn anthropic(&mut self, event: &str, value: &Value) -> Result<Decoded, ProviderError> {
        let kind = value.get("type").and_then(Value::as_str).unwrap_or(event);
        let mut decoded = Decoded::default();
        match kind {
            "message_start" => {
                let usage = value.pointer("/message/usage");
                let read = |field: &str| usage.and_then(|u| u.get(field)).and_then(Value::as_u64);
                self.usage.cached_input_tokens = read("cache_read_input_tokens");
                self.usage.cache_write_input_tokens = read("cache_creation_input_tokens");
                // Anthropic's input_tokens leaves out what the cache read or wrote.
                self.usage.input_tokens = read("input_tokens").map(|uncached| {
                    uncached
                        + self.usage.cached_input_tokens.unwrap_or(0)
                        + self.usage.cache_write_input_tokens.unwrap_or(0)
                });
                self.usage.output_tokens = read("output_tokens");
            }
            "content_block_delta"
                if value.pointer("/delta/type").and_then(Value::as_str) == Some("text_delta") =>
            {
                decoded.text = value
                    .pointer("/delta/text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
            }
            "message_delta" => {
                if let Some(reason) = value.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.finish_reason = Some(reason.to_owned());
                }
                // Cumulative, so it replaces the count from `message_start`.
                if let Some(output) = value.pointer("/usage/output_tokens").and_then(Value::as_u64)
                {
                    self.usage.output_tokens = Some(output);
                }
                if let Some(input) = value.pointer("/usage/input_tokens").and_then(Value::as_u64) {
                    let usage = value.get("usage");
                    let read =
                        |field: &str| usage.and_then(|u| u.get(field)).and_then(Value::as_u64);
                    if let Some(read_tokens) = read("cache_read_input_tokens") {
                        self.usage.cached_input_tokens = Some(read_tokens);
                    }
                    if let Some(written) = read("cache_creation_input_tokens") {
                        self.usage.cache_write_input_tokens = Some(written);
                    }
                    self.usage.input_tokens = Some(
                        input
                            + self.usage.cached_input_tokens.unwrap_or(0)
                            + self.usage.cache_write_input_tokens.unwrap_or(0),
                    );
                }
            }
            "message_stop" => {
                self.finished = true;
                decoded.finished = true;
            }
            "error" => {
                let error = value.get("error").cloned().unwrap_or(Value::Null);
                return Err(self.in_stream(&error));
            }
            // `ping`, block starts and stops, thinking and tool-input deltas, and event types
            // added later: ignored, as Anthropic asks of clients.
            _ => {}
        }
        Ok(decoded)
    }

    fn gemini(&mut self, value: &Value) -> Result<Decoded, ProviderError> {
        if let Some(error) = value.get("error") {
            return Err(self.in_stream(error));
        }
        let mut decoded = Decoded::default();
        if let Some(candidate) =
            value.get("candidates").and_then(Value::as_array).and_then(|c| c.first())
        {
            for part in
                candidate.pointer("/content/parts").and_then(Value::as_array).into_iter().flatten()
            {
                // Thought summaries are not the reply.
                if part.get("thought").and_then(Value::as_bool) == Some(true) {
                    continue;
                }
                if let Some(text) = part.get("text").and_then(Value::as_str) {
                    decoded.text.push_str(text);
                }
            }
            if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
                self.finish_reason = Some(reason.to_owned());
                // Complete, but not the end: Gemini has no end marker, and older models put a
                // finish reason on every frame. The stream's end is its EOF.
                self.finished = true;
            }
        }
        if let Some(usage) = value.get("usageMetadata") {
            self.usage.input_tokens = usage.get("promptTokenCount").and_then(Value::as_u64);
            self.usage.output_tokens = usage.get("candidatesTokenCount").and_then(Value::as_u64);
            self.usage.cached_input_tokens =
                usage.get("cachedContentTokenCount").and_then(Value::as_u64);
        }
        Ok(decoded)
    }
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Splits a byte stream into lines, across chunk boundaries that may fall anywhere, even inside
/// a UTF-8 character.
#[derive(Debug, Default)]
pub struct JsonLines {
    pending: Vec<u8>,
}

impl JsonLines {
    /// Adds a chunk; returns the lines it completed, without their line ends.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(chunk);
        let mut lines = Vec::new();
        while let Some(end) = self.pending.iter().position(|&byte| byte == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            lines.push(String::from_utf8_lossy(&line[..end]).trim_end_matches('\r').to_owned());
        }
        lines
    }

    /// The last line, when the stream ended without a line end.
    pub fn finish(&mut self) -> Option<String> {
        let rest = std::mem::take(&mut self.pending);
        (!rest.is_empty()).then(|| String::from_utf8_lossy(&rest).into_owned())
    }
}

/// Reads a reply's bytes to its end: SSE events through `eventsource-stream`, or NDJSON lines,
/// each handed to `decoder`, each piece of text sent to `events` as it comes. Stops at the
/// family's end marker, at the end of the bytes, at the first error (a transport failure becomes
/// what `failure` makes of it), or when `cancel` fires; the text read so far is always returned.
/// The client reads the network this way, and [`decode_chunks`] (tests, fuzzing) reads chunks in
/// memory the same way.
/// `first_text` is set to when the first piece of text arrived (the reply's latency).
pub(crate) async fn read_reply<E: std::fmt::Display>(
    decoder: &mut Decoder,
    json_lines: bool,
    bytes: impl Stream<Item = Result<Bytes, E>> + Unpin,
    events: &UnboundedSender<ReplyEvent>,
    cancel: &CancellationToken,
    failure: impl Fn(E) -> ProviderError,
    first_text: &std::sync::OnceLock<std::time::Instant>,
) -> (String, Option<ProviderError>) {
    let mut text = String::new();
    let take = |decoded: Result<Decoded, ProviderError>, text: &mut String| match decoded {
        Ok(decoded) => {
            if !decoded.text.is_empty() {
                first_text.get_or_init(std::time::Instant::now);
                text.push_str(&decoded.text);
                // The receiver may be gone (the window closed); the reply is still read.
                let _ = events.send(ReplyEvent::Text(decoded.text));
            }
            Ok(decoded.finished)
        }
        Err(error) => Err(error),
    };
    if json_lines {
        let mut bytes = bytes;
        let mut lines = JsonLines::default();
        loop {
            let chunk = tokio::select! {
                () = cancel.cancelled() => return (text, Some(ProviderError::Cancelled)),
                chunk = bytes.next() => chunk,
            };
            match chunk {
                None => {
                    let last = lines.finish().map(|line| take(decoder.line(&line), &mut text));
                    return (text, last.and_then(Result::err));
                }
                Some(Err(error)) => return (text, Some(failure(error))),
                Some(Ok(chunk)) => {
                    for line in lines.push(&chunk) {
                        match take(decoder.line(&line), &mut text) {
                            Ok(true) => return (text, None),
                            Ok(false) => {}
                            Err(error) => return (text, Some(error)),
                        }
                    }
                }
            }
        }
    }
    let provider = decoder.provider();
    let mut frames = bytes.eventsource();
    loop {
        let frame = tokio::select! {
            () = cancel.cancelled() => return (text, Some(ProviderError::Cancelled)),
            frame = frames.next() => frame,
        };
        let event = match frame {
            None => return (text, None),
            Some(Ok(event)) => event,
            Some(Err(EventStreamError::Transport(error))) => return (text, Some(failure(error))),
            Some(Err(error)) => {
                let detail = decoder.blank(&error.to_string());
                let malformed =
                    ProviderError::Malformed { provider: provider.display_name(), detail };
                return (text, Some(malformed));
            }
        };
        // Each decoder reports `finished` only at its family's true end (`[DONE]`,
        // `message_stop`, Ollama's `done`), after the usage; Gemini reads to the end.
        match take(decoder.event(&event.event, &event.data), &mut text) {
            Ok(true) => return (text, None),
            Ok(false) => {}
            Err(error) => return (text, Some(error)),
        }
    }
}

/// Everything a finished stream said: the text, and the error that ended it early, if any.
#[derive(Debug, Default, PartialEq)]
pub struct Transcript {
    /// The reply's text.
    pub text: String,
    /// Whether the provider said the reply was complete.
    pub finished: bool,
    /// The error that ended the stream, if one did.
    pub error: Option<ProviderError>,
}

/// Decodes a whole stream given as chunks, without a network, through [`read_reply`], the code
/// the client reads replies with. For tests and the fuzz targets.
pub fn decode_chunks(decoder: &mut Decoder, chunks: Vec<Vec<u8>>, json_lines: bool) -> Transcript {
    let (events, _) = tokio::sync::mpsc::unbounded_channel();
    let bytes = stream::iter(chunks.into_iter().map(|chunk| Ok(Bytes::from(chunk))));
    let never = |error: std::convert::Infallible| match error {};
    let cancel = CancellationToken::new();
    // Every chunk is ready at once and nothing else is awaited, so one poll reads them all.
    let first_text = std::sync::OnceLock::new();
    let read =
        read_reply(decoder, json_lines, bytes, &events, &cancel, never, &first_text).now_or_never();
    let (text, error) = read.unwrap_or_else(|| {
        let detail = "the in-memory stream did not finish in one pass".to_owned();
        (String::new(), Some(ProviderError::StreamBroken { provider: "test", detail }))
    });
    Transcript { text, finished: decoder.finished, error }
}
/// One fuzz case: the first byte chooses the chunk size (1 to 16 bytes, so chunk boundaries are
/// fuzzed too) and whether the reply is a completion; the rest is the stream. Decoding must end,
/// with text or a clear error, and never panic.
pub fn decode_fuzz_case(provider: ProviderId, data: &[u8]) -> Transcript {
    let Some((&choice, bytes)) = data.split_first() else { return Transcript::default() };
    let chunks = bytes.chunks(usize::from(choice % 16) + 1).map(<[u8]>::to_vec).collect();
    let mut decoder = Decoder::new(provider, "model", choice & 0x80 != 0, None);
    decode_chunks(&mut decoder, chunks, provider.family() == ProviderFamily::Ollama)
}

/// The tokens of one completion chunk's `logprobs`, in either shape servers send: the legacy
/// completions one (`tokens`, `token_logprobs`, `top_logprobs` as one object per token, which
/// OpenAI, vLLM and llama-cpp-python send) or the chat one (`content`, a list of entries, which
/// llama.cpp's own server sends on its completions endpoint too).
fn completion_choices(logprobs: &Value) -> Vec<TokenChoice> {
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
fn entry_choice(entry: &Value) -> Option<TokenChoice> {
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
