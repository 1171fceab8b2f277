//! The window's ways into a tree besides its columns: the map's outline page by page, a message's
//! notes, full-text search, and the whole tree as indented text.

use pinloom_store::{self as store, NodeId, TreeId};

use crate::base::pinloom::Pinloom;
use crate::json::{FoundMessage, NoteView, OutlineEntry, SearchResult};

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
    /// Full-text search across every tree's live messages (or one tree's), best first across
    /// them all: each tree's best `limit` taken, then the best `limit` of those (bm25's ranks
    /// compare across trees: the index is one).
    pub async fn search_everywhere(
        &self,
        query: String,
        tree_id: Option<i64>,
        limit: u32,
    ) -> anyhow::Result<Vec<FoundMessage>> {
        self.read("could not search", move |store| {
            let trees = match tree_id {
                Some(tree) => vec![store.tree(TreeId(tree))?],
                None => store.list_trees()?,
            };
            let mut found = Vec::new();
            for tree in trees {
                for hit in store.search(tree.id, &query, limit)? {
                    found.push(FoundMessage {
                        tree_id: tree.id.0,
                        tree_title: tree.title.clone(),
                        rank: hit.bm25,
                        hit: SearchResult {
                            node_id: hit.node_id.0,
                            pin_id: hit.pin_id.map(|pin| pin.0),
                            author: hit.author.into(),
                            preview: hit.text.chars().take(200).collect(),
                        },
                    });
                }
            }
            found.sort_by(|a, b| a.rank.total_cmp(&b.rank));
            found.truncate(limit as usize);
            Ok(found)
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
            let rows = store.whole_outline(tree.id)?;
            let links: Vec<_> = rows.iter().map(|row| (row.id, row.parent_id)).collect();
            pinloom_store::check_tree_links(tree.id, &links)?;
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
                // A team member's message says who wrote it (a reply: who asked for it).
                let who = match (row.author, &row.written_by) {
                    (store::Author::Human, None) => "you".to_owned(),
                    (store::Author::Human, Some(by)) => by.clone(),
                    (store::Author::Model, None) => "model".to_owned(),
                    (store::Author::Model, Some(by)) => format!("model, for {by}"),
                    (store::Author::Tool, _) => "tool".to_owned(),
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
