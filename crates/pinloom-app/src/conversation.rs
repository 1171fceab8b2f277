//! The conversation loop: writing the person's messages, planning a context for any message under
//! any model profile, streaming a reply into a new message, answering again, editing, and
//! continuing a buffer.
//!
//! A send is: append the person's message (its token counts written with it); extend the cached
//! path by it; fill the snapshot; plan; write any ancestor summary the plan lacks (concurrently)
//! and plan again; render; stream through the provider; write the reply with its usage (marked
//! incomplete when it broke off, never dropped); learn the model's calibration from the usage.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use pinloom_engine::plan::{SliceStatus, SourceId};
use pinloom_engine::render::{buffer_document, chat_request, slice_text};
use pinloom_engine::settings::TruncationStrategy;
use pinloom_engine::snapshot::{Author as EngineAuthor, Snapshot};
use pinloom_engine::snapshot::{NodeRecord, ParentEdge, TreeMode};
use pinloom_engine::tokens::{CharHeuristic, Tokenizer, TokenizerId};
use pinloom_engine::{ContextPlan, EngineError};
use pinloom_providers::wire::{Task, build};
use pinloom_providers::{ApiKey, ProviderError, ProviderId, ReplyEvent, WireRequest};
use pinloom_store::{self as store, Author, NewNode, NodeId, Store, StoreError, TreeId};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::inputs::{ANNOTATION_ID_BASE, ModelChoice, engine_node, exact_family, token_counts};
use crate::json::{Exchange, Message, NodeView, PlanView, SliceView};
use crate::pinloom::Pinloom;
use crate::runtime::{blocking, now_ms};
use crate::settings::TreeSettings;
use crate::snapshots::{CachedPath, PlanKey, store_pin};
use crate::{ApiError, ErrorCode};

/// How long a keyring may take to answer: a locked Secret Service can prompt, or hang on a broken
/// session bus, and a send must not wait on it for ever.
const KEYRING_TIMEOUT: Duration = Duration::from_secs(10);

/// The id a draft prompt takes in a preview's snapshot: above every row id and annotation id.
const DRAFT_ID: u64 = u64::MAX - 1;

/// The model profile a plan is made for: a stored one by name, or one being edited and not yet
/// saved (the budget panel's live preview).
#[derive(Debug, Clone)]
pub(crate) enum ProfileRef {
    Stored(String),
    Unsaved(Box<crate::json::ModelProfile>),
}

/// A plan with the snapshot it was made from and what it was made for.
pub(crate) struct Planned {
    pub(crate) plan: ContextPlan,
    pub(crate) path: CachedPath,
    pub(crate) choice: ModelChoice,
    pub(crate) tree: store::Tree,
    pub(crate) settings: TreeSettings,
    /// The snapshot ends with a draft prompt that is not in the store.
    pub(crate) draft: bool,
    /// What the provider did with the newest reply on the path, when it cut that context.
    pub(crate) provider_cut: Option<String>,
    /// Set when the tree stops at the limit and this context does not fit: why, in words, and
    /// what to exclude. The plan is then the one truncation would have made, for the inspector
    /// to list; it is never sent.
    pub(crate) refusal: Option<ContextRefusal>,
}

/// A stopAtLimit refusal as the inspector shows it beside the slices.
#[derive(Debug, Clone)]
pub(crate) struct ContextRefusal {
    pub(crate) message: String,
    pub(crate) exclude: Vec<SourceId>,
}

/// What planning does when the tree stops at the limit and the context does not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusals {
    /// Fails with the refusal (a send, a comparison).
    Fail,
    /// Plans as truncation would and carries the refusal beside it (the inspector's preview).
    Show,
}

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
        let prompt = match parent_id {
            None => self.ask_in_pin(pin_id, text).await?,
            Some(parent) => {
                let tree = self
                    .read("could not open the sub-thread", move |store| {
                        Ok(store.pin(store::PinId(pin_id))?.tree_id)
                    })
                    .await?;
                self.append_human(tree, Some(NodeId(parent)), None, text).await?.into()
            }
        };
        self.answer_new(prompt, &profile, &events, &cancel).await
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
        let node = self
            .read("could not answer again", move |store| Ok(store.node(NodeId(node_id))?))
            .await?;
        let prompt = match (node.author, node.parent_id) {
            (Author::Model, Some(parent)) => parent,
            (Author::Model, None) => {
                return Err(ApiError::invalid_input(
                    "this reply has no message before it to answer again",
                )
                .into());
            }
            _ => node.id,
        };
        self.reply(prompt, &profile, &events, &cancel).await
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
                Ok(store.tree(node.tree_id)?.mode)
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

    /// The plan a send from message `node_id` would make under `profile`, and the request it
    /// would send, without sending anything (missing ancestor summaries are counted, not written). With `draft`, planned as if `draft` were sent after the
    /// message (the budget panel while typing). Reused for 30 seconds unless anything is written.
    pub async fn preview(
        &self,
        node_id: i64,
        profile: String,
        draft: Option<String>,
    ) -> anyhow::Result<PlanView> {
        let draft = draft.filter(|text| !text.trim().is_empty());
        let this = self.clone();
        let store = self.store.clone();
        let profile_for_key = profile.clone();
        let (data_version, choice) = blocking(move || {
            let data_version = store.data_version()?;
            Ok((data_version, this.model_choice(&profile_for_key)?))
        })
        .await
        .context("could not preview the context")?;
        let key = PlanKey {
            node: node_id,
            prompt: draft.clone(),
            profile: profile.clone(),
            budget: choice.engine.context_window.saturating_sub(choice.engine.reserve),
        };
        if let Some(plan) = self.snapshot_cache.plan(data_version, &key) {
            return Ok(plan);
        }
        let planned = self
            .plan_for(
                NodeId(node_id),
                &ProfileRef::Stored(profile.clone()),
                draft.as_deref(),
                MissingSummaries::Counted,
                Refusals::Show,
            )
            .await
            .context("could not preview the context")?;
        let view = plan_view(&planned)?;
        self.keep_path(planned)?;
        self.snapshot_cache.keep_plan(data_version, key, view.clone());
        Ok(view)
    }

    /// W1 from the database, for the benchmark: plans message `node_id` under `profile` as a send
    /// would (summaries not written) and returns the tokens used. With `cold`, this process's
    /// cached paths are dropped first, so the path is read, decoded and its counts looked up from
    /// the file.
    #[doc(hidden)]
    pub async fn plan_for_benchmark(
        &self,
        node_id: i64,
        profile: &str,
        cold: bool,
    ) -> anyhow::Result<u32> {
        if cold {
            self.snapshot_cache.forget();
        }
        let profile = ProfileRef::Stored(profile.to_owned());
        let planned = self
            .plan_for(NodeId(node_id), &profile, None, MissingSummaries::Counted, Refusals::Fail)
            .await?;
        Ok(self.keep_path(planned)?.used)
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
    async fn reply(
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
        let sent_units = sent_units(&planned);
        let earlier = earlier_replies(&planned.path, prompt);
        let receipt_of = {
            let choice = &planned.choice;
            let sending = crate::receipts::Sending {
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
            move |earlier: &[crate::receipts::Receipt]| {
                crate::receipts::receipt(plan, snapshot, &sending, reply, earlier)
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
                    .filter_map(|stored| crate::receipts::Receipt::read(stored).ok())
                    .collect::<Vec<_>>())
            })
            .await?;
        let receipt = receipt_of(&earlier_receipts);
        let stored_receipt = store::Receipt {
            json: serde_json::to_string(&receipt)?,
            provider_cut: receipt.verdict == crate::receipts::Verdict::ProviderCut,
        };
        // Calibration learns only from a count of the whole prompt: not one the provider cut,
        // nor one a local server reduced by what its cache kept.
        let learn = receipt.verdict == crate::receipts::Verdict::Matched
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

    /// The plan for answering `node` under `profile`, with missing ancestor summaries written
    /// first when asked to.
    pub(crate) async fn plan_for(
        &self,
        node: NodeId,
        profile: &ProfileRef,
        draft: Option<&str>,
        summaries: MissingSummaries<'_>,
        refusals: Refusals,
    ) -> anyhow::Result<Planned> {
        let mut planned = self.plan_once(node, profile, draft, refusals).await?;
        if let MissingSummaries::Write(cancel) = summaries
            && !planned.plan.missing_summaries.is_empty()
        {
            let written = self.write_missing_summaries(&planned, cancel).await?;
            if written > 0 {
                self.keep_path(planned)?;
                planned = self.plan_once(node, profile, draft, refusals).await?;
            }
        }
        Ok(planned)
    }

    async fn plan_once(
        &self,
        node: NodeId,
        profile: &ProfileRef,
        draft: Option<&str>,
        refusals: Refusals,
    ) -> anyhow::Result<Planned> {
        let this = self.clone();
        let profile = profile.clone();
        let draft = draft.map(str::to_owned);
        blocking(move || {
            let store = &this.store;
            let choice = match &profile {
                ProfileRef::Stored(name) => this.model_choice(name)?,
                ProfileRef::Unsaved(edited) => this.unsaved_choice(edited)?,
            };
            let data_version = store.data_version()?;
            let anchor = store.node(node)?;
            let tree = store.tree(anchor.tree_id)?;
            let settings = TreeSettings::from_json(&tree.settings_json);
            let tokenizer = choice.engine.tokenizer;
            let mut path = match this.snapshot_cache.take_path(data_version, tree.id, node) {
                Some(mut path) => {
                    path.load_counts(store, tokenizer)?;
                    path
                }
                None => CachedPath::read(store, node, tokenizer)?,
            };
            let summarizer = settings.summarizer.clone().unwrap_or_else(|| choice.name.clone());
            let prompt_text = draft.clone().unwrap_or_else(|| anchor.text.clone());
            path.fill(store, &tree, &settings, Some(&summarizer), &prompt_text)?;
            if let Some(draft) = &draft {
                let parent = path.snapshot.nodes.last().map(|last| last.id);
                let edge = parent.map_or(ParentEdge::Root, ParentEdge::Continuation);
                path.snapshot.nodes.push(NodeRecord::text(
                    DRAFT_ID,
                    edge,
                    pinloom_engine::snapshot::Author::Human,
                    draft,
                ));
                path.snapshot.active = pinloom_engine::snapshot::NodeId(DRAFT_ID);
            }
            let provider_cut = newest_reply_cut(store, &path)?;
            let engine_settings = settings.engine(now_ms(), &choice.assembly);
            let planned = pinloom_engine::plan(&path.snapshot, &choice.engine, &engine_settings);
            let draft = draft.is_some();
            let (plan, refusal) = match planned {
                Ok(plan) => (plan, None),
                Err(error) => {
                    let shown = match (&error, refusals) {
                        (EngineError::StopAtLimit { exclude, .. }, Refusals::Show) => {
                            // The plan truncation would make lists the slices, so the person
                            // can exclude what the refusal names with one click.
                            let mut truncating = engine_settings.clone();
                            truncating.truncation = TruncationStrategy::TruncateMiddle;
                            pinloom_engine::plan(&path.snapshot, &choice.engine, &truncating)
                                .ok()
                                .map(|plan| (plan, exclude.clone()))
                        }
                        _ => None,
                    };
                    match shown {
                        Some((plan, exclude)) => {
                            let message = engine_api_error(&error, &path.snapshot).message;
                            (plan, Some(ContextRefusal { message, exclude }))
                        }
                        None => {
                            let refused = engine_error(&error, &path.snapshot);
                            this.snapshot_cache.keep_path(
                                data_version,
                                tree.id,
                                without_draft(path, draft, node),
                            );
                            return Err(refused);
                        }
                    }
                }
            };
            Ok(Planned { plan, path, choice, tree, settings, draft, provider_cut, refusal })
        })
        .await
    }

    /// Gives a plan's path back to the cache (moved, never copied: it may hold a long thread) and
    /// returns the plan.
    pub(crate) fn keep_path(&self, planned: Planned) -> anyhow::Result<ContextPlan> {
        let data_version = self.store.data_version()?;
        let end = planned.path.end;
        let path = without_draft(planned.path, planned.draft, end);
        self.snapshot_cache.keep_path(data_version, planned.tree.id, path);
        Ok(planned.plan)
    }

    /// The stored profile named `name`, with its learned calibration. Runs on a blocking thread.
    pub(crate) fn model_choice(&self, name: &str) -> anyhow::Result<ModelChoice> {
        let record = self.store.profile(name).map_err(|error| match error {
            store::StoreError::NoSuchProfile(_) => {
                anyhow::Error::new(ApiError::invalid_input(format!(
                    "there is no model profile named \"{name}\"; choose one in Settings → Models"
                )))
            }
            other => other.into(),
        })?;
        let calibration = self.store.calibration(&record.name)?.map(|(milli, _)| milli);
        ModelChoice::from_record(&record, calibration)
    }

    /// The choice a profile being edited makes, checked as saving would check it, with the
    /// learned calibration of the stored profile of that name, if any. Runs on a blocking thread.
    fn unsaved_choice(&self, edited: &crate::json::ModelProfile) -> anyhow::Result<ModelChoice> {
        crate::profiles::check(edited)?;
        let name = edited.name.trim();
        let record = edited.clone().into_record();
        let calibration = self.store.calibration(name)?.map(|(milli, _)| milli);
        ModelChoice::from_record(&record, calibration)
    }

    /// The plan message `node_id` would get under a profile being edited, before it is saved:
    /// the budget panel's live preview. Nothing is saved or sent.
    pub async fn preview_unsaved(
        &self,
        node_id: i64,
        profile: crate::json::ModelProfile,
    ) -> anyhow::Result<PlanView> {
        let planned = self
            .plan_for(
                NodeId(node_id),
                &ProfileRef::Unsaved(Box::new(profile)),
                None,
                MissingSummaries::Counted,
                Refusals::Show,
            )
            .await
            .context("could not preview the context")?;
        let view = plan_view(&planned)?;
        self.keep_path(planned)?;
        Ok(view)
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

/// How often what has arrived of a streaming reply is saved: a crash loses at most this much.
const DRAFT_EVERY: Duration = Duration::from_secs(1);
/// A draft not saved for this long belongs to a process that stopped: a streaming process
/// saves its draft every [`DRAFT_EVERY`], even while the model is silent.
const DRAFT_STALE_MS: i64 = 10_000;

/// Where a streaming reply's draft goes.
struct Drafting {
    tree: store::TreeId,
    parent: NodeId,
    model: String,
}

impl Pinloom {
    /// Streams a reply, passing its events on to `events`, and saves what has arrived as a
    /// draft every [`DRAFT_EVERY`] (one short transaction each, never per token). Returns the
    /// reply and its draft, if one was saved (there is none before the first text).
    async fn stream_saving_drafts(
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
    async fn discard_draft(&self, draft: Option<i64>) -> anyhow::Result<()> {
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

/// What the provider did with the newest reply on the path, if it cut that request's context:
/// the next request is likely cut the same way, so the plan says so.
fn newest_reply_cut(store: &Store, path: &CachedPath) -> anyhow::Result<Option<String>> {
    let newest = path
        .snapshot
        .nodes
        .iter()
        .rev()
        .filter(|node| node.id.0 < ANNOTATION_ID_BASE && node.id.0 != DRAFT_ID)
        .find(|node| node.author == pinloom_engine::snapshot::Author::Model);
    let Some(id) = newest.and_then(|node| i64::try_from(node.id.0).ok()) else { return Ok(None) };
    let Some(stored) = store.receipt(NodeId(id))? else { return Ok(None) };
    if !stored.provider_cut {
        return Ok(None);
    }
    Ok(crate::receipts::Receipt::read(&stored)
        .ok()
        .and_then(|receipt| receipt.message)
        .map(|message| format!("The last reply on this path (message {id}) was cut: {message}")))
}

/// The path with a preview's draft prompt taken off its end again.
fn without_draft(mut path: CachedPath, draft: bool, end: NodeId) -> CachedPath {
    if draft {
        path.snapshot.nodes.pop();
        path.snapshot.active = engine_node(end);
    }
    path
}

/// Extends this tree's cached path by a node just written after its end; any other cached path
/// of the tree no longer matches and is dropped.
/// `counts` are the node's stored counts, as written with it (counted once, not again here).
fn extend_cached_path(
    store: &Store,
    snapshot_cache: &crate::snapshots::SnapshotCache,
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
            crate::inputs::EXACT_FAMILIES
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
    match planned.plan.mode {
        TreeMode::Dialogue => {
            let request = chat_request(&planned.plan, snapshot, &choice.engine);
            let task = Task::Chat { request: &request, tools: &snapshot.tools };
            build(&choice.endpoint, &choice.engine, choice.sampling, task)
        }
        TreeMode::Buffer => {
            if !choice.completion {
                return Err(ProviderError::CompletionEndpointOff { profile: choice.name.clone() });
            }
            let document = buffer_document(&planned.plan, snapshot);
            build(
                &choice.endpoint,
                &choice.engine,
                choice.sampling,
                Task::Complete { prompt: &document },
            )
        }
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

/// The plan as front ends show it.
pub(crate) fn plan_view(planned: &Planned) -> anyhow::Result<PlanView> {
    let plan = &planned.plan;
    let snapshot = &planned.path.snapshot;
    let kept: std::collections::HashSet<u64> =
        snapshot.nodes.iter().filter(|node| node.kept).map(|node| node.id.0).collect();
    let slices = plan
        .slices
        .iter()
        .map(|slice| {
            let (source, source_id) = source_view(slice.source);
            let text = slice_text(slice, snapshot);
            SliceView {
                kind: slice.kind.as_str().to_owned(),
                source,
                source_id,
                provenance: slice.provenance.into(),
                priority: slice.priority,
                tokens: slice.tokens,
                included: slice.is_included(),
                reason: match slice.status {
                    SliceStatus::Included => None,
                    SliceStatus::Pruned(reason) => Some(reason.as_str().to_owned()),
                },
                cut_from: slice.cut_from,
                kept: matches!(slice.source, SourceId::Node(node) if kept.contains(&node.0)),
                preview: text.chars().take(160).collect(),
                exclude_to_fit: planned
                    .refusal
                    .as_ref()
                    .is_some_and(|refusal| refusal.exclude.contains(&slice.source)),
            }
        })
        .collect();
    let (url, body) = match wire_request(planned) {
        Ok(wire) => (wire.url, serde_json::to_string_pretty(&wire.body)?),
        Err(error) => (String::new(), format!("(no request: {error})")),
    };
    Ok(PlanView {
        node_id: planned.path.end.0,
        profile: planned.choice.name.clone(),
        available: plan.available,
        used: plan.used,
        tokenizer: tokenizer_label(plan.tokenizer),
        truncated: plan.truncated(),
        omitted_messages: plan
            .marker
            .as_ref()
            .map_or(0, |marker| u32::try_from(marker.omitted).unwrap_or(u32::MAX)),
        slices,
        missing_summaries: u32::try_from(plan.missing_summaries.len()).unwrap_or(u32::MAX),
        provider_cut: planned.provider_cut.clone(),
        refusal: planned.refusal.as_ref().map(|refusal| refusal.message.clone()),
        url,
        body,
    })
}

/// How a plan counted, as front ends and receipts name it.
pub(crate) fn tokenizer_label(tokenizer: TokenizerId) -> String {
    match tokenizer {
        TokenizerId::O200k => "o200k".to_owned(),
        TokenizerId::Cl100k => "cl100k".to_owned(),
        TokenizerId::Llama3 => "Llama 3".to_owned(),
        TokenizerId::Qwen => "Qwen".to_owned(),
        TokenizerId::Estimate { milli_chars_per_token } => format!(
            "estimate at {}.{:03} chars/token",
            milli_chars_per_token / 1000,
            milli_chars_per_token % 1000
        ),
        TokenizerId::Chars(CharHeuristic::ThreeAndAHalfChars) => {
            "3.5 chars/token (fixed)".to_owned()
        }
        TokenizerId::Chars(CharHeuristic::FourChars) => "4 chars/token (fixed)".to_owned(),
    }
}

/// The reply before `prompt` on the path: the request answering `prompt` repeats its request as
/// a prefix. (Earlier answers to `prompt` itself are read from the store by the caller.)
fn earlier_replies(path: &CachedPath, prompt: NodeId) -> Vec<NodeId> {
    let before = path
        .snapshot
        .nodes
        .iter()
        .rev()
        .filter(|node| {
            node.id.0 < ANNOTATION_ID_BASE && node.id.0 != u64::try_from(prompt.0).unwrap_or(0)
        })
        .find(|node| node.author == pinloom_engine::snapshot::Author::Model)
        .and_then(|node| i64::try_from(node.id.0).ok().map(NodeId));
    before.into_iter().collect()
}

pub(crate) fn source_view(source: SourceId) -> (String, Option<i64>) {
    let id = |value: u64| i64::try_from(value).ok();
    let (name, id) = match source {
        SourceId::AgentPrompt => ("agentPrompt", None),
        SourceId::TreeSystemContext => ("treeSystemContext", None),
        SourceId::Attachment(attachment) => ("attachment", id(attachment)),
        SourceId::Node(node) if node.0 == DRAFT_ID => ("draft", None),
        SourceId::Node(node) if node.0 >= ANNOTATION_ID_BASE => {
            ("annotation", id(node.0 - ANNOTATION_ID_BASE))
        }
        SourceId::Node(node) => ("node", id(node.0)),
        SourceId::Summary(thread) => ("summary", store_pin(thread).map(|pin| pin.0)),
        SourceId::Anchor(pin) => ("anchor", id(pin.0)),
        SourceId::Tool(index) => ("tool", i64::try_from(index).ok()),
        SourceId::Retrieval(node) => ("retrieval", id(node.0)),
        SourceId::AddedSearchHit(node) => ("addedSearchHit", id(node.0)),
        SourceId::PinResult(pin) => ("pinResult", id(pin.0)),
        SourceId::WorkingBuffer => ("workingBuffer", None),
    };
    (name.to_owned(), id)
}

/// An engine refusal as it crosses to a front end, in words that say what to change. Damage the
/// engine found (a missing node, a loop) keeps its type in the chain.
pub(crate) fn engine_error(error: &EngineError, snapshot: &Snapshot) -> anyhow::Error {
    match error {
        EngineError::ActiveNodeMissing(_)
        | EngineError::ParentMissing { .. }
        | EngineError::Cycle { .. } => anyhow::Error::new(error.clone()),
        EngineError::DepthExceeded { .. }
        | EngineError::NoMessages
        | EngineError::SystemContextOverBudget { .. }
        | EngineError::RequiredOverBudget { .. }
        | EngineError::StopAtLimit { .. } => engine_api_error(error, snapshot).into(),
    }
}

/// The `{ code, message }` of a refusal the person can act on. A stopAtLimit refusal names the
/// messages to exclude by their opening words, as the thread shows them, not by id.
fn engine_api_error(error: &EngineError, snapshot: &Snapshot) -> ApiError {
    match error {
        EngineError::StopAtLimit { needed, available, exclude } => {
            let named: Vec<String> =
                exclude.iter().map(|source| describe_source(*source, snapshot)).collect();
            ApiError {
                code: ErrorCode::ContextOverBudget,
                message: format!(
                    "the context needs {needed} tokens, over the {available} this model has, and \
                     its profile stops at the limit instead of cutting; exclude {} to fit: {} \
                     (the inspector marks them), choose a model with a larger window, or let this \
                     one cut the history (Budget → When the history does not fit)",
                    plural(named.len(), "item"),
                    named.join("; ")
                ),
            }
        }
        EngineError::SystemContextOverBudget { .. } | EngineError::RequiredOverBudget { .. } => {
            ApiError { code: ErrorCode::ContextOverBudget, message: error.to_string() }
        }
        EngineError::ActiveNodeMissing(_)
        | EngineError::ParentMissing { .. }
        | EngineError::Cycle { .. }
        | EngineError::DepthExceeded { .. }
        | EngineError::NoMessages => ApiError::invalid_input(error.to_string()),
    }
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 { format!("1 {noun}") } else { format!("{count} {noun}s") }
}

/// What a context source is, in the words the window uses: a message by who wrote it and how it
/// opens.
fn describe_source(source: SourceId, snapshot: &Snapshot) -> String {
    match source {
        SourceId::Node(node) if node.0 >= ANNOTATION_ID_BASE => "an included note".to_owned(),
        SourceId::Node(node) => {
            let Some(record) = snapshot.nodes.iter().find(|record| record.id == node) else {
                return "a message".to_owned();
            };
            let whose = match record.author {
                EngineAuthor::Human => "your message",
                EngineAuthor::Model => "the reply",
                EngineAuthor::Tool => "the tool result",
            };
            let text: String = record.parts.iter().map(|part| part.text()).collect();
            format!("{whose} “{}”", opening_words(&text, 48))
        }
        SourceId::Summary(_) => "an ancestor thread's summary".to_owned(),
        SourceId::Attachment(_) => "an attached file".to_owned(),
        SourceId::Retrieval(_) | SourceId::AddedSearchHit(_) => "a search hit".to_owned(),
        SourceId::PinResult(_) => "a closed pin's result".to_owned(),
        SourceId::Anchor(_) => "the pinned passage".to_owned(),
        SourceId::Tool(_) => "a tool definition".to_owned(),
        SourceId::AgentPrompt | SourceId::TreeSystemContext => "the system context".to_owned(),
        SourceId::WorkingBuffer => "the working buffer".to_owned(),
    }
}

/// The start of `text` on one line, cut at a word within `limit` characters, with "…" when cut.
fn opening_words(text: &str, limit: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= limit {
        return flat;
    }
    let cut: String = flat.chars().take(limit).collect();
    let at_word = cut.rfind(' ').filter(|&at| at > limit / 2).map_or(cut.as_str(), |at| &cut[..at]);
    format!("{at_word}…")
}

/// A provider failure as it crosses to a front end.
pub(crate) fn provider_api_error(error: ProviderError) -> ApiError {
    ApiError::from(anyhow::Error::new(error))
}

/// What planning does with ancestor summaries the plan lacks.
#[derive(Debug, Clone, Copy)]
pub(crate) enum MissingSummaries<'a> {
    /// Writes them through the summariser before planning again; the person's Stop (`cancel`)
    /// stops them too.
    Write(&'a CancellationToken),
    /// Counts them in the plan without writing them (previews, comparisons).
    Counted,
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
