//! Receipts: what each reply's request was planned to hold beside what the provider counted.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::StoreError;
use crate::model::{NodeId, Receipt, TreeId};
use crate::node_rows::{id_list, require_node};
use crate::store::Store;

impl Store {
    /// The receipt of reply `node`, if it has one (replies written before receipts have none).
    pub fn receipt(&self, node: NodeId) -> Result<Option<Receipt>, StoreError> {
        let conn = self.conn();
        require_node(&conn, node)?;
        let receipt = conn
            .prepare_cached("SELECT receipt_json, provider_cut FROM receipts WHERE node_id = ?1")?
            .query_row([node.0], |row| Ok(Receipt { json: row.get(0)?, provider_cut: row.get(1)? }))
            .optional()?;
        Ok(receipt)
    }

    /// The receipts of every reply of tree `tree`, deleted ones included (what they cost was
    /// spent).
    pub fn tree_receipts(&self, tree: TreeId) -> Result<Vec<Receipt>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(
            "SELECT r.receipt_json, r.provider_cut FROM receipts r
             JOIN nodes n ON n.id = r.node_id WHERE n.tree_id = ?1",
        )?;
        let receipts = statement
            .query_map([tree.0], |row| {
                Ok(Receipt { json: row.get(0)?, provider_cut: row.get(1)? })
            })?
            .collect::<Result<_, _>>()?;
        Ok(receipts)
    }

    /// The newest `limit` replies that have a receipt (the exchanges made from this database,
    /// and those imported with theirs), newest first; deleted ones left out.
    pub fn recent_replies(&self, limit: u32) -> Result<Vec<NodeId>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(
            "SELECT r.node_id FROM receipts r JOIN nodes n ON n.id = r.node_id
             WHERE n.deleted_depth = 0 ORDER BY r.node_id DESC LIMIT ?1",
        )?;
        let replies = statement.query_map([limit], |row| Ok(NodeId(row.get(0)?)))?;
        Ok(replies.collect::<Result<_, _>>()?)
    }

    /// The receipts of those of `nodes` that have one.
    pub fn receipts(&self, nodes: &[NodeId]) -> Result<HashMap<NodeId, Receipt>, StoreError> {
        let ids = id_list(nodes.iter().copied());
        let conn = self.conn();
        let mut statement = conn.prepare_cached(
            "SELECT r.node_id, r.receipt_json, r.provider_cut FROM json_each(?1) j
             JOIN receipts r ON r.node_id = j.value",
        )?;
        let receipts = statement
            .query_map([ids], |row| {
                Ok((NodeId(row.get(0)?), Receipt { json: row.get(1)?, provider_cut: row.get(2)? }))
            })?
            .collect::<Result<_, _>>()?;
        Ok(receipts)
    }

    /// Which of `nodes` are replies whose provider cut the context it was sent.
    pub fn cut_replies(&self, nodes: &[NodeId]) -> Result<Vec<NodeId>, StoreError> {
        let ids = id_list(nodes.iter().copied());
        let conn = self.conn();
        let mut statement = conn.prepare_cached(
            "SELECT r.node_id FROM json_each(?1) j
             JOIN receipts r ON r.node_id = j.value AND r.provider_cut = 1",
        )?;
        let cut =
            statement.query_map([ids], |row| Ok(NodeId(row.get(0)?)))?.collect::<Result<_, _>>()?;
        Ok(cut)
    }
}

/// Writes a reply's receipt, replacing an earlier one (an import brings its own).
pub(crate) fn write_receipt(
    conn: &Connection,
    node: NodeId,
    receipt: &Receipt,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO receipts (node_id, receipt_json, provider_cut) VALUES (?1, ?2, ?3)
         ON CONFLICT (node_id) DO UPDATE SET receipt_json = excluded.receipt_json,
             provider_cut = excluded.provider_cut",
    )?
    .execute(params![node.0, receipt.json, receipt.provider_cut])?;
    Ok(())
}
