//! Compactions: a thread's older part replaced in its requests by the summary of the thread up
//! to a message. The summary itself is a row of `summaries` (so it is marked stale when a message
//! it was written from is excluded, deleted or moved); this is the mark that it is in effect.

use rusqlite::{OptionalExtension, Row, params};

use crate::error::StoreError;
use crate::model::{NodeId, PinId, TreeId};
use crate::store::Store;

/// A compaction in effect (or undone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compaction {
    /// Its row.
    pub id: i64,
    /// The tree.
    pub tree_id: TreeId,
    /// The thread (`None`: the root thread).
    pub pin_id: Option<PinId>,
    /// The last message it stands for.
    pub up_to: NodeId,
    /// When it was made.
    pub created_at_ms: i64,
    /// When it was undone, if it was.
    pub undone_at_ms: Option<i64>,
}

impl Store {
    /// Puts a compaction of thread `pin` of `tree` up to `up_to` in effect; returns its row.
    pub fn add_compaction(
        &self,
        tree: TreeId,
        pin: Option<PinId>,
        up_to: NodeId,
        at_ms: i64,
    ) -> Result<Compaction, StoreError> {
        self.write(|tx| {
            tx.execute(
                "INSERT INTO compactions (tree_id, pin_id, up_to_node_id, created_at_ms)
                 VALUES (?1, ?2, ?3, ?4)",
                params![tree.0, pin.map(|pin| pin.0), up_to.0, at_ms],
            )?;
            let id = tx.last_insert_rowid();
            Ok(Compaction {
                id,
                tree_id: tree,
                pin_id: pin,
                up_to,
                created_at_ms: at_ms,
                undone_at_ms: None,
            })
        })
    }

    /// The compactions in effect on thread `pin` of `tree`, newest first.
    pub fn compactions(
        &self,
        tree: TreeId,
        pin: Option<PinId>,
    ) -> Result<Vec<Compaction>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(
            "SELECT id, tree_id, pin_id, up_to_node_id, created_at_ms, undone_at_ms
             FROM compactions WHERE tree_id = ?1 AND pin_id IS ?2 AND undone_at_ms IS NULL
             ORDER BY id DESC",
        )?;
        let found = statement
            .query_map(params![tree.0, pin.map(|pin| pin.0)], compaction_from_row)?
            .collect::<Result<_, _>>()?;
        Ok(found)
    }

    /// Compaction `id`, in effect or undone.
    pub fn compaction(&self, id: i64) -> Result<Option<Compaction>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(
            "SELECT id, tree_id, pin_id, up_to_node_id, created_at_ms, undone_at_ms
             FROM compactions WHERE id = ?1",
        )?;
        Ok(statement.query_row(params![id], compaction_from_row).optional()?)
    }

    /// Undoes compaction `id`: its messages are sent as they are again. False when it was not
    /// in effect.
    pub fn undo_compaction(&self, id: i64, at_ms: i64) -> Result<bool, StoreError> {
        self.write(|tx| {
            let changed = tx.execute(
                "UPDATE compactions SET undone_at_ms = ?2 WHERE id = ?1 AND undone_at_ms IS NULL",
                params![id, at_ms],
            )?;
            Ok(changed == 1)
        })
    }
}

fn compaction_from_row(row: &Row<'_>) -> rusqlite::Result<Compaction> {
    Ok(Compaction {
        id: row.get(0)?,
        tree_id: TreeId(row.get(1)?),
        pin_id: row.get::<_, Option<i64>>(2)?.map(PinId),
        up_to: NodeId(row.get(3)?),
        created_at_ms: row.get(4)?,
        undone_at_ms: row.get(5)?,
    })
}
