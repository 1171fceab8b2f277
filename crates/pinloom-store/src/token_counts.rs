//! Token counts of messages, one per tokenizer family: written with a message for the families
//! counted then, and by the first plan that needs another family, so that no path is counted
//! twice.

use std::collections::HashMap;

use rusqlite::{Connection, params};

use crate::codec::count;
use crate::error::StoreError;
use crate::model::NodeId;
use crate::node_rows::{id_list, require_node};
use crate::store::Store;

impl Store {
    /// Stores token counts for a node, one per tokenizer family, replacing earlier ones.
    pub fn set_token_counts(&self, node: NodeId, counts: &[(&str, u64)]) -> Result<(), StoreError> {
        self.write(|tx| {
            require_node(tx, node)?;
            write_token_counts(tx, node, counts.iter().copied())
        })
    }

    /// Stores one family's token counts for many nodes in one transaction (counts made while
    /// planning, for nodes written before they were counted).
    pub fn set_family_token_counts(
        &self,
        family: &str,
        counts: &[(NodeId, u64)],
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            for (node, tokens) in counts {
                write_token_counts(tx, *node, std::iter::once((family, *tokens)))?;
            }
            Ok(())
        })
    }

    /// The stored token counts of `nodes` for one tokenizer family; nodes never counted for it
    /// are absent from the map.
    pub fn token_counts(
        &self,
        nodes: &[NodeId],
        family: &str,
    ) -> Result<HashMap<NodeId, u64>, StoreError> {
        let ids = id_list(nodes.iter().copied());
        let conn = self.conn();
        let mut statement = conn.prepare_cached(
            "SELECT t.node_id, t.tokens FROM json_each(?1) j
             JOIN node_tokens t ON t.node_id = j.value AND t.family = ?2",
        )?;
        let counts = statement
            .query_map(params![ids, family], |row| Ok((NodeId(row.get(0)?), count(row.get(1)?))))?
            .collect::<Result<_, _>>()?;
        Ok(counts)
    }
}

/// Writes `counts` for `node`, replacing the families it had.
pub(crate) fn write_token_counts<'a>(
    conn: &Connection,
    node: NodeId,
    counts: impl Iterator<Item = (&'a str, u64)>,
) -> Result<(), StoreError> {
    let mut insert = conn.prepare_cached(
        "INSERT INTO node_tokens (node_id, family, tokens) VALUES (?1, ?2, ?3)
         ON CONFLICT (node_id, family) DO UPDATE SET tokens = excluded.tokens",
    )?;
    for (family, tokens) in counts {
        let tokens = i64::try_from(tokens).map_err(|_| {
            StoreError::InvalidInput(format!("{tokens} tokens is not a real count"))
        })?;
        insert.execute(params![node.0, family, tokens])?;
    }
    Ok(())
}
