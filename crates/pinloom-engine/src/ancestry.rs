//! The path a context may know: from the tree's root to the active node, in threads split at pin
//! edges, checked for loops and for the deepest a thread may nest.

use std::collections::HashMap;

use crate::error::EngineError;
use crate::snapshot::{NodeId, ParentEdge, Snapshot, ThreadRef};

/// The root-first path from the tree's root to the active node, split into threads at pin edges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AncestorPath {
    /// Snapshot indices of the path's nodes, root first.
    pub nodes: Vec<usize>,
    /// The threads on the chain, root first; the last is the active node's thread.
    pub threads: Vec<ThreadSegment>,
}

/// One thread's stretch of the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadSegment {
    /// The thread.
    pub thread: ThreadRef,
    /// First position in [`AncestorPath::nodes`].
    pub start: usize,
    /// One past the last position.
    pub end: usize,
}

/// Walks from the active node up to the root and returns the path root-first.
///
/// The store usually hands the path already root-first, so each parent is looked for first just
/// before its child (no index built); anything else falls back to a hash index built once. A walk
/// longer than the node count must have revisited a node: that is the cycle check, in O(1) memory.
pub fn ancestry(snapshot: &Snapshot, max_thread_depth: usize) -> Result<AncestorPath, EngineError> {
    let nodes = &snapshot.nodes;
    let active = match nodes.last() {
        Some(last) if last.id == snapshot.active => nodes.len() - 1,
        _ => nodes
            .iter()
            .position(|n| n.id == snapshot.active)
            .ok_or(EngineError::ActiveNodeMissing(snapshot.active))?,
    };
    let mut index: Option<HashMap<NodeId, usize>> = None;
    // The path is usually the nodes up to the active one (the store hands it root first): sized
    // for that, a 10,000-message path is not copied as it grows.
    let mut reversed = Vec::with_capacity(active + 1);
    reversed.push(active);
    let mut current = active;
    let mut pin_edges = 0usize;
    while let Some(parent) = nodes[current].edge.parent() {
        if let ParentEdge::Pin { .. } = nodes[current].edge {
            pin_edges += 1;
            if pin_edges + 1 > max_thread_depth {
                return Err(EngineError::DepthExceeded {
                    depth: pin_edges + 1,
                    limit: max_thread_depth,
                });
            }
        }
        if reversed.len() >= nodes.len() {
            return Err(EngineError::Cycle { at: parent });
        }
        let next = if current > 0 && nodes[current - 1].id == parent {
            current - 1
        } else {
            let index = index
                .get_or_insert_with(|| nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect());
            *index
                .get(&parent)
                .ok_or(EngineError::ParentMissing { node: nodes[current].id, parent })?
        };
        reversed.push(next);
        current = next;
    }
    reversed.reverse();
    let mut threads =
        vec![ThreadSegment { thread: ThreadRef::Root, start: 0, end: reversed.len() }];
    for (position, &i) in reversed.iter().enumerate() {
        if let ParentEdge::Pin { pin, .. } = nodes[i].edge {
            if let Some(last) = threads.last_mut() {
                last.end = position;
            }
            threads.push(ThreadSegment {
                thread: ThreadRef::Pin(pin),
                start: position,
                end: reversed.len(),
            });
        }
    }
    Ok(AncestorPath { nodes: reversed, threads })
}
