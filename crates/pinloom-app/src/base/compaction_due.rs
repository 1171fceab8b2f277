//! Whether a plan's thread is due for compaction under its tree's setting: offered when its
//! history is cut, made before the send when the tree compacts automatically and the history is
//! cut or fills more than the tree's share of the budget. Read from the plan alone, so the
//! preview says what the send will do before it does it.

use pinloom_engine::ContextPlan;

use crate::base::words::plural;
use crate::json::{CompactionDue, CompactionWhen, TreeSettings};

/// The compaction `settings` ask for before `plan` is sent; `refused` when the tree stops at
/// the limit and this plan does not fit (compacting is then what lets it go).
pub(crate) fn compaction_due(
    plan: &ContextPlan,
    settings: &TreeSettings,
    refused: bool,
) -> Option<CompactionDue> {
    let automatic = match settings.compaction {
        CompactionWhen::Off => return None,
        CompactionWhen::Ask => false,
        CompactionWhen::Automatic => true,
    };
    if plan.mode == pinloom_engine::snapshot::TreeMode::Buffer {
        return None;
    }
    // The thread's own messages before the prompt that a compaction would stand for: those sent
    // and those the budget cut (already compacted, excluded or deleted ones are none of its
    // business).
    let history = plan.history_fill();
    let keep_turns = settings.compaction_keep_turns();
    // Whole turns of the history are kept, a message and its reply each, and the prompt after them.
    let kept = usize::try_from(keep_turns.saturating_mul(2)).unwrap_or(usize::MAX);
    let span = &history[..history.len().saturating_sub(kept)];
    if span.len() < 2 {
        return None;
    }
    let tokens: u32 = history.iter().map(|entry| entry.tokens).fold(0, u32::saturating_add);
    let cut = history.iter().filter(|entry| entry.cut).count();
    let share = settings.compact_at_percent();
    let over_share = u64::from(tokens) * 100 > u64::from(plan.available) * u64::from(share);
    let reason = if refused {
        "the tree stops at the limit and this context does not fit".to_owned()
    } else if cut > 0 {
        format!("the budget cuts {} of the thread's history", plural(cut, "message"))
    } else if automatic && over_share {
        format!("the thread's history fills more than {share} % of the budget")
    } else {
        return None;
    };
    let span_tokens = span.iter().map(|entry| entry.tokens).fold(0, u32::saturating_add);
    Some(CompactionDue {
        // A refused plan is never sent, so nothing is compacted on its way: the person is
        // offered it.
        automatic: automatic && !refused,
        up_to: i64::try_from(span[span.len() - 1].node.0).unwrap_or(i64::MAX),
        messages: u32::try_from(span.len()).unwrap_or(u32::MAX),
        tokens: span_tokens,
        cut: u32::try_from(span.iter().filter(|entry| entry.cut).count()).unwrap_or(u32::MAX),
        keep_turns,
        reason,
    })
}
