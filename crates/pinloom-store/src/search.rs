//! Full-text search: over a whole tree (the window's search box, where the person picks what to
//! add), and over one message's path (the retrieval slice, which may know nothing else).

use std::collections::HashMap;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::codec::author_from_sql;
use crate::error::StoreError;
use crate::model::{NodeId, PinId, SearchHit, TreeId};
use crate::node_rows::require_node;
use crate::nodes::PATH_SEGMENTS;
use crate::store::Store;
use crate::trees::require_tree;

/// How many of a prompt's words a search looks for at most: its rarest.
pub const MAX_QUERY_TERMS: usize = 8;
/// From this many messages in the file on, words in more than half of them are not searched for.
pub const COMMON_TERM_MIN_NODES: i64 = 64;

/// What both searches read of a hit, in this order.
const HIT_COLUMNS: &str = "hit.id, hit.pin_id, hit.author, hit.text, hit.score, hit.created_at_ms,
    hit.bookmarked, EXISTS (SELECT 1 FROM pins p WHERE p.anchor_node_id = hit.id)";
const HIT_SOURCE_COLUMNS: &str = "n.id AS id, n.pin_id AS pin_id, n.author AS author,
    n.text AS text, nodes_fts.rank AS score, n.created_at_ms AS created_at_ms,
    n.bookmarked AS bookmarked";

/// Runs `work`, which writes many messages in the caller's transaction, with their full-text
/// indexing done at its end in one statement instead of by the insert trigger, message by
/// message: FTS5 writes its pending terms out as a segment at every statement that touches it, so
/// a trigger per message writes a segment per message and then merges them (a third of a large
/// import's time). What `work` writes is indexed before the transaction commits.
pub(crate) fn indexed_at_the_end<T>(
    conn: &Connection,
    work: impl FnOnce() -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let before: i64 =
        conn.query_row("SELECT coalesce(max(id), 0) FROM nodes", [], |row| row.get(0))?;
    conn.execute("INSERT INTO sync_state (key, value) VALUES ('indexed at the end', '')", [])?;
    let value = work()?;
    conn.execute("DELETE FROM sync_state WHERE key = 'indexed at the end'", [])?;
    conn.execute(
        "INSERT INTO nodes_fts(rowid, text) SELECT id, text FROM nodes WHERE id > ?1",
        [before],
    )?;
    Ok(value)
}

impl Store {
    /// Full-text search over a tree's live nodes, best match first: what the person searches
    /// when they look for a message to add to a context by hand.
    ///
    /// `query` is free text (a prompt): each word is searched for on its own and any may match,
    /// so punctuation or FTS syntax in a prompt can never make the search fail. Only the prompt's
    /// [`MAX_QUERY_TERMS`] rarest words are searched for, and once the file holds
    /// [`COMMON_TERM_MIN_NODES`] messages, none that appears in more than half of them: bm25
    /// gives such a word no weight (its inverse document frequency is at or below zero), while
    /// matching it makes SQLite score nearly every message. A prompt of only common words finds
    /// nothing, which is what bm25 would rank it as anyway.
    pub fn search(
        &self,
        tree_id: TreeId,
        query: &str,
        limit: u32,
    ) -> Result<Vec<SearchHit>, StoreError> {
        let conn = self.conn();
        require_tree(&conn, tree_id)?;
        let Some(expression) = match_rare_words(&conn, &self.term_documents, query)? else {
            return Ok(Vec::new());
        };
        // Ranked and cut inside the subquery, so the pin lookup runs for the hits kept only.
        let mut statement = conn.prepare_cached(&format!(
            "SELECT {HIT_COLUMNS}
             FROM (
                 SELECT {HIT_SOURCE_COLUMNS}
                 FROM nodes_fts JOIN nodes n ON n.id = nodes_fts.rowid
                 WHERE nodes_fts MATCH ?1 AND n.tree_id = ?2 AND n.deleted_depth = 0
                 ORDER BY nodes_fts.rank
                 LIMIT ?3
             ) hit
             ORDER BY hit.score"
        ))?;
        let hits = statement
            .query_map(params![expression, tree_id.0, limit], hit_from_row)?
            .collect::<Result<_, _>>()?;
        Ok(hits)
    }

    /// Full-text search among the ancestors of `node`, best match first: the retrieval slice's
    /// candidates. That is its own thread up to it and each ancestor thread up to where the next
    /// thread hangs off, so a sub-thread can recall a detail its ancestors' summaries dropped.
    /// The path is the rule of what a context may know, so it is the query's own condition (the
    /// same segment walk as the ancestor path), not a filter applied to a search of the whole
    /// tree: no other branch, sibling pin, replaced edit or parent-thread message after the
    /// anchor can come back. `node` itself, excluded messages and deleted branches are left out.
    /// The words searched for are chosen as [`Store::search`] chooses them.
    pub fn search_path(
        &self,
        node: NodeId,
        query: &str,
        limit: u32,
    ) -> Result<Vec<SearchHit>, StoreError> {
        let conn = self.conn();
        require_node(&conn, node)?;
        let Some(expression) = match_rare_words(&conn, &self.term_documents, query)? else {
            return Ok(Vec::new());
        };
        let mut statement = conn.prepare_cached(&format!(
            "{PATH_SEGMENTS}
             SELECT {HIT_COLUMNS}
             FROM (
                 SELECT {HIT_SOURCE_COLUMNS}
                 FROM nodes_fts
                 JOIN nodes n ON n.id = nodes_fts.rowid
                 JOIN segments s ON n.segment_id = s.segment_id AND n.segment_pos <= s.upto
                 WHERE nodes_fts MATCH ?2 AND n.id != ?1 AND n.excluded = 0
                     AND n.deleted_depth = 0
                 ORDER BY nodes_fts.rank
                 LIMIT ?3
             ) hit
             ORDER BY hit.score"
        ))?;
        let hits = statement
            .query_map(params![node.0, expression, limit], hit_from_row)?
            .collect::<Result<_, _>>()?;
        Ok(hits)
    }
}

fn hit_from_row(row: &Row<'_>) -> rusqlite::Result<SearchHit> {
    Ok(SearchHit {
        node_id: NodeId(row.get(0)?),
        pin_id: row.get::<_, Option<i64>>(1)?.map(PinId),
        author: author_from_sql(row.get_ref(2)?.as_str()?)?,
        text: row.get(3)?,
        bm25: row.get(4)?,
        created_at_ms: row.get(5)?,
        bookmarked: row.get(6)?,
        pinned: row.get(7)?,
    })
}

/// The FTS5 expression for a prompt: its rarest distinct words, each quoted (so no word is read as
/// FTS syntax), any of which may match. `None` when no word is worth searching for.
fn match_rare_words(
    conn: &Connection,
    known: &Mutex<HashMap<String, (i64, i64)>>,
    text: &str,
) -> Result<Option<String>, StoreError> {
    let mut words: Vec<String> = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|word| !word.is_empty()) {
        let word = word.to_lowercase();
        if !words.contains(&word) {
            words.push(word);
        }
    }
    if words.is_empty() {
        return Ok(None);
    }
    // Row ids only grow: the largest is an upper bound on the messages, read in O(log n).
    let messages: i64 = conn
        .prepare_cached("SELECT coalesce(max(id), 0) FROM nodes")?
        .query_row([], |row| row.get(0))?;
    let mut frequency = conn.prepare_cached("SELECT doc FROM nodes_fts_vocab WHERE term = ?1")?;
    // A cache that only speeds up the choice of words: a poisoned lock loses nothing.
    let mut known = known.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if known.len() > 100_000 {
        known.clear();
    }
    let mut ranked: Vec<(i64, String)> = Vec::with_capacity(words.len());
    for word in words {
        let documents = match known.get(&word) {
            Some(&(documents, then)) if messages * 10 <= then * 11 => documents,
            _ => {
                // A word the index folds differently (diacritics) is not found; it counts as rare.
                let documents: i64 =
                    frequency.query_row([&word], |row| row.get(0)).optional()?.unwrap_or(0);
                known.insert(word.clone(), (documents, messages));
                documents
            }
        };
        if messages >= COMMON_TERM_MIN_NODES && documents * 2 > messages {
            continue;
        }
        ranked.push((documents, word));
    }
    ranked.sort();
    let terms: Vec<String> = ranked
        .into_iter()
        .take(MAX_QUERY_TERMS)
        .map(|(_, word)| format!("\"{}\"", word.replace('"', "")))
        .collect();
    Ok((!terms.is_empty()).then(|| terms.join(" OR ")))
}
