//! The store against real SQLite files in a temporary folder.

// Test helpers unwrap too: a panic carrying the error is the failure report.
#![allow(clippy::unwrap_used)]

mod branches;
mod extras;
mod opening;
mod pins;
mod processes;
mod properties;
mod summaries;
mod sync;
mod threads;
mod trash;
mod trees;
mod upgrade;

use std::path::PathBuf;

use pinloom_store::Store;
use tempfile::TempDir;

/// A fresh database file in its own temporary folder (kept alive by the returned guard).
fn fresh_store() -> (Store, TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&database_path(&dir)).unwrap();
    (store, dir)
}

fn database_path(dir: &TempDir) -> PathBuf {
    dir.path().join("pinloom.sqlite3")
}
