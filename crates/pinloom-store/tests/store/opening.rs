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

#[test]
fn another_programs_sqlite_file_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    for (name, application_id, table) in [
        ("fossil.sqlite3", 0x0F05_5112_u32, "CREATE TABLE blob(rid INTEGER PRIMARY KEY)"),
        ("places.sqlite", 0, "CREATE TABLE moz_places(id INTEGER PRIMARY KEY, url TEXT)"),
    ] {
        let path = dir.path().join(name);
        {
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.pragma_update(None, "application_id", application_id).unwrap();
            conn.execute_batch(table).unwrap();
        }
        let before = std::fs::read(&path).unwrap();
        let error = Store::open(&path).unwrap_err();
        assert!(matches!(error, StoreError::ForeignDatabase { .. }), "{error:?}");
        let message = error.to_string();
        assert!(message.contains(name) && message.contains("left untouched"), "{message}");
        assert_eq!(std::fs::read(&path).unwrap(), before, "{name} is byte for byte the same");
        assert!(!dir.path().join(format!("{name}-wal")).exists(), "no log was started beside it");
    }
}

#[test]
fn pinloom_files_are_marked_as_pinloom_s_and_earlier_ones_are_marked_on_opening() {
    let dir = tempfile::tempdir().unwrap();
    let path = database_path(&dir);
    let application_id = |path: &std::path::Path| -> u32 {
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.query_row("PRAGMA application_id", [], |row| row.get(0)).unwrap()
    };
    let tree = {
        let store = Store::open(&path).unwrap();
        store.create_tree("Rivers", TreeMode::Dialogue, 1_000).unwrap()
    };
    assert_eq!(application_id(&path), pinloom_store::APPLICATION_ID);
    // As a Pinloom from before the mark left it.
    rusqlite::Connection::open(&path).unwrap().pragma_update(None, "application_id", 0).unwrap();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.list_trees().unwrap(), vec![tree]);
    assert_eq!(application_id(&path), pinloom_store::APPLICATION_ID);
}
