//! What a path may know: the one rule every context obeys, stated here once.
//!
//! A context for message M may hold only:
//! 1. M's ancestry: its own thread from its start to M, and each ancestor thread up to the node
//!    the next thread of the chain hangs off, never a message after it. The current thread comes
//!    as its history; an ancestor thread as its summary ending exactly at that node, as a
//!    summary of the whole thread written on purpose (by the person, an agent, a file) while
//!    the thread holds nothing past that node (the application layer offers none otherwise),
//!    or, when none can serve, as its own last messages up to that node, verbatim.
//! 2. The current pin's anchor, verbatim.
//! 3. Attachments whose scope lies on the path: the tree, a thread of the chain, a node of the
//!    path.
//! 4. Results of closed pins opened from the same parent thread, only when the person opted in.
//!    And the result of a pin closed on M's own thread, when it was opened from a message of
//!    M's path: the pin hands its conclusion back to the thread it came from (its messages
//!    never come along; a pin on another branch of the thread is not on the path).
//! 5. Retrieval hits among the messages of M's path: its own thread up to M (chiefly what
//!    truncation cut from its history) and each ancestor thread up to where the next thread
//!    hangs off (a detail its summary dropped); never an excluded or deleted message, and never
//!    one the history already carries.
//! 6. What the person added by hand: a search hit they chose from anywhere in the tree, a note
//!    they included. Both are labelled as theirs ([`Provenance::AddedByPerson`]).
//! 7. For a fused answer only: the answers to M the person chose to fuse, each whole, and the
//!    instruction to fuse them ([`Provenance::ChosenToFuse`]). Each must be a model's answer to
//!    M itself; an answer to anything else is left out as off the path.
//! 8. For a question asked over several branches, and every message continuing it: the messages
//!    the person picked for that question, from any branch or pin of the tree, each whole, and,
//!    where they asked for it, the summary of its own thread up to it
//!    ([`Provenance::AddedByPerson`]). Only while the question is on M's path; nothing else of
//!    those branches.
//!
//! Nothing else: no other branch, regenerated alternative (but those chosen to fuse or picked),
//! replaced edit, sibling pin, or parent thread message after the anchor. The store's search offers
//! only hits on the path, and the planner checks every candidate against the path again (a hit
//! elsewhere is pruned as [`PruneReason::OffPath`]), so a mistake upstream shows in the inspector,
//! never in a request.
//!
//! [`Provenance::AddedByPerson`]: crate::plan::Provenance::AddedByPerson
//! [`PruneReason::OffPath`]: crate::plan::PruneReason::OffPath
//! [`Provenance::ChosenToFuse`]: crate::plan::Provenance::ChosenToFuse

use crate::ancestry::AncestorPath;
use crate::snapshot::{AttachmentScope, NodeId, Snapshot};

/// Where each of `nodes` sits on the path (its index in `path.nodes`), `None` for a node off
/// the path: one pass over the path, however many nodes are asked about.
pub fn path_positions(
    snapshot: &Snapshot,
    path: &AncestorPath,
    nodes: &[NodeId],
) -> Vec<Option<usize>> {
    let mut positions = vec![None; nodes.len()];
    if nodes.is_empty() {
        return positions;
    }
    let mut wanted: Vec<(NodeId, usize)> = nodes.iter().copied().zip(0..).collect();
    wanted.sort_unstable();
    // A 4,096-bit filter of the asked ids: nearly every node of a long path is ruled out by one
    // bit test, and only the few that pass are looked up among the asked.
    let mut filter = [0_u64; 64];
    for &(id, _) in &wanted {
        let bit = filter_bit(id);
        filter[bit / 64] |= 1 << (bit % 64);
    }
    for (position, &index) in path.nodes.iter().enumerate() {
        let id = snapshot.nodes[index].id;
        let bit = filter_bit(id);
        if filter[bit / 64] & (1 << (bit % 64)) == 0 {
            continue;
        }
        let Ok(found) = wanted.binary_search_by_key(&id, |(node, _)| *node) else { continue };
        // Several candidates may name one node: mark every one of them.
        let first = wanted[..found].partition_point(|(node, _)| *node < id);
        for &(_, asked) in wanted[first..].iter().take_while(|(node, _)| *node == id) {
            positions[asked] = Some(position);
        }
    }
    positions
}

/// Which of the filter's 4,096 bits stands for `id`: a multiplicative hash, so ids that differ in
/// any bits spread over the filter.
fn filter_bit(id: NodeId) -> usize {
    (id.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52) as usize
}

/// Whether an attachment with this scope is in the context of the path's last node.
pub fn attachment_in_scope(
    snapshot: &Snapshot,
    path: &AncestorPath,
    scope: AttachmentScope,
) -> bool {
    match scope {
        AttachmentScope::Tree => true,
        AttachmentScope::Thread(thread) => path.threads.iter().any(|t| t.thread == thread),
        AttachmentScope::Node(id) => path.nodes.iter().any(|&i| snapshot.nodes[i].id == id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planner::ancestry;
    use crate::snapshot::{Author, NodeRecord, ParentEdge};

    #[test]
    fn positions_mark_path_nodes_and_leave_branches_out() {
        // 1 → 2 → 3, with 4 a second answer to 2 (another branch).
        let nodes = vec![
            NodeRecord::text(1, ParentEdge::Root, Author::Human, "a"),
            NodeRecord::text(2, ParentEdge::Continuation(NodeId(1)), Author::Model, "b"),
            NodeRecord::text(4, ParentEdge::Continuation(NodeId(2)), Author::Human, "other"),
            NodeRecord::text(3, ParentEdge::Continuation(NodeId(2)), Author::Human, "c"),
        ];
        let snapshot = Snapshot { nodes, active: NodeId(3), ..Snapshot::default() };
        let path = ancestry(&snapshot, 50).unwrap();
        let asked = [NodeId(4), NodeId(1), NodeId(3), NodeId(1), NodeId(9)];
        assert_eq!(
            path_positions(&snapshot, &path, &asked),
            vec![None, Some(0), Some(2), Some(0), None]
        );
    }
}
