//! Versioned schema migrations.
//!
//! The schema version lives in SQLite's `user_version`. Migration `n` (counting from 1) moves a
//! file from version `n - 1` to `n`, inside one transaction. Released migrations are never edited:
//! a change is a new migration, and a database made by every released version is kept as a test
//! fixture so that upgrading from each is tested.

use rusqlite::{Connection, TransactionBehavior};

/// The schema version this build writes.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

const MIGRATIONS: &[&str] = &[
    // 1: trees and their nodes. A node is immutable; its parent is the node before it, and several
    // children of one parent are alternative branches.
    r#"
    CREATE TABLE trees (
        id             INTEGER PRIMARY KEY,
        title          TEXT    NOT NULL CHECK (length(trim(title)) > 0),
        mode           TEXT    NOT NULL CHECK (mode IN ('dialogue', 'buffer')),
        system_context TEXT    NOT NULL DEFAULT '',
        created_at_ms  INTEGER NOT NULL,
        updated_at_ms  INTEGER NOT NULL
    ) STRICT;

    CREATE TABLE nodes (
        id            INTEGER PRIMARY KEY,
        tree_id       INTEGER NOT NULL REFERENCES trees(id) ON DELETE CASCADE,
        parent_id     INTEGER REFERENCES nodes(id) ON DELETE CASCADE,
        author        TEXT    NOT NULL CHECK (author IN ('human', 'model', 'tool')),
        text          TEXT    NOT NULL,
        created_at_ms INTEGER NOT NULL
    ) STRICT;

    -- The ancestor walk follows parent_id upwards by primary key; children are found by parent.
    CREATE INDEX nodes_by_parent ON nodes(parent_id);
    -- A tree's nodes in write order: its newest node, its node count.
    CREATE INDEX nodes_by_tree ON nodes(tree_id, id);
    -- The tree list is ordered by last change.
    CREATE INDEX trees_by_update ON trees(updated_at_ms DESC, id DESC);
    "#,
];

/// Brings `conn` up to [`SCHEMA_VERSION`]. Returns the version the file had before.
///
/// The caller has already checked that the file is not newer than this build.
pub(crate) fn upgrade(conn: &mut Connection) -> rusqlite::Result<u32> {
    let found = version(conn)?;
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        // IMMEDIATE takes the write lock up front, so two processes opening an old file at once
        // migrate it one after the other instead of both trying.
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let now = tx.query_row("PRAGMA user_version", [], |row| row.get::<_, u32>(0))?;
        if now as usize > index {
            // The other process got here first.
            tx.commit()?;
            continue;
        }
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", index as u32 + 1)?;
        tx.commit()?;
    }
    Ok(found)
}

pub(crate) fn version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
}
