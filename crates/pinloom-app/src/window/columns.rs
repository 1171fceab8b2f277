//! What the window shows of a tree: a thread as a list of messages with their alternatives and
//! the pins made in them, and a pin's sub-thread as its own column.

use pinloom_store::{self as store, NodeId, PinId, Store, TreeId};

use crate::json::{PinView, ThreadMessage, ThreadView};
use crate::pinloom::Pinloom;

impl Pinloom {
    /// The root thread of a tree through its message `node_id` and that message's newest
    /// continuation (the newest branch from the first message when absent), root first,
    /// with each message's alternatives and pins. The messages of sub-threads on the way are left
    /// out: they show in their own columns.
    pub async fn thread_view(
        &self,
        tree_id: i64,
        node_id: Option<i64>,
    ) -> anyhow::Result<ThreadView> {
        self.read("could not open the thread", move |store| {
            let tree = store.tree(TreeId(tree_id))?;
            // From a chosen message (an alternative the person switched to), on down its newest
            // continuation.
            let from = match node_id {
                Some(node) => Some(NodeId(node)),
                None => root_of(store, TreeId(tree_id))?,
            };
            let end = newest_below(store, from, None)?;
            let messages = match end {
                Some(end) => thread_messages(store, end, None)?,
                None => Vec::new(),
            };
            Ok(ThreadView { tree: tree.into(), pin: None, messages })
        })
        .await
    }

    /// Pin `pin_id`'s sub-thread, through its message `node_id` and its newest continuation (the
    /// newest branch from the pin's start when absent):
    /// the pin with its anchor, and the sub-thread's own messages.
    pub async fn pin_view(&self, pin_id: i64, node_id: Option<i64>) -> anyhow::Result<ThreadView> {
        self.read("could not open the sub-thread", move |store| {
            let pin = store.pin(PinId(pin_id))?;
            let tree = store.tree(pin.tree_id)?;
            let from = node_id.map(NodeId).or(pin.anchor_node_id);
            let end = newest_below(store, from, Some(pin.id))?;
            let messages = match end {
                Some(end) => thread_messages(store, end, Some(pin.id))?,
                None => Vec::new(),
            };
            Ok(ThreadView { tree: tree.into(), pin: Some(PinView::from(pin)), messages })
        })
        .await
    }
}

/// The tree's first message (the oldest, when edits made several).
fn root_of(store: &Store, tree: TreeId) -> anyhow::Result<Option<NodeId>> {
    let Some(newest) = store.newest_node(tree)? else { return Ok(None) };
    Ok(store.ancestor_path(newest)?.first().map(|first| first.id))
}

/// Follows the newest child in `thread` down from `from` (included when it is in the thread):
/// the newest branch, as a column shows it and as a pin's result is written from.
pub(crate) fn newest_below(
    store: &Store,
    from: Option<NodeId>,
    thread: Option<PinId>,
) -> anyhow::Result<Option<NodeId>> {
    let Some(from) = from else { return Ok(None) };
    let start = store.node(from)?;
    let mut current = (start.pin_id == thread).then_some(from);
    let mut children: Vec<store::Node> = store
        .children(from, pinloom_store::Deleted::Left)?
        .into_iter()
        .filter(|child| child.pin_id == thread)
        .collect();
    while let Some(newest) = children.iter().max_by_key(|child| (child.created_at_ms, child.id.0)) {
        current = Some(newest.id);
        children = store
            .children(newest.id, pinloom_store::Deleted::Left)?
            .into_iter()
            .filter(|child| child.pin_id == thread)
            .collect();
    }
    Ok(current)
}

/// The messages of `thread` on the path to `end`, each with its alternatives and pins.
fn thread_messages(
    store: &Store,
    end: NodeId,
    thread: Option<PinId>,
) -> anyhow::Result<Vec<ThreadMessage>> {
    let path: Vec<store::Node> =
        store.ancestor_path(end)?.into_iter().filter(|node| node.pin_id == thread).collect();
    let replies: Vec<NodeId> = path
        .iter()
        .filter(|node| node.author == store::Author::Model)
        .map(|node| node.id)
        .collect();
    let cut = store.cut_replies(&replies)?;
    // Three queries for the whole thread, not three per message.
    let mut alternatives = store.alternatives(&path)?;
    let ids: Vec<NodeId> = path.iter().map(|node| node.id).collect();
    let mut pins = store.pins_anchored_in_each(&ids)?;
    let messages = path
        .into_iter()
        .map(|node| {
            let id = node.id;
            ThreadMessage {
                alternatives: alternatives
                    .remove(&id)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|alternative| alternative.0)
                    .collect(),
                pins: pins.remove(&id).unwrap_or_default().into_iter().map(PinView::from).collect(),
                provider_cut: cut.contains(&id),
                node: node.into(),
            }
        })
        .collect();
    Ok(messages)
}
