//! Compaction of the thread you are in: its older part replaced in every request by a summary
//! the summariser writes (or the person), the last turns kept verbatim. The summary is the
//! thread's summary up to the compaction's last message, so it follows its sources as every
//! summary does: a message of the span excluded, deleted or moved makes it stale, and the
//! messages are sent as they are again until it is compacted anew. Undone, nothing is lost: the
//! messages were never touched.

use anyhow::Context as _;
use pinloom_store::{NodeId, PinId};

use crate::ApiError;
use crate::base::plan::model_choice_in;
use crate::json::CompactionView;
use crate::pinloom::Pinloom;
use crate::runtime::now_ms;

/// The summary's budget: an eighth of the conversation model's window, within these bounds.
const BUDGET_BOUNDS: (u32, u32) = (256, 4_000);

impl Pinloom {
    /// Compacts the thread of message `node_id` along its path to that message: every message
    /// but the last `keep_turns` turns (two messages each) is summarised by the tree's summariser
    /// (`profile` when it names none) and the summary stands for them in every request past
    /// them. A thread too short for it, or one with no message of its own, is refused, and
    /// nothing changes; so does a summariser that fails (its request is kept in the list).
    pub async fn compact(
        &self,
        node_id: i64,
        keep_turns: u32,
        profile: String,
    ) -> anyhow::Result<CompactionView> {
        let model = profile.clone();
        let (tree, thread, span, choice) = self
            .read("could not read the thread to compact", move |store| {
                let choice = model_choice_in(store, &model)?;
                let end = store.node(NodeId(node_id))?;
                if store.tree_setup(end.tree_id)?.mode == pinloom_store::TreeMode::Buffer {
                    return Err(ApiError::invalid_input(
                        "a buffer tree is one document: it is continued, not compacted",
                    )
                    .into());
                }
                let span: Vec<NodeId> = store
                    .ancestor_path(end.id)?
                    .into_iter()
                    .filter(|node| node.pin_id == end.pin_id)
                    .map(|node| node.id)
                    .collect();
                Ok((end.tree_id, end.pin_id, span, choice))
            })
            .await?;
        let kept = usize::try_from(keep_turns).unwrap_or(usize::MAX).saturating_mul(2);
        let compacted = span.len().saturating_sub(kept);
        if compacted < 2 {
            return Err(ApiError::invalid_input(format!(
                "this thread has {} on its path to message #{node_id}: keeping the last {keep_turns} \
                 {} ({kept} messages) leaves {} to compact, and a compaction needs at least 2; \
                 keep fewer turns (--keep), or let the thread grow",
                plural(span.len(), "message"),
                if keep_turns == 1 { "turn" } else { "turns" },
                compacted
            ))
            .into());
        }
        let up_to = span[compacted - 1];
        let budget = (choice.engine.context_window / 8).clamp(BUDGET_BOUNDS.0, BUDGET_BOUNDS.1);
        let summary = self
            .regenerate_summary(tree.0, thread.map(|PinId(pin)| pin), up_to.0, budget, profile)
            .await
            .context("the thread was not compacted")?;
        let compaction = self
            .write("could not compact the thread", move |store| {
                Ok(store.add_compaction(tree, thread, up_to, now_ms())?)
            })
            .await?;
        self.snapshot_cache.forget_plans();
        let tokens = choice.engine.tokenizer.count_u32(&summary.text);
        Ok(CompactionView {
            id: compaction.id,
            first: span[0].0,
            up_to: up_to.0,
            messages: u32::try_from(compacted).unwrap_or(u32::MAX),
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

fn plural(count: usize, one: &str) -> String {
    format!("{count} {one}{}", if count == 1 { "" } else { "s" })
}
