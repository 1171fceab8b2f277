use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, Transaction, TransactionBehavior};

use crate::error::StoreError;
use crate::migrations::{self, SCHEMA_VERSION};

/// How long a write waits for another process's write to finish before giving up. The desktop app
/// and the MCP server share the file; their transactions are short, so this is generous.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// What SQLite's header says a Pinloom database is ("PLOM"), so that Pinloom, `file(1)` and
/// other tools can tell its files from other programs' SQLite files.
pub const APPLICATION_ID: u32 = 0x504C_4F4D;

/// Whose SQLite file this is, as far as Pinloom can tell before writing anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ownership {
    /// Marked as Pinloom's.
    Pinloom,
    /// Not marked: new and empty, or written by a Pinloom from before the mark, whose tables it
    /// has. It is marked once brought up to date.
    Unmarked,
    /// Another program's: another application id, or tables Pinloom did not make.
    Foreign,
}

fn ownership(conn: &Connection) -> rusqlite::Result<Ownership> {
    let application_id: u32 = conn.query_row("PRAGMA application_id", [], |row| row.get(0))?;
    if application_id == APPLICATION_ID {
        return Ok(Ownership::Pinloom);
    }
    if application_id != 0 {
        return Ok(Ownership::Foreign);
    }
    let objects: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'",
        [],
        |row| row.get(0),
    )?;
    let pinloom_tables: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('trees', 'nodes')",
        [],
        |row| row.get(0),
    )?;
    let earlier_pinloom = migrations::version(conn)? > 0 && pinloom_tables == 2;
    Ok(if objects == 0 || earlier_pinloom { Ownership::Unmarked } else { Ownership::Foreign })
}

/// An open Pinloom database.
///
/// One connection serves this process; calls are short, so a mutex in front of it is enough, and
/// it keeps writes from one process strictly ordered.
pub struct Store {
    path: PathBuf,
    conn: Mutex<Connection>,
    /// How many messages held each searched word, and how many messages the file had when that
    /// was counted: FTS5 counts a word's messages by reading its whole list, which for a common
    /// word is most of the index, so the count is reused until the file has grown by a tenth.
    pub(crate) term_documents: Mutex<std::collections::HashMap<String, (i64, i64)>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish_non_exhaustive()
    }
}

impl Store {
    /// Opens the database at `path`, creating it if it does not exist, and brings its schema up to
    /// date.
    ///
    /// A file that is not a SQLite database, or that a newer Pinloom wrote, is refused and left
    /// exactly as it was: nothing is written before both checks pass.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let open_error = |source| StoreError::Open { path: path.to_owned(), source };
        let mut conn = Connection::open(path).map_err(open_error)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_error)?;

        // Reading the header is the first thing that touches the file; it fails on a file that is
        // not SQLite before anything could be written to it.
        let found =
            migrations::version(&conn).map_err(|error| match error.sqlite_error_code() {
                Some(ErrorCode::NotADatabase) => StoreError::NotADatabase { path: path.to_owned() },
                _ => open_error(error),
            })?;
        if found > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema {
                path: path.to_owned(),
                found,
                supported: SCHEMA_VERSION,
            });
        }
        // Another program's database (`--db` pointed at the wrong file) is left exactly as it
        // was: switching it to WAL and adding tables would change it under its owner.
        let owner = ownership(&conn).map_err(open_error)?;
        if owner == Ownership::Foreign {
            let application_id: u32 = conn
                .query_row("PRAGMA application_id", [], |row| row.get(0))
                .map_err(open_error)?;
            return Err(StoreError::ForeignDatabase { path: path.to_owned(), application_id });
        }

        // WAL lets the app and the MCP server read while the other writes. NORMAL sync in WAL mode
        // survives a crash of the process (every committed transaction is in the log); only a
        // power cut can lose the last few commits, never corrupt the file.
        conn.pragma_update(None, "journal_mode", "WAL").map_err(open_error)?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(open_error)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(open_error)?;
        // A page cache of up to 64 MiB instead of SQLite's 2 MiB: a 10,000-message path with its
        // counts spans more pages than that, and a cold plan read them through the OS again
        // (about 1 ms of the 7 ms path read in the W1 benchmark). Pages are cached only as they
        // are read, so a small database costs no more.
        conn.pragma_update(None, "cache_size", -65536).map_err(open_error)?;
        // Plans that never depend on the values bound to a statement: without this, SQLite
        // marks a cached statement to be compiled again whenever a new value is bound to a
        // parameter it compared with a partial index's condition (or a `LIMIT`), and the search,
        // pin and attachment reads of every plan were parsed and planned again each time (~0.3 ms
        // of a 1.7 ms warm plan, 1.3 ms of a cold one). Every partial index here is used by a
        // condition written as a literal, so no query loses an index by it.
        conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
            .map_err(open_error)?;
        migrations::upgrade(&mut conn).map_err(open_error)?;
        if owner == Ownership::Unmarked {
            conn.pragma_update(None, "application_id", APPLICATION_ID).map_err(open_error)?;
        }

        Ok(Store {
            path: path.to_owned(),
            conn: Mutex::new(conn),
            term_documents: Mutex::default(),
        })
    }

    /// The file this store reads and writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A number that changes whenever another connection (another process, or another `Store`
    /// on the same file) commits a change. Comparing it with the last value read is a cheap way
    /// for a front end to notice that it should refresh.
    pub fn data_version(&self) -> Result<i64, StoreError> {
        Ok(self.conn().prepare_cached("PRAGMA data_version")?.query_row([], |row| row.get(0))?)
    }

    /// Runs `work` in one write transaction, taking the write lock up front so that it waits for
    /// another process's write instead of failing halfway.
    pub(crate) fn write<T>(
        &self,
        work: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = work(&tx)?;
        tx.commit()?;
        Ok(value)
    }

    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave the connection half-written: every write is
        // a transaction that rolls back when dropped. So a poisoned lock is safe to keep using.
        self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
