//! Summaries of a thread's path, cached by (path end, budget, writer), with every write logged;
//! who wrote each, and the fitted versions of the ones written on purpose.

use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::codec::count;
use crate::error::StoreError;
use crate::model::{NodeId, PinId, Summary, SummaryAuthor, SummaryKey, SummaryWrite, TreeId};
use crate::node_rows::node_by_id;
use crate::pins::pin_in_tree;
use crate::store::Store;
use crate::trees::{require_tree, touch_tree};

/// One write of a summary, as the log keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryUpdate {
    /// The text written.
    pub text: String,
    /// How many characters it summarised.
    pub input_chars: u64,
    /// How many tokens it summarised.
    pub input_tokens: u64,
    /// When it was written.
    pub written_at_ms: i64,
}

const SUMMARY_SELECT: &str = "SELECT s.tree_id, s.pin_id, s.path_end_node_id, s.budget,
        s.summarizer, s.text, s.input_chars, s.input_tokens, s.updated_at_ms,
        (SELECT count(*) FROM summary_updates u WHERE u.summary_id = s.id),
        s.id, s.written_by, s.chosen, s.fitted_from, s.stale_reason
    FROM summaries s";

const KEY_MATCH: &str = "s.tree_id = ?1 AND s.pin_id IS ?2 AND s.path_end_node_id IS ?3
    AND s.budget IS ?4 AND s.summarizer = ?5 AND s.fitted_from IS ?6";

impl Store {
    /// Sets or replaces the summary under `key` and logs the write, in one transaction. When the
    /// text of a summary changes, the fitted versions made from its earlier text go.
    pub fn set_summary(
        &self,
        key: &SummaryKey,
        write: &SummaryWrite<'_>,
    ) -> Result<Summary, StoreError> {
        self.write(|tx| set_summary_in(tx, key, write))
    }

    /// Writes the fitted version of chosen summary `source` at `budget`, condensed by
    /// `summarizer`, unless `source`'s text is no longer `source_text` (its fitted versions are
    /// stale then, and nothing is written: `None`).
    pub fn set_fitted_summary(
        &self,
        source: i64,
        source_text: &str,
        budget: u32,
        summarizer: &str,
        write: &SummaryWrite<'_>,
    ) -> Result<Option<Summary>, StoreError> {
        self.write(|tx| {
            let Some(source_row) = tx
                .prepare_cached(&format!("{SUMMARY_SELECT} WHERE s.id = ?1"))?
                .query_row([source], summary_from_row)
                .optional()?
            else {
                return Ok(None);
            };
            if source_row.text != source_text {
                return Ok(None);
            }
            let key = SummaryKey {
                budget: Some(budget),
                summarizer: summarizer.to_owned(),
                fitted_from: Some(source),
                ..source_row.key
            };
            set_summary_in(tx, &key, write).map(Some)
        })
    }

    /// The summary stored as row `id`, if it still is.
    pub fn summary_by_id(&self, id: i64) -> Result<Option<Summary>, StoreError> {
        Ok(self
            .conn()
            .prepare_cached(&format!("{SUMMARY_SELECT} WHERE s.id = ?1"))?
            .query_row([id], summary_from_row)
            .optional()?)
    }

    /// The summary under `key`, if one was written.
    pub fn summary(&self, key: &SummaryKey) -> Result<Option<Summary>, StoreError> {
        summary_by_key(&self.conn(), key)
    }

    /// Every summary of a tree with every write of its log, oldest summary first: what an
    /// export carries.
    pub fn tree_summaries(
        &self,
        tree_id: TreeId,
    ) -> Result<Vec<(Summary, Vec<SummaryUpdate>)>, StoreError> {
        let summaries: Vec<Summary> = {
            let conn = self.conn();
            let mut statement = conn
                .prepare_cached(&format!("{SUMMARY_SELECT} WHERE s.tree_id = ?1 ORDER BY s.id"))?;
            statement.query_map([tree_id.0], summary_from_row)?.collect::<Result<_, _>>()?
        };
        summaries
            .into_iter()
            .map(|summary| {
                let log = self.summary_updates(&summary.key)?;
                Ok((summary, log))
            })
            .collect()
    }

    /// Every summary of one thread (`None`: the root thread), the most recent first.
    pub fn thread_summaries(
        &self,
        tree_id: TreeId,
        pin: Option<PinId>,
    ) -> Result<Vec<Summary>, StoreError> {
        let conn = self.conn();
        require_tree(&conn, tree_id)?;
        let mut statement = conn.prepare_cached(&format!(
            "{SUMMARY_SELECT} WHERE s.tree_id = ?1 AND s.pin_id IS ?2
             ORDER BY s.updated_at_ms DESC, s.id DESC"
        ))?;
        let summaries = statement
            .query_map(params![tree_id.0, pin.map(|id| id.0)], summary_from_row)?
            .collect::<Result<_, _>>()?;
        Ok(summaries)
    }

    /// Whether thread `pin` (`None`: the root thread) of tree `tree_id` holds a live message that
    /// is not `node` or one of its ancestors: something a summary of the whole thread may have
    /// said that a pin hanging off `node` may not know.
    pub fn thread_goes_on_after(
        &self,
        tree_id: TreeId,
        pin: Option<PinId>,
        node: NodeId,
    ) -> Result<bool, StoreError> {
        let conn = self.conn();
        Ok(conn
            .prepare_cached(
                // UNION ends the walk on a loop of parent links instead of running on.
                "WITH RECURSIVE up(id, parent_id) AS (
                     SELECT id, parent_id FROM nodes WHERE id = ?3
                     UNION
                     SELECT n.id, n.parent_id FROM nodes n JOIN up ON n.id = up.parent_id
                 )
                 SELECT EXISTS (
                     SELECT 1 FROM nodes WHERE tree_id = ?1 AND pin_id IS ?2
                         AND deleted_depth = 0 AND id NOT IN (SELECT id FROM up)
                 )",
            )?
            .query_row(params![tree_id.0, pin.map(|id| id.0), node.0], |row| row.get(0))?)
    }

    /// Every write of the summary under `key`, oldest first.
    pub fn summary_updates(&self, key: &SummaryKey) -> Result<Vec<SummaryUpdate>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(&format!(
            "SELECT u.text, u.input_chars, u.input_tokens, u.written_at_ms
             FROM summary_updates u JOIN summaries s ON s.id = u.summary_id
             WHERE {KEY_MATCH} ORDER BY u.id"
        ))?;
        let updates = statement
            .query_map(key_params(key), |row| {
                Ok(SummaryUpdate {
                    text: row.get(0)?,
                    input_chars: count(row.get(1)?),
                    input_tokens: count(row.get(2)?),
                    written_at_ms: row.get(3)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(updates)
    }
}

impl Store {
    /// Every summary write of a tree, oldest first, as (thread, text): ThreadMind's stats count
    /// them per thread.
    pub fn summary_log(&self, tree_id: TreeId) -> Result<Vec<(Option<PinId>, String)>, StoreError> {
        let conn = self.conn();
        require_tree(&conn, tree_id)?;
        let mut statement = conn.prepare_cached(
            "SELECT s.pin_id, u.text FROM summary_updates u JOIN summaries s ON s.id = u.summary_id
             WHERE s.tree_id = ?1 ORDER BY u.id",
        )?;
        let log = statement
            .query_map([tree_id.0], |row| {
                Ok((row.get::<_, Option<i64>>(0)?.map(PinId), row.get(1)?))
            })?
            .collect::<Result<_, _>>()?;
        Ok(log)
    }
}

fn set_summary_in(
    tx: &Connection,
    key: &SummaryKey,
    write: &SummaryWrite<'_>,
) -> Result<Summary, StoreError> {
    check_key(tx, key)?;
    let (input_chars, input_tokens) =
        (as_sql_count(write.input_chars)?, as_sql_count(write.input_tokens)?);
    let existing: Option<(i64, String)> = tx
        .prepare_cached(&format!("SELECT s.id, s.text FROM summaries s WHERE {KEY_MATCH}"))?
        .query_row(key_params(key), |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?;
    // A write is the summary's newest by its time: one made on a machine whose clock is behind
    // a write already logged (another machine's, through a sync) takes the time just after it,
    // so every machine agrees that the latest write is the one shown.
    let written_at_ms = match &existing {
        Some((id, _)) => {
            let newest: Option<i64> = tx
                .prepare_cached(
                    "SELECT max(written_at_ms) FROM summary_updates WHERE summary_id = ?1",
                )?
                .query_row([id], |row| row.get(0))?;
            newest.map_or(write.written_at_ms, |newest| write.written_at_ms.max(newest + 1))
        }
        None => write.written_at_ms,
    };
    let write = &SummaryWrite { written_at_ms, ..*write };
    let id = match existing {
        Some((id, earlier)) => {
            tx.prepare_cached(
                "UPDATE summaries SET text = ?2, input_chars = ?3, input_tokens = ?4,
                     updated_at_ms = ?5, written_by = ?6, chosen = ?7, stale_reason = NULL
                 WHERE id = ?1",
            )?
            .execute(params![
                id,
                write.text,
                input_chars,
                input_tokens,
                write.written_at_ms,
                write.written_by.as_str(),
                write.chosen
            ])?;
            if earlier != write.text {
                tx.prepare_cached("DELETE FROM summaries WHERE fitted_from = ?1")?.execute([id])?;
            }
            id
        }
        None => insert_summary(tx, key, write, input_chars, input_tokens)?,
    };
    log_summary_write(tx, id, write.text, input_chars, input_tokens, write.written_at_ms)?;
    touch_tree(tx, key.tree_id, write.written_at_ms)?;
    summary_by_key(tx, key)?.ok_or(StoreError::NotFound { kind: "summary", id })
}

fn check_key(conn: &Connection, key: &SummaryKey) -> Result<(), StoreError> {
    require_tree(conn, key.tree_id)?;
    if let Some(pin) = key.pin_id {
        pin_in_tree(conn, pin, key.tree_id)?;
    }
    if let Some(end) = key.path_end
        && node_by_id(conn, end)?.pin_id != key.pin_id
    {
        return Err(StoreError::InvalidInput(format!(
            "node {} is not in the thread being summarised",
            end.0
        )));
    }
    if key.budget == Some(0) {
        return Err(StoreError::InvalidInput("a summary's budget must be at least 1 token".into()));
    }
    Ok(())
}

type KeyParams<'a> = (i64, Option<i64>, Option<i64>, Option<u32>, &'a str, Option<i64>);

fn key_params(key: &SummaryKey) -> KeyParams<'_> {
    (
        key.tree_id.0,
        key.pin_id.map(|id| id.0),
        key.path_end.map(|id| id.0),
        key.budget,
        &key.summarizer,
        key.fitted_from,
    )
}

/// Writes a new summary row; its log is written by [`log_summary_write`].
pub(crate) fn insert_summary(
    conn: &Connection,
    key: &SummaryKey,
    write: &SummaryWrite<'_>,
    input_chars: i64,
    input_tokens: i64,
) -> Result<i64, StoreError> {
    conn.prepare_cached(
        "INSERT INTO summaries (tree_id, pin_id, path_end_node_id, budget, summarizer, text,
             input_chars, input_tokens, updated_at_ms, written_by, chosen, fitted_from)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?
    .execute(params![
        key.tree_id.0,
        key.pin_id.map(|id| id.0),
        key.path_end.map(|id| id.0),
        key.budget,
        key.summarizer,
        write.text,
        input_chars,
        input_tokens,
        write.written_at_ms,
        write.written_by.as_str(),
        write.chosen,
        key.fitted_from
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Adds one write to summary `id`'s log.
pub(crate) fn log_summary_write(
    conn: &Connection,
    id: i64,
    text: &str,
    input_chars: i64,
    input_tokens: i64,
    written_at_ms: i64,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO summary_updates (summary_id, text, input_chars, input_tokens, written_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![id, text, input_chars, input_tokens, written_at_ms])?;
    Ok(())
}

pub(crate) fn as_sql_count(value: u64) -> Result<i64, StoreError> {
    i64::try_from(value)
        .map_err(|_| StoreError::InvalidInput(format!("{value} is not a real size")))
}

pub(crate) fn summary_by_key(
    conn: &Connection,
    key: &SummaryKey,
) -> Result<Option<Summary>, StoreError> {
    Ok(conn
        .prepare_cached(&format!("{SUMMARY_SELECT} WHERE {KEY_MATCH}"))?
        .query_row(key_params(key), summary_from_row)
        .optional()?)
}

fn summary_from_row(row: &Row<'_>) -> rusqlite::Result<Summary> {
    let written_by: String = row.get(11)?;
    Ok(Summary {
        id: row.get(10)?,
        key: SummaryKey {
            tree_id: TreeId(row.get(0)?),
            pin_id: row.get::<_, Option<i64>>(1)?.map(PinId),
            path_end: row.get::<_, Option<i64>>(2)?.map(NodeId),
            budget: row.get(3)?,
            summarizer: row.get(4)?,
            fitted_from: row.get(13)?,
        },
        // The column's CHECK admits only these names.
        written_by: SummaryAuthor::parse(&written_by).unwrap_or(SummaryAuthor::File),
        chosen: row.get(12)?,
        text: row.get(5)?,
        input_chars: count(row.get(6)?),
        input_tokens: count(row.get(7)?),
        updated_at_ms: row.get(8)?,
        update_count: count(row.get(9)?),
        stale: row.get(14)?,
    })
}
