//! A node's row: the columns read, the row made a [`Node`], and the checks every write makes
//! first (the node exists; it is not in a deleted branch). Below every file that writes nodes,
//! pins, receipts or counts, so none of them reaches back into another.

use rusqlite::{Connection, OptionalExtension, Row};

use crate::codec::author_from_sql;
use crate::error::StoreError;
use crate::model::{Node, NodeId, Part, PinId, TreeId};

pub(crate) const NODE_COLUMNS: &str = "n.id, n.tree_id, n.parent_id, n.pin_id, n.author, n.text,
    n.parts_json, n.edited_from, n.model, n.generation_json, n.usage_json, n.excluded,
    n.bookmarked, n.incomplete, n.pruned_at_ms, n.created_at_ms, n.kept,
    (SELECT a.name FROM sync_authors a WHERE a.gid = n.gid)";

pub(crate) fn id_list(ids: impl IntoIterator<Item = NodeId>) -> String {
    let ids: Vec<String> = ids.into_iter().map(|id| id.0.to_string()).collect();
    format!("[{}]", ids.join(","))
}

pub(crate) fn node_by_id(conn: &Connection, id: NodeId) -> Result<Node, StoreError> {
    conn.prepare_cached(&format!("SELECT {NODE_COLUMNS} FROM nodes n WHERE n.id = ?1"))?
        .query_row([id.0], node_from_row)
        .optional()?
        .ok_or(StoreError::NotFound { kind: "node", id: id.0 })
}

/// Fails with [`StoreError::NotFound`] unless node `id` exists: the check of reads that take a
/// node's id and need nothing of the node itself (decoding its text and parts for nothing was
/// most of the cost of the check).
pub(crate) fn require_node(conn: &Connection, id: NodeId) -> Result<(), StoreError> {
    let exists: bool = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM nodes WHERE id = ?1)")?
        .query_row([id.0], |row| row.get(0))?;
    if exists { Ok(()) } else { Err(StoreError::NotFound { kind: "node", id: id.0 }) }
}

/// Whether `node` or any node above it is soft-deleted.
pub(crate) fn in_deleted_branch(conn: &Connection, node: NodeId) -> Result<bool, StoreError> {
    Ok(deleted_depth(conn, node)? > 0)
}

pub(crate) fn deleted_depth(conn: &Connection, node: NodeId) -> Result<i64, StoreError> {
    conn.prepare_cached("SELECT deleted_depth FROM nodes WHERE id = ?1")?
        .query_row([node.0], |row| row.get(0))
        .optional()?
        .ok_or(StoreError::NotFound { kind: "node", id: node.0 })
}

pub(crate) fn node_from_row(row: &Row<'_>) -> rusqlite::Result<Node> {
    let text: String = row.get(5)?;
    let parts = match row.get::<_, Option<String>>(6)? {
        None => vec![Part::Text { text: text.clone() }],
        Some(json) => serde_json::from_str(&json).map_err(|error| {
            rusqlite::Error::FromSqlConversionFailure(
                6,
                rusqlite::types::Type::Text,
                Box::new(error),
            )
        })?,
    };
    Ok(Node {
        id: NodeId(row.get(0)?),
        tree_id: TreeId(row.get(1)?),
        parent_id: row.get::<_, Option<i64>>(2)?.map(NodeId),
        pin_id: row.get::<_, Option<i64>>(3)?.map(PinId),
        author: author_from_sql(row.get_ref(4)?.as_str()?)?,
        text,
        parts,
        edited_from: row.get::<_, Option<i64>>(7)?.map(NodeId),
        model: row.get(8)?,
        generation_json: row.get(9)?,
        usage_json: row.get(10)?,
        excluded: row.get(11)?,
        bookmarked: row.get(12)?,
        incomplete: row.get(13)?,
        pruned_at_ms: row.get(14)?,
        created_at_ms: row.get(15)?,
        kept: row.get(16)?,
        written_by: row.get(17)?,
    })
}
