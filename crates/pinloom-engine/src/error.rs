//! Why a plan could not be made. Each message says what to do about it.

use crate::plan::SourceId;
use crate::snapshot::NodeId;

/// A plan that cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The active node is not in the snapshot.
    #[error("the active node {0:?} is not in the snapshot; reload the tree")]
    ActiveNodeMissing(NodeId),
    /// A node on the path names a parent the snapshot does not hold.
    #[error("node {node:?} hangs from {parent:?}, which is not in the snapshot; reload the tree")]
    ParentMissing {
        /// The child.
        node: NodeId,
        /// The missing parent.
        parent: NodeId,
    },
    /// Walking up from the active node came back to a node already walked.
    #[error("circular reference detected at node {at:?}: the tree is damaged")]
    Cycle {
        /// A node on the loop.
        at: NodeId,
    },
    /// More threads on the chain than the depth guard allows.
    #[error("the thread chain is {depth} threads deep, over the limit of {limit}")]
    DepthExceeded {
        /// Threads found before stopping.
        depth: usize,
        /// The guard.
        limit: usize,
    },
    /// Every node of the current thread is excluded: there is nothing to send.
    #[error("every message of this thread is excluded; include at least one message")]
    NoMessages,
    /// System context alone does not fit.
    #[error(
        "the system context alone is {system} tokens, over the {available} available; shorten \
         the agent prompt, the tree's system context or its instructions, or pick a larger model"
    )]
    SystemContextOverBudget {
        /// Its tokens.
        system: u32,
        /// The budget.
        available: u32,
    },
    /// What may never be dropped (system, anchor, prompt, the last N nodes) does not fit.
    #[error(
        "the system context, anchor, prompt and the last {minimum_recent} messages need {required} \
         tokens, over the {available} available; exclude some of them or pick a larger model"
    )]
    RequiredOverBudget {
        /// Their tokens.
        required: u32,
        /// The budget.
        available: u32,
        /// The setting that protected the recent nodes.
        minimum_recent: usize,
    },
    /// stopAtLimit: the context does not fit and truncation is refused.
    #[error(
        "the context needs {needed} tokens, over the {available} available, and the truncation \
         strategy is stopAtLimit; exclude {} to fit: {exclude:?}", exclude.len()
    )]
    StopAtLimit {
        /// What the whole context needs.
        needed: u32,
        /// The budget.
        available: u32,
        /// The items to exclude, in pruning order, whose removal makes it fit.
        exclude: Vec<SourceId>,
    },
}
