//! The tokens a continuation was generated as, with each one's log-probability and the likeliest
//! others at its place, as the provider reported them: what the loom shows on hover and
//! branches from. Kept beside the reply, on this machine only (a sync or an export carries the
//! reply's text, which is what a branch is made from).

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::StoreError;
use crate::model::{NodeId, ReplyToken};
use crate::node_rows::require_node;
use crate::store::Store;

impl Store {
    /// The tokens kept for reply `node`; none when its provider reported none. Tokens that do
    /// not read as this version's shape read as none rather than failing a view: they are a
    /// view of the reply, whose text stands without them.
    pub fn reply_tokens(&self, node: NodeId) -> Result<Option<Vec<ReplyToken>>, StoreError> {
        let conn = self.conn();
        require_node(&conn, node)?;
        let kept: Option<String> = conn
            .prepare_cached("SELECT tokens_json FROM reply_tokens WHERE node_id = ?1")?
            .query_row([node.0], |row| row.get(0))
            .optional()?;
        Ok(kept.and_then(|json| serde_json::from_str(&json).ok()))
    }
}

/// Keeps `tokens` as the tokens of the reply `node` being written, in the caller's transaction.
pub(crate) fn write_reply_tokens(
    conn: &Connection,
    node: NodeId,
    tokens: &[ReplyToken],
) -> Result<(), StoreError> {
    let json = serde_json::to_string(tokens).map_err(|error| {
        StoreError::InvalidInput(format!("a reply's tokens cannot be kept: {error}"))
    })?;
    conn.prepare_cached(
        "INSERT OR REPLACE INTO reply_tokens (node_id, tokens_json) VALUES (?1, ?2)",
    )?
    .execute(params![node.0, json])?;
    Ok(())
}
