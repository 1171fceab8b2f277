//! Threads as ThreadMind sees them: a tree's live pins in their order, found by slug; deleting a
//! thread with everything under it (kept in the file, out of every view); moving a thread under
//! another (ThreadMind's rebase); and each working folder's active tree and thread.

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::StoreError;
use crate::model::{MAX_PIN_DEPTH, Node, NodeId, Pin, PinId, TreeId, Workspace};
use crate::node_rows::{NODE_COLUMNS, node_from_row};
use crate::nodes::{prune, renumber_pin_depths, reparent, unprune};
use crate::pins::{free_pin_slug, pin_by_id, pin_in_tree, pins_where, thread_depth};
use crate::store::Store;
use crate::trees::{require_tree, touch_tree};

impl Store {
    /// The tree's live pins, each after its parent thread's earlier children: creation order,
    /// with a moved thread last among its new siblings.
    pub fn live_threads(&self, tree_id: TreeId) -> Result<Vec<Pin>, StoreError> {
        let conn = self.conn();
        require_tree(&conn, tree_id)?;
        pins_where(
            &conn,
            "tree_id = ?1 AND deleted_at_ms IS NULL ORDER BY list_order, id",
            params![tree_id.0],
        )
    }

    /// Every pin the tree ever had, deleted ones included, in their order among siblings (as
    /// [`Store::live_threads`]): what an export writes and what names the threads in a log.
    pub fn all_pins(&self, tree_id: TreeId) -> Result<Vec<Pin>, StoreError> {
        let conn = self.conn();
        require_tree(&conn, tree_id)?;
        pins_where(&conn, "tree_id = ?1 ORDER BY list_order, id", params![tree_id.0])
    }

    /// The live pin of the tree whose ThreadMind thread id is `slug`.
    pub fn pin_by_slug(&self, tree_id: TreeId, slug: &str) -> Result<Option<Pin>, StoreError> {
        let conn = self.conn();
        Ok(pins_where(
            &conn,
            "tree_id = ?1 AND slug = ?2 AND deleted_at_ms IS NULL",
            params![tree_id.0, slug],
        )?
        .into_iter()
        .next())
    }

    /// The newest live message of a thread (`None`: the root thread): where a thread opened
    /// without a highlight hangs, as ThreadMind's thread_create opens one.
    pub fn newest_in_thread(
        &self,
        tree_id: TreeId,
        thread: Option<PinId>,
    ) -> Result<Option<NodeId>, StoreError> {
        newest_in_thread(&self.conn(), tree_id, thread)
    }

    /// ThreadMind's thread_delete: the pin and every pin below it leave every view, and their
    /// messages are soft-deleted; nothing is erased, and the summaries' log stays for the stats.
    /// A working folder whose active thread was among them goes back to the root thread. Returns
    /// the pins deleted, the pin itself first.
    pub fn delete_thread(&self, pin: PinId, at_ms: i64) -> Result<Vec<PinId>, StoreError> {
        self.write(|tx| {
            let this = pin_by_id(tx, pin)?;
            if this.deleted_at_ms.is_some() {
                return Err(StoreError::NotFound { kind: "pin", id: pin.0 });
            }
            let below = pins_below(tx, pin, None)?;
            for deleted in &below {
                tx.execute(
                    "UPDATE pins SET deleted_at_ms = ?2 WHERE id = ?1",
                    params![deleted.0, at_ms],
                )?;
                tx.execute("UPDATE workspaces SET pin_id = NULL WHERE pin_id = ?1", [deleted.0])?;
                for first in first_nodes(tx, *deleted)? {
                    if first.pruned_at_ms.is_none() {
                        prune(tx, first.id, at_ms)?;
                    }
                }
            }
            touch_tree(tx, this.tree_id, at_ms)?;
            Ok(below)
        })
    }

    /// Threads deleted whole (ThreadMind's `thread_delete`, say by an agent over MCP) whose
    /// parent thread is live: what can be restored, the latest deletion first.
    pub fn deleted_threads(&self, tree_id: TreeId) -> Result<Vec<Pin>, StoreError> {
        let conn = self.conn();
        require_tree(&conn, tree_id)?;
        pins_where(
            &conn,
            "tree_id = ?1 AND deleted_at_ms IS NOT NULL
             AND (parent_pin_id IS NULL
                  OR parent_pin_id IN (SELECT id FROM pins WHERE deleted_at_ms IS NULL))
             ORDER BY deleted_at_ms DESC, id",
            params![tree_id.0],
        )
    }

    /// Undoes [`Store::delete_thread`]: the pin and the pins below it that were deleted with it
    /// come back with their messages. A thread whose slug a live thread took since gets the next
    /// free one. Returns the pins restored, the pin itself first.
    pub fn restore_thread(&self, pin: PinId, at_ms: i64) -> Result<Vec<PinId>, StoreError> {
        self.write(|tx| {
            let this = pin_by_id(tx, pin)?;
            let Some(deleted_at) = this.deleted_at_ms else {
                return Err(StoreError::InvalidInput(format!(
                    "the thread \"{}\" is not deleted",
                    this.title
                )));
            };
            if let Some(parent) = this.parent_pin_id {
                let parent = pin_by_id(tx, parent)?;
                if parent.deleted_at_ms.is_some() {
                    return Err(StoreError::InvalidInput(format!(
                        "the thread \"{}\" opens from \"{}\", which is deleted too: restore \
                         that one first",
                        this.title, parent.title
                    )));
                }
            }
            let restored = pins_below(tx, pin, Some(deleted_at))?;
            for restoring in &restored {
                bring_back_pin(tx, *restoring)?;
                // The messages the deletion hid; ones deleted before it stay deleted.
                for first in first_nodes(tx, *restoring)? {
                    if first.pruned_at_ms == Some(deleted_at) {
                        unprune(tx, first.id)?;
                    }
                }
            }
            touch_tree(tx, this.tree_id, at_ms)?;
            Ok(restored)
        })
    }

    /// ThreadMind's rebase: moves a live pin, with everything under it, to open from thread
    /// `new_parent` (`None`: the root thread), last among that thread's children. Its messages
    /// now hang off the new parent thread's newest message (or off nothing when it has none),
    /// and its highlighted passage, which quoted the old anchor, is dropped.
    pub fn move_thread(
        &self,
        pin: PinId,
        new_parent: Option<PinId>,
        at_ms: i64,
    ) -> Result<Pin, StoreError> {
        self.write(|tx| {
            let moving = pin_by_id(tx, pin)?;
            if moving.deleted_at_ms.is_some() {
                return Err(StoreError::NotFound { kind: "pin", id: pin.0 });
            }
            if let Some(parent) = new_parent {
                let target = pin_in_tree(tx, parent, moving.tree_id)?;
                if target.deleted_at_ms.is_some() {
                    return Err(StoreError::NotFound { kind: "pin", id: parent.0 });
                }
                if is_within(tx, parent, pin)? {
                    return Err(StoreError::InvalidInput(format!(
                        "thread {} is {} itself or below it; moving it there would make a cycle",
                        target.slug, moving.slug
                    )));
                }
            }
            let depth = thread_depth(tx, new_parent)? + 1;
            if depth > MAX_PIN_DEPTH {
                return Err(StoreError::TooDeep { limit: MAX_PIN_DEPTH });
            }
            let anchor = newest_in_thread(tx, moving.tree_id, new_parent)?;
            let keeps_anchor = anchor == moving.anchor_node_id;
            tx.execute(
                "UPDATE pins SET parent_pin_id = ?2, anchor_node_id = ?3, depth = ?4,
                     list_order = (SELECT max(list_order) + 1 FROM pins WHERE tree_id = ?5)
                 WHERE id = ?1",
                params![
                    pin.0,
                    new_parent.map(|id| id.0),
                    anchor.map(|id| id.0),
                    depth,
                    moving.tree_id.0
                ],
            )?;
            if !keeps_anchor {
                tx.execute(
                    "UPDATE pins SET range_start = NULL, range_end = NULL, anchor_text = NULL
                     WHERE id = ?1",
                    [pin.0],
                )?;
                for first in first_nodes(tx, pin)? {
                    reparent(tx, &first, anchor)?;
                }
            }
            renumber_pin_depths(tx, Some(pin))?;
            touch_tree(tx, moving.tree_id, at_ms)?;
            pin_by_id(tx, pin)
        })
    }

    /// The tree and thread the headless session of `folder` has active.
    pub fn workspace(&self, folder: &str) -> Result<Workspace, StoreError> {
        let conn = self.conn();
        let found = conn
            .prepare_cached("SELECT tree_id, pin_id FROM workspaces WHERE folder = ?1")?
            .query_row([folder], |row| {
                Ok(Workspace {
                    tree_id: row.get::<_, Option<i64>>(0)?.map(TreeId),
                    pin_id: row.get::<_, Option<i64>>(1)?.map(PinId),
                })
            })
            .optional()?;
        // A thread of another tree than the active one cannot be active; the schema's SET NULL
        // on a deleted tree leaves the pin's row deleted too, so this only guards hand edits.
        Ok(found.unwrap_or(Workspace { tree_id: None, pin_id: None }))
    }

    /// Makes `workspace` the active tree and thread of `folder`.
    pub fn set_workspace(
        &self,
        folder: &str,
        workspace: Workspace,
        at_ms: i64,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            if let Some(tree) = workspace.tree_id {
                require_tree(tx, tree)?;
                if let Some(pin) = workspace.pin_id {
                    pin_in_tree(tx, pin, tree)?;
                }
            }
            tx.execute(
                "INSERT INTO workspaces (folder, tree_id, pin_id, updated_at_ms)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (folder) DO UPDATE SET tree_id = excluded.tree_id,
                     pin_id = excluded.pin_id, updated_at_ms = excluded.updated_at_ms",
                params![
                    folder,
                    workspace.tree_id.map(|id| id.0),
                    workspace.pin_id.map(|id| id.0),
                    at_ms
                ],
            )?;
            Ok(())
        })
    }
}

/// A thread's first messages: those whose parent is in another thread, or that have none.
/// `pin` and the pins below it that are live (`deleted_at` absent), or that were deleted at
/// `deleted_at` (with it, by one `thread_delete`): the pin first.
fn pins_below(
    conn: &Connection,
    pin: PinId,
    deleted_at: Option<i64>,
) -> Result<Vec<PinId>, StoreError> {
    let pins = conn
        .prepare_cached(
            "WITH RECURSIVE below(id) AS (
                 SELECT ?1
                 UNION
                 SELECT p.id FROM pins p JOIN below b ON p.parent_pin_id = b.id
                 WHERE p.deleted_at_ms IS ?2
             )
             SELECT id FROM below",
        )?
        .query_map(params![pin.0, deleted_at], |row| Ok(PinId(row.get(0)?)))?
        .collect::<Result<_, _>>()?;
    Ok(pins)
}

fn first_nodes(conn: &Connection, pin: PinId) -> Result<Vec<Node>, StoreError> {
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {NODE_COLUMNS} FROM nodes n LEFT JOIN nodes parent ON parent.id = n.parent_id
         WHERE n.pin_id = ?1 AND (parent.id IS NULL OR parent.pin_id IS NOT ?1)"
    ))?;
    let nodes = statement.query_map([pin.0], node_from_row)?.collect::<Result<_, _>>()?;
    Ok(nodes)
}

fn newest_in_thread(
    conn: &Connection,
    tree_id: TreeId,
    thread: Option<PinId>,
) -> Result<Option<NodeId>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT id FROM nodes WHERE tree_id = ?1 AND pin_id IS ?2 AND deleted_depth = 0
             ORDER BY id DESC LIMIT 1",
        )?
        .query_row(params![tree_id.0, thread.map(|id| id.0)], |row| row.get::<_, i64>(0))
        .optional()?
        .map(NodeId))
}

/// Takes a deleted pin back among the live threads. Live slugs are unique: it comes back under a
/// placeholder until a free one is found (its own, unless a live thread took it since).
pub(crate) fn bring_back_pin(tx: &Connection, pin: PinId) -> Result<(), StoreError> {
    let Pin { slug, tree_id, .. } = pin_by_id(tx, pin)?;
    tx.execute(
        "UPDATE pins SET slug = char(1) || id, deleted_at_ms = NULL WHERE id = ?1",
        [pin.0],
    )?;
    let free = free_pin_slug(tx, tree_id, &slug)?;
    tx.execute("UPDATE pins SET slug = ?2 WHERE id = ?1", params![pin.0, free])?;
    Ok(())
}

/// Whether `pin` is `ancestor` or sits below it.
fn is_within(conn: &Connection, pin: PinId, ancestor: PinId) -> Result<bool, StoreError> {
    Ok(conn
        .prepare_cached(
            // UNION ends the walk on a loop of parent links instead of running on.
            "WITH RECURSIVE up(id) AS (
                 SELECT ?1
                 UNION
                 SELECT p.parent_pin_id FROM pins p JOIN up ON p.id = up.id
                 WHERE p.parent_pin_id IS NOT NULL
             )
             SELECT EXISTS (SELECT 1 FROM up WHERE id = ?2)",
        )?
        .query_row(params![pin.0, ancestor.0], |row| row.get(0))?)
}
