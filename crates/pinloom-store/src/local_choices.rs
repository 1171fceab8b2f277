//! What the person chose on this machine alone: kept beside the trees, never synced, so another
//! machine's default model, last conversation or place in a tree never moves this one's.

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::StoreError;
use crate::model::{NodeId, TreeId};
use crate::store::Store;

/// A choice kept on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalChoice {
    /// The model profile a send uses when none is named and its thread names none.
    DefaultProfile,
    /// The message the person last asked about from the terminal (their question, or its reply
    /// once written): where `pinloom ask -c` continues.
    LastAsked,
}

impl LocalChoice {
    fn key(self) -> &'static str {
        match self {
            LocalChoice::DefaultProfile => "default_profile",
            LocalChoice::LastAsked => "last_asked",
        }
    }
}

impl Store {
    /// The value of `choice`, if one was made.
    pub fn local_choice(&self, choice: LocalChoice) -> Result<Option<String>, StoreError> {
        let conn = self.conn();
        Ok(conn
            .prepare_cached("SELECT value FROM local_choices WHERE key = ?1")?
            .query_row([choice.key()], |row| row.get(0))
            .optional()?)
    }

    /// Makes `choice` `value`, or forgets it (`None`).
    pub fn set_local_choice(
        &self,
        choice: LocalChoice,
        value: Option<&str>,
    ) -> Result<(), StoreError> {
        let conn = self.conn();
        match value {
            Some(value) => conn.execute(
                "INSERT INTO local_choices (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![choice.key(), value],
            )?,
            None => conn.execute("DELETE FROM local_choices WHERE key = ?1", [choice.key()])?,
        };
        Ok(())
    }

    /// Remembers `node` as where tree `tree` was last shown on this machine, with the tree's
    /// newest message now.
    pub fn remember_place(&self, tree: TreeId, node: NodeId) -> Result<(), StoreError> {
        remember_place(&self.conn(), tree, node)
    }

    /// Where tree `tree` was last shown, while it holds: the message (of the root thread) is not
    /// deleted and nothing was written in the tree since (a reply from the terminal, a sync, an
    /// import), which then opens instead.
    pub fn place(&self, tree: TreeId) -> Result<Option<NodeId>, StoreError> {
        let conn = self.conn();
        let place: Option<i64> = conn
            .prepare_cached(
                "SELECT p.node_id FROM tree_places p JOIN nodes n ON n.id = p.node_id
                 WHERE p.tree_id = ?1 AND n.tree_id = ?1 AND n.pin_id IS NULL
                   AND n.deleted_depth = 0
                   AND p.newest_id >= (SELECT max(id) FROM nodes WHERE tree_id = ?1)",
            )?
            .query_row([tree.0], |row| row.get(0))
            .optional()?;
        Ok(place.map(NodeId))
    }
}

/// Remembers `node` as where `tree` was last shown: see [`Store::remember_place`].
pub(crate) fn remember_place(
    conn: &Connection,
    tree: TreeId,
    node: NodeId,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO tree_places (tree_id, node_id, newest_id)
         SELECT ?1, ?2, max(id) FROM nodes WHERE tree_id = ?1
         ON CONFLICT (tree_id) DO UPDATE SET node_id = excluded.node_id,
             newest_id = excluded.newest_id",
    )?
    .execute(params![tree.0, node.0])?;
    Ok(())
}
