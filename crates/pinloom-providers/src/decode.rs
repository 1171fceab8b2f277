//! Decoding reply streams: pure, a decoder fed one frame at a time (an SSE event from
//! `eventsource-stream`, or one NDJSON line from [`JsonLines`]), each frame read by its family's
//! rules (`family/`). Decoders never panic on any input; every fuzz target drives them with
//! arbitrary bytes.

use bytes::Bytes;
use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::{FutureExt, Stream, StreamExt, stream};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

// Named from here too, where they have always been named.
pub use crate::decoder::{Decoded, Decoder, MAX_TOKEN_CHOICES, ReplyEvent, TokenChoice, Usage};
use crate::error::ProviderError;
use crate::family::{decode_line, wire_of};
use crate::wire::ProviderId;
use pinloom_engine::profile::ProviderFamily;

// Reading a frame is the family's; a decoder is fed here.
impl Decoder {
    /// Decodes one SSE event (`event` is its type, empty when the frame gave none).
    pub fn event(&mut self, event: &str, data: &str) -> Result<Decoded, ProviderError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(Decoded::default());
        }
        wire_of(self.provider().family()).decode(self, event, data)
    }

    /// Decodes one NDJSON line (Ollama).
    pub fn line(&mut self, line: &str) -> Result<Decoded, ProviderError> {
        decode_line(self, line)
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
