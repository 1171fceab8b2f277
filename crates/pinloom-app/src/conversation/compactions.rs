//! Compaction of the thread you are in: its older part replaced in every request by a summary
//! the summariser writes (or the person), the last turns kept verbatim. The summary is the
//! thread's summary up to the compaction's last message, so it follows its sources as every
//! summary does: a message of the span excluded, deleted or moved makes it stale, and the
//! messages are sent as they are again until it is compacted anew. Undone, nothing is lost: the
//! messages were never touched.

use anyhow::Context as _;
use pinloom_engine::snapshot::FuseSource;
use pinloom_store::{NodeId, PinId, TreeId};
use tokio_util::sync::CancellationToken;

use crate::base::compaction_due::compaction_due;
use crate::base::engine_inputs::ModelChoice;
use crate::base::pinloom::Pinloom;
use crate::base::plan::{Planned, ProfileRef, model_choice_in};
use crate::base::words::plural;
use crate::error::ApiError;
use crate::json::{CompactionView, TreeSettings};
use crate::runtime::now_ms;

/// The summary's budget: an eighth of the conversation model's window, within these bounds.
const BUDGET_BOUNDS: (u32, u32) = (256, 4_000);

impl Pinloom {
    /// Compacts the thread of message `node_id` along its path to that message: every message
    /// but the last `keep_turns` turns (two messages each; the tree's setting when `None`) is
    /// summarised by the tree's summariser
    /// (`profile` when it names none) and the summary stands for them in every request past
    /// them. A thread too short for it, or one with no message of its own, is refused, and
    /// nothing changes; so does a summariser that fails (its request is kept in the list).
    pub async fn compact(
        &self,
        node_id: i64,
        keep_turns: Option<u32>,
        profile: String,
    ) -> anyhow::Result<CompactionView> {
        let span = self.span_to_compact(node_id, profile.clone()).await?;
        let keep_turns = keep_turns.unwrap_or(span.keep_turns);
        let kept = usize::try_from(keep_turns).unwrap_or(usize::MAX).saturating_mul(2);
        let compacted = span.nodes.len().saturating_sub(kept);
        if compacted < 2 {
            return Err(ApiError::invalid_input(format!(
                "this thread has {} on its path to message #{node_id}: keeping the last {keep_turns} \
                 {} ({kept} messages) leaves {} to compact, and a compaction needs at least 2; \
                 keep fewer turns (--keep), or let the thread grow",
                plural(span.nodes.len(), "message"),
                if keep_turns == 1 { "turn" } else { "turns" },
                compacted
            ))
            .into());
        }
        self.compact_span(span, compacted, keep_turns, profile).await
    }

    /// Makes the compaction the tree's setting asks for before `planned` is sent (automatic
    /// compaction), then plans again with it in effect. `planned` goes on unchanged when none is
    /// due; so does a compaction that fails: the send then goes with truncation, and the failed
    /// request is in the tree's list.
    pub(in crate::conversation) async fn compact_when_due(
        &self,
        planned: Planned,
        prompt: NodeId,
        profile: &ProfileRef,
        fuse: &[FuseSource],
        cancel: &CancellationToken,
    ) -> anyhow::Result<Planned> {
        let due = compaction_due(&planned.plan, &planned.settings, planned.refusal.is_some());
        let (Some(due), ProfileRef::Stored(name) | ProfileRef::Tuned { name, .. }) = (due, profile)
        else {
            return Ok(planned);
        };
        if !due.automatic || !fuse.is_empty() {
            return Ok(planned);
        }
        // Made on its own, an automatic compaction counts against the tree's daily limit.
        let tree = planned.tree.id;
        let settings = planned.settings.clone();
        let refused = self
            .read("could not read what the tree's requests took", move |store| {
                settings.daily_limit_refusal(store, tree, now_ms())
            })
            .await?;
        if let Some(refused) = refused {
            tracing::warn!("the thread was not compacted before the send: {}", refused.message);
            return Ok(planned);
        }
        // The plan's path goes back to the cache before the compaction reads the thread.
        drop(planned);
        let compacted = async {
            let span = self.span_to_compact(due.up_to, name.clone()).await?;
            let count = span.nodes.len();
            self.compact_span(span, count, due.keep_turns, name.clone()).await
        };
        if let Err(error) = compacted.await {
            tracing::warn!(error = %format!("{error:#}"), "the thread was not compacted before the send");
        }
        self.plan_writing_summaries(prompt, profile, fuse, cancel).await
    }

    /// The messages of the thread of `node_id` on its path to it, with what a compaction of
    /// them needs to know.
    async fn span_to_compact(&self, node_id: i64, profile: String) -> anyhow::Result<Span> {
        self.read("could not read the thread to compact", move |store| {
            let choice = model_choice_in(store, &profile)?;
            let end = store.node(NodeId(node_id))?;
            if store.tree_setup(end.tree_id)?.mode == pinloom_store::TreeMode::Buffer {
                return Err(ApiError::invalid_input(
                    "a buffer tree is one document: it is continued, not compacted",
                )
                .into());
            }
            let settings = TreeSettings::of_tree(store, end.tree_id)?;
            let summarizer = match &settings.summarizer {
                Some(name) => model_choice_in(store, name)?,
                None => choice.clone(),
            };
            let nodes: Vec<pinloom_store::Node> = store
                .ancestor_path(end.id)?
                .into_iter()
                .filter(|node| node.pin_id == end.pin_id)
                .collect();
            Ok(Span {
                tree: end.tree_id,
                thread: end.pin_id,
                nodes,
                choice,
                summarizer,
                keep_turns: settings.compaction_keep_turns(),
            })
        })
        .await
    }

    /// Compacts the first `compacted` messages of `span` (the last `keep_turns` turns after them
    /// stay verbatim): the summariser writes their summary
    /// (in steps when they do not fit its window, each from the step before and what followed)
    /// and the compaction is put in effect.
    async fn compact_span(
        &self,
        span: Span,
        compacted: usize,
        keep_turns: u32,
        profile: String,
    ) -> anyhow::Result<CompactionView> {
        let up_to = span.nodes[compacted - 1].id;
        let engine = &span.choice.engine;
        let budget = (engine.context_window / 8).clamp(BUDGET_BOUNDS.0, BUDGET_BOUNDS.1);
        let thread = (span.tree, span.thread);
        for step in steps_within(&span.nodes[..compacted], &span.summarizer, budget) {
            self.write_summary_now(thread, step, budget, profile.clone(), true)
                .await
                .context("the thread was not compacted")?;
        }
        let summary = self
            .write_summary_now(thread, up_to, budget, profile, true)
            .await
            .context("the thread was not compacted")?;
        let (tree, pin) = thread;
        let compaction = self
            .write("could not compact the thread", move |store| {
                Ok(store.add_compaction(tree, pin, up_to, now_ms())?)
            })
            .await?;
        self.snapshot_cache.forget_plans();
        let tokens = engine.tokenizer.count_u32(&summary.text);
        Ok(CompactionView {
            id: compaction.id,
            first: span.nodes[0].id.0,
            up_to: up_to.0,
            messages: u32::try_from(compacted).unwrap_or(u32::MAX),
            keep_turns,
            tokens,
            written_by: summary.summarizer,
            text: summary.text,
        })
    }

    /// Undoes compaction `id`: its messages are sent as they are again.
    pub async fn undo_compaction(&self, id: i64) -> anyhow::Result<()> {
        let undone = self
            .write("could not undo the compaction", move |store| {
                Ok(store.undo_compaction(id, now_ms())?)
            })
            .await?;
        if !undone {
            return Err(ApiError::not_found(format!(
                "compaction {id} is not in effect: `pinloom context --format report` names the \
                 one a thread has"
            ))
            .into());
        }
        self.snapshot_cache.forget_plans();
        Ok(())
    }
}

/// A thread's messages on a path, and the models a compaction of them involves.
struct Span {
    tree: TreeId,
    thread: Option<PinId>,
    nodes: Vec<pinloom_store::Node>,
    /// The model the thread is sent to: the summary's budget is a share of its window.
    choice: ModelChoice,
    /// The model that writes the summary: what it reads must fit its window.
    summarizer: ModelChoice,
    /// The turns the tree's compactions keep.
    keep_turns: u32,
}

/// The messages before the last of `nodes` at which a summary is written first, so that each
/// summary reads the one before it and what followed within `summarizer`'s window; none when
/// the whole span fits, or when the window is too small to read more than a summary's worth
/// beside the summary before (the one summary then reads the newest messages, and says the
/// start is left out). At most [`MAX_STEPS`], the latest: a longer span's start is read as the
/// first of them reads it. A message larger than the window on its own is read cut, as any
/// summary's is.
fn steps_within(
    nodes: &[pinloom_store::Node],
    summarizer: &ModelChoice,
    budget: u32,
) -> Vec<NodeId> {
    let engine = &summarizer.engine;
    // The summariser's room, as the transcript is cut to it: the window less the summary and the
    // instruction; after the first step, less the earlier summary too.
    let room = u64::from(engine.context_window.saturating_sub(budget)).saturating_sub(1_024);
    let later_room = room.saturating_sub(u64::from(budget) + 64);
    let counts: Vec<u64> =
        nodes.iter().map(|node| engine.tokenizer.count(&node.text) + MESSAGE_FRAMING).collect();
    if counts.iter().sum::<u64>() <= room || later_room < u64::from(budget) {
        return Vec::new();
    }
    let mut steps = Vec::new();
    let (mut filled, mut limit) = (0u64, room);
    for (index, count) in counts.iter().enumerate() {
        if filled + count > limit && index > 0 && filled > 0 {
            steps.push(nodes[index - 1].id);
            (filled, limit) = (0, later_room);
        }
        filled += count;
    }
    let surplus = steps.len().saturating_sub(MAX_STEPS);
    steps.split_off(surplus)
}

/// The most summaries a compaction writes before its own: each is a request, and a span that
/// needs more is read from where the first of them starts.
const MAX_STEPS: usize = 20;

/// What a transcript adds to each message: its author and the blank line before it.
const MESSAGE_FRAMING: u64 = 4;
