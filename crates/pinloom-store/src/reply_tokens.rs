//! The tokens a continuation was generated as, with each one's log-probability and the likeliest
//! others at its place, as the provider reported them: what the loom shows on hover and
//! branches from. Kept beside the reply, on this machine only (a sync or an export carries the
//! reply's text, which is what a branch is made from).

use rusqlite::{OptionalExtension, params};

use crate::error::StoreError;
use crate::model::NodeId;
use crate::node_rows::require_node;
use crate::store::Store;

impl Store {
    /// Keeps `tokens_json` as the tokens of reply `node`, replacing any kept before.
    pub fn set_reply_tokens(&self, node: NodeId, tokens_json: &str) -> Result<(), StoreError> {
        self.write(|tx| {
            require_node(tx, node)?;
            tx.execute(
                "INSERT OR REPLACE INTO reply_tokens (node_id, tokens_json) VALUES (?1, ?2)",
                params![node.0, tokens_json],
            )?;
            Ok(())
        })
    }

    /// The tokens kept for reply `node`, as JSON; none when its provider reported none.
    pub fn reply_tokens(&self, node: NodeId) -> Result<Option<String>, StoreError> {
        let conn = self.conn();
        require_node(&conn, node)?;
        let tokens = conn
            .prepare_cached("SELECT tokens_json FROM reply_tokens WHERE node_id = ?1")?
            .query_row([node.0], |row| row.get(0))
            .optional()?;
        Ok(tokens)
    }
}
