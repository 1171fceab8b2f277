//! A reply while it streams: what has arrived is saved as a draft every second, so a crash or a
//! killed process loses at most that much, and drafts left by a process that stopped are written
//! as incomplete replies when a database is opened.

use std::sync::Arc;
use std::time::Duration;

use pinloom_providers::{ApiKey, ProviderError, ReplyEvent, WireRequest};
use pinloom_store::{self as store, NodeId, Store};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::base::pinloom::Pinloom;
use crate::runtime::{blocking, now_ms};

/// How often what has arrived of a streaming reply is saved: a crash loses at most this much.
const DRAFT_EVERY: Duration = Duration::from_secs(1);
/// A draft not saved for this long belongs to a process that stopped: a streaming process
/// saves its draft every [`DRAFT_EVERY`], even while the model is silent.
const DRAFT_STALE_MS: i64 = 10_000;

/// Where a streaming reply's draft goes.
pub(super) struct Drafting {
    pub(super) tree: store::TreeId,
    pub(super) parent: NodeId,
    pub(super) model: String,
}

impl Pinloom {
    /// Streams a reply, passing its events on to `events`, and saves what has arrived as a
    /// draft every [`DRAFT_EVERY`] (one short transaction each, never per token). Returns the
    /// reply and its draft, if one was saved (there is none before the first text).
    pub(super) async fn stream_saving_drafts(
        &self,
        wire: &WireRequest,
        key: Option<&ApiKey>,
        events: &UnboundedSender<ReplyEvent>,
        cancel: &CancellationToken,
        drafting: Drafting,
    ) -> (Result<pinloom_providers::Reply, ProviderError>, Option<i64>) {
        let (pieces, mut arriving) = tokio::sync::mpsc::unbounded_channel();
        let streaming = async move {
            let reply = self.provider.stream(wire, key, &pieces, cancel).await;
            drop(pieces); // the saver below stops when the stream does
            reply
        };
        let saving = async {
            let drafting = Arc::new(drafting);
            let mut text = String::new();
            let mut draft: Option<i64> = None;
            let mut every = tokio::time::interval(DRAFT_EVERY);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            every.tick().await; // the first tick is immediate
            loop {
                tokio::select! {
                    event = arriving.recv() => match event {
                        Some(event) => {
                            match &event {
                                ReplyEvent::Text(piece) => text.push_str(piece),
                                // A retry starts the reply over.
                                ReplyEvent::Retrying { .. } => text.clear(),
                                ReplyEvent::Saved { .. } => {}
                            }
                            let _ = events.send(event);
                        }
                        None => break,
                    },
                    _ = every.tick() => {
                        if text.is_empty() {
                            continue;
                        }
                        // Saved even when nothing new arrived: the save says the reply is
                        // still alive (see DRAFT_STALE_MS). A failed save costs only the
                        // crash safety of this reply, never the reply itself.
                        let store = self.store.clone();
                        let drafting = drafting.clone();
                        let so_far = text.clone();
                        let saved = blocking(move || {
                            Ok(store.save_reply_draft(
                                draft,
                                drafting.tree,
                                drafting.parent,
                                &drafting.model,
                                &so_far,
                                std::process::id(),
                                now_ms(),
                            )?)
                        })
                        .await;
                        match saved {
                            Ok(id) => {
                                draft = Some(id);
                                let characters = text.chars().count() as u64;
                                let _ = events.send(ReplyEvent::Saved { characters });
                            }
                            Err(error) => {
                                tracing::warn!("could not save the reply so far: {error:#}");
                            }
                        }
                    }
                }
            }
            draft
        };
        tokio::join!(streaming, saving)
    }

    /// Forgets the draft of a reply that is not kept.
    pub(super) async fn discard_draft(&self, draft: Option<i64>) -> anyhow::Result<()> {
        let Some(draft) = draft else { return Ok(()) };
        let store = self.store.clone();
        blocking(move || Ok(store.discard_reply_draft(draft)?)).await
    }
}

/// Writes what a process that stopped mid-reply had saved as incomplete replies: run when a
/// database is opened. A draft was left when its process is gone, or (where that cannot be
/// told) when it has not been saved for [`DRAFT_STALE_MS`].
pub(crate) fn recover_replies(store: &Store) -> Result<(), store::StoreError> {
    let stale_before = now_ms() - DRAFT_STALE_MS;
    let recovered = store.recover_reply_drafts(|owner, saved_at_ms| {
        saved_at_ms < stale_before || process_gone(owner)
    })?;
    if !recovered.is_empty() {
        tracing::info!("{} reply(ies) cut off by a stop were kept as incomplete", recovered.len());
    }
    Ok(())
}

/// Whether process `pid` has ended. Only Linux can tell cheaply (`/proc`); elsewhere a draft's
/// age decides alone.
fn process_gone(pid: u32) -> bool {
    cfg!(target_os = "linux")
        && pid != std::process::id()
        && !std::path::Path::new("/proc").join(pid.to_string()).exists()
}
