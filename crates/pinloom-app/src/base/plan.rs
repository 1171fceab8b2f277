//! Planning a context for a message under a model profile: the snapshot filled from the cached
//! path, the plan, and the plan as front ends see it, with refusals in words that say what to do.

use std::collections::HashSet;

use pinloom_engine::plan::{
    AncestorContent, ExcerptReason, PruneReason, Slice, SliceKind, SliceStatus, SourceId,
};
use pinloom_engine::render::{buffer_document, chat_request, slice_text};
use pinloom_engine::settings::TruncationStrategy;
use pinloom_engine::snapshot::{Author as EngineAuthor, Snapshot};
use pinloom_engine::snapshot::{FuseSource, NodeRecord, ParentEdge, TreeMode};
use pinloom_engine::tokens::{CharHeuristic, TokenizerId};
use pinloom_engine::{ContextPlan, EngineError};
use pinloom_providers::wire::{Sampling, Task, build};
use pinloom_providers::{ProviderError, WireRequest};
use pinloom_store::{self as store, NodeId, PinId, Store};

use crate::base::compaction_due::compaction_due;
use crate::base::engine_inputs::{ANNOTATION_ID_BASE, ModelChoice, engine_pin};
use crate::base::pinloom::Pinloom;
use crate::base::snapshot_cache::{CachedPath, CheckedOutPath, DraftPlace, store_pin};
use crate::base::words::{opening_words, plural};
use crate::error::{ApiError, ErrorCode};
use crate::json::{
    AncestorState, AncestorView, PlanView, SliceView, StepCutView, SummaryAuthor, TreeSettings,
};
use crate::runtime::{blocking, now_ms};

/// The id a draft prompt takes in a preview's snapshot: above every row id and annotation id.
const DRAFT_ID: u64 = u64::MAX - 1;

/// The model profile a plan is made for: a stored one by name, or one being edited and not yet
/// saved (the budget panel's live preview).
#[derive(Debug, Clone)]
pub(crate) enum ProfileRef {
    Stored(String),
    Unsaved(Box<crate::json::ModelProfile>),
    /// A stored one asked for a reply of at most `length` tokens (a loom's continuation),
    /// whatever the tree's token buffer or the model's reserve say.
    Sized {
        name: String,
        length: u32,
    },
    /// A stored one with this send's own sampling (`pinloom ask -o temperature=0.2`): what is
    /// set here wins over the profile's, for this request only.
    Tuned {
        name: String,
        sampling: crate::json::SamplingSettings,
    },
}

/// A plan with the snapshot it was made from and what it was made for.
pub(crate) struct Planned {
    pub(crate) plan: ContextPlan,
    /// The path the plan was made from, checked out of the snapshot cache until the plan is
    /// dropped; its last node may be a draft prompt that is not in the store.
    pub(crate) path: CheckedOutPath,
    pub(crate) choice: ModelChoice,
    pub(crate) tree: store::TreeSetup,
    pub(crate) settings: TreeSettings,
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
    /// The plan for answering `node` under `profile` (after `draft`, when given), as the store
    /// holds the tree now: missing ancestor summaries are counted, never written here.
    pub(crate) async fn plan_for(
        &self,
        node: NodeId,
        profile: &ProfileRef,
        draft: Option<&str>,
        refusals: Refusals,
    ) -> anyhow::Result<Planned> {
        let place = if draft.is_some() { DraftPlace::Continuing } else { DraftPlace::None };
        self.plan_with_draft(node, profile, draft, place, Vec::new(), refusals).await
    }

    /// The plan for a fused answer to `node`: its own context, then the answers chosen to fuse.
    pub(crate) async fn plan_fusing(
        &self,
        node: NodeId,
        profile: &ProfileRef,
        fuse: Vec<FuseSource>,
    ) -> anyhow::Result<Planned> {
        self.plan_with_draft(node, profile, None, DraftPlace::None, fuse, Refusals::Fail).await
    }

    /// The plan of a first send in pin `pin`, before it has any message: what the pin will know
    /// of its ancestry.
    pub(crate) async fn plan_first_in_pin(
        &self,
        pin: PinId,
        profile: &str,
    ) -> anyhow::Result<Planned> {
        let anchor = self
            .read("could not open the sub-thread", move |store| Ok(store.pin(pin)?.anchor_node_id))
            .await?
            .ok_or_else(|| {
                ApiError::invalid_input(
                    "this sub-thread hangs off no message: it has no ancestry to plan yet",
                )
            })?;
        // The draft's words only steer the search; a first send's own are not known yet.
        self.plan_with_draft(
            anchor,
            &ProfileRef::Stored(profile.to_owned()),
            Some(""),
            DraftPlace::FirstIn(pin),
            Vec::new(),
            Refusals::Show,
        )
        .await
    }

    async fn plan_with_draft(
        &self,
        node: NodeId,
        profile: &ProfileRef,
        draft: Option<&str>,
        place: DraftPlace,
        fuse: Vec<FuseSource>,
        refusals: Refusals,
    ) -> anyhow::Result<Planned> {
        let this = self.clone();
        let profile = profile.clone();
        let draft = draft.map(str::to_owned);
        blocking(move || {
            let choice = match &profile {
                ProfileRef::Stored(name) | ProfileRef::Sized { name, .. } => {
                    this.model_choice(name)?
                }
                ProfileRef::Tuned { name, sampling } => this.model_choice(name)?.tuned(sampling)?,
                ProfileRef::Unsaved(edited) => this.unsaved_choice(edited)?,
            };
            let (mut path, tree, settings) =
                this.path_for_plan(node, &choice, draft.as_deref(), place)?;
            // Filled again from the tree's settings at the next check-out.
            if let ProfileRef::Sized { length, .. } = &profile {
                path.snapshot.tree.token_buffer = Some(*length);
            }
            // Taken off again when the path goes back to the cache.
            path.snapshot.fuse_sources = fuse;
            let provider_cut = newest_reply_cut(&this.store, &path)?;
            plan_path(path, choice, tree, settings, provider_cut, refusals)
        })
        .await
    }

    /// The path to `node` checked out of the snapshot cache (or read), filled for a plan under
    /// `choice` of `draft` (or of `node`'s own text), the draft prompt on it. Runs on a blocking
    /// thread.
    fn path_for_plan(
        &self,
        node: NodeId,
        choice: &ModelChoice,
        draft: Option<&str>,
        place: DraftPlace,
    ) -> anyhow::Result<(CheckedOutPath, store::TreeSetup, TreeSettings)> {
        let store = &self.store;
        let data_version = store.data_version()?;
        let anchor = store.node(node)?;
        let tree = store.tree_setup(anchor.tree_id)?;
        let settings = TreeSettings::from_json(&tree.settings_json);
        let tokenizer = choice.engine.tokenizer;
        let mut path = match self.snapshot_cache.check_out(store, data_version, tree.id, node) {
            Some(path) => path,
            None => {
                let read = CachedPath::read(store, node, tokenizer)?;
                CheckedOutPath::new(&self.snapshot_cache, store, tree.id, read)
            }
        };
        let summarizer = settings.summarizer.clone().unwrap_or_else(|| choice.name.clone());
        let prompt_text = draft.unwrap_or(&anchor.text);
        let filled = (|| -> anyhow::Result<()> {
            path.load_counts(store, tokenizer)?;
            if let DraftPlace::FirstIn(pin) = place {
                // The pin's thread joins the chain, so its record and its ancestors' summaries
                // are read as for any message of it.
                path.threads.push((Some(pin), node));
            }
            let notes = self.summary_jobs.notes(tree.id);
            path.fill(store, &tree, &settings, Some(&summarizer), notes, prompt_text)?;
            Ok(())
        })();
        if let Err(error) = filled {
            // Half-filled, the path is not what the store holds: the next plan reads its own.
            path.discard();
            return Err(error);
        }
        if let Some(draft) = draft {
            let parent = path.snapshot.nodes.last().map(|last| last.id);
            let edge = match (place, parent) {
                (DraftPlace::FirstIn(pin), Some(parent)) => {
                    ParentEdge::Pin { parent, pin: engine_pin(pin) }
                }
                (_, Some(parent)) => ParentEdge::Continuation(parent),
                (_, None) => ParentEdge::Root,
            };
            path.snapshot.nodes.push(NodeRecord::text(
                DRAFT_ID,
                edge,
                pinloom_engine::snapshot::Author::Human,
                draft,
            ));
            path.snapshot.active = pinloom_engine::snapshot::NodeId(DRAFT_ID);
            path.carry_draft(place);
        }
        Ok((path, tree, settings))
    }

    /// The stored profile named `name`, with its learned calibration. Runs on a blocking thread.
    pub(crate) fn model_choice(&self, name: &str) -> anyhow::Result<ModelChoice> {
        model_choice_in(&self.store, name)
    }

    /// The choice a profile being edited makes, checked as saving would check it, with the
    /// learned calibration of the stored profile of that name, if any. Runs on a blocking thread.
    fn unsaved_choice(&self, edited: &crate::json::ModelProfile) -> anyhow::Result<ModelChoice> {
        crate::base::profile_check::check(edited)?;
        let name = edited.name.trim();
        let record = edited.clone().into_record();
        let calibration = self.store.calibration(name)?.map(|(milli, _)| milli);
        ModelChoice::from_record(&record, calibration)
    }
}

/// The engine's plan of a filled path: refused when the tree's reply buffer leaves no room, and
/// when the context does not fit a tree that stops at the limit (shown as the plan truncation
/// would make, when `refusals` says so). A refused plan's path goes back to the cache.
fn plan_path(
    path: CheckedOutPath,
    choice: ModelChoice,
    tree: store::TreeSetup,
    settings: TreeSettings,
    provider_cut: Option<String>,
    refusals: Refusals,
) -> anyhow::Result<Planned> {
    if let Some(buffer) = settings.token_buffer
        && buffer >= choice.engine.context_window
    {
        return Err(ApiError::invalid_input(format!(
            "this tree keeps {buffer} tokens for the reply (its token buffer), all of {}'s \
             {}-token window; lower the buffer in the tree's settings or choose a model with a \
             larger window",
            choice.name, choice.engine.context_window
        ))
        .into());
    }
    let engine_settings = settings.engine(now_ms(), &choice.assembly);
    let (plan, refusal) =
        match pinloom_engine::plan(&path.snapshot, &choice.engine, &engine_settings) {
            Ok(plan) => (plan, None),
            Err(error) => {
                let shown = match (&error, refusals) {
                    (EngineError::StopAtLimit { exclude, .. }, Refusals::Show) => {
                        // The plan truncation would make lists the slices, so the person can
                        // exclude what the refusal names with one click.
                        let mut truncating = engine_settings.clone();
                        truncating.truncation = TruncationStrategy::TruncateMiddle;
                        pinloom_engine::plan(&path.snapshot, &choice.engine, &truncating)
                            .ok()
                            .map(|plan| (plan, exclude.clone()))
                    }
                    _ => None,
                };
                let Some((plan, exclude)) = shown else {
                    return Err(engine_error(&error, &path.snapshot));
                };
                let message = engine_api_error(&error, &path.snapshot).message;
                (plan, Some(ContextRefusal { message, exclude }))
            }
        };
    Ok(Planned { plan, path, choice, tree, settings, provider_cut, refusal })
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
    Ok(crate::json::Receipt::read(&stored)
        .ok()
        .and_then(|receipt| receipt.message)
        .map(|message| format!("The last reply on this path (message {id}) was cut: {message}")))
}

/// A run of this many alike slices in a row or more is one line of a plan view: a 100,000-message
/// thread's plan has as many slices, nearly all of them old messages cut by truncation, and sent
/// one by one they made ~30 MB of JSON and kept the window busy for seconds.
const FOLD_RUNS_OF: usize = 12;

/// A plan's slices as the lines of its view: what each line needs to know beside the slice.
struct PlanLines<'a> {
    planned: &'a Planned,
    kept: HashSet<u64>,
    to_exclude: HashSet<SourceId>,
}

impl<'a> PlanLines<'a> {
    fn of(planned: &'a Planned) -> PlanLines<'a> {
        let snapshot = &planned.path.snapshot;
        PlanLines {
            planned,
            kept: snapshot.nodes.iter().filter(|node| node.kept).map(|node| node.id.0).collect(),
            to_exclude: planned
                .refusal
                .as_ref()
                .map(|refusal| refusal.exclude.iter().copied().collect())
                .unwrap_or_default(),
        }
    }

    fn is_kept(&self, slice: &Slice) -> bool {
        matches!(slice.source, SourceId::Node(node) if self.kept.contains(&node.0))
    }

    /// A slice the person is asked to act on, or marked for it: always a line of its own.
    fn stands_alone(&self, slice: &Slice) -> bool {
        slice.kind == SliceKind::Prompt
            || slice.cut_from.is_some()
            || self.is_kept(slice)
            || self.to_exclude.contains(&slice.source)
    }

    fn alike(&self, a: &Slice, b: &Slice) -> bool {
        a.kind == b.kind && a.status == b.status && !self.stands_alone(a) && !self.stands_alone(b)
    }

    /// Slice `index` of the plan as one line.
    fn view(&self, index: usize) -> SliceView {
        let slice = &self.planned.plan.slices[index];
        let (source, source_id) = source_view(slice.source);
        let text = slice_text(slice, &self.planned.path.snapshot);
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
            kept: self.is_kept(slice),
            preview: text.chars().take(160).collect(),
            exclude_to_fit: self.to_exclude.contains(&slice.source),
            count: 1,
            first: u32::try_from(index).unwrap_or(u32::MAX),
            last_source_id: None,
        }
    }
}

/// The plan's slices `first..first + count`, one line each (what a folded run of a plan view
/// holds).
pub(crate) fn slice_views(planned: &Planned, first: usize, count: usize) -> Vec<SliceView> {
    let facts = PlanLines::of(planned);
    let end = first.saturating_add(count).min(planned.plan.slices.len());
    (first.min(end)..end).map(|index| facts.view(index)).collect()
}

/// The plan's slices as lines: runs of [`FOLD_RUNS_OF`] alike slices or more folded into one line
/// (their first slice, with every one's tokens), everything else a line of its own.
fn folded_views(planned: &Planned) -> Vec<SliceView> {
    let facts = PlanLines::of(planned);
    let slices = &planned.plan.slices;
    let mut views = Vec::new();
    let mut start = 0;
    while start < slices.len() {
        let mut end = start + 1;
        while end < slices.len() && facts.alike(&slices[start], &slices[end]) {
            end += 1;
        }
        if end - start >= FOLD_RUNS_OF {
            let mut run = facts.view(start);
            run.tokens = slices[start..end]
                .iter()
                .fold(0_u32, |sum, slice| sum.saturating_add(slice.tokens));
            run.count = u32::try_from(end - start).unwrap_or(u32::MAX);
            run.last_source_id = source_view(slices[end - 1].source).1;
            views.push(run);
        } else {
            views.extend((start..end).map(|index| facts.view(index)));
        }
        start = end;
    }
    views
}

/// The plan as front ends show it.
pub(crate) fn plan_view(planned: &Planned) -> anyhow::Result<PlanView> {
    let plan = &planned.plan;
    let slices = folded_views(planned);
    // A refused plan sends nothing: it shows what truncation would keep, never a body.
    let (url, body) = match (&planned.refusal, wire_request(planned)) {
        (Some(_), _) => (String::new(), String::new()),
        (None, Ok(wire)) => (wire.url, serde_json::to_string_pretty(&wire.body)?),
        (None, Err(error)) => (String::new(), format!("(no request: {error})")),
    };
    Ok(PlanView {
        node_id: planned.path.end.0,
        profile: planned.choice.name.clone(),
        available: plan.available,
        used: plan.used,
        tokenizer: tokenizer_label(plan.tokenizer),
        truncated: plan.truncated(),
        omitted_messages: u32::try_from(
            plan.marker
                .as_ref()
                .map(|marker| marker.omitted)
                .or(plan.small_budget.map(|small| small.omitted))
                .unwrap_or(0),
        )
        .unwrap_or(u32::MAX),
        slices,
        missing_summaries: u32::try_from(plan.missing_summaries.len()).unwrap_or(u32::MAX),
        provider_cut: planned.provider_cut.clone(),
        refusal: planned.refusal.as_ref().map(|refusal| refusal.message.clone()),
        url,
        body: Some(body),
        reply_limit: plan.reply_limit,
        ancestry: ancestry_views(planned),
        kept_start: u32::try_from(plan.kept_start).unwrap_or(u32::MAX),
        step_cut: plan.step_cut.map(|cut| StepCutView {
            messages: u32::try_from(cut.messages).unwrap_or(u32::MAX),
            tokens: cut.tokens,
            step_tokens: cut.step_tokens,
        }),
        small_budget: plan.small_budget.map(|small| small.room),
        start_given_up: plan.start_given_up.map(|start| start.tokens),
        task_frames: planned.settings.task_frames,
        compaction: compaction_note(planned),
        compaction_due: compaction_due(plan, &planned.settings, planned.refusal.is_some()),
    })
}

/// The compaction `planned` met, from its slices: the summary's own and the messages it stands
/// for.
fn compaction_note(planned: &Planned) -> Option<crate::json::CompactionNote> {
    let compaction = planned.path.snapshot.compaction.as_ref()?;
    let slices = &planned.plan.slices;
    let summary = slices.iter().find(|slice| slice.kind == SliceKind::Compaction)?;
    let compacted: Vec<i64> = slices
        .iter()
        .filter(|slice| slice.status == SliceStatus::Pruned(PruneReason::Compacted))
        .filter_map(|slice| match slice.source {
            SourceId::Node(node) => i64::try_from(node.0).ok(),
            _ => None,
        })
        .collect();
    Some(crate::json::CompactionNote {
        id: compaction.id,
        first: compacted.first().copied(),
        up_to: i64::try_from(compaction.up_to.0).unwrap_or(i64::MAX),
        messages: u32::try_from(compacted.len()).unwrap_or(u32::MAX),
        tokens: summary.tokens,
        written_by: compaction.written_by.clone(),
        included: summary.is_included(),
        reason: match summary.status {
            SliceStatus::Included => None,
            SliceStatus::Pruned(reason) => Some(reason.as_str().to_owned()),
        },
        stale: compaction.stale.clone(),
        pin_id: planned.path.end_thread.map(|PinId(pin)| pin),
        text: compaction.text.clone(),
    })
}

/// What the plan carries of each ancestor thread, root first.
pub(crate) fn ancestry_views(planned: &Planned) -> Vec<AncestorView> {
    let plan = &planned.plan;
    let snapshot = &planned.path.snapshot;
    plan.ancestors
        .iter()
        .map(|entry| {
            let slice = &plan.slices[entry.slice];
            let pin_id = store_pin(entry.thread).map(|pin| pin.0);
            let title = match entry.thread {
                pinloom_engine::snapshot::ThreadRef::Root => snapshot.tree.title.clone(),
                pinloom_engine::snapshot::ThreadRef::Pin(pin) => {
                    snapshot.pin(pin).map(|pin| pin.title.clone()).unwrap_or_default()
                }
            };
            let record = |k: usize| &snapshot.summaries[k];
            let pending = snapshot.summary_notes.iter().any(|note| {
                note.thread == entry.thread
                    && note.up_to == entry.up_to
                    && note.state == pinloom_engine::snapshot::SummaryState::BeingWritten
            });
            let tokenizer = planned.choice.engine.tokenizer;
            let (state, shown, written, unavailable) = match &entry.content {
                AncestorContent::Summary { record: k } => {
                    (AncestorState::Summary, Some(*k), None, None)
                }
                AncestorContent::Fitted { record: k, from } => {
                    (AncestorState::Fitted, Some(*from), Some(record(*k).text.clone()), None)
                }
                AncestorContent::Cut { record: k, .. } => {
                    (AncestorState::Cut, Some(*k), None, None)
                }
                AncestorContent::Excerpt { reason, .. } => (
                    AncestorState::Excerpt,
                    None,
                    None,
                    Some(format!("summary not available: {}", reason.describe())),
                ),
                AncestorContent::RootGoal => (AncestorState::RootGoal, None, None, None),
            };
            let summary = shown.map(record);
            let text = written.unwrap_or_else(|| entry.text.clone());
            let (written_text, written_tokens) = match (&entry.content, summary) {
                (AncestorContent::Fitted { .. } | AncestorContent::Cut { .. }, Some(summary)) => {
                    (Some(summary.text.clone()), Some(tokenizer.count_u32(&summary.text)))
                }
                _ => (None, None),
            };
            AncestorView {
                pin_id,
                title,
                distance: u32::try_from(entry.distance).unwrap_or(u32::MAX),
                up_to: i64::try_from(entry.up_to.0).unwrap_or(i64::MAX),
                budget: entry.budget,
                tokens: slice.tokens,
                included: slice.is_included(),
                reason: match slice.status {
                    SliceStatus::Included => None,
                    SliceStatus::Pruned(reason) => Some(reason.as_str().to_owned()),
                },
                state,
                written_by: summary.map(|summary| writer(summary.written_by)),
                summarizer: summary
                    .map(|summary| summary.summarizer.clone())
                    .filter(|name| !name.is_empty()),
                whole_thread: summary.is_some_and(|summary| summary.up_to.is_none()),
                text,
                written_text,
                written_tokens,
                unavailable,
                stale: match &entry.content {
                    AncestorContent::Excerpt {
                        reason: ExcerptReason::Stale { why, .. }, ..
                    } => Some(why.clone()),
                    _ => None,
                },
                pending,
            }
        })
        .collect()
}

fn writer(author: pinloom_engine::snapshot::SummaryAuthor) -> SummaryAuthor {
    match author {
        pinloom_engine::snapshot::SummaryAuthor::Model => SummaryAuthor::Model,
        pinloom_engine::snapshot::SummaryAuthor::Person => SummaryAuthor::Person,
        pinloom_engine::snapshot::SummaryAuthor::Agent => SummaryAuthor::Agent,
        pinloom_engine::snapshot::SummaryAuthor::File => SummaryAuthor::File,
    }
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
pub(crate) fn earlier_replies(path: &CachedPath, prompt: NodeId) -> Vec<NodeId> {
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
        SourceId::PdfPage { attachment, .. } => ("pdfPage", id(attachment)),
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
        SourceId::FuseSource(node) => ("fuseSource", id(node.0)),
        SourceId::FuseInstruction => ("fuseInstruction", None),
        SourceId::Picked(node) => ("picked", id(node.0)),
        SourceId::PickedSummary(node) => ("pickedSummary", id(node.0)),
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
        EngineError::StopAtLimit { needed, available, exclude } => ApiError {
            code: ErrorCode::ContextOverBudget,
            message: format!(
                "the context needs {needed} tokens, over the {available} this model has, and its \
                 profile stops at the limit instead of cutting; exclude {} to fit: {} (the \
                 inspector marks them), choose a model with a larger window, or let this one cut \
                 the history (Budget → When the history does not fit)",
                plural(exclude.len(), "item"),
                describe_exclusions(exclude, snapshot)
            ),
        },
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

/// What a stopAtLimit refusal asks to exclude, as a person reads it: a few messages by their
/// opening words; more as runs of the thread, by the numbers the thread shows ("the oldest 302
/// messages, #1–#302"), at most [`RUNS_SHOWN`] runs; anything else by what it is.
fn describe_exclusions(exclude: &[SourceId], snapshot: &Snapshot) -> String {
    let place: std::collections::HashMap<pinloom_engine::snapshot::NodeId, usize> =
        snapshot.nodes.iter().enumerate().map(|(at, node)| (node.id, at)).collect();
    let mut messages: Vec<(usize, u64)> = Vec::new();
    let mut others: Vec<String> = Vec::new();
    for source in exclude {
        match source {
            SourceId::Node(node) if node.0 < ANNOTATION_ID_BASE && place.contains_key(node) => {
                messages.push((place[node], node.0));
            }
            other => others.push(describe_source(*other, snapshot)),
        }
    }
    let mut named = Vec::new();
    if messages.len() <= 3 {
        let ids = messages.iter().map(|(_, id)| pinloom_engine::snapshot::NodeId(*id));
        named.extend(ids.map(|id| describe_source(SourceId::Node(id), snapshot)));
    } else {
        messages.sort_unstable();
        let mut runs: Vec<(u64, u64, usize)> = Vec::new();
        let mut last_place = None;
        for (at, id) in &messages {
            match runs.last_mut() {
                Some(run) if last_place.is_some() && last_place == at.checked_sub(1) => {
                    run.1 = *id;
                    run.2 += 1;
                }
                _ => runs.push((*id, *id, 1)),
            }
            last_place = Some(*at);
        }
        let from_the_start = messages.first().is_some_and(|(at, _)| *at == 0);
        let shown: Vec<String> = runs
            .iter()
            .take(RUNS_SHOWN)
            .map(|(first, last, count)| match count {
                1 => format!("#{first}"),
                _ => format!("#{first}–#{last}"),
            })
            .collect();
        let more = runs.len().saturating_sub(RUNS_SHOWN);
        named.push(format!(
            "{} {}, {}{}",
            if from_the_start && runs.len() == 1 { "the oldest" } else { "" },
            plural(messages.len(), "message"),
            shown.join(", "),
            if more > 0 { format!(" and {more} more runs") } else { String::new() }
        ));
    }
    named.extend(others);
    named.iter().map(|name| name.trim()).collect::<Vec<_>>().join("; ")
}

/// How many runs of messages a refusal names before it counts the rest.
const RUNS_SHOWN: usize = 6;

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
        SourceId::PdfPage { page, .. } => format!("page {page} of an attached PDF"),
        SourceId::Retrieval(_) | SourceId::AddedSearchHit(_) => "a search hit".to_owned(),
        SourceId::PinResult(_) => "a closed pin's result".to_owned(),
        SourceId::Anchor(_) => "the pinned passage".to_owned(),
        SourceId::Tool(_) => "a tool definition".to_owned(),
        SourceId::AgentPrompt | SourceId::TreeSystemContext => "the system context".to_owned(),
        SourceId::WorkingBuffer => "the working buffer".to_owned(),
        SourceId::FuseSource(_) => "an answer chosen to fuse".to_owned(),
        SourceId::FuseInstruction => "the instruction to fuse the answers".to_owned(),
        SourceId::Picked(_) => "a message you picked for the question".to_owned(),
        SourceId::PickedSummary(_) => "the summary of a picked message's branch".to_owned(),
    }
}

/// Model profile `name` as a plan uses it, with its learned calibration; a name no profile has is
/// refused in words that say where to choose one. Reads the store: call it on a blocking thread.
pub(crate) fn model_choice_in(store: &Store, name: &str) -> anyhow::Result<ModelChoice> {
    let record = store.profile(name).map_err(|error| match error {
        store::StoreError::NoSuchProfile(_) => {
            anyhow::Error::new(ApiError::invalid_input(format!(
                "there is no model profile named \"{name}\"; choose one in the Model list, or \
                 add it with Budget"
            )))
        }
        other => other.into(),
    })?;
    if let Some(file) = &record.imported_from {
        return Err(ApiError::invalid_input(format!(
            "the model profile \"{name}\" came with the file {file:?} and is not enabled: nothing \
             is planned for or sent to it until you enable it in Settings → Models from imported \
             files, if you trust its model, address and system prompt"
        ))
        .into());
    }
    let calibration = store.calibration(&record.name)?.map(|(milli, _)| milli);
    ModelChoice::from_record(&record, calibration)
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
