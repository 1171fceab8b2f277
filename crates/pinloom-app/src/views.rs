//! What the window shows of a tree: a thread as a list of messages with their alternatives and
//! the pins made in them, and a pin's sub-thread as its own column.

use pinloom_store::{self as store, NodeId, PinId, Store, TreeId};

use crate::json::{NoteView, OutlineEntry, PinView, SearchResult, ThreadMessage, ThreadView};
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

impl Pinloom {
    /// One page of the tree map: up to `limit` messages after `after`, in write order, each with
    /// its parent, thread and flags (deleted ones included and marked).
    pub async fn tree_outline(
        &self,
        tree_id: i64,
        after: Option<i64>,
        limit: u32,
    ) -> anyhow::Result<Vec<OutlineEntry>> {
        let rows = self
            .read("could not read the tree map", move |store| {
                Ok(store.outline(TreeId(tree_id), after.map(NodeId), limit.clamp(1, 5_000))?)
            })
            .await?;
        Ok(rows.into_iter().map(OutlineEntry::from).collect())
    }

    /// The notes on message `node_id`, oldest first.
    pub async fn notes(&self, node_id: i64) -> anyhow::Result<Vec<NoteView>> {
        let notes = self
            .read("could not read the notes", move |store| Ok(store.annotations(NodeId(node_id))?))
            .await?;
        Ok(notes.into_iter().map(NoteView::from).collect())
    }
}

impl Pinloom {
    /// Full-text search across a tree's live messages, best first: the window's search box.
    pub async fn search(&self, tree_id: i64, query: String) -> anyhow::Result<Vec<SearchResult>> {
        self.read("could not search the tree", move |store| {
            let hits = store.search(TreeId(tree_id), &query, 50)?;
            Ok(hits
                .into_iter()
                .map(|hit| SearchResult {
                    node_id: hit.node_id.0,
                    pin_id: hit.pin_id.map(|pin| pin.0),
                    author: hit.author.into(),
                    preview: hit.text.chars().take(200).collect(),
                })
                .collect())
        })
        .await
    }
}

impl Pinloom {
    /// The whole tree as indented text, one line per message: its id, who wrote it, its thread
    /// when it is in a pin, its flags and the start of its text.
    pub async fn tree_text(&self, tree_id: i64) -> anyhow::Result<String> {
        self.read("could not read the tree", move |store| {
            let tree = store.tree(TreeId(tree_id))?;
            let rows = all_rows(store, tree.id)?;
            let mut out = format!("{} ({} messages)\n", tree.title, rows.len());
            // Depth first from the roots, without recursion: threads can be very deep.
            let mut children: std::collections::HashMap<Option<NodeId>, Vec<usize>> =
                std::collections::HashMap::new();
            for (index, row) in rows.iter().enumerate() {
                children.entry(row.parent_id).or_default().push(index);
            }
            let mut stack: Vec<(usize, usize)> =
                children.get(&None).into_iter().flatten().rev().map(|&i| (i, 0)).collect();
            while let Some((index, depth)) = stack.pop() {
                let row = &rows[index];
                let who = match row.author {
                    store::Author::Human => "you",
                    store::Author::Model => "model",
                    store::Author::Tool => "tool",
                };
                let mut flags = String::new();
                if let Some(pin) = row.pin_id {
                    flags.push_str(&format!(" [pin {}]", pin.0));
                }
                for (set, name) in [
                    (row.excluded, "excluded"),
                    (row.bookmarked, "bookmarked"),
                    (row.pruned, "deleted"),
                ] {
                    if set {
                        flags.push_str(&format!(" [{name}]"));
                    }
                }
                let preview: String = row.preview.split_whitespace().collect::<Vec<_>>().join(" ");
                out.push_str(&format!(
                    "{}#{} {who}{flags}: {}\n",
                    "  ".repeat(depth.min(60)),
                    row.id.0,
                    preview.chars().take(72).collect::<String>()
                ));
                for &child in children.get(&Some(row.id)).into_iter().flatten().rev() {
                    stack.push((child, depth + 1));
                }
            }
            Ok(out)
        })
        .await
    }
}

impl Pinloom {
    /// A thread as Markdown: the path from the tree's first message to `node_id`, pins on the way
    /// shown with their quoted passage. For reading and sharing; Open Loom is the lossless format.
    pub async fn thread_markdown(&self, node_id: i64) -> anyhow::Result<String> {
        self.read("could not export the thread", move |store| {
            let path = store.ancestor_path(NodeId(node_id))?;
            let Some(first) = path.first() else { return Ok(String::new()) };
            let tree = store.tree(first.tree_id)?;
            let mut out = markdown_title(&tree);
            let mut thread = None;
            for node in &path {
                if node.pin_id != thread {
                    if let Some(pin) = node.pin_id {
                        let pin = store.pin(pin)?;
                        out.push_str(&format!("\n---\n\n## Pin: {}\n", pin.title));
                        if let Some(anchor) = &pin.anchor {
                            out.push_str(&format!("\n> {}\n", anchor.text));
                        }
                    }
                    thread = node.pin_id;
                }
                out.push_str(&format!("\n### {}\n\n{}\n", speaker(node), node.text.trim_end()));
            }
            Ok(out)
        })
        .await
    }

    /// A whole tree as Markdown: every message in write order under a heading that names it, who
    /// wrote it and what it answers, so every branch and pin is there once.
    pub async fn tree_markdown(&self, tree_id: i64) -> anyhow::Result<String> {
        self.read("could not export the tree", move |store| {
            tree_markdown_text(store, TreeId(tree_id), &mut |_| {})
        })
        .await
    }
}

/// [`Pinloom::tree_markdown`]'s text; `progress` hears how many messages are written so far.
pub(crate) fn tree_markdown_text(
    store: &Store,
    tree_id: TreeId,
    progress: &mut dyn FnMut(usize),
) -> anyhow::Result<String> {
    let tree = store.tree(tree_id)?;
    let mut out = markdown_title(&tree);
    let rows = all_rows(store, tree.id)?;
    for (done, row) in rows.iter().enumerate() {
        if done.is_multiple_of(pinloom_store::PROGRESS_EVERY) {
            progress(done);
        }
        let node = store.node(row.id)?;
        let mut heading = format!("#{} · {}", node.id.0, speaker(&node));
        if let Some(parent) = node.parent_id {
            heading.push_str(&format!(" · after #{}", parent.0));
        }
        if let Some(pin) = node.pin_id {
            heading.push_str(&format!(" · in pin \"{}\"", store.pin(pin)?.title));
        }
        if node.pruned_at_ms.is_some() {
            heading.push_str(" · deleted");
        }
        out.push_str(&format!("\n## {heading}\n\n{}\n", node.text.trim_end()));
    }
    progress(rows.len());
    Ok(out)
}

/// An export's first lines: the tree's title and its system context.
fn markdown_title(tree: &store::Tree) -> String {
    let mut out = format!("# {}\n", tree.title);
    if !tree.system_context.trim().is_empty() {
        out.push_str(&format!("\n> System context: {}\n", tree.system_context.trim()));
    }
    out
}

/// Every message of a tree in write order, read page by page.
fn all_rows(store: &Store, tree: TreeId) -> anyhow::Result<Vec<store::OutlineRow>> {
    const PAGE: u32 = 5_000;
    let mut rows: Vec<store::OutlineRow> = Vec::new();
    loop {
        let page = store.outline(tree, rows.last().map(|row| row.id), PAGE)?;
        let done = page.len() < PAGE as usize;
        rows.extend(page);
        if done {
            return Ok(rows);
        }
    }
}

/// Who wrote a message, as an export names them.
fn speaker(node: &store::Node) -> String {
    match (node.author, &node.model) {
        (store::Author::Human, _) => "You".to_owned(),
        (store::Author::Model, Some(model)) => format!("Model ({model})"),
        (store::Author::Model, None) => "Model".to_owned(),
        (store::Author::Tool, _) => "Tool".to_owned(),
    }
}
