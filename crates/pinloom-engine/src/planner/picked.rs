//! A question over several branches (rule 8 of [`crate::permitted`]): the messages the person
//! picked from other branches and pins, each with where it came from and, when they asked, its
//! branch's summary up to it. Nothing else of those branches comes.

use crate::plan::{MissingSummary, PruneReason, SliceKind, SourceId};
use crate::snapshot::PickedSource;

use super::collect::fill;
use super::{AncestorPath, Builder, Need};

/// How a picked message is framed: `{label}` (where it came from), `{text}` (its words).
pub const PICKED_FRAMING: &str = "Added by you, from {label}:\n{text}";

/// How the summary of a picked message's branch is framed, before the message itself.
pub const PICKED_SUMMARY_FRAMING: &str =
    "Added by you, a summary of {label} up to the message picked from it:\n{text}";

impl Builder<'_> {
    /// Each picked message of a question on the path, in the order picked: its branch's summary
    /// (when asked for and written; a summary to write otherwise), then the message. A message
    /// is required, as a fused answer is: a question asked over it means nothing without it.
    /// One picked for a question not on this path is left out as off the path, one excluded or
    /// deleted since it was picked for that reason.
    pub(super) fn collect_picked(&mut self, path: &AncestorPath) {
        let snapshot = self.snapshot;
        if snapshot.picked.is_empty() {
            return;
        }
        let questions: Vec<_> = snapshot.picked.iter().map(|pick| pick.question).collect();
        let positions = crate::permitted::path_positions(snapshot, path, &questions);
        for (pick, position) in snapshot.picked.iter().zip(positions) {
            let why = if position.is_none() {
                Some(PruneReason::OffPath)
            } else if pick.deleted {
                Some(PruneReason::SoftDeleted)
            } else if pick.excluded {
                Some(PruneReason::Excluded)
            } else {
                None
            };
            if pick.with_summary && why.is_none() {
                self.collect_picked_summary(pick);
            }
            let text = fill(PICKED_FRAMING, &[("{label}", &pick.label), ("{text}", &pick.text)]);
            let source = SourceId::Picked(pick.node);
            match why {
                Some(why) => self.pruned_text(SliceKind::Picked, source, text, why),
                None => self.push_text(SliceKind::Picked, source, text, Need::Required),
            }
        }
    }

    /// A picked message's branch summary: sent when written, within the budget; asked to be
    /// written when not (the send writes it first, as an ancestor's).
    fn collect_picked_summary(&mut self, pick: &PickedSource) {
        let source = SourceId::PickedSummary(pick.node);
        match &pick.summary {
            Some(summary) if summary.trim().is_empty() => {
                let text =
                    fill(PICKED_SUMMARY_FRAMING, &[("{label}", &pick.label), ("{text}", "")]);
                self.pruned_text(SliceKind::Picked, source, text, PruneReason::EmptySummary);
            }
            Some(summary) => {
                let values = [("{label}", pick.label.as_str()), ("{text}", summary.as_str())];
                let text = fill(PICKED_SUMMARY_FRAMING, &values);
                self.push_text(SliceKind::Picked, source, text, Need::Optional);
            }
            None if self.settings.write_summaries => {
                let budget = self.settings.depth_budgets.first().copied().unwrap_or(800);
                self.missing.push(MissingSummary {
                    thread: pick.thread,
                    up_to: pick.node,
                    budget,
                    condense: None,
                });
            }
            None => {}
        }
    }
}
