//! What the window shows of a tree: a thread as a list of messages with their alternatives and
//! the pins made in them, and a pin's sub-thread as its own column.

use pinloom_store::{self as store, NodeId, PinId, Store, TreeId};

use crate::base::picked::picked_label;
use crate::base::pinloom::Pinloom;
use crate::base::words::opening_words;
use crate::json::{NodeView, PickedView, PinView, ThreadMessage, ThreadView};

/// How many messages of a thread one read sends the window: the newest ones, or those around a
/// message jumped to. Earlier and later ones come a page at a time ([`Pinloom::thread_page`]),
/// so a thread of 100,000 messages opens as fast as one of 30. Thirty is several screens of
/// replies, and what the window draws is what its web process holds: about 200 KB a drawn
/// message, half of it its elements and layout, half its components (`tests/perf/README.md`);
/// the window reads the page before by itself as the person scrolls up to it.
pub const THREAD_PAGE: usize = 30;

impl Pinloom {
    /// The root thread of a tree through its message `node_id` and that message's newest
    /// continuation, with each message's alternatives and pins. Without a message: through where
    /// this machine last showed the tree (or, for an imported tree, the message its tool
    /// showed), unless something was written in it since; else the newest branch. The messages
    /// of sub-threads on the way are left out: they show in their own columns. Only a page of
    /// it is sent ([`THREAD_PAGE`]): the newest messages, or, for a message further back, the
    /// page around it.
    pub async fn thread_view(
        &self,
        tree_id: i64,
        node_id: Option<i64>,
    ) -> anyhow::Result<ThreadView> {
        // A read that also remembers the place shown: no cached path or plan depends on it.
        self.read("could not open the thread", move |store| {
            let tree = store.tree(TreeId(tree_id))?;
            // From a chosen message (an alternative the person switched to), on down its newest
            // continuation.
            let from = match node_id {
                Some(node) => {
                    let chosen = store.node(NodeId(node))?;
                    // A message of another tree would show under this tree's title.
                    if chosen.tree_id != tree.id {
                        return Err(crate::error::ApiError::invalid_input(format!(
                            "message {node} is not in tree {tree_id}; open its own tree"
                        ))
                        .into());
                    }
                    if chosen.pin_id.is_none() {
                        store.remember_place(tree.id, chosen.id)?;
                    }
                    Some(chosen.id)
                }
                None => match store.place(tree.id)? {
                    Some(place) => Some(place),
                    None => store
                        .newest_node(TreeId(tree_id))?
                        .map(|newest| store.path_root(newest))
                        .transpose()?,
                },
            };
            let end = store.newest_continuation_from(from, None)?;
            paged_view(store, tree.into(), None, end, node_id.map(NodeId))
        })
        .await
    }

    /// Pin `pin_id`'s sub-thread, through its message `node_id` and its newest continuation (the
    /// newest branch from the pin's start when absent): the pin with its anchor, and a page of
    /// the sub-thread's own messages, as [`Pinloom::thread_view`] pages a thread.
    pub async fn pin_view(&self, pin_id: i64, node_id: Option<i64>) -> anyhow::Result<ThreadView> {
        self.read("could not open the sub-thread", move |store| {
            let pin = store.pin(PinId(pin_id))?;
            let tree = store.tree(pin.tree_id)?;
            if let Some(node) = node_id
                && store.node(NodeId(node))?.tree_id != tree.id
            {
                return Err(crate::error::ApiError::invalid_input(format!(
                    "message {node} is not in the tree of thread {pin_id}"
                ))
                .into());
            }
            let from = node_id.map(NodeId).or(pin.anchor_node_id);
            let end = store.newest_continuation_from(from, Some(pin.id))?;
            paged_view(store, tree.into(), Some(PinView::from(pin)), end, node_id.map(NodeId))
        })
        .await
    }

    /// Messages `first` to `first + count` (counted from the thread's first message) of the thread
    /// that ends at message `end_id`, as a thread view shows them: the page before or after the
    /// ones a column has.
    pub async fn thread_page(
        &self,
        end_id: i64,
        first: u32,
        count: u32,
    ) -> anyhow::Result<Vec<ThreadMessage>> {
        self.read("could not read more of the thread", move |store| {
            let ids = store.thread_ids(NodeId(end_id))?;
            let from = (first as usize).min(ids.len());
            let to = from.saturating_add(count as usize).min(ids.len());
            thread_messages(store, &ids[from..to])
        })
        .await
    }
}

/// A thread view of the thread ending at `end`, with the page around `focus` (the newest page
/// when `focus` is absent or among the newest).
fn paged_view(
    store: &Store,
    tree: crate::json::TreeSummary,
    pin: Option<PinView>,
    end: Option<NodeId>,
    focus: Option<NodeId>,
) -> anyhow::Result<ThreadView> {
    let Some(end) = end else {
        return Ok(ThreadView {
            tree,
            pin,
            messages: Vec::new(),
            first: 0,
            total: 0,
            end: None,
            picked: Vec::new(),
        });
    };
    let ids = store.thread_ids(end)?;
    let at = focus.and_then(|focus| ids.iter().position(|id| *id == focus));
    let (from, to) = page_around(ids.len(), at, THREAD_PAGE);
    // Only the root thread's first message can have been asked over picked messages.
    let picked = match (&pin, ids.first()) {
        (None, Some(first)) => picked_views(store, *first)?,
        _ => Vec::new(),
    };
    Ok(ThreadView {
        tree,
        pin,
        messages: thread_messages(store, &ids[from..to])?,
        first: u32::try_from(from).unwrap_or(u32::MAX),
        total: u32::try_from(ids.len()).unwrap_or(u32::MAX),
        end: Some(end.0),
        picked,
    })
}

/// The messages question `question` was asked over, as its thread shows them at its top.
fn picked_views(store: &Store, question: NodeId) -> anyhow::Result<Vec<PickedView>> {
    let mut views = Vec::new();
    for picked in store.picked_for(&[question])? {
        let node = &picked.node;
        let left_out = if node.pruned_at_ms.is_some() {
            Some("deleted since it was picked: restore it to send it again".to_owned())
        } else if node.excluded {
            Some("excluded since it was picked: include it to send it again".to_owned())
        } else {
            None
        };
        views.push(PickedView {
            node_id: node.id.0,
            pin_id: node.pin_id.map(|pin| pin.0),
            came_from: picked_label(store, node)?,
            opening: opening_words(&node.text, 80),
            with_summary: picked.with_summary,
            left_out,
        });
    }
    Ok(views)
}

/// The page of a thread of `len` messages to send: the newest `page`, or, when `focus` lies
/// before them, `page` messages starting a quarter of a page before it (it shows near the top,
/// with a little of what led to it above).
pub(in crate::window) fn page_around(
    len: usize,
    focus: Option<usize>,
    page: usize,
) -> (usize, usize) {
    let newest = len.saturating_sub(page);
    match focus {
        Some(at) if at < newest => {
            let from = at.saturating_sub(page / 4);
            (from, (from + page).min(len))
        }
        _ => (newest, len),
    }
}

/// The messages `ids` (a run of one thread's path, in order), each with its alternatives and pins.
fn thread_messages(store: &Store, ids: &[NodeId]) -> anyhow::Result<Vec<ThreadMessage>> {
    let path = store.nodes(ids)?;
    let replies: Vec<NodeId> = path
        .iter()
        .filter(|node| node.author == store::Author::Model)
        .map(|node| node.id)
        .collect();
    let cut = store.cut_replies(&replies)?;
    // Three queries for the whole page, not three per message.
    let mut alternatives = store.alternatives(&path)?;
    let mut pins = store.pins_anchored_in_each(ids)?;
    let messages = path
        .into_iter()
        .map(|node| {
            let id = node.id;
            let alternatives: Vec<i64> = alternatives
                .remove(&id)
                .unwrap_or_default()
                .into_iter()
                .map(|alternative| alternative.0)
                .collect();
            let mut node = NodeView::from(node);
            // A fused answer names its sources by this machine's ids; a reply that came by sync
            // names another's, which are not its siblings here and are not shown as sources.
            node.fused_from.retain(|source| alternatives.contains(source));
            ThreadMessage {
                alternatives,
                pins: pins.remove(&id).unwrap_or_default().into_iter().map(PinView::from).collect(),
                provider_cut: cut.contains(&id),
                node,
            }
        })
        .collect();
    Ok(messages)
}

#[cfg(test)]
mod tests {
    use super::page_around;

    #[test]
    fn a_page_is_the_newest_or_starts_a_little_before_the_message_jumped_to() {
        assert_eq!(page_around(0, None, 200), (0, 0));
        assert_eq!(page_around(150, None, 200), (0, 150));
        assert_eq!(page_around(100_000, None, 200), (99_800, 100_000));
        assert_eq!(page_around(100_000, Some(99_900), 200), (99_800, 100_000), "among the newest");
        assert_eq!(page_around(100_000, Some(5_000), 200), (4_950, 5_150));
        assert_eq!(page_around(100_000, Some(10), 200), (0, 200));
        assert_eq!(page_around(300, Some(99), 200), (49, 249));
    }
}
