//! Markdown exports: a thread as it reads (its path, pins quoted) and a whole tree (every message
//! once, in write order). For reading and sharing; Open Loom is the lossless format.

use pinloom_store::{self as store, NodeId, Store, TreeId};

use crate::base::pinloom::Pinloom;

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
pub(in crate::interchange) fn tree_markdown_text(
    store: &Store,
    tree_id: TreeId,
    progress: &mut dyn FnMut(usize),
) -> anyhow::Result<String> {
    let tree = store.tree(tree_id)?;
    let mut out = markdown_title(&tree);
    let rows = store.whole_outline(tree.id)?;
    let links: Vec<_> = rows.iter().map(|row| (row.id, row.parent_id)).collect();
    pinloom_store::check_tree_links(tree.id, &links)?;
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

/// Who wrote a message, as an export names them.
fn speaker(node: &store::Node) -> String {
    match (node.author, &node.model) {
        (store::Author::Human, _) => "You".to_owned(),
        (store::Author::Model, Some(model)) => format!("Model ({model})"),
        (store::Author::Model, None) => "Model".to_owned(),
        (store::Author::Tool, _) => "Tool".to_owned(),
    }
}
