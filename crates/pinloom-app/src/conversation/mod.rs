//! The conversation loop: writing the person's messages, planning a context for any message under
//! any model profile, streaming a reply into a new message, answering again, editing, and
//! continuing a buffer.
//!
//! A send is: append the person's message (its token counts written with it); extend the cached
//! path by it; fill the snapshot; plan; write any ancestor summary the plan lacks (concurrently)
//! and plan again; render; stream through the provider; write the reply with its usage (marked
//! incomplete when it broke off, never dropped); learn the model's calibration from the usage.

pub(crate) mod attachments;
pub(crate) mod engine_inputs;
pub(crate) mod fan_out;
mod plan;
mod promotions;
pub(crate) mod receipts;
mod reply_drafts;
pub(crate) mod settings;
pub(crate) mod snapshot_cache;
pub(crate) mod summaries;
pub(crate) mod threads;

use plan::earlier_replies;
pub(crate) use plan::{
    MissingSummaries, Planned, ProfileRef, Refusals, plan_view, source_view, tokenizer_label,
};
use reply_drafts::Drafting;
pub(crate) use reply_drafts::recover_replies;

use std::time::Duration;

use anyhow::Context;
use pinloom_engine::render::{buffer_document, chat_request, slice_text};
use pinloom_engine::settings::TruncationStrategy;
use pinloom_engine::snapshot::TreeMode;
use pinloom_engine::tokens::Tokenizer;
use pinloom_providers::wire::{Sampling, Task, build};
use pinloom_providers::{ApiKey, ProviderError, ProviderId, ReplyEvent, WireRequest};
use pinloom_store::{self as store, Author, NewNode, NodeId, Store, StoreError, TreeId};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::ApiError;
use crate::conversation::engine_inputs::{ANNOTATION_ID_BASE, exact_family, token_counts};
use crate::json::{Exchange, Message, NodeView, ReplySettings, SendTarget};
use crate::pinloom::Pinloom;
use crate::runtime::{blocking, now_ms};

/// How long a keyring may take to answer: a locked Secret Service can prompt, or hang on a broken
/// session bus, and a send must not wait on it for ever.
const KEYRING_TIMEOUT: Duration = Duration::from_secs(10);

impl Pinloom {
    /// Writes the person's message into a tree, continuing `parent_id` (absent for a tree's first
    /// message), with its token counts.
    pub async fn append_message(
        &self,
        tree_id: i64,
        parent_id: Option<i64>,
        text: String,
    ) -> anyhow::Result<Message> {
        let node = self.append_human(TreeId(tree_id), parent_id.map(NodeId), None, text).await?;
        Ok(node.into())
    }

    /// Writes the person's message and streams a reply from the model profile `profile`: each
    /// piece of text goes to `events` as it arrives. `cancel` stops the reply; what arrived is
    /// kept, marked incomplete.
    pub async fn send(
        &self,
        tree_id: i64,
        parent_id: Option<i64>,
        text: String,
        profile: String,
        events: UnboundedSender<ReplyEvent>,
        cancel: CancellationToken,
    ) -> anyhow::Result<Exchange> {
        let prompt = self.append_human(TreeId(tree_id), parent_id.map(NodeId), None, text).await?;
        self.answer_new(prompt.into(), &profile, &events, &cancel).await
    }

    /// Asks `text` in pin `pin_id`'s sub-thread (after its message `parent_id`, or as its first
    /// message) and streams the reply, as [`Pinloom::send`] does in a thread.
    pub async fn send_in_pin(
        &self,
        pin_id: i64,
        parent_id: Option<i64>,
        text: String,
        profile: String,
        events: UnboundedSender<ReplyEvent>,
        cancel: CancellationToken,
    ) -> anyhow::Result<Exchange> {
        let prompt = self.append_in_pin(pin_id, parent_id, text).await?;
        self.answer_new(prompt, &profile, &events, &cancel).await
    }

    /// Writes the person's message in pin `pin_id`'s sub-thread, after its message `parent_id`
    /// or as its first message.
    pub(crate) async fn append_in_pin(
        &self,
        pin_id: i64,
        parent_id: Option<i64>,
        text: String,
    ) -> anyhow::Result<NodeView> {
        match parent_id {
            None => self.ask_in_pin(pin_id, text).await,
            Some(parent) => {
                let tree = self
                    .read("could not open the sub-thread", move |store| {
                        Ok(store.pin(store::PinId(pin_id))?.tree_id)
                    })
                    .await?;
                Ok(self.append_human(tree, Some(NodeId(parent)), None, text).await?.into())
            }
        }
    }

    /// Answers `target` with the model profile `profile`, as [`Pinloom::send`],
    /// [`Pinloom::send_in_pin`], [`Pinloom::regenerate`], [`Pinloom::edit_and_send`] or
    /// [`Pinloom::continue_buffer`] does: what every front end's "send" comes down to.
    pub async fn reply_to(
        &self,
        target: SendTarget,
        profile: String,
        events: UnboundedSender<ReplyEvent>,
        cancel: CancellationToken,
    ) -> anyhow::Result<Exchange> {
        match target {
            SendTarget::Thread { tree_id, parent_id, text } => {
                self.send(tree_id, parent_id, text, profile, events, cancel).await
            }
            SendTarget::Pin { pin_id, parent_id, text } => {
                self.send_in_pin(pin_id, parent_id, text, profile, events, cancel).await
            }
            SendTarget::Regenerate { node_id } => {
                self.regenerate(node_id, profile, events, cancel).await
            }
            SendTarget::Edit { node_id, text } => {
                self.edit_and_send(node_id, text, profile, events, cancel).await
            }
            SendTarget::Continue { node_id } => {
                self.continue_buffer(node_id, profile, events, cancel).await
            }
        }
    }

    /// Answers message `node_id` again: a new reply beside the earlier ones. Given a reply, its
    /// prompt is answered again.
    pub async fn regenerate(
        &self,
        node_id: i64,
        profile: String,
        events: UnboundedSender<ReplyEvent>,
        cancel: CancellationToken,
    ) -> anyhow::Result<Exchange> {
        let prompt = self.prompt_of(node_id).await?;
        self.reply(prompt, &profile, &events, &cancel).await
    }

    /// The message answering `node_id` again answers: the reply's prompt, given a reply.
    pub(crate) async fn prompt_of(&self, node_id: i64) -> anyhow::Result<NodeId> {
        let node = self
            .read("could not answer again", move |store| Ok(store.node(NodeId(node_id))?))
            .await?;
        match (node.author, node.parent_id) {
            (Author::Model, Some(parent)) => Ok(parent),
            (Author::Model, None) => {
                Err(ApiError::invalid_input("this reply has no message before it to answer again")
                    .into())
            }
            _ => Ok(node.id),
        }
    }

    /// Writes an edit of a message as a new branch beside it; the original stays.
    pub async fn edit_message(&self, node_id: i64, text: String) -> anyhow::Result<NodeView> {
        if text.trim().is_empty() {
            return Err(ApiError::invalid_input("the edit is empty: type something first").into());
        }
        let edited = self
            .write("could not edit the message", move |store| {
                let parts = vec![store::Part::Text { text }];
                let counts = token_counts(&parts);
                Ok(store.edit_node(NodeId(node_id), parts, counts, now_ms())?)
            })
            .await?;
        Ok(edited.into())
    }

    /// Edits the person's message `node_id` as a new branch and answers the edit.
    pub async fn edit_and_send(
        &self,
        node_id: i64,
        text: String,
        profile: String,
        events: UnboundedSender<ReplyEvent>,
        cancel: CancellationToken,
    ) -> anyhow::Result<Exchange> {
        let edited = self.edit_message(node_id, text).await?;
        self.answer_new(edited, &profile, &events, &cancel).await
    }

    /// Continues a buffer-mode tree's document from `node_id` (the end of the text on show): the
    /// model's continuation becomes the next piece of the document.
    pub async fn continue_buffer(
        &self,
        node_id: i64,
        profile: String,
        events: UnboundedSender<ReplyEvent>,
        cancel: CancellationToken,
    ) -> anyhow::Result<Exchange> {
        let mode = self
            .read("could not continue the document", move |store| {
                let node = store.node(NodeId(node_id))?;
                Ok(store.tree_setup(node.tree_id)?.mode)
            })
            .await?;
        if mode != store::TreeMode::Buffer {
            return Err(ApiError::invalid_input(
                "this tree is a dialogue: send a message instead of continuing a document",
            )
            .into());
        }
        self.reply(NodeId(node_id), &profile, &events, &cancel).await
    }

    pub(crate) async fn append_human(
        &self,
        tree: TreeId,
        parent: Option<NodeId>,
        pin: Option<store::PinId>,
        text: String,
    ) -> anyhow::Result<store::Node> {
        if text.trim().is_empty() {
            return Err(
                ApiError::invalid_input("the message is empty: type something first").into()
            );
        }
        let store = self.store.clone();
        let snapshot_cache = self.snapshot_cache.clone();
        blocking(move || {
            let mut node = NewNode::text(tree, parent, Author::Human, text, now_ms());
            node.pin_id = pin;
            node.token_counts = token_counts(&node.parts);
            let written = store.append_node(&node)?;
            extend_cached_path(&store, &snapshot_cache, &written, &node.token_counts)?;
            Ok(written)
        })
        .await
        .context("could not add the message")
    }

    /// Answers a message the person just wrote; the exchange carries it beside the reply.
    async fn answer_new(
        &self,
        prompt: NodeView,
        profile: &str,
        events: &UnboundedSender<ReplyEvent>,
        cancel: &CancellationToken,
    ) -> anyhow::Result<Exchange> {
        let mut exchange = self.reply(NodeId(prompt.message.id), profile, events, cancel).await?;
        exchange.prompt = Some(prompt);
        Ok(exchange)
    }

    /// Plans, streams and writes a reply to `prompt`.
    pub(crate) async fn reply(
        &self,
        prompt: NodeId,
        profile: &str,
        events: &UnboundedSender<ReplyEvent>,
        cancel: &CancellationToken,
    ) -> anyhow::Result<Exchange> {
        let planned = self
            .plan_for(
                prompt,
                &ProfileRef::Stored(profile.to_owned()),
                None,
                MissingSummaries::Write(cancel),
                Refusals::Fail,
            )
            .await
            .context("could not plan the context")?;
        let wire = wire_request(&planned).map_err(anyhow::Error::new)?;
        let view = plan_view(&planned)?;
        let key = self.key_for(planned.choice.provider).await?;
        let drafting =
            Drafting { tree: planned.tree.id, parent: prompt, model: planned.choice.name.clone() };
        let (streamed, draft) =
            self.stream_saving_drafts(&wire, key.as_ref(), events, cancel, drafting).await;
        let reply = match streamed {
            Ok(reply) => reply,
            Err(error) => {
                let name = planned.choice.name.clone();
                self.discard_draft(draft).await?;
                self.keep_path(planned)?;
                return Err(anyhow::Error::new(error).context(format!("{name} did not answer")));
            }
        };
        if reply.text.is_empty()
            && let Some(interruption) = reply.interruption
        {
            let name = planned.choice.name.clone();
            self.discard_draft(draft).await?;
            self.keep_path(planned)?;
            return Err(anyhow::Error::new(interruption)
                .context(format!("{name} sent nothing before it stopped")));
        }
        let usage_json = serde_json::to_string(&reply.usage)?;
        let settings_json = serde_json::to_string(&reply_settings(&planned))?;
        let sent_units = sent_units(&planned);
        let earlier = earlier_replies(&planned.path, prompt);
        let receipt_of = {
            let choice = &planned.choice;
            let sending = crate::conversation::receipts::Sending {
                profile: &choice.name,
                model: &choice.engine.model,
                provider: choice.provider,
                tokenizer: tokenizer_label(planned.plan.tokenizer),
                exact_counts: exact_family(choice.engine.tokenizer).is_some(),
                prices: choice.prices,
            };
            let plan = &planned.plan;
            let snapshot = &planned.path.snapshot;
            let reply = &reply;
            move |earlier: &[crate::conversation::receipts::Receipt]| {
                crate::conversation::receipts::receipt(plan, snapshot, &sending, reply, earlier)
            }
        };
        let earlier_receipts = self
            .read("could not read the earlier replies' receipts", move |store| {
                // Earlier answers to the same message were sent the very same request.
                let mut earlier = earlier;
                earlier.extend(
                    store
                        .children(prompt, pinloom_store::Deleted::Left)?
                        .into_iter()
                        .filter(|child| child.author == Author::Model)
                        .map(|child| child.id),
                );
                let found = store.receipts(&earlier)?;
                Ok(found
                    .values()
                    .filter_map(|stored| crate::conversation::receipts::Receipt::read(stored).ok())
                    .collect::<Vec<_>>())
            })
            .await?;
        let receipt = receipt_of(&earlier_receipts);
        let stored_receipt = store::Receipt {
            json: serde_json::to_string(&receipt)?,
            provider_cut: receipt.verdict == crate::conversation::receipts::Verdict::ProviderCut,
        };
        // Calibration learns only from a count of the whole prompt: not one the provider cut,
        // nor one a local server reduced by what its cache kept.
        let learn = receipt.verdict == crate::conversation::receipts::Verdict::Matched
            && receipt.expected_at_least == u64::from(receipt.planned);
        let store = self.store.clone();
        let snapshot_cache = self.snapshot_cache.clone();
        let tree_id = planned.tree.id;
        let choice = planned.choice.clone();
        let newly_counted = planned.plan.newly_counted.clone();
        let plan_tokenizer = planned.choice.engine.tokenizer;
        let mut path = planned.path;
        let input_tokens = reply.usage.input_tokens;
        let text = reply.text;
        let incomplete = reply.interruption.is_some();
        let written = blocking(move || {
            let mut node = NewNode::text(tree_id, Some(prompt), Author::Model, text, now_ms());
            node.model = Some(choice.name.clone());
            node.usage_json = Some(usage_json);
            node.generation_json = Some(settings_json);
            node.incomplete = incomplete;
            node.token_counts = token_counts(&node.parts);
            node.receipt = Some(stored_receipt);
            node.replaces_draft = draft;
            let written = append_reply(&store, &node)?;
            // Counts the engine had to make (nodes written before counting existed) are stored,
            // and kept on the path in memory, so they are made once.
            if let Some(family) = exact_family(plan_tokenizer) {
                let rows: Vec<(NodeId, u64)> = newly_counted
                    .iter()
                    .filter(|(id, _)| id.0 < ANNOTATION_ID_BASE)
                    .filter_map(|(id, tokens)| {
                        i64::try_from(id.0).ok().map(|row| (NodeId(row), u64::from(*tokens)))
                    })
                    .collect();
                store.set_family_token_counts(family, &rows)?;
                path.remember_counts(plan_tokenizer, &newly_counted);
            }
            if let (Tokenizer::Estimate(calibration), Some(reported), true) =
                (choice.engine.tokenizer, input_tokens, learn)
            {
                let corrected = calibration.corrected(sent_units, reported);
                store.record_calibration(
                    &choice.name,
                    corrected.milli_chars_per_token,
                    now_ms(),
                )?;
            }
            let data_version = store.data_version()?;
            path.extend(&store, &written, &stored_counts(&node.token_counts))?;
            snapshot_cache.forget_plans();
            snapshot_cache.keep_path(data_version, tree_id, path);
            Ok(written)
        })
        .await
        .context("could not save the reply")?;
        Ok(Exchange {
            prompt: None,
            reply: written.into(),
            interruption: reply.interruption.map(provider_api_error),
            plan: view,
            receipt: Some(receipt),
        })
    }

    /// The key for `provider` from its environment variable or the keyring, on a blocking thread
    /// and within a time limit.
    pub(crate) async fn key_for(&self, provider: ProviderId) -> anyhow::Result<Option<ApiKey>> {
        let keyring = self.keyring.clone();
        let lookup = tokio::task::spawn_blocking(move || keyring.find(provider));
        match tokio::time::timeout(KEYRING_TIMEOUT, lookup).await {
            Ok(found) => Ok(found.context("the keyring lookup stopped unexpectedly")??),
            Err(_) => Err(anyhow::Error::new(ProviderError::KeyringUnavailable {
                detail: format!("it did not answer within {} s", KEYRING_TIMEOUT.as_secs()),
                alternative: match provider.key_variable() {
                    Some(variable) => {
                        format!("Set {variable} in the environment Pinloom starts from instead.")
                    }
                    None => String::new(),
                },
            })),
        }
    }
}

/// Extends this tree's cached path by a node just written after its end; any other cached path
/// of the tree no longer matches and is dropped.
/// `counts` are the node's stored counts, as written with it (counted once, not again here).
fn extend_cached_path(
    store: &Store,
    snapshot_cache: &crate::conversation::snapshot_cache::SnapshotCache,
    written: &store::Node,
    counts: &[(String, u64)],
) -> anyhow::Result<()> {
    let data_version = store.data_version()?;
    snapshot_cache.forget_plans();
    if let Some(parent) = written.parent_id
        && let Some(mut path) = snapshot_cache.take_path(data_version, written.tree_id, parent)
    {
        path.extend(store, written, &stored_counts(counts))?;
        snapshot_cache.keep_path(data_version, written.tree_id, path);
    }
    Ok(())
}

fn stored_counts(counts: &[(String, u64)]) -> Vec<(Tokenizer, u64)> {
    counts
        .iter()
        .filter_map(|(family, tokens)| {
            crate::conversation::engine_inputs::EXACT_FAMILIES
                .iter()
                .find(|(name, _)| name == family)
                .map(|(_, tokenizer)| (*tokenizer, *tokens))
        })
        .collect()
}

/// The request a plan makes: chat messages in a dialogue, the document in buffer mode.
pub(crate) fn wire_request(planned: &Planned) -> Result<WireRequest, ProviderError> {
    let choice = &planned.choice;
    let snapshot = &planned.path.snapshot;
    // The reply may have what the plan kept free for it, and no more: one number for both.
    let sampling =
        Sampling { max_output_tokens: Some(planned.plan.reply_limit), ..choice.sampling };
    match planned.plan.mode {
        TreeMode::Dialogue => {
            let request = chat_request(&planned.plan, snapshot, &choice.engine);
            let task = Task::Chat { request: &request, tools: &snapshot.tools };
            build(&choice.endpoint, &choice.engine, sampling, task)
        }
        TreeMode::Buffer => {
            if !choice.completion {
                return Err(ProviderError::CompletionEndpointOff { profile: choice.name.clone() });
            }
            let document = buffer_document(&planned.plan, snapshot);
            build(&choice.endpoint, &choice.engine, sampling, Task::Complete { prompt: &document })
        }
    }
}

/// The settings a reply to `planned` is made with, as the reply keeps them.
pub(crate) fn reply_settings(planned: &Planned) -> ReplySettings {
    let choice = &planned.choice;
    let truncation = planned.settings.engine(0, &choice.assembly).truncation;
    ReplySettings {
        profile: choice.name.clone(),
        model_id: choice.engine.model.clone(),
        provider: choice.provider.name().to_owned(),
        temperature: choice.sampling.temperature,
        top_p: choice.sampling.top_p,
        max_tokens: planned.plan.reply_limit,
        context_window: choice.engine.context_window,
        truncation: match truncation {
            TruncationStrategy::TruncateMiddle => "truncateMiddle",
            TruncationStrategy::RollingWindow => "rollingWindow",
            TruncationStrategy::StopAtLimit => "stopAtLimit",
        }
        .to_owned(),
        summarizer: planned.settings.summarizer.clone().unwrap_or_else(|| choice.name.clone()),
    }
}

/// The UTF-16 units of everything a plan sends: what the provider's reported input tokens are
/// set against to learn the model's characters per token.
fn sent_units(planned: &Planned) -> u64 {
    planned
        .plan
        .included()
        .map(|slice| slice_text(slice, &planned.path.snapshot).encode_utf16().count() as u64)
        .sum()
}

/// A provider failure as it crosses to a front end.
pub(crate) fn provider_api_error(error: ProviderError) -> ApiError {
    ApiError::from(anyhow::Error::new(error))
}
/// Writes a finished reply, trying twice more when another process held the database past the
/// busy timeout (a long import in another window, say): the text is what the person waited for.
fn append_reply(store: &Store, node: &NewNode) -> Result<store::Node, StoreError> {
    let mut waits = [Duration::from_millis(500), Duration::from_secs(2)].into_iter();
    loop {
        match store.append_node(node) {
            Err(error) if error.is_busy() => match waits.next() {
                Some(wait) => std::thread::sleep(wait),
                None => return Err(error),
            },
            written => return written,
        }
    }
}
