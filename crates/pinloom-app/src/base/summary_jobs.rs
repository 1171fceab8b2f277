//! The summaries this process is writing, and those whose last try failed: kept on the
//! [`Pinloom`](crate::base::pinloom::Pinloom) handle, since a plan reads them (a summary being
//! written is shown as such) and the conversation room starts and awaits them.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use futures_util::future::{BoxFuture, Shared};
use pinloom_engine::plan::MissingSummary;
use pinloom_engine::snapshot::{SummaryNote, SummaryState};
use pinloom_store::{NodeId, PinId, TreeId};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::base::engine_inputs::{engine_node, engine_thread};
use crate::base::snapshot_cache::store_pin;

/// One summary to write: of `thread` up to `up_to` at `budget` by `summarizer`, from the thread's
/// messages, or, with `condense`, the fitted version of chosen summary `condense` from its text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct SummaryJob {
    pub(crate) tree: TreeId,
    pub(crate) thread: Option<PinId>,
    pub(crate) up_to: NodeId,
    pub(crate) budget: u32,
    pub(crate) condense: Option<i64>,
    pub(crate) summarizer: String,
    /// Written for a compaction: listed as one among the tree's requests.
    pub(crate) compaction: bool,
}

impl SummaryJob {
    /// The summaries a plan of tree `tree` lacks (`missing`), each to be written by `summarizer`.
    pub(crate) fn all_missing(
        tree: TreeId,
        missing: &[MissingSummary],
        summarizer: &str,
    ) -> Vec<SummaryJob> {
        missing.iter().filter_map(|missing| SummaryJob::of(tree, missing, summarizer)).collect()
    }

    fn of(tree: TreeId, missing: &MissingSummary, summarizer: &str) -> Option<SummaryJob> {
        Some(SummaryJob {
            tree,
            thread: store_pin(missing.thread),
            up_to: NodeId(i64::try_from(missing.up_to.0).ok()?),
            budget: missing.budget,
            condense: missing.condense.and_then(|id| i64::try_from(id).ok()),
            summarizer: summarizer.to_owned(),
            compaction: false,
        })
    }
}

/// A write in progress, awaited by as many sends as need it.
pub(crate) type Outcome = Shared<BoxFuture<'static, Result<(), String>>>;

pub(crate) enum JobState {
    /// Under way; `cancel` stops it when no open pin needs it any more.
    Writing {
        outcome: Outcome,
        cancel: CancellationToken,
    },
    Failed {
        message: String,
        at: Instant,
        attempts: usize,
    },
}

/// The summaries this process is writing, and those whose last try failed.
pub(crate) struct SummaryJobs {
    pub(crate) jobs: Mutex<HashMap<SummaryJob, JobState>>,
    pub(crate) landed: broadcast::Sender<i64>,
}

impl Default for SummaryJobs {
    fn default() -> SummaryJobs {
        SummaryJobs { jobs: Mutex::default(), landed: broadcast::channel(64).0 }
    }
}

impl std::fmt::Debug for SummaryJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SummaryJobs").field("jobs", &self.lock().len()).finish()
    }
}

impl SummaryJobs {
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SummaryJob, JobState>> {
        // Nothing is left half-done under this lock: a poisoned map is safe to keep using.
        self.jobs.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// What the engine is told of tree `tree`'s summaries not yet in the store.
    pub(crate) fn notes(&self, tree: TreeId) -> Vec<SummaryNote> {
        self.lock()
            .iter()
            .filter(|(job, _)| job.tree == tree)
            .map(|(job, state)| SummaryNote {
                thread: engine_thread(job.thread),
                up_to: engine_node(job.up_to),
                state: match state {
                    JobState::Writing { .. } => SummaryState::BeingWritten,
                    JobState::Failed { message, .. } => SummaryState::Failed(message.clone()),
                },
            })
            .collect()
    }
}
