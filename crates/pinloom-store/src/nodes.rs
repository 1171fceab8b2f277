//! Nodes: writing them, their flags, moving and deleting branches, and the walks over them.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::codec::{author_from_sql, count, unknown_value};
use crate::error::StoreError;
use crate::model::{
    Author, Deleted, MAX_PIN_DEPTH, NewNode, Node, NodeId, OutlineRow, Part, PathStep, PinId,
    ReplyLearned, ShapeRow, StepContent, TreeId,
};
use crate::node_rows::{
    NODE_COLUMNS, deleted_depth, id_list, in_deleted_branch, node_by_id, node_from_row,
    require_node,
};
use crate::node_writes::insert_node;
use crate::pins::{pin_by_id, thread_depth};
use crate::profiles::write_calibration;
use crate::store::Store;
use crate::token_counts::write_token_counts;
use crate::trees::{require_tree, touch_tree};

impl Store {
    /// Appends a node in one transaction that also marks its tree as changed.
    ///
    /// Without `pin_id` the node continues its parent's thread; only a tree's first node may have
    /// no parent. With `pin_id` it begins (or branches the beginning of) that pin's sub-thread,
    /// and its parent must be the pin's anchor node. A node is never appended under a
    /// soft-deleted branch.
    pub fn append_node(&self, node: &NewNode) -> Result<Node, StoreError> {
        self.write(|tx| insert_node(tx, node, false))
    }

    /// Appends a finished reply and what it taught, in one transaction: the token counts its
    /// plan had to make for messages written before counting existed (one exact `family`), and
    /// its profile's corrected calibration.
    pub fn append_reply(
        &self,
        node: &NewNode,
        learned: &ReplyLearned<'_>,
    ) -> Result<Node, StoreError> {
        self.write(|tx| {
            let written = insert_node(tx, node, false)?;
            if let Some((family, counts)) = learned.family_counts {
                for (counted, tokens) in counts {
                    write_token_counts(tx, *counted, std::iter::once((family, *tokens)))?;
                }
            }
            if let Some((profile_name, milli_chars_per_token)) = learned.calibration {
                write_calibration(tx, profile_name, milli_chars_per_token, node.created_at_ms)?;
            }
            Ok(written)
        })
    }

    /// Appends many nodes in one transaction: all of them are written, or none. A node may
    /// continue one written earlier in the same batch.
    pub fn append_nodes(&self, nodes: &[NewNode]) -> Result<Vec<Node>, StoreError> {
        self.write(|tx| nodes.iter().map(|node| insert_node(tx, node, false)).collect())
    }

    /// Writes an edit of `node`: a new sibling with the same parent, thread and author, whose
    /// `edited_from` is `node`. The original stays as it was.
    pub fn edit_node(
        &self,
        node: NodeId,
        parts: Vec<Part>,
        token_counts: Vec<(String, u64)>,
        created_at_ms: i64,
    ) -> Result<Node, StoreError> {
        self.write(|tx| {
            let original = node_by_id(tx, node)?;
            let begins_pin =
                original.pin_id.is_some() && parent_thread(tx, &original)? != original.pin_id;
            let edit = NewNode {
                tree_id: original.tree_id,
                parent_id: original.parent_id,
                pin_id: if begins_pin { original.pin_id } else { None },
                author: original.author,
                parts,
                edited_from: Some(original.id),
                // A reply rewritten by the person still stands for that model's turn.
                model: if original.author == Author::Model { original.model.clone() } else { None },
                generation_json: None,
                usage_json: None,
                incomplete: false,
                token_counts,
                created_at_ms,
                receipt: None,
                reply_tokens: Vec::new(),
                replaces_draft: None,
            };
            insert_node(tx, &edit, false)
        })
    }

    /// One node.
    pub fn node(&self, id: NodeId) -> Result<Node, StoreError> {
        node_by_id(&self.conn(), id)
    }

    /// Whether `id` or a node above it is soft-deleted (hidden until restored).
    pub fn is_deleted(&self, id: NodeId) -> Result<bool, StoreError> {
        in_deleted_branch(&self.conn(), id)
    }

    /// The nodes of `ids` that exist, in one query, in the order of `ids` (an id asked for twice
    /// comes twice).
    pub fn nodes(&self, ids: &[NodeId]) -> Result<Vec<Node>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(&format!(
            "SELECT {NODE_COLUMNS} FROM json_each(?1) j JOIN nodes n ON n.id = j.value
             ORDER BY j.key"
        ))?;
        let nodes = statement
            .query_map([id_list(ids.iter().copied())], node_from_row)?
            .collect::<Result<_, _>>()?;
        Ok(nodes)
    }

    /// Messages the person deleted, each with the branch below it, in trees that are not in the
    /// trash: what the trash offers back, the latest deleted first. The first messages of
    /// threads deleted whole are not among them ([`Store::deleted_threads`] offers those).
    pub fn deleted_branches(&self) -> Result<Vec<Node>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(&format!(
            "SELECT {NODE_COLUMNS} FROM nodes n
             WHERE n.pruned_at_ms IS NOT NULL
               AND n.tree_id IN (SELECT id FROM trees WHERE deleted_at_ms IS NULL)
               AND (n.pin_id IS NULL
                    OR n.pin_id IN (SELECT id FROM pins WHERE deleted_at_ms IS NULL))
             ORDER BY n.pruned_at_ms DESC, n.id"
        ))?;
        let nodes = statement.query_map([], node_from_row)?.collect::<Result<_, _>>()?;
        Ok(nodes)
    }

    /// The path from the root of the node's tree down to `node`, root first, crossing pin edges
    /// into ancestor threads.
    ///
    /// Refuses a node in a soft-deleted branch, a path under more than [`MAX_PIN_DEPTH`] pin
    /// levels, and a cycle of parent links (which only a damaged file can hold).
    pub fn ancestor_path(&self, node: NodeId) -> Result<Vec<Node>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(&path_query(NODE_COLUMNS))?;
        let (places, nodes) = walk_rows(statement.query([node.0])?, 18, node_from_row)?;
        let path = order_path(node, places, nodes, Reach::Root)?;
        check_path(node, &path, |step| step.pruned_at_ms.is_some())?;
        Ok(path)
    }

    /// The messages of `node`'s thread on its path, up to `node`, oldest first: the end of
    /// [`ancestor_path`](Store::ancestor_path) from where the path enters the thread. Reads only
    /// those, so a sub-thread's few messages cost as little on a tree of 100,000 as on a new one.
    pub fn thread_tail(&self, node: NodeId) -> Result<Vec<Node>, StoreError> {
        let conn = self.conn();
        if deleted_depth(&conn, node)? > 0 {
            return Err(StoreError::Deleted { node: node.0 });
        }
        let mut statement = conn.prepare_cached(&format!(
            "{THREAD_SEGMENTS}
             SELECT {NODE_COLUMNS}, n.segment_id, n.segment_pos
             FROM segments
             JOIN nodes n ON n.segment_id = segments.segment_id AND n.segment_pos <= segments.upto
             WHERE n.pin_id IS (SELECT pin_id FROM nodes WHERE id = ?1)"
        ))?;
        let (places, nodes) = walk_rows(statement.query([node.0])?, 18, node_from_row)?;
        order_path(node, places, nodes, Reach::ThreadStart)
    }

    /// The ids of `node`'s thread on its path, up to `node`, oldest first: the messages
    /// [`thread_tail`](Store::thread_tail) reads, without reading them, so that a view can send a
    /// page of a 100,000-message thread and read only that page.
    pub fn thread_ids(&self, node: NodeId) -> Result<Vec<NodeId>, StoreError> {
        let conn = self.conn();
        if deleted_depth(&conn, node)? > 0 {
            return Err(StoreError::Deleted { node: node.0 });
        }
        let mut statement = conn.prepare_cached(&format!(
            "{THREAD_SEGMENTS}
             SELECT n.id, n.parent_id, n.pin_id, n.segment_id, n.segment_pos
             FROM segments
             JOIN nodes n ON n.segment_id = segments.segment_id AND n.segment_pos <= segments.upto
             WHERE n.pin_id IS (SELECT pin_id FROM nodes WHERE id = ?1)"
        ))?;
        let (places, links) = walk_rows(statement.query([node.0])?, 3, |row| {
            Ok(Link {
                id: NodeId(row.get(0)?),
                parent_id: row.get::<_, Option<i64>>(1)?.map(NodeId),
                pin_id: row.get::<_, Option<i64>>(2)?.map(PinId),
            })
        })?;
        let path = order_path(node, places, links, Reach::ThreadStart)?;
        Ok(path.into_iter().map(|link| link.id).collect())
    }

    /// [`Store::newest_continuation`] from `from`, or nothing when there is no message to start
    /// from (a thread not started yet, a pin whose anchor is gone).
    pub fn newest_continuation_from(
        &self,
        from: Option<NodeId>,
        thread: Option<PinId>,
    ) -> Result<Option<NodeId>, StoreError> {
        match from {
            Some(from) => self.newest_continuation(from, thread),
            None => Ok(None),
        }
    }

    /// Where the branch through `from` ends in `thread` (`None`: the root thread), following the
    /// newest live child at each step, as a column shows a thread: `from` itself when it is in
    /// the thread and has no child there, `None` when it is not in the thread and no child of it
    /// starts the thread. One statement, so a 100,000-message thread is walked inside SQLite
    /// rather than by a query per message; a loop of parent links (a damaged file) is cut off
    /// after as many steps as the tree has messages. Each step is read by the parent index:
    /// left to choose, SQLite took the thread's index, which for the root thread holds nearly
    /// every message, and the walk of a 10,000-message thread took minutes.
    pub fn newest_continuation(
        &self,
        from: NodeId,
        thread: Option<PinId>,
    ) -> Result<Option<NodeId>, StoreError> {
        let conn = self.conn();
        let start = node_by_id(&conn, from)?;
        let most_steps: i64 = conn
            .prepare_cached("SELECT count(*) FROM nodes WHERE tree_id = ?1")?
            .query_row([start.tree_id.0], |row| row.get(0))?;
        let (end, steps): (i64, i64) = conn
            .prepare_cached(
                "WITH RECURSIVE walk(id, step) AS (
                     SELECT ?1, 0
                     UNION ALL
                     SELECT (SELECT c.id FROM nodes c INDEXED BY nodes_by_parent
                             WHERE c.parent_id = walk.id AND c.pin_id IS ?2
                               AND c.deleted_depth = 0
                             ORDER BY c.created_at_ms DESC, c.id DESC LIMIT 1),
                            walk.step + 1
                     FROM walk
                     WHERE walk.id IS NOT NULL
                       AND walk.step <= ?3
                 )
                 SELECT id, step FROM walk WHERE id IS NOT NULL ORDER BY step DESC LIMIT 1",
            )?
            .query_row(params![from.0, thread.map(|pin| pin.0), most_steps], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })?;
        if steps == 0 && start.pin_id != thread {
            return Ok(None);
        }
        Ok(Some(NodeId(end)))
    }

    /// The first node of `node`'s path: the root its branch grows from.
    pub fn path_root(&self, node: NodeId) -> Result<NodeId, StoreError> {
        let conn = self.conn();
        require_node(&conn, node)?;
        let root: Option<i64> = conn
            .prepare_cached(&format!(
                "{PATH_SEGMENTS}
                 SELECT head.id FROM segments JOIN nodes head ON head.id = segments.segment_id
                 WHERE head.parent_id IS NULL LIMIT 1"
            ))?
            .query_row([node.0], |row| row.get(0))
            .optional()?;
        // A path without a first node runs in a loop.
        root.map(NodeId).ok_or(StoreError::Cycle { node: node.0 })
    }

    /// The path to `node` as [`ancestor_path`](Store::ancestor_path) reads and checks it, with
    /// only what a plan needs of each node ([`PathStep`]): what the engine is handed on every
    /// send, so it reads fewer columns and copies each text once. With `counted_by`, each step
    /// carries its stored count in that tokenizer family, read in the same walk.
    pub fn plan_path(
        &self,
        node: NodeId,
        counted_by: Option<&str>,
    ) -> Result<Vec<PathStep>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(&plan_path_query())?;
        let rows = statement.query(params![node.0, counted_by])?;
        let (places, steps) = walk_rows(rows, PLAN_COLUMN_COUNT, path_step_from_row)?;
        let path = order_path(node, places, steps, Reach::Root)?;
        check_path(node, &path, |(_, pruned)| *pruned)?;
        Ok(path.into_iter().map(|(step, _)| step).collect())
    }

    /// The rows of `node`'s path as [`plan_path`](Store::plan_path) reads them with counts,
    /// stepped by SQLite but not decoded: the benchmark's measure of SQLite's share of the path.
    #[doc(hidden)]
    pub fn count_path_rows_undecoded(&self, node: NodeId) -> Result<usize, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(&plan_path_query())?;
        let mut rows = statement.query(params![node.0, "o200k"])?;
        let mut count = 0;
        while rows.next()?.is_some() {
            count += 1;
        }
        Ok(count)
    }

    /// The children of `node`, oldest first: its continuations and the first nodes of the pins
    /// anchored in it. Soft-deleted children are left out unless asked for.
    pub fn children(&self, node: NodeId, deleted: Deleted) -> Result<Vec<Node>, StoreError> {
        let conn = self.conn();
        require_node(&conn, node)?;
        let mut statement = conn.prepare_cached(&format!(
            "SELECT {NODE_COLUMNS} FROM nodes n
             WHERE n.parent_id = ?1 AND (?2 OR n.pruned_at_ms IS NULL)
             ORDER BY n.id"
        ))?;
        let children = statement
            .query_map(params![node.0, deleted == Deleted::Included], node_from_row)?
            .collect::<Result<_, _>>()?;
        Ok(children)
    }

    /// The alternatives of each of `nodes` at once (a thread view's "2/3" for every message):
    /// the live nodes with the same parent in the same thread, the node itself included, by
    /// id. One query for all of them, by the parent index, where [`Store::siblings`] per node
    /// made a 10,000-message thread take 26 s.
    pub fn alternatives(&self, nodes: &[Node]) -> Result<HashMap<NodeId, Vec<NodeId>>, StoreError> {
        let parents = id_list(nodes.iter().filter_map(|node| node.parent_id));
        let conn = self.conn();
        // (parent, thread) → the live children there.
        let mut by_place: HashMap<(Option<i64>, Option<i64>), Vec<i64>> = HashMap::new();
        let mut rows = |sql: &str, param: rusqlite::types::Value| -> Result<(), StoreError> {
            let mut statement = conn.prepare_cached(sql)?;
            let found = statement.query_map([param], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, Option<i64>>(1)?,
                    row.get::<_, Option<i64>>(2)?,
                ))
            })?;
            for row in found {
                let (id, parent, pin) = row?;
                by_place.entry((parent, pin)).or_default().push(id);
            }
            Ok(())
        };
        rows(
            "SELECT id, parent_id, pin_id FROM nodes
             WHERE parent_id IN (SELECT value FROM json_each(?1)) AND pruned_at_ms IS NULL",
            parents.into(),
        )?;
        if let Some(root) = nodes.iter().find(|node| node.parent_id.is_none()) {
            rows(
                "SELECT id, parent_id, pin_id FROM nodes
                 WHERE tree_id = ?1 AND parent_id IS NULL AND pruned_at_ms IS NULL",
                root.tree_id.0.into(),
            )?;
        }
        Ok(nodes
            .iter()
            .map(|node| {
                let place = (node.parent_id.map(|p| p.0), node.pin_id.map(|p| p.0));
                let mut ids: Vec<NodeId> =
                    by_place.get(&place).into_iter().flatten().map(|&id| NodeId(id)).collect();
                if !ids.contains(&node.id) {
                    ids.push(node.id); // a deleted node is still its own alternative
                }
                ids.sort_unstable();
                (node.id, ids)
            })
            .collect())
    }

    /// The alternatives to `node`: the other live nodes with the same parent in the same thread,
    /// oldest first (a regeneration or an edit makes one).
    pub fn siblings(&self, node: NodeId) -> Result<Vec<Node>, StoreError> {
        let conn = self.conn();
        let this = node_by_id(&conn, node)?;
        let mut statement = conn.prepare_cached(&format!(
            "SELECT {NODE_COLUMNS} FROM nodes n
             WHERE n.tree_id = ?1 AND n.parent_id IS ?2 AND n.pin_id IS ?3 AND n.id <> ?4
               AND n.pruned_at_ms IS NULL
             ORDER BY n.id"
        ))?;
        let siblings = statement
            .query_map(
                params![
                    this.tree_id.0,
                    this.parent_id.map(|id| id.0),
                    this.pin_id.map(|id| id.0),
                    node.0
                ],
                node_from_row,
            )?
            .collect::<Result<_, _>>()?;
        Ok(siblings)
    }

    /// The thread `node` belongs to (`None` for the root thread) and how many pin levels that
    /// thread sits under.
    pub fn thread_of(&self, node: NodeId) -> Result<(Option<PinId>, u32), StoreError> {
        let conn = self.conn();
        let node = node_by_id(&conn, node)?;
        match node.pin_id {
            None => Ok((None, 0)),
            Some(pin) => Ok((Some(pin), pin_by_id(&conn, pin)?.depth)),
        }
    }

    /// The tree's most recently written node outside soft-deleted branches.
    pub fn newest_node(&self, tree_id: TreeId) -> Result<Option<NodeId>, StoreError> {
        let conn = self.conn();
        require_tree(&conn, tree_id)?;
        let id = conn
            .prepare_cached(
                "SELECT id FROM nodes WHERE tree_id = ?1 AND deleted_depth = 0
                 ORDER BY id DESC LIMIT 1",
            )?
            .query_row([tree_id.0], |row| row.get::<_, i64>(0))
            .optional()?;
        Ok(id.map(NodeId))
    }

    /// Keeps a node out of context (`true`) or lets it back in. A summary written from it no
    /// longer holds once it is kept out.
    pub fn set_excluded(&self, node: NodeId, excluded: bool) -> Result<Node, StoreError> {
        if !excluded {
            return self.set_node_column(node, "excluded", false);
        }
        self.write(|tx| {
            crate::stale_summaries::mark_summaries_of(
                tx,
                node,
                &format!("written before message #{} was excluded", node.0),
            )?;
            tx.execute("UPDATE nodes SET excluded = 1 WHERE id = ?1", [node.0])?;
            node_by_id(tx, node)
        })
    }

    /// Marks a node to survive any truncation (the inspector's "keep"), or unmarks it.
    pub fn set_kept(&self, node: NodeId, kept: bool) -> Result<Node, StoreError> {
        self.set_node_column(node, "kept", kept)
    }

    /// Bookmarks a node or removes its bookmark.
    pub fn set_bookmarked(&self, node: NodeId, bookmarked: bool) -> Result<Node, StoreError> {
        self.set_node_column(node, "bookmarked", bookmarked)
    }

    /// Records the usage a provider reported for a node, as JSON.
    pub fn set_usage(&self, node: NodeId, usage_json: &str) -> Result<Node, StoreError> {
        self.set_node_column(node, "usage_json", usage_json)
    }

    /// Soft-deletes a node: it and everything under it leave paths, children, search and the
    /// newest-node lookup until [`Store::restore`] brings them back. Nothing is lost; deleting an
    /// already deleted node changes nothing.
    pub fn soft_delete(&self, node: NodeId, at_ms: i64) -> Result<Node, StoreError> {
        self.write(|tx| {
            let this = node_by_id(tx, node)?;
            if this.pruned_at_ms.is_none() {
                prune(tx, node, at_ms)?;
                touch_tree(tx, this.tree_id, at_ms)?;
            }
            node_by_id(tx, node)
        })
    }

    /// Brings a soft-deleted node (and so its subtree) back. Restoring a live node changes
    /// nothing.
    pub fn restore(&self, node: NodeId) -> Result<Node, StoreError> {
        self.write(|tx| {
            let this = node_by_id(tx, node)?;
            if this.pruned_at_ms.is_some() {
                tx.execute("UPDATE nodes SET pruned_at_ms = NULL WHERE id = ?1", [node.0])?;
                shift_deleted_depth(tx, node, -1)?;
            }
            node_by_id(tx, node)
        })
    }

    /// Deletes a node and everything under it, pins anchored in it included. This cannot be
    /// undone; [`Store::soft_delete`] can.
    pub fn delete_node(&self, node: NodeId) -> Result<(), StoreError> {
        self.write(|tx| {
            let this = node_by_id(tx, node)?;
            tx.execute("DELETE FROM nodes WHERE id = ?1", [node.0])?;
            touch_tree(tx, this.tree_id, this.created_at_ms)?;
            Ok(())
        })
    }

    /// Moves `node` and its subtree under `new_parent` (ThreadMind's rebase), in one transaction.
    ///
    /// Refuses a move into the node's own subtree (it would make a cycle) and across trees. When
    /// the node begins a pin's sub-thread, the pin moves with it and is re-anchored on the new
    /// parent; its highlighted passage is dropped, since it quoted the old anchor. Otherwise the
    /// node's thread becomes the new parent's.
    pub fn move_subtree(
        &self,
        node: NodeId,
        new_parent: NodeId,
        at_ms: i64,
    ) -> Result<Node, StoreError> {
        self.write(|tx| {
            if in_deleted_branch(tx, new_parent)? {
                return Err(StoreError::Deleted { node: new_parent.0 });
            }
            let moving = move_branch(tx, node, new_parent)?;
            touch_tree(tx, moving.tree_id, at_ms)?;
            node_by_id(tx, node)
        })
    }

    /// A tree's whole outline, in write order, read a page at a time so that no one statement
    /// holds the database for long.
    pub fn whole_outline(&self, tree_id: TreeId) -> Result<Vec<OutlineRow>, StoreError> {
        const PAGE: u32 = 5_000;
        let mut rows: Vec<OutlineRow> = Vec::new();
        loop {
            let page = self.outline(tree_id, rows.last().map(|row| row.id), PAGE)?;
            let done = page.len() < PAGE as usize;
            rows.extend(page);
            if done {
                return Ok(rows);
            }
        }
    }

    /// One page of a tree's outline for the map, in write order: the rows after `after`, at most
    /// `limit` of them. Soft-deleted nodes are included and marked, so the map can show them.
    pub fn outline(
        &self,
        tree_id: TreeId,
        after: Option<NodeId>,
        limit: u32,
    ) -> Result<Vec<OutlineRow>, StoreError> {
        let conn = self.conn();
        require_tree(&conn, tree_id)?;
        let mut statement = conn.prepare_cached(
            "SELECT n.id, n.parent_id, n.pin_id, n.author, substr(n.text, 1, 120),
                 (SELECT count(*) FROM nodes c WHERE c.parent_id = n.id),
                 n.excluded, n.bookmarked, n.pruned_at_ms IS NOT NULL,
                 (SELECT a.name FROM sync_authors a WHERE a.gid = n.gid)
             FROM nodes n
             WHERE n.tree_id = ?1 AND n.id > ?2
             ORDER BY n.id
             LIMIT ?3",
        )?;
        let rows = statement
            .query_map(params![tree_id.0, after.map_or(0, |id| id.0), limit], |row| {
                Ok(OutlineRow {
                    id: NodeId(row.get(0)?),
                    parent_id: row.get::<_, Option<i64>>(1)?.map(NodeId),
                    pin_id: row.get::<_, Option<i64>>(2)?.map(PinId),
                    author: author_from_sql(&row.get::<_, String>(3)?)?,
                    preview: row.get(4)?,
                    child_count: count(row.get(5)?),
                    excluded: row.get(6)?,
                    bookmarked: row.get(7)?,
                    pruned: row.get(8)?,
                    written_by: row.get(9)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Every live message of a tree in write order, with only what places it: its parent, its
    /// thread and its author. Messages of a deleted branch or a deleted thread are left out, as
    /// every view leaves them out. One query for the whole tree: the map of 100,000 messages is
    /// read at once, and a row holds no text.
    pub fn tree_shape(&self, tree_id: TreeId) -> Result<Vec<ShapeRow>, StoreError> {
        let conn = self.conn();
        require_tree(&conn, tree_id)?;
        let mut statement = conn.prepare_cached(
            "SELECT n.id, n.parent_id, n.pin_id, n.author
             FROM nodes n LEFT JOIN pins p ON p.id = n.pin_id
             WHERE n.tree_id = ?1 AND n.deleted_depth = 0 AND p.deleted_at_ms IS NULL
             ORDER BY n.id",
        )?;
        let rows = statement
            .query_map([tree_id.0], |row| {
                Ok(ShapeRow {
                    id: NodeId(row.get(0)?),
                    parent_id: row.get::<_, Option<i64>>(1)?.map(NodeId),
                    pin_id: row.get::<_, Option<i64>>(2)?.map(PinId),
                    author: author_from_sql(&row.get::<_, String>(3)?)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    fn set_node_column(
        &self,
        node: NodeId,
        column: &str,
        value: impl rusqlite::ToSql,
    ) -> Result<Node, StoreError> {
        self.write(|tx| {
            let changed = tx.execute(
                &format!("UPDATE nodes SET {column} = ?2 WHERE id = ?1"),
                params![node.0, value],
            )?;
            if changed == 0 {
                return Err(StoreError::NotFound { kind: "node", id: node.0 });
            }
            node_by_id(tx, node)
        })
    }
}

/// Writes one node. A tree has one first message, except that an edit of it makes a second, and
/// an import (`extra_roots`) may bring several: Open Loom trees can have many roots.
/// Ids as one JSON array that SQLite's `json_each` unrolls: one statement for any number of
/// them (a path can hold tens of thousands of nodes), with no limit on bound parameters.
/// Moves `node` and its subtree under `new_parent` of the same tree: the threads follow (a pin's
/// first message takes its pin along, re-anchored; a branch of a thread joins the new parent's
/// thread) and depths are renumbered. Refuses a cycle. A sync replays another machine's moves
/// through this, under a deleted branch too (the branch's deletion travels on its own).
pub(crate) fn move_branch(
    tx: &Connection,
    node: NodeId,
    new_parent: NodeId,
) -> Result<Node, StoreError> {
    let moving = node_by_id(tx, node)?;
    let target = node_by_id(tx, new_parent)?;
    if moving.tree_id != target.tree_id {
        return Err(StoreError::InvalidInput(format!(
            "node {} is in another tree; a branch moves only within its tree",
            new_parent.0
        )));
    }
    let into_own_subtree: bool = tx
        .prepare_cached(
            // UNION ends the walk on a loop of parent links instead of running on.
            "WITH RECURSIVE up(id) AS (
                     SELECT ?1
                     UNION
                     SELECT n.parent_id FROM up JOIN nodes n ON n.id = up.id
                     WHERE n.parent_id IS NOT NULL
                 )
                 SELECT EXISTS (SELECT 1 FROM up WHERE id = ?2)",
        )?
        .query_row(params![new_parent.0, node.0], |row| row.get(0))?;
    if into_own_subtree {
        return Err(StoreError::InvalidInput(format!(
            "node {} is inside the branch being moved; moving it there would make a cycle",
            new_parent.0
        )));
    }
    crate::stale_summaries::mark_summaries_of(
        tx,
        node,
        &format!("written before message #{} was moved", node.0),
    )?;
    let begins_pin = moving.pin_id.is_some() && parent_thread(tx, &moving)? != moving.pin_id;
    if begins_pin {
        let pin = moving.pin_id.map(|id| id.0);
        let depth = thread_depth(tx, target.pin_id)? + 1;
        if depth > MAX_PIN_DEPTH {
            return Err(StoreError::TooDeep { limit: MAX_PIN_DEPTH });
        }
        tx.execute(
            "UPDATE pins SET anchor_node_id = ?2, parent_pin_id = ?3, depth = ?4,
                     range_start = NULL, range_end = NULL, anchor_text = NULL
                 WHERE id = ?1",
            params![pin, new_parent.0, target.pin_id.map(|id| id.0), depth],
        )?;
        renumber_pin_depths(tx, moving.pin_id)?;
    } else if moving.pin_id != target.pin_id {
        // The moved nodes of the old thread join the new parent's thread, and pins opened
        // from them now open from that thread.
        tx.execute(
            "WITH RECURSIVE branch(id) AS (
                     SELECT ?1
                     UNION
                     SELECT n.id FROM nodes n JOIN branch b ON n.parent_id = b.id
                     WHERE n.pin_id IS ?2
                 )
                 UPDATE nodes SET pin_id = ?3 WHERE id IN (SELECT id FROM branch)",
            params![node.0, moving.pin_id.map(|id| id.0), target.pin_id.map(|id| id.0)],
        )?;
        tx.execute(
            "UPDATE pins SET parent_pin_id = ?2
                 WHERE anchor_node_id IN (SELECT id FROM nodes WHERE pin_id IS ?2)
                   AND parent_pin_id IS ?1",
            params![moving.pin_id.map(|id| id.0), target.pin_id.map(|id| id.0)],
        )?;
        renumber_pin_depths(tx, target.pin_id)?;
    }
    reparent(tx, &moving, Some(new_parent))?;
    Ok(moving)
}

/// Puts the rows of an ancestor walk in path order, root first: starting from `node`'s segment,
/// each segment's nodes up to the position the walk came from, then the segment holding its
/// head's parent. A segment reached twice, or a parent the walk did not reach, means the parent
/// links loop.
/// The ancestor path's query: one step per segment (a run of first children), each read as an
/// index range. UNION drops a segment seen before, so the walk ends even on a damaged file whose
/// parent links loop. Rows come back unordered: ordering in SQL would copy every row, text and
/// all, into a temporary B-tree; `order_path` rebuilds the order from the heads' parents.
fn path_query(columns: &str) -> String {
    format!(
        "{PATH_SEGMENTS}
         SELECT {columns}, n.segment_id, n.segment_pos
         FROM segments
         JOIN nodes n ON n.segment_id = segments.segment_id AND n.segment_pos <= segments.upto"
    )
}

/// [`Store::plan_path`]'s query: the path's walk with the plan's columns and the stored count in
/// family `?2`.
fn plan_path_query() -> String {
    format!(
        "{PATH_SEGMENTS}
         SELECT {PLAN_COLUMNS}, n.segment_id, n.segment_pos
         FROM segments
         JOIN nodes n ON n.segment_id = segments.segment_id AND n.segment_pos <= segments.upto
         LEFT JOIN node_tokens t ON t.node_id = n.id AND t.family = ?2"
    )
}

/// The walk up the segments, each step kept when `$step_filter` holds.
macro_rules! segments_walk {
    ($step_filter:literal) => {
        concat!(
            "WITH RECURSIVE segments(segment_id, upto) AS (
         SELECT segment_id, segment_pos FROM nodes WHERE id = ?1
         UNION
         SELECT parent.segment_id, parent.segment_pos
         FROM segments
         JOIN nodes head ON head.id = segments.segment_id
         JOIN nodes parent ON parent.id = head.parent_id
         ",
            $step_filter,
            "
     )"
        )
    };
}

/// The segments of the path from the root to node `?1`: each segment (named by its head) with
/// the last position on it that is an ancestor. A node `n` is on the path exactly when it
/// joins a row with `n.segment_id = segment_id AND n.segment_pos <= upto`.
pub(crate) const PATH_SEGMENTS: &str = segments_walk!("");

/// [`PATH_SEGMENTS`] that stops where the path leaves node `?1`'s thread.
const THREAD_SEGMENTS: &str =
    segments_walk!("WHERE parent.pin_id IS (SELECT pin_id FROM nodes WHERE id = ?1)");

/// A node's place in the tree, as a walk that reads no content knows it.
struct Link {
    id: NodeId,
    parent_id: Option<NodeId>,
    pin_id: Option<PinId>,
}

impl OnPath for Link {
    fn id(&self) -> NodeId {
        self.id
    }
    fn parent_id(&self) -> Option<NodeId> {
        self.parent_id
    }
    fn pin_id(&self) -> Option<PinId> {
        self.pin_id
    }
}

/// What ordering and checking a path needs of its rows.
trait OnPath {
    fn id(&self) -> NodeId;
    fn parent_id(&self) -> Option<NodeId>;
    fn pin_id(&self) -> Option<PinId>;
}

impl OnPath for Node {
    fn id(&self) -> NodeId {
        self.id
    }
    fn parent_id(&self) -> Option<NodeId> {
        self.parent_id
    }
    fn pin_id(&self) -> Option<PinId> {
        self.pin_id
    }
}

/// A plan's step with whether it is soft-deleted (which only the check reads).
impl OnPath for (PathStep, bool) {
    fn id(&self) -> NodeId {
        self.0.id
    }
    fn parent_id(&self) -> Option<NodeId> {
        self.0.parent_id
    }
    fn pin_id(&self) -> Option<PinId> {
        self.0.pin_id
    }
}

/// Refuses a path that runs through a soft-deleted node or crosses more than [`MAX_PIN_DEPTH`]
/// pin edges. (A node visited twice is refused by [`order_path`], which cannot yield one.)
fn check_path<T: OnPath>(
    node: NodeId,
    path: &[T],
    deleted: impl Fn(&T) -> bool,
) -> Result<(), StoreError> {
    if path.iter().any(deleted) {
        return Err(StoreError::Deleted { node: node.0 });
    }
    let pin_edges = path.windows(2).filter(|pair| pair[0].pin_id() != pair[1].pin_id()).count();
    if pin_edges > MAX_PIN_DEPTH as usize {
        return Err(StoreError::TooDeep { limit: MAX_PIN_DEPTH });
    }
    Ok(())
}

/// Each row's segment and position in it.
type Places = Vec<(i64, i64)>;

/// The rows of a walk up from a node, decoded by `decode`, with each one's segment and position
/// (the columns at `place` and after it).
fn walk_rows<T>(
    mut rows: rusqlite::Rows<'_>,
    place: usize,
    decode: impl Fn(&Row<'_>) -> rusqlite::Result<T>,
) -> Result<(Places, Vec<T>), StoreError> {
    let (mut places, mut decoded) = (Vec::new(), Vec::new());
    while let Some(row) = rows.next()? {
        places.push((row.get(place)?, row.get(place + 1)?));
        decoded.push(decode(row)?);
    }
    Ok((places, decoded))
}

/// Where the rows of a walk up from a node end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// At the tree's root: a parent missing from the rows means the parent links loop.
    Root,
    /// Where the node's thread begins: the first row's parent is in another thread, not read.
    ThreadStart,
}

/// `places[i]` is the segment and position of `rows[i]`.
fn order_path<T: OnPath>(
    node: NodeId,
    places: Places,
    rows: Vec<T>,
    reach: Reach,
) -> Result<Vec<T>, StoreError> {
    // Sorting instead of hashing: the rows of one segment come from one index range, so both
    // sorts mostly meet runs already in order, and a lookup is a binary search. The sorts move
    // small keys, never the rows themselves.
    let mut keys: Vec<(i64, i64, usize)> = places
        .iter()
        .enumerate()
        .map(|(index, (segment, position))| (*segment, *position, index))
        .collect();
    keys.sort_unstable();
    // Two rows at one place in one segment: the same node read twice, which only looping parent
    // links (a damaged file) cause.
    if keys.windows(2).any(|pair| (pair[0].0, pair[0].1) == (pair[1].0, pair[1].1)) {
        return Err(StoreError::Cycle { node: node.0 });
    }
    let mut by_id: Vec<(NodeId, usize)> =
        keys.iter().enumerate().map(|(sorted, key)| (rows[key.2].id(), sorted)).collect();
    by_id.sort_unstable();
    let find = |id: NodeId| {
        by_id.binary_search_by_key(&id, |(id, _)| *id).ok().map(|found| by_id[found].1)
    };
    let Some(mut at) = find(node) else {
        return Err(StoreError::NotFound { kind: "node", id: node.0 });
    };
    // The runs of sorted keys on the path, from the node's segment up to the root's; a segment
    // met twice is a loop of parent links.
    let mut seen = std::collections::HashSet::new();
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    loop {
        let segment = keys[at].0;
        if !seen.insert(segment) {
            return Err(StoreError::Cycle { node: node.0 });
        }
        let start = keys.partition_point(|(other, _, _)| *other < segment);
        runs.push(start..at + 1);
        match rows[keys[start].2].parent_id() {
            None => break,
            Some(parent) => match (find(parent), reach) {
                (Some(index), _) => at = index,
                (None, Reach::ThreadStart) => break,
                (None, Reach::Root) => return Err(StoreError::Cycle { node: node.0 }),
            },
        }
    }
    // The usual case, a path of one segment read in order: the rows are the path as they are.
    if let [only] = runs.as_slice()
        && *only == (0..rows.len())
        && keys.iter().enumerate().all(|(sorted, key)| key.2 == sorted)
    {
        return Ok(rows);
    }
    let length = runs.iter().map(ExactSizeIterator::len).sum();
    let mut slots: Vec<Option<T>> = rows.into_iter().map(Some).collect();
    let mut path = Vec::with_capacity(length);
    for run in runs.into_iter().rev() {
        path.extend(run.filter_map(|sorted| slots[keys[sorted].2].take()));
    }
    Ok(path)
}

/// Links `node` (and so its subtree) under `new_parent`, or makes it parentless (the first node
/// of a pin whose parent thread has no message), keeping segments and deleted depths right. The caller has checked that this makes no cycle and has moved the threads.
pub(crate) fn reparent(
    conn: &Connection,
    node: &Node,
    new_parent: Option<NodeId>,
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE nodes SET parent_id = ?2 WHERE id = ?1",
        params![node.id.0, new_parent.map(|id| id.0)],
    )?;
    // A node moved out of the middle of a segment takes the rest of that segment with it as a
    // segment of its own; a segment head keeps its segment (its parent link moved).
    conn.execute(
        "UPDATE nodes SET segment_id = ?1, segment_pos = nodes.segment_pos - moved.segment_pos
         FROM (SELECT segment_id, segment_pos FROM nodes WHERE id = ?1) AS moved
         WHERE nodes.segment_id = moved.segment_id
           AND nodes.segment_pos >= moved.segment_pos
           AND moved.segment_id <> ?1",
        [node.id.0],
    )?;
    // The deletions on the new parent's path, and the moved node's own.
    let above = match new_parent {
        Some(parent) => deleted_depth(conn, parent)?,
        None => 0,
    };
    let after = above + i64::from(node.pruned_at_ms.is_some());
    let before = deleted_depth(conn, node.id)?;
    if after != before {
        shift_deleted_depth(conn, node.id, after - before)?;
    }
    Ok(())
}

/// Soft-deletes a live node: it and its subtree leave every path, search and listing.
pub(crate) fn prune(conn: &Connection, node: NodeId, at_ms: i64) -> Result<(), StoreError> {
    crate::stale_summaries::mark_summaries_of(
        conn,
        node,
        &format!("written before message #{} was deleted", node.0),
    )?;
    conn.prepare_cached("UPDATE nodes SET pruned_at_ms = ?2 WHERE id = ?1")?
        .execute(params![node.0, at_ms])?;
    shift_deleted_depth(conn, node, 1)
}

/// Brings back a soft-deleted node and its subtree (those deleted with it or before stay as
/// their own deletion left them).
pub(crate) fn unprune(conn: &Connection, node: NodeId) -> Result<(), StoreError> {
    conn.prepare_cached("UPDATE nodes SET pruned_at_ms = NULL WHERE id = ?1")?.execute([node.0])?;
    shift_deleted_depth(conn, node, -1)
}

/// Adds `by` to the deleted depth of `node` and every node below it.
fn shift_deleted_depth(conn: &Connection, node: NodeId, by: i64) -> Result<(), StoreError> {
    conn.prepare_cached(
        "WITH RECURSIVE below(id) AS (
             SELECT ?1
             UNION
             SELECT n.id FROM nodes n JOIN below ON n.parent_id = below.id
         )
         UPDATE nodes SET deleted_depth = deleted_depth + ?2 WHERE id IN (SELECT id FROM below)",
    )?
    .execute(params![node.0, by])?;
    Ok(())
}

/// The thread of `node`'s parent (the pin's parent thread for an anchorless pin's first node).
fn parent_thread(conn: &Connection, node: &Node) -> Result<Option<PinId>, StoreError> {
    match node.parent_id {
        Some(parent) => Ok(node_by_id(conn, parent)?.pin_id),
        None => match node.pin_id {
            Some(pin) => Ok(pin_by_id(conn, pin)?.parent_pin_id),
            None => Ok(None),
        },
    }
}

/// Recomputes the stored depth of every pin below `thread` after a move changed its ancestry,
/// refusing the move if any would end up deeper than allowed.
pub(crate) fn renumber_pin_depths(
    conn: &Connection,
    thread: Option<PinId>,
) -> Result<(), StoreError> {
    let base = thread_depth(conn, thread)?;
    let deepest: Option<i64> = conn
        .prepare_cached(
            "WITH RECURSIVE below(id, depth) AS (
                 SELECT id, ?2 + 1 FROM pins WHERE parent_pin_id IS ?1
                 UNION ALL
                 SELECT p.id, below.depth + 1 FROM pins p JOIN below ON p.parent_pin_id = below.id
                 WHERE below.depth <= ?3
             )
             SELECT max(depth) FROM below",
        )?
        .query_row(params![thread.map(|id| id.0), base, MAX_PIN_DEPTH], |row| row.get(0))?;
    if deepest.is_some_and(|depth| depth > i64::from(MAX_PIN_DEPTH)) {
        return Err(StoreError::TooDeep { limit: MAX_PIN_DEPTH });
    }
    conn.prepare_cached(
        "WITH RECURSIVE below(id, depth) AS (
             SELECT id, ?2 + 1 FROM pins WHERE parent_pin_id IS ?1
             UNION ALL
             SELECT p.id, below.depth + 1 FROM pins p JOIN below ON p.parent_pin_id = below.id
         )
         UPDATE pins SET depth = (SELECT depth FROM below WHERE below.id = pins.id)
         WHERE id IN (SELECT id FROM below)",
    )?
    .execute(params![thread.map(|id| id.0), base])?;
    Ok(())
}

/// The columns [`path_step_from_row`] reads: the parts where a node has them, else its text (a
/// node with parts keeps its text for search alone), and the author, whether parts were read and
/// the four flags in one number, since each column read costs more than SQLite's arithmetic.
/// (SQLite gives `|` and `<<` the same precedence, hence the parentheses.)
const PLAN_COLUMNS: &str = "n.id, n.parent_id, n.pin_id, COALESCE(n.parts_json, n.text),
    n.created_at_ms,
    n.excluded | (n.bookmarked << 1) | (n.kept << 2) | ((n.pruned_at_ms IS NOT NULL) << 3)
      | ((n.parts_json IS NOT NULL) << 4)
      | (CASE n.author WHEN 'human' THEN 0 WHEN 'model' THEN 32 WHEN 'tool' THEN 64 ELSE 96 END),
    t.tokens";

/// How many columns [`PLAN_COLUMNS`] has: the walk's place comes after them.
const PLAN_COLUMN_COUNT: usize = 7;

fn path_step_from_row(row: &Row<'_>) -> rusqlite::Result<(PathStep, bool)> {
    let flags: i64 = row.get(5)?;
    let content = match (flags & 16 != 0, row.get_ref(3)?.as_str_or_null()?) {
        (false, text) => StepContent::Text(text.unwrap_or("").to_owned()),
        (true, json) => {
            let parts: Vec<Part> = serde_json::from_str(json.unwrap_or("[]")).map_err(|error| {
                rusqlite::Error::FromSqlConversionFailure(
                    3,
                    rusqlite::types::Type::Text,
                    Box::new(error),
                )
            })?;
            StepContent::from(parts)
        }
    };
    let author = match flags & 96 {
        0 => Author::Human,
        32 => Author::Model,
        64 => Author::Tool,
        _ => return Err(unknown_value("author", "(neither human, model nor tool)")),
    };
    let step = PathStep {
        id: NodeId(row.get(0)?),
        parent_id: row.get::<_, Option<i64>>(1)?.map(NodeId),
        pin_id: row.get::<_, Option<i64>>(2)?.map(PinId),
        author,
        content,
        created_at_ms: row.get(4)?,
        excluded: flags & 1 != 0,
        bookmarked: flags & 2 != 0,
        kept: flags & 4 != 0,
        tokens: row.get::<_, Option<i64>>(6)?.map(count),
    };
    Ok((step, flags & 8 != 0))
}

/// Checks that a tree's parent links (`(message, the message before it)` for every message of
/// tree `tree`) make a tree: every parent is a message of the same tree, and every message is
/// reached from a first message (one without a parent), so no link loops.
pub fn check_tree_links(
    tree: TreeId,
    links: &[(NodeId, Option<NodeId>)],
) -> Result<(), StoreError> {
    use std::collections::{HashMap, HashSet};
    let ids: HashSet<NodeId> = links.iter().map(|(id, _)| *id).collect();
    let mut children: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
    let mut stack = Vec::new();
    for &(id, parent) in links {
        match parent {
            None => stack.push(id),
            Some(parent) if ids.contains(&parent) => children.entry(parent).or_default().push(id),
            Some(parent) => {
                return Err(StoreError::BrokenTree {
                    tree: tree.0,
                    detail: format!(
                        "message {} names message {} as the one before it, which is not in \
                         this tree",
                        id.0, parent.0
                    ),
                });
            }
        }
    }
    let mut reached: HashSet<NodeId> = HashSet::with_capacity(links.len());
    while let Some(id) = stack.pop() {
        if reached.insert(id) {
            stack.extend(children.get(&id).into_iter().flatten().copied());
        }
    }
    if reached.len() == links.len() {
        return Ok(());
    }
    // Whatever no first message leads to is in, or below, a loop of parent links.
    let mut lost: Vec<i64> =
        links.iter().map(|(id, _)| *id).filter(|id| !reached.contains(id)).map(|id| id.0).collect();
    lost.sort_unstable();
    let named: Vec<String> = lost.iter().take(8).map(|id| format!("#{id}")).collect();
    let more = if lost.len() > 8 { format!(" and {} more", lost.len() - 8) } else { String::new() };
    Err(StoreError::BrokenTree {
        tree: tree.0,
        detail: format!(
            "no first message leads to {} {}{more}: their parent links loop",
            if lost.len() == 1 { "message" } else { "messages" },
            named.join(", ")
        ),
    })
}
