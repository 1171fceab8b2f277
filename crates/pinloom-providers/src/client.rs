//! The HTTP client: sends a [`WireRequest`] with its key, retries what is worth retrying before
//! the reply starts, streams the reply's text to a channel as it arrives, and ends the HTTP
//! stream on cancel. A stream that breaks, stalls or turns into an error keeps the text received
//! so far: the [`Reply`] comes back with its `interruption` set, never as a bare error.

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::decode::{Decoder, ReplyEvent, Usage, read_reply};
use crate::error::{ProviderError, classify, env_hint};
use crate::keys::ApiKey;
use crate::retry::{RetryPolicy, parse_retry_after, with_retries};
use crate::wire::{Framing, ProviderId, WireRequest};

/// How long to wait at each stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// To open the connection.
    pub connect: Duration,
    /// From sending the request to the response's headers. Generous: a local model may have to
    /// load first, and some providers queue requests.
    pub response: Duration,
    /// Between two chunks of the reply (a keep-alive counts as a chunk).
    pub idle: Duration,
    /// For the whole reply, from the response's headers to its end: a server that trickles
    /// keep-alives (or text) forever never trips `idle`. An hour is longer than any model
    /// writes; what arrived by then is kept, marked incomplete.
    pub total: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            connect: Duration::from_secs(10),
            response: Duration::from_secs(300),
            idle: Duration::from_secs(120),
            total: Duration::from_secs(3_600),
        }
    }
}

/// A finished, broken or cancelled reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The text received.
    pub text: String,
    /// The usage the provider reported (empty when the stream broke before it came).
    pub usage: Usage,
    /// Why the model stopped, as the provider said.
    pub finish_reason: Option<String>,
    /// The generated tokens with their log-probabilities and alternatives, when the provider
    /// reported them (continuations from servers that were asked: see `wire::build`).
    pub tokens: Vec<crate::decode::TokenChoice>,
    /// What ended the reply early, if something did; the reply is then incomplete.
    pub interruption: Option<ProviderError>,
    /// How many times the request was sent.
    pub attempts: u32,
    /// From sending the request to its first piece of text, retries' waits included.
    pub first_text_after: Option<Duration>,
    /// From sending the request to the end of the reply.
    pub took: Duration,
}

impl Reply {
    /// Whether the reply did not finish.
    pub fn is_incomplete(&self) -> bool {
        self.interruption.is_some()
    }
}

/// Talks to providers. Cheap to clone; one per process is enough.
#[derive(Debug, Clone)]
pub struct Provider {
    http: reqwest::Client,
    timeouts: Timeouts,
    policy: RetryPolicy,
}

/// Why the byte stream stopped early.
#[derive(Debug, thiserror::Error)]
enum ByteFailure {
    #[error("no data for {} s", .0.as_secs())]
    Idle(Duration),
    /// The whole reply took longer than it may.
    #[error("the reply went on for {} s", .0.as_secs())]
    Deadline(Duration),
    /// More bytes than the answer may have.
    #[error("the answer passed its size limit")]
    TooLarge,
    /// A line or an event longer than any a provider sends.
    #[error("a line or event passed its size limit")]
    EventTooLarge,
    #[error("{0}")]
    Transport(reqwest::Error),
}

impl Provider {
    /// A client with these timeouts and retry policy.
    pub fn new(timeouts: Timeouts, policy: RetryPolicy) -> Result<Provider, ProviderError> {
        let http = reqwest::Client::builder()
            .connect_timeout(timeouts.connect)
            // A redirect would carry the key to another address: reqwest drops only
            // `Authorization` across hosts, so Anthropic's and Gemini's key headers would follow,
            // and a 307/308 resends the whole conversation. A redirect is reported instead.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("Pinloom/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| ProviderError::HttpClient { detail: error.to_string() })?;
        Ok(Provider { http, timeouts, policy })
    }

    /// Sends `request` and streams the reply: each piece of text goes to `events` as it arrives,
    /// and the whole comes back as a [`Reply`].
    ///
    /// Errors before any reply (no key, refused, unreachable, every retry used) are `Err`; once
    /// the stream has started, a failure or `cancel` ends it with `Ok(Reply)` whose
    /// `interruption` says why, so the partial text is never lost.
    pub async fn stream(
        &self,
        request: &WireRequest,
        key: Option<&ApiKey>,
        events: &UnboundedSender<ReplyEvent>,
        cancel: &CancellationToken,
    ) -> Result<Reply, ProviderError> {
        let provider = request.provider;
        if key.is_none() && provider.key_variable().is_some() {
            return Err(ProviderError::MissingKey {
                provider: provider.display_name(),
                env: env_hint(provider),
            });
        }
        let secret = key.map(ApiKey::expose);
        let body = request.body.to_string();
        let started = std::time::Instant::now();
        let mut attempts = 0;
        let send = with_retries(
            self.policy,
            |_| {
                attempts += 1;
                self.send_once(request, secret, body.clone())
            },
            |attempt, wait, error| {
                // The channel's receiver may be gone (the window closed); the reply goes on.
                let _ =
                    events.send(ReplyEvent::Retrying { attempt, wait, reason: error.to_string() });
            },
        );
        let response = tokio::select! {
            () = cancel.cancelled() => return Err(ProviderError::Cancelled),
            response = send => response?,
        };
        let mut decoder = Decoder::new(provider, &request.model, request.completion, secret);
        let bytes = deadline_limited(
            idle_limited(
                response.bytes_stream(),
                self.timeouts.idle,
                MAX_REPLY_BYTES,
                MAX_EVENT_BYTES,
            ),
            self.timeouts.total,
        );
        let json_lines = request.framing == Framing::JsonLines;
        let failure = |failure| byte_failure(provider, failure);
        let first_text = std::sync::OnceLock::new();
        let (text, interruption) =
            read_reply(&mut decoder, json_lines, bytes, events, cancel, failure, &first_text).await;
        let interruption = interruption.or_else(|| {
            let nothing_came = text.is_empty()
                && decoder.finish_reason.is_none()
                && decoder.usage == crate::decode::Usage::default();
            (!decoder.finished).then(|| {
                if nothing_came {
                    ProviderError::ClosedWithoutReply { provider: provider.display_name() }
                } else {
                    ProviderError::StreamBroken {
                        provider: provider.display_name(),
                        detail: "the server closed the connection".to_owned(),
                    }
                }
            })
        });
        Ok(Reply {
            text,
            usage: decoder.usage,
            finish_reason: decoder.finish_reason,
            tokens: decoder.tokens,
            interruption,
            attempts,
            first_text_after: first_text.get().map(|at| at.duration_since(started)),
            took: started.elapsed(),
        })
    }

    async fn send_once(
        &self,
        request: &WireRequest,
        key: Option<&str>,
        body: String,
    ) -> Result<reqwest::Response, ProviderError> {
        let provider = request.provider;
        let mut builder = self.http.post(&request.url).body(body);
        for (name, value) in &request.headers {
            builder = builder.header(*name, value);
        }
        if let Some(key) = key {
            let (name, value) = key_header(provider, key)?;
            builder = builder.header(name, value);
        }
        let sent = tokio::time::timeout(self.timeouts.response, builder.send()).await;
        let response = match sent {
            Err(_) => {
                return Err(ProviderError::TimedOut {
                    provider: provider.display_name(),
                    phase: "before answering",
                    waited: self.timeouts.response,
                });
            }
            Ok(Err(error)) => {
                return Err(send_error(provider, &request.url, &error, self.timeouts));
            }
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        if status.is_redirection() {
            return Err(redirected(provider, &response, key));
        }
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| parse_retry_after(value, SystemTime::now()));
        let body = read_capped(response, MAX_ERROR_BODY_BYTES, self.timeouts.idle)
            .await
            .map(|(body, _)| body)
            .unwrap_or_default();
        Err(classify(provider, &request.model, status.as_u16(), retry_after, &body, key))
    }
}

impl Provider {
    /// A small non-streaming request (model discovery): GET, or POST with a JSON body; the
    /// answer's text, or the provider's error read as [`classify`] reads it.
    pub(crate) async fn plain_request(
        &self,
        provider: ProviderId,
        url: &str,
        body: Option<serde_json::Value>,
    ) -> Result<String, ProviderError> {
        let builder = match body {
            None => self.http.get(url),
            Some(body) => self
                .http
                .post(url)
                .header("content-type", "application/json")
                .body(body.to_string()),
        };
        let response = match tokio::time::timeout(self.timeouts.response, builder.send()).await {
            Err(_) => {
                return Err(ProviderError::TimedOut {
                    provider: provider.display_name(),
                    phase: "before answering",
                    waited: self.timeouts.response,
                });
            }
            Ok(Err(error)) => return Err(send_error(provider, url, &error, self.timeouts)),
            Ok(Ok(response)) => response,
        };
        if response.status().is_redirection() {
            return Err(redirected(provider, &response, None));
        }
        let status = response.status().as_u16();
        let text = match read_capped(response, MAX_PLAIN_ANSWER_BYTES, self.timeouts.idle).await {
            Ok((text, false)) => text,
            Ok((_, true)) | Err(ByteFailure::TooLarge | ByteFailure::EventTooLarge) => {
                return Err(ProviderError::Malformed {
                    provider: provider.display_name(),
                    detail: format!(
                        "its answer is larger than {} MiB, which no list of models is",
                        MAX_PLAIN_ANSWER_BYTES >> 20
                    ),
                });
            }
            Err(ByteFailure::Transport(error)) => {
                return Err(ProviderError::StreamBroken {
                    provider: provider.display_name(),
                    detail: error.to_string(),
                });
            }
            Err(ByteFailure::Idle(waited) | ByteFailure::Deadline(waited)) => {
                return Err(ProviderError::TimedOut {
                    provider: provider.display_name(),
                    phase: "in the middle of the answer",
                    waited,
                });
            }
        };
        if (200..300).contains(&status) {
            Ok(text)
        } else {
            Err(classify(provider, "", status, None, &text, None))
        }
    }
}

fn send_error(
    provider: ProviderId,
    url: &str,
    error: &reqwest::Error,
    timeouts: Timeouts,
) -> ProviderError {
    if error.is_timeout() {
        return ProviderError::TimedOut {
            provider: provider.display_name(),
            phase: "while connecting",
            waited: timeouts.connect,
        };
    }
    // The innermost cause names the problem ("Connection refused"); reqwest's own text is
    // generic ("error sending request").
    let mut detail = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        detail = cause.to_string();
        source = cause.source();
    }
    ProviderError::Unreachable { provider: provider.display_name(), url: url.to_owned(), detail }
}

/// The most a streamed reply may carry: far beyond any model's longest reply (a 128k-token
/// reply is about 0.5 MiB of text, a few MiB with its framing), so a server that never stops
/// cannot fill memory; past it, what arrived is kept and the reply is marked incomplete.
pub const MAX_REPLY_BYTES: usize = 64 << 20;
/// The longest line or event a reply may have. The largest real ones are a few KiB (a Gemini
/// chunk with its safety ratings, a usage event); an image model's base64 chunk could reach
/// hundreds of KiB.
pub const MAX_EVENT_BYTES: usize = 4 << 20;
/// The most of an error answer's body that is read: provider errors are a few hundred bytes.
const MAX_ERROR_BODY_BYTES: usize = 64 << 10;
/// The most of a model list (discovery) that is read.
const MAX_PLAIN_ANSWER_BYTES: usize = 16 << 20;

/// The response's bytes, ending with [`ByteFailure::Idle`] when none arrive for `idle`, and
/// with [`ByteFailure::TooLarge`] or [`ByteFailure::EventTooLarge`] past `limit` bytes in all
/// or `event_limit` in one line or event.
fn idle_limited(
    bytes: impl Stream<Item = reqwest::Result<Bytes>> + Unpin,
    idle: Duration,
    limit: usize,
    event_limit: usize,
) -> impl Stream<Item = Result<Bytes, ByteFailure>> + Unpin {
    // The state is what was read so far, or `None` once a failure ended the stream.
    let start = (bytes, Some(Measure::default()));
    Box::pin(futures_util::stream::unfold(start, move |(mut bytes, measure)| async move {
        let mut measure = measure?;
        match tokio::time::timeout(idle, bytes.next()).await {
            Err(_) => Some((Err(ByteFailure::Idle(idle)), (bytes, None))),
            Ok(None) => None,
            Ok(Some(Ok(chunk))) => match measure.add(&chunk, limit, event_limit) {
                Ok(()) => Some((Ok(chunk), (bytes, Some(measure)))),
                Err(failure) => Some((Err(failure), (bytes, None))),
            },
            Ok(Some(Err(error))) => Some((Err(ByteFailure::Transport(error)), (bytes, None))),
        }
    }))
}

/// The bytes until `total` has passed since the first was asked for, then
/// [`ByteFailure::Deadline`].
fn deadline_limited(
    bytes: impl Stream<Item = Result<Bytes, ByteFailure>> + Unpin,
    total: Duration,
) -> impl Stream<Item = Result<Bytes, ByteFailure>> + Unpin {
    let deadline = tokio::time::Instant::now() + total;
    let start = (bytes, false);
    Box::pin(futures_util::stream::unfold(start, move |(mut bytes, ended)| async move {
        if ended {
            return None;
        }
        match tokio::time::timeout_at(deadline, bytes.next()).await {
            Err(_) => Some((Err(ByteFailure::Deadline(total)), (bytes, true))),
            Ok(next) => next.map(|next| (next, (bytes, false))),
        }
    }))
}

/// How much of a stream was read, and how long its current line and event are so far.
#[derive(Debug, Default, Clone, Copy)]
struct Measure {
    total: usize,
    line: usize,
    event: usize,
}

impl Measure {
    /// Counts `chunk`: too much in all (`limit`), or a line or event of more than
    /// `event_limit`, is a failure. The SSE and NDJSON decoders hold a line or event until it
    /// ends, and read it again as more arrives, so one without end would cost memory and time
    /// without limit.
    fn add(&mut self, chunk: &[u8], limit: usize, event_limit: usize) -> Result<(), ByteFailure> {
        self.total = self.total.saturating_add(chunk.len());
        if self.total > limit {
            return Err(ByteFailure::TooLarge);
        }
        for &byte in chunk {
            if byte == b'\n' {
                // An empty line ends an SSE event.
                self.event = if self.line == 0 { 0 } else { self.event + 1 };
                self.line = 0;
            } else if byte != b'\r' {
                self.line += 1;
                self.event += 1;
            }
        }
        if self.line > event_limit || self.event > event_limit {
            return Err(ByteFailure::EventTooLarge);
        }
        Ok(())
    }
}

/// The start of a response's body, up to `limit` bytes (lossy UTF-8), and whether there was
/// more.
async fn read_capped(
    response: reqwest::Response,
    limit: usize,
    idle: Duration,
) -> Result<(String, bool), ByteFailure> {
    // Bounded by `limit` below; an error or a model list is one JSON text, one line or many.
    let mut bytes = idle_limited(response.bytes_stream(), idle, usize::MAX, usize::MAX);
    let mut body = Vec::new();
    while let Some(chunk) = bytes.next().await {
        let chunk = chunk?;
        let room = limit - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((String::from_utf8_lossy(&body).into_owned(), true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((String::from_utf8_lossy(&body).into_owned(), false))
}

/// The header that carries `key` for `family`, marked sensitive so that no debug output or log of
/// the request shows it: Anthropic's `x-api-key`, Gemini's `x-goog-api-key` (a header, not the
/// `?key=` query, so the key never appears in a URL), and a bearer token for the rest.
pub(crate) fn key_header(
    provider: ProviderId,
    key: &str,
) -> Result<(reqwest::header::HeaderName, reqwest::header::HeaderValue), ProviderError> {
    use reqwest::header::{HeaderName, HeaderValue};
    let (name, text): (HeaderName, String) =
        crate::family::wire_of(provider.family()).key_header(key);
    let mut value = HeaderValue::from_str(&text)
        .map_err(|_| ProviderError::KeyUnusable { provider: provider.display_name() })?;
    value.set_sensitive(true);
    Ok((name, value))
}

/// A redirect, refused: following it would send the key and the conversation to an address the
/// person never chose. The address is said with the key blanked: a server may put it there.
fn redirected(
    provider: ProviderId,
    response: &reqwest::Response,
    key: Option<&str>,
) -> ProviderError {
    let location = response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|value| value.to_str().ok())
        .map(|location| crate::error::clean_detail(location, key))
        .unwrap_or_else(|| "an address it did not give".to_owned());
    ProviderError::Rejected {
        provider: provider.display_name(),
        status: response.status().as_u16(),
        detail: format!(
            "it redirects to {location}; Pinloom does not follow redirects, so your key and your \
             conversation go only to the address in the profile: if the service moved, put its \
             new address in the profile"
        ),
    }
}

fn byte_failure(provider: ProviderId, failure: ByteFailure) -> ProviderError {
    match failure {
        ByteFailure::Idle(waited) => ProviderError::TimedOut {
            provider: provider.display_name(),
            phase: "in the middle of the reply",
            waited,
        },
        ByteFailure::Deadline(took) => {
            ProviderError::ReplyTooLong { provider: provider.display_name(), took }
        }
        ByteFailure::EventTooLarge => ProviderError::Malformed {
            provider: provider.display_name(),
            detail: format!(
                "a line of the reply passed {} MiB without ending; Pinloom kept what arrived and \
                 stopped reading",
                MAX_EVENT_BYTES >> 20
            ),
        },
        ByteFailure::TooLarge => ProviderError::Malformed {
            provider: provider.display_name(),
            detail: format!(
                "the reply passed {} MiB without ending; Pinloom kept what arrived and stopped \
                 reading",
                MAX_REPLY_BYTES >> 20
            ),
        },
        ByteFailure::Transport(error) => ProviderError::StreamBroken {
            provider: provider.display_name(),
            detail: error.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::key_header;
    use crate::wire::ProviderId;

    #[test]
    fn every_key_header_is_marked_sensitive() {
        for provider in [ProviderId::Anthropic, ProviderId::Gemini, ProviderId::OpenAi] {
            let (name, value) = key_header(provider, "sk-secret-key-123").unwrap();
            assert!(value.is_sensitive(), "{name}");
            assert!(!format!("{value:?}").contains("secret"), "{name}: {value:?}");
        }
        let (name, _) = key_header(ProviderId::Gemini, "k").unwrap();
        assert_eq!(name.as_str(), "x-goog-api-key");
        assert!(key_header(ProviderId::OpenAi, "sk-\nInjected: header").is_err());
    }
}
