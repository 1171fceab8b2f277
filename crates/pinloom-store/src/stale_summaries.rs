//! Summaries that no longer hold: when a message a summary was written from is excluded, deleted
//! or moved away, the summary would still carry its words into requests. The store marks it with
//! why at that moment (here, so that every way a message changes, the window's, a sync's, a
//! move's, marks alike), never offers it while marked, and a new write clears the mark.

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::StoreError;
use crate::model::NodeId;

/// Marks every summary that was written from message `node` as no longer holding, with `why`:
/// a summary of its thread ending at it or at a message after it on its branch, or of the whole
/// thread (the fitted versions with them).
pub(crate) fn mark_summaries_of(
    conn: &Connection,
    node: NodeId,
    why: &str,
) -> Result<(), StoreError> {
    let Some((tree, thread)) = conn
        .prepare_cached("SELECT tree_id, pin_id FROM nodes WHERE id = ?1")?
        .query_row([node.0], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, Option<i64>>(1)?)))
        .optional()?
    else {
        return Err(StoreError::NotFound { kind: "node", id: node.0 });
    };
    let candidates: Vec<(i64, Option<i64>)> = conn
        .prepare_cached(
            "SELECT id, path_end_node_id FROM summaries
             WHERE tree_id = ?1 AND pin_id IS ?2 AND stale_reason IS NULL",
        )?
        .query_map(params![tree, thread], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut covers = conn.prepare_cached(
        // UNION ends the walk on a loop of parent links instead of running on.
        "WITH RECURSIVE up(id) AS (
             SELECT ?1
             UNION
             SELECT n.parent_id FROM nodes n JOIN up ON n.id = up.id WHERE n.parent_id IS NOT NULL
         )
         SELECT EXISTS (SELECT 1 FROM up WHERE id = ?2)",
    )?;
    let mut mark = conn.prepare_cached("UPDATE summaries SET stale_reason = ?2 WHERE id = ?1")?;
    for (summary, end) in candidates {
        let written_from = match end {
            None => true,
            Some(end) => covers.query_row(params![end, node.0], |row| row.get(0))?,
        };
        if written_from {
            mark.execute(params![summary, why])?;
        }
    }
    Ok(())
}
