//! Trees: creating, listing, their tree-level settings, deleting.

use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::codec::{count, mode_from_sql, mode_to_sql, sharing_from_sql, sharing_to_sql};
use crate::error::StoreError;
use crate::model::{NodeId, Sharing, Tree, TreeId, TreeMode, TreeSetup};
use crate::slugs::{slugify, unique_slug};
use crate::store::Store;

const TREE_SELECT: &str =
    "SELECT t.id, t.title, t.mode, t.system_context, t.buffer_includes_system,
        t.settings_json, t.created_at_ms, t.updated_at_ms,
        (SELECT count(*) FROM nodes n WHERE n.tree_id = t.id), t.slug, t.sharing, t.deleted_at_ms,
        t.gid, (SELECT min(s.shared_by) FROM sync_shares s WHERE s.tree_gid = t.gid)
    FROM trees t";

/// What emptying the trash erased.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmptiedTrash {
    /// Trees.
    pub trees: usize,
    /// Messages deleted with their branches (each counted once, at the message deleted).
    pub branches: usize,
    /// Threads deleted whole.
    pub threads: usize,
}

/// A tree to create, with what ThreadMind's project_create sets at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTree {
    /// Its title; must not be blank.
    pub title: String,
    /// Dialogue or buffer, fixed from now on.
    pub mode: TreeMode,
    /// The tree-level system context.
    pub system_context: String,
    /// ThreadMind's project mode.
    pub sharing: Sharing,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_at_ms: i64,
}

impl Store {
    /// Creates an empty tree.
    pub fn create_tree(
        &self,
        title: &str,
        mode: TreeMode,
        created_at_ms: i64,
    ) -> Result<Tree, StoreError> {
        self.create_tree_with(&NewTree {
            title: title.to_owned(),
            mode,
            system_context: String::new(),
            sharing: Sharing::Solo,
            created_at_ms,
        })
    }

    /// Creates an empty tree with its system context and project mode, in one transaction. Its
    /// slug is its title's, with `-2`, `-3`, … when another tree has it.
    pub fn create_tree_with(&self, tree: &NewTree) -> Result<Tree, StoreError> {
        self.write(|tx| insert_tree(tx, tree, None))
    }

    /// The tree whose ThreadMind project id is `slug`.
    pub fn tree_by_slug(&self, slug: &str) -> Result<Option<Tree>, StoreError> {
        let conn = self.conn();
        Ok(conn
            .prepare_cached(&format!(
                "{TREE_SELECT} WHERE t.slug = ?1 AND t.deleted_at_ms IS NULL"
            ))?
            .query_row([slug], tree_from_row)
            .optional()?)
    }

    /// All trees not in the trash, the most recently changed first.
    pub fn list_trees(&self) -> Result<Vec<Tree>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(&format!(
            "{TREE_SELECT} WHERE t.deleted_at_ms IS NULL ORDER BY t.updated_at_ms DESC, t.id DESC"
        ))?;
        let trees = statement.query_map([], tree_from_row)?.collect::<Result<_, _>>()?;
        Ok(trees)
    }

    /// The trees in the trash, the latest deleted first.
    pub fn trashed_trees(&self) -> Result<Vec<Tree>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(&format!(
            "{TREE_SELECT} WHERE t.deleted_at_ms IS NOT NULL ORDER BY t.deleted_at_ms DESC, t.id"
        ))?;
        let trees = statement.query_map([], tree_from_row)?.collect::<Result<_, _>>()?;
        Ok(trees)
    }

    /// Gives a tree a new title. Its slug (the ThreadMind project id agents know it by) stays.
    pub fn rename_tree(&self, id: TreeId, title: &str, at_ms: i64) -> Result<Tree, StoreError> {
        let title = title.trim();
        if title.is_empty() {
            return Err(StoreError::InvalidInput("a tree needs a title".into()));
        }
        self.refuse_if_shared_by_another(id, "rename it")?;
        self.update_tree(id, "title = ?2, title_from_node = NULL", title, at_ms)
    }

    /// A tree another member shared with a team is theirs to rename or delete: on this machine as
    /// on every other (where their change would be refused). Its settings may change here, for
    /// this machine only (such changes are not sent to the team).
    fn refuse_if_shared_by_another(&self, id: TreeId, doing: &str) -> Result<(), StoreError> {
        let conn = self.conn();
        let author: Option<String> = conn
            .prepare_cached(
                "SELECT a.name FROM trees t JOIN sync_authors a ON a.gid = t.gid WHERE t.id = ?1",
            )?
            .query_row([id.0], |row| row.get(0))
            .optional()?;
        match author {
            Some(name) => Err(StoreError::InvalidInput(format!(
                "{name} shared this tree with your team: only they can {doing}. To stop seeing it, leave the team (Settings → Sync → Teams)"
            ))),
            None => Ok(()),
        }
    }

    /// Records that tree `id`'s title was taken from its message `node` (not typed by the
    /// person), so that it follows that message: see [`Store::title_withdrawn`].
    pub fn set_title_taken_from(&self, id: TreeId, node: NodeId) -> Result<(), StoreError> {
        self.write(|tx| {
            let changed = tx.execute(
                "UPDATE trees SET title_from_node = ?2
                 WHERE id = ?1 AND EXISTS (SELECT 1 FROM nodes WHERE id = ?2 AND tree_id = ?1)",
                params![id.0, node.0],
            )?;
            if changed == 0 {
                return Err(StoreError::NotFound { kind: "node of the tree", id: node.0 });
            }
            Ok(())
        })
    }

    /// Whether tree `id`'s title was taken from a message that is now excluded or deleted: a
    /// request then names the tree by something else, or the title would carry the words the
    /// person took out.
    pub fn title_withdrawn(&self, id: TreeId) -> Result<bool, StoreError> {
        Ok(self
            .conn()
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM trees t JOIN nodes n ON n.id = t.title_from_node
                 WHERE t.id = ?1 AND (n.excluded OR n.deleted_depth > 0))",
            )?
            .query_row([id.0], |row| row.get(0))?)
    }

    /// Puts a tree in the trash: it leaves the list and ThreadMind's projects, and keeps
    /// everything until [`Store::empty_trash`]. Trashing a trashed tree changes nothing.
    pub fn trash_tree(&self, id: TreeId, at_ms: i64) -> Result<Tree, StoreError> {
        self.refuse_if_shared_by_another(id, "delete it")?;
        self.write(|tx| {
            tx.execute(
                "UPDATE trees SET deleted_at_ms = coalesce(deleted_at_ms, ?2) WHERE id = ?1",
                params![id.0, at_ms],
            )?;
            // Working folders that had it active have no active project, as after a deletion.
            tx.execute(
                "UPDATE workspaces SET tree_id = NULL, pin_id = NULL WHERE tree_id = ?1",
                [id.0],
            )?;
            tree_by_id(tx, id)
        })
    }

    /// Takes a tree out of the trash, as it was.
    pub fn restore_tree(&self, id: TreeId) -> Result<Tree, StoreError> {
        self.write(|tx| {
            tx.execute("UPDATE trees SET deleted_at_ms = NULL WHERE id = ?1", [id.0])?;
            tree_by_id(tx, id)
        })
    }

    /// Erases what is in the trash for good: trashed trees, soft-deleted messages with what
    /// hangs under them, and deleted threads. Returns how many of each went.
    pub fn empty_trash(&self) -> Result<EmptiedTrash, StoreError> {
        self.write(|tx| {
            let threads = tx.execute("DELETE FROM pins WHERE deleted_at_ms IS NOT NULL", [])?;
            let branches = tx.execute(
                "DELETE FROM nodes WHERE pruned_at_ms IS NOT NULL
                 AND tree_id IN (SELECT id FROM trees WHERE deleted_at_ms IS NULL)",
                [],
            )?;
            let trees = tx.execute("DELETE FROM trees WHERE deleted_at_ms IS NOT NULL", [])?;
            Ok(EmptiedTrash { trees, branches, threads })
        })
    }

    /// One tree.
    pub fn tree(&self, id: TreeId) -> Result<Tree, StoreError> {
        tree_by_id(&self.conn(), id)
    }

    /// What a context of the tree is set up with: [`Store::tree`] without the count of its
    /// messages, for what every plan reads.
    pub fn tree_setup(&self, id: TreeId) -> Result<TreeSetup, StoreError> {
        self.conn()
            .prepare_cached(
                "SELECT id, title, mode, system_context, buffer_includes_system, settings_json
                 FROM trees WHERE id = ?1",
            )?
            .query_row([id.0], setup_from_row)
            .optional()?
            .ok_or(StoreError::NotFound { kind: "tree", id: id.0 })
    }

    /// Replaces the tree-level system context.
    pub fn set_system_context(
        &self,
        id: TreeId,
        system_context: &str,
        at_ms: i64,
    ) -> Result<Tree, StoreError> {
        self.update_tree(id, "system_context = ?2", system_context, at_ms)
    }

    /// Turns the system context on or off for buffer mode.
    pub fn set_buffer_includes_system(
        &self,
        id: TreeId,
        included: bool,
        at_ms: i64,
    ) -> Result<Tree, StoreError> {
        self.update_tree(id, "buffer_includes_system = ?2", included, at_ms)
    }

    /// Replaces the tree's settings overrides (JSON the application layer defines).
    pub fn set_tree_settings(
        &self,
        id: TreeId,
        settings_json: &str,
        at_ms: i64,
    ) -> Result<Tree, StoreError> {
        self.update_tree(id, "settings_json = ?2", settings_json, at_ms)
    }

    /// Deletes a tree and everything in it.
    pub fn delete_tree(&self, id: TreeId) -> Result<(), StoreError> {
        self.write(|tx| {
            let deleted = tx.execute("DELETE FROM trees WHERE id = ?1", [id.0])?;
            if deleted == 0 {
                return Err(StoreError::NotFound { kind: "tree", id: id.0 });
            }
            Ok(())
        })
    }

    fn update_tree(
        &self,
        id: TreeId,
        assignment: &str,
        value: impl rusqlite::ToSql,
        at_ms: i64,
    ) -> Result<Tree, StoreError> {
        self.write(|tx| {
            let changed = tx.execute(
                &format!(
                    "UPDATE trees SET {assignment}, updated_at_ms = max(updated_at_ms, ?3)
                     WHERE id = ?1"
                ),
                params![id.0, value, at_ms],
            )?;
            if changed == 0 {
                return Err(StoreError::NotFound { kind: "tree", id: id.0 });
            }
            tree_by_id(tx, id)
        })
    }
}

/// Writes a tree whose slug is `wanted_slug` (its title's when absent), or the next free one.
pub(crate) fn insert_tree(
    conn: &Connection,
    tree: &NewTree,
    wanted_slug: Option<&str>,
) -> Result<Tree, StoreError> {
    let title = tree.title.trim();
    if title.is_empty() {
        return Err(StoreError::InvalidInput(
            "a tree needs a title: type one before creating it".into(),
        ));
    }
    let slug = free_tree_slug(conn, wanted_slug.unwrap_or(&slugify(title)))?;
    conn.execute(
        "INSERT INTO trees (title, mode, system_context, sharing, slug, created_at_ms, updated_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
        params![
            title,
            mode_to_sql(tree.mode),
            tree.system_context,
            sharing_to_sql(tree.sharing),
            slug,
            tree.created_at_ms
        ],
    )?;
    tree_by_id(conn, TreeId(conn.last_insert_rowid()))
}

/// `base`, or the first `base-N` no tree has.
pub(crate) fn free_tree_slug(conn: &Connection, base: &str) -> rusqlite::Result<String> {
    let mut exists = conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM trees WHERE slug = ?1)")?;
    unique_slug(base, |candidate| exists.query_row([candidate], |row| row.get(0)))
}

/// Refuses a tree that does not exist, without counting its nodes as [`tree_by_id`] does: write
/// paths call this on every append, so it must not grow with the tree.
pub(crate) fn require_tree(conn: &Connection, id: TreeId) -> Result<(), StoreError> {
    let exists: bool = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM trees WHERE id = ?1)")?
        .query_row([id.0], |row| row.get(0))?;
    if exists { Ok(()) } else { Err(StoreError::NotFound { kind: "tree", id: id.0 }) }
}

pub(crate) fn tree_by_id(conn: &Connection, id: TreeId) -> Result<Tree, StoreError> {
    conn.prepare_cached(&format!("{TREE_SELECT} WHERE t.id = ?1"))?
        .query_row([id.0], tree_from_row)
        .optional()?
        .ok_or(StoreError::NotFound { kind: "tree", id: id.0 })
}

/// Marks a tree as changed at `at_ms` (never moving its time backwards).
pub(crate) fn touch_tree(conn: &Connection, id: TreeId, at_ms: i64) -> Result<(), StoreError> {
    conn.prepare_cached("UPDATE trees SET updated_at_ms = max(updated_at_ms, ?2) WHERE id = ?1")?
        .execute(params![id.0, at_ms])?;
    Ok(())
}

/// A tree's setup from the first six columns of [`TREE_SELECT`] (and of [`Store::tree_setup`]).
fn setup_from_row(row: &Row<'_>) -> rusqlite::Result<TreeSetup> {
    Ok(TreeSetup {
        id: TreeId(row.get(0)?),
        title: row.get(1)?,
        mode: mode_from_sql(&row.get::<_, String>(2)?)?,
        system_context: row.get(3)?,
        buffer_includes_system: row.get(4)?,
        settings_json: row.get(5)?,
    })
}

fn tree_from_row(row: &Row<'_>) -> rusqlite::Result<Tree> {
    let TreeSetup { id, title, mode, system_context, buffer_includes_system, settings_json } =
        setup_from_row(row)?;
    Ok(Tree {
        id,
        title,
        mode,
        system_context,
        buffer_includes_system,
        settings_json,
        created_at_ms: row.get(6)?,
        updated_at_ms: row.get(7)?,
        node_count: count(row.get(8)?),
        slug: row.get(9)?,
        sharing: sharing_from_sql(&row.get::<_, String>(10)?)?,
        deleted_at_ms: row.get(11)?,
        global_id: row.get::<_, Option<String>>(12)?.unwrap_or_default(),
        shared_by: row.get(13)?,
    })
}
