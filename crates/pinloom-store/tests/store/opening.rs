use pinloom_store::{SCHEMA_VERSION, Store, StoreError, TreeMode};

use crate::database_path;

#[test]
fn a_new_file_gets_the_current_schema_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = database_path(&dir);
    drop(Store::open(&path).unwrap());

    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: u32 = conn.query_row("PRAGMA user_version", [], |row| row.get(0)).unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |row| row.get(0)).unwrap();
    assert_eq!(mode, "wal", "WAL lets the app and the MCP server share the file");
}

#[test]
fn what_was_written_is_there_after_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = database_path(&dir);
    let tree = {
        let store = Store::open(&path).unwrap();
        store.create_tree("Rivers", TreeMode::Dialogue, 1_000).unwrap()
    };
    let store = Store::open(&path).unwrap();
    assert_eq!(store.list_trees().unwrap(), vec![tree]);
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = database_path(&dir);
    let content = b"notes I keep here, not a database\n".repeat(200);
    std::fs::write(&path, &content).unwrap();

    let error = Store::open(&path).unwrap_err();
    assert!(matches!(error, StoreError::NotADatabase { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains(&path.display().to_string()), "names the file: {message}");
    assert!(message.contains("left untouched"), "{message}");
    assert_eq!(std::fs::read(&path).unwrap(), content, "the file is byte for byte the same");
    assert!(!dir.path().join("pinloom.sqlite3-wal").exists(), "no log was started beside it");
}

#[test]
fn a_file_from_a_newer_pinloom_is_refused_not_downgraded() {
    let dir = tempfile::tempdir().unwrap();
    let path = database_path(&dir);
    drop(Store::open(&path).unwrap());
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
    }
    let error = Store::open(&path).unwrap_err();
    assert!(
        matches!(error, StoreError::NewerSchema { found, supported, .. }
            if found == SCHEMA_VERSION + 1 && supported == SCHEMA_VERSION),
        "{error:?}"
    );
    assert!(error.to_string().contains("update Pinloom"), "{error}");
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: u32 = conn.query_row("PRAGMA user_version", [], |row| row.get(0)).unwrap();
    assert_eq!(version, SCHEMA_VERSION + 1, "the newer version was not touched");
}

#[test]
fn a_folder_that_cannot_hold_the_file_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing-folder").join("pinloom.sqlite3");
    let error = Store::open(&path).unwrap_err();
    assert!(matches!(error, StoreError::Open { .. }), "{error:?}");
    assert!(error.to_string().contains("missing-folder"), "{error}");
}
