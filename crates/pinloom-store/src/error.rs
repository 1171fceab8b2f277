use std::path::PathBuf;

/// What can go wrong in the store. Every variant names what to do about it in its message.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database file or its folder could not be opened or created.
    #[error(
        "cannot open the database at {path}: {source}; check that the folder exists and is writable"
    )]
    Open {
        /// The file we tried to open.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// The file exists but is not a SQLite database (or is damaged). It is left untouched.
    #[error(
        "{path} is not a Pinloom database (it is damaged or another kind of file); it was left untouched: move it aside or choose another data folder"
    )]
    NotADatabase {
        /// The file that was refused.
        path: PathBuf,
    },
    /// The file is another program's SQLite database. It is left untouched.
    #[error(
        "{path} is another program's SQLite database (application id {application_id:#010x}), not Pinloom's; it was left untouched: choose a Pinloom database, or a new file"
    )]
    ForeignDatabase {
        /// The file that was refused.
        path: PathBuf,
        /// The application id in its header (0 when it has none, but holds tables Pinloom did
        /// not make).
        application_id: u32,
    },
    /// The file was written by a newer Pinloom; opening it here could lose data, so it is refused.
    #[error(
        "{path} was written by a newer Pinloom (schema {found}, this build knows up to {supported}); update Pinloom to open it"
    )]
    NewerSchema {
        /// The file that was refused.
        path: PathBuf,
        /// The schema version found in the file.
        found: u32,
        /// The newest schema version this build knows.
        supported: u32,
    },
    /// A tree or node that was asked for does not exist.
    #[error("{kind} {id} does not exist; it may have been deleted")]
    NotFound {
        /// "tree", "node", "pin", "summary" or "model profile".
        kind: &'static str,
        /// The id that was asked for (0 for a profile, which is asked for by name).
        id: i64,
    },
    /// A model profile asked for by name does not exist.
    #[error("there is no model profile named {0:?}; pick one from the list of profiles")]
    NoSuchProfile(String),
    /// Following parent links from a node came back to a node already seen. The schema cannot
    /// make this; a damaged or hand-edited file can.
    #[error(
        "node {node} is part of a cycle of parent links; the database is damaged: restore it from a backup or export what you can"
    )]
    Cycle {
        /// Where the walk started.
        node: i64,
    },
    /// A tree's parent links do not make a tree: some loop, or name a message of no tree or of
    /// another tree. Whatever reads the whole tree (its listing, every export) refuses it rather
    /// than leaving those messages out without a word.
    #[error(
        "tree {tree} is damaged: {detail}; nothing was written. Restore the database from a backup; the messages that do read can still be opened one by one"
    )]
    BrokenTree {
        /// The tree.
        tree: i64,
        /// What is wrong, naming messages.
        detail: String,
    },
    /// A thread would sit, or sits, under more pin levels than allowed.
    #[error(
        "pins nest at most {limit} levels deep (a chain holds at most {} threads, the main thread's included); close or move a pin higher up instead of nesting further", limit + 1
    )]
    TooDeep {
        /// The limit.
        limit: u32,
    },
    /// The node is soft-deleted, or under a soft-deleted node.
    #[error("node {node} is in a deleted branch; restore the branch first")]
    Deleted {
        /// The node asked for.
        node: i64,
    },
    /// The caller's input breaks a rule of the model; the message says which.
    #[error("{0}")]
    InvalidInput(String),
    /// Any other SQLite failure.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

impl StoreError {
    /// Whether another connection held the database past the busy timeout: the same write may
    /// succeed a moment later.
    pub fn is_busy(&self) -> bool {
        matches!(
            self,
            StoreError::Sqlite(error) if matches!(
                error.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            )
        )
    }
}
