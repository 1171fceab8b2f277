//! Pins: pin a passage and open its sub-thread, list, delete and restore threads, and close a pin
//! with a result (written by hand or summarised by a model) that shows in the parent thread.

use anyhow::Context;
use pinloom_store::{NodeId, PinId, RequestKind, TreeId};
use tokio_util::sync::CancellationToken;

use super::summaries::{Purpose, Sent};
use crate::base::one_shot::Answer;
use crate::base::pinloom::Pinloom;
use crate::error::ApiError;
use crate::json::{DeletedThreadView, NodeView, PinView};
use crate::runtime::{blocking, now_ms};

/// What a pin's result is summarised with when closed by a model.
const PIN_RESULT_INSTRUCTION: &str = "You close a sub-thread of a conversation. Write its result \
for the thread it was opened from: what was found or decided, and what is still open, in at most \
{budget} tokens of plain prose.";

/// The budget of a result a model writes.
const PIN_RESULT_BUDGET: u32 = 300;

impl Pinloom {
    /// Pins the passage `start..end` (UTF-16 units, as a browser selection counts) of message
    /// `node_id`, which must read `text`, and opens its sub-thread. A blank title takes the
    /// passage's start.
    pub async fn pin_range(
        &self,
        node_id: i64,
        start: u32,
        end: u32,
        text: String,
        title: String,
    ) -> anyhow::Result<PinView> {
        self.write("could not pin the passage", move |store| {
            Ok(store.pin_range(NodeId(node_id), start, end, &text, &title, now_ms())?.into())
        })
        .await
    }

    /// Writes the first message of pin `pin_id`'s sub-thread (or another branch of its start).
    pub async fn ask_in_pin(&self, pin_id: i64, text: String) -> anyhow::Result<NodeView> {
        let pin = self
            .read("could not open the sub-thread", move |store| Ok(store.pin(PinId(pin_id))?))
            .await?;
        let Some(anchor) = pin.anchor_node_id else {
            return Err(ApiError::invalid_input(
                "this sub-thread hangs off no message; continue one of its messages instead",
            )
            .into());
        };
        let node = self.append_human(pin.tree_id, Some(anchor), Some(pin.id), text).await?;
        Ok(node.into())
    }

    /// The pins opened from thread `parent_pin_id` (absent: the root thread), oldest first.
    pub async fn pins(
        &self,
        tree_id: i64,
        parent_pin_id: Option<i64>,
    ) -> anyhow::Result<Vec<PinView>> {
        let pins = self
            .read("could not list the pins", move |store| {
                Ok(store.child_pins(TreeId(tree_id), parent_pin_id.map(PinId))?)
            })
            .await?;
        Ok(pins.into_iter().map(PinView::from).collect())
    }

    /// The pins opened on message `node_id`, oldest first: what the message shows as highlights.
    pub async fn pins_on(&self, node_id: i64) -> anyhow::Result<Vec<PinView>> {
        let pins = self
            .read("could not list the pins", move |store| {
                Ok(store.pins_anchored_in(NodeId(node_id))?)
            })
            .await?;
        Ok(pins.into_iter().map(PinView::from).collect())
    }

    /// The tree's threads deleted whole (an agent's `thread_delete` over MCP, say) that can be
    /// restored, the latest deletion first.
    pub async fn deleted_threads(&self, tree_id: i64) -> anyhow::Result<Vec<DeletedThreadView>> {
        let pins = self
            .read("could not list the deleted threads", move |store| {
                Ok(store.deleted_threads(TreeId(tree_id))?)
            })
            .await?;
        Ok(pins
            .into_iter()
            .map(|pin| DeletedThreadView {
                id: pin.id.0,
                title: pin.title,
                deleted_at_ms: pin.deleted_at_ms.unwrap_or_default(),
            })
            .collect())
    }

    /// Brings back deleted thread `pin_id` with the threads deleted with it, their messages
    /// included. Returns them, the thread itself first.
    pub async fn restore_thread(&self, pin_id: i64) -> anyhow::Result<Vec<PinView>> {
        self.write("could not restore the thread", move |store| {
            let restored = store.restore_thread(PinId(pin_id), now_ms())?;
            restored.into_iter().map(|pin| Ok(store.pin(pin)?.into())).collect()
        })
        .await
    }

    /// Closes pin `pin_id` with a result written by hand; the parent thread shows it. Summaries
    /// being written for it alone stop.
    pub async fn close_pin(&self, pin_id: i64, result: String) -> anyhow::Result<PinView> {
        let (closed, tree) = self
            .write("could not close the pin", move |store| {
                let closed = store.close_pin(PinId(pin_id), result.trim(), now_ms())?;
                let tree = closed.tree_id;
                Ok((PinView::from(closed), tree))
            })
            .await?;
        self.cancel_unneeded_summaries(tree).await?;
        Ok(closed)
    }

    /// Closes pin `pin_id` with a result the model profile `profile` writes from the sub-thread's
    /// newest branch (up to `up_to`, its newest message when absent).
    pub async fn close_pin_summarised(
        &self,
        pin_id: i64,
        up_to: Option<i64>,
        profile: String,
    ) -> anyhow::Result<PinView> {
        let result = self.suggest_pin_result(pin_id, up_to, profile).await?;
        self.close_pin(pin_id, result).await
    }

    /// A result for pin `pin_id` written by the model profile `profile` from the sub-thread's
    /// newest branch (up to `up_to`, its newest message when absent), for the person to edit
    /// before closing the pin with it. Nothing is saved.
    pub async fn suggest_pin_result(
        &self,
        pin_id: i64,
        up_to: Option<i64>,
        profile: String,
    ) -> anyhow::Result<String> {
        let this = self.clone();
        let (choice, transcript, (tree, end)) = blocking(move || {
            let store = &this.store;
            let pin = store.pin(PinId(pin_id))?;
            let end = match up_to {
                Some(node) => NodeId(node),
                None => store.newest_continuation_from(pin.anchor_node_id, Some(pin.id))?.ok_or_else(|| {
                    ApiError::invalid_input(
                        "this sub-thread has no messages to summarise: write its result by hand",
                    )
                })?,
            };
            let path = store.ancestor_path(end)?;
            if path.last().map(|last| last.pin_id) != Some(Some(pin.id)) {
                return Err(ApiError::invalid_input(format!(
                    "message {} is not in this sub-thread",
                    end.0
                ))
                .into());
            }
            let lines: Vec<String> = path
                .iter()
                .filter(|node| node.pin_id == Some(pin.id) && !node.excluded)
                .map(|node| {
                    let who = match node.author {
                        pinloom_store::Author::Human => "Person",
                        pinloom_store::Author::Model => "Model",
                        pinloom_store::Author::Tool => "Tool",
                    };
                    format!("{who}: {}", node.text)
                })
                .collect();
            let anchor = pin.anchor.map(|anchor| format!("Passage: \"{}\"\n\n", anchor.text));
            Ok((
                this.model_choice(&profile)?,
                format!("{}{}", anchor.unwrap_or_default(), lines.join("\n\n")),
                (pin.tree_id, end),
            ))
        })
        .await
        .context("could not close the pin")?;
        let key = self.key_for(choice.provider).await?;
        let wire = pinloom_providers::summary::summary_request(
            &choice.endpoint,
            &choice.engine,
            PIN_RESULT_INSTRUCTION,
            &transcript,
            PIN_RESULT_BUDGET,
        )?;
        let asked = self.ask_once(&wire, key.as_ref(), &CancellationToken::new()).await;
        // Kept whatever its outcome: a suggested result is a request too, with its cost.
        let outcome = Sent {
            reply: asked.reply(),
            failure: match asked.answer() {
                Answer::Failed(error) | Answer::BrokenOff(error) => Some(error.to_string()),
                Answer::Empty | Answer::Text(_) => None,
            },
            started_at_ms: asked.started_at_ms,
            planned: choice.engine.tokenizer.count(PIN_RESULT_INSTRUCTION)
                + choice.engine.tokenizer.count(&transcript),
        };
        let purpose =
            Purpose { tree, kind: RequestKind::PinResult, thread: Some(PinId(pin_id)), up_to: end };
        self.keep_request(purpose, &choice, &wire, outcome).await;
        let text = match asked.answer() {
            Answer::Text(text) => text,
            Answer::Empty => {
                return Err(ApiError::invalid_input(format!(
                    "{} wrote an empty result: write it by hand, or try another model",
                    choice.name
                ))
                .into());
            }
            Answer::Failed(error) => {
                return Err(anyhow::Error::new(error.clone()).context(format!(
                    "{} could not write the result; write it by hand",
                    choice.name
                )));
            }
            Answer::BrokenOff(error) => {
                return Err(anyhow::Error::new(error.clone())
                    .context(format!("{} stopped before the result was written", choice.name)));
            }
        };
        Ok(crate::conversation::summaries::fit_summary(
            choice.engine.tokenizer,
            text,
            PIN_RESULT_BUDGET,
        ))
    }
}
