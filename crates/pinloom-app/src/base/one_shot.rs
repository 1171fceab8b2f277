//! One request to a model whose answer nobody watches arrive: a summary (of a thread, for a
//! compaction, or condensed), a pin's suggested result, a connection test. Sent and sorted in
//! one place, so that each caller says only what the answer is for and how to word its lack.

use pinloom_providers::{ApiKey, ProviderError, Reply, WireRequest};
use tokio_util::sync::CancellationToken;

use crate::base::pinloom::Pinloom;
use crate::runtime::now_ms;

/// What one request brought.
pub(crate) struct OneShot {
    /// When it was sent.
    pub(crate) started_at_ms: i64,
    /// The provider's reply, or why none came.
    pub(crate) sent: Result<Reply, ProviderError>,
}

/// What a one-shot request's answer is.
pub(crate) enum Answer<'a> {
    /// Text, trimmed.
    Text(&'a str),
    /// A reply with no text in it.
    Empty,
    /// A reply broken off before its end.
    BrokenOff(&'a ProviderError),
    /// No reply: the request failed (or was cancelled).
    Failed(&'a ProviderError),
}

impl OneShot {
    /// The reply, when one came: what the request's record keeps of it (tokens, cost).
    pub(crate) fn reply(&self) -> Option<&Reply> {
        self.sent.as_ref().ok()
    }

    /// What the answer is.
    pub(crate) fn answer(&self) -> Answer<'_> {
        match &self.sent {
            Err(error) => Answer::Failed(error),
            Ok(Reply { interruption: Some(interruption), .. }) => Answer::BrokenOff(interruption),
            Ok(reply) if reply.text.trim().is_empty() => Answer::Empty,
            Ok(reply) => Answer::Text(reply.text.trim()),
        }
    }
}

impl Pinloom {
    /// Sends `wire` once (the client retries what it retries) until `cancel`.
    pub(crate) async fn ask_once(
        &self,
        wire: &WireRequest,
        key: Option<&ApiKey>,
        cancel: &CancellationToken,
    ) -> OneShot {
        // Nobody watches the answer arrive: its pieces go nowhere.
        let (pieces, _) = tokio::sync::mpsc::unbounded_channel();
        let started_at_ms = now_ms();
        let sent = self.provider.stream(wire, key, &pieces, cancel).await;
        OneShot { started_at_ms, sent }
    }
}
