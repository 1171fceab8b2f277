//! Another program's SQLite file, read: Simon Willison's `llm` keeps every prompt and response in
//! `logs.db` (`conversations`, `responses`). Only the store knows SQL, so the file is read here,
//! a conversation at a time, and handed on as plain records. The file is a stranger's: it is
//! opened read-only, its schema is not trusted to run functions, and its two tables must be
//! tables (a view could be made to loop).

use std::path::Path;

use rusqlite::{Connection, OpenFlags, params};

use crate::error::StoreError;

/// One of `llm`'s conversations, with its responses in the order they were made.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmConversation {
    /// Its id (a ULID).
    pub id: String,
    /// Its name (`llm` names it after the first prompt).
    pub name: Option<String>,
    /// The model it was started with.
    pub model: Option<String>,
    /// Its prompts and responses, oldest first.
    pub responses: Vec<LlmResponse>,
}

/// One prompt and its response.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmResponse {
    /// Its id (a ULID).
    pub id: String,
    /// The model that answered.
    pub model: Option<String>,
    /// The person's prompt.
    pub prompt: Option<String>,
    /// The system prompt it was sent with (`-s`).
    pub system: Option<String>,
    /// The model's response.
    pub response: Option<String>,
    /// The options it was asked with (`-o`), as JSON.
    pub options_json: Option<String>,
    /// When, as `llm` writes it (ISO-8601 in UTC, without a zone).
    pub datetime_utc: Option<String>,
    /// Prompt tokens the provider counted, where `llm` kept them.
    pub input_tokens: Option<i64>,
    /// Response tokens the provider counted, where `llm` kept them.
    pub output_tokens: Option<i64>,
}

/// A conversation as its row names it: id, name, model.
type Started = (String, Option<String>, Option<String>);

/// Whether `head` (a file's first bytes) is a SQLite database.
pub fn is_sqlite(head: &[u8]) -> bool {
    head.starts_with(b"SQLite format 3\0")
}

/// Calls `each` with every conversation of the `llm` log at `path`, in the order they were
/// started; stops at the first error `each` returns (its words, as `Err(Ok(..))`). A file that is
/// not `llm`'s log is refused as `Err(Err(..))` before `each` is called.
pub fn read_llm_log(
    path: &Path,
    each: &mut dyn FnMut(LlmConversation) -> Result<(), String>,
) -> Result<(), Result<String, StoreError>> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|error| Err(error.into()))?;
    let stored = || -> Result<Vec<Started>, StoreError> {
        conn.pragma_update(None, "trusted_schema", "OFF")?;
        let tables: i64 = conn.query_row(
            "SELECT count(*) FROM sqlite_schema
             WHERE type = 'table' AND name IN ('conversations', 'responses')",
            [],
            |row| row.get(0),
        )?;
        if tables != 2 {
            return Err(StoreError::InvalidInput(
                "it is a SQLite file, but not llm's log (no conversations and responses tables)"
                    .to_owned(),
            ));
        }
        let mut statement =
            conn.prepare("SELECT id, name, model FROM conversations ORDER BY rowid")?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    };
    let conversations = stored().map_err(Err)?;
    let columns = response_columns(&conn).map_err(Err)?;
    let query = format!(
        "SELECT id, {} FROM responses WHERE conversation_id = ?1 ORDER BY datetime_utc, rowid",
        columns.join(", ")
    );
    let mut statement = conn.prepare(&query).map_err(|error| Err(error.into()))?;
    for (id, name, model) in conversations {
        let responses = statement
            .query_map(params![id], |row| {
                Ok(LlmResponse {
                    id: row.get(0)?,
                    model: row.get(1)?,
                    prompt: row.get(2)?,
                    system: row.get(3)?,
                    response: row.get(4)?,
                    options_json: row.get(5)?,
                    datetime_utc: row.get(6)?,
                    input_tokens: row.get(7)?,
                    output_tokens: row.get(8)?,
                })
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|error| Err(error.into()))?;
        each(LlmConversation { id, name, model, responses }).map_err(Ok)?;
    }
    Ok(())
}

/// The columns of `responses` read, in [`LlmResponse`]'s order; one an older `llm` did not
/// write reads as NULL.
fn response_columns(conn: &Connection) -> Result<Vec<String>, StoreError> {
    let mut statement = conn.prepare("SELECT name FROM pragma_table_info('responses')")?;
    let present: Vec<String> =
        statement.query_map([], |row| row.get(0))?.collect::<Result<_, _>>()?;
    Ok([
        "model",
        "prompt",
        "system",
        "response",
        "options_json",
        "datetime_utc",
        "input_tokens",
        "output_tokens",
    ]
    .iter()
    .map(|column| {
        if present.iter().any(|name| name == column) {
            (*column).to_owned()
        } else {
            "NULL".to_owned()
        }
    })
    .collect())
}
