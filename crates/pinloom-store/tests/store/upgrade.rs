use pinloom_store::{SCHEMA_VERSION, Store, TreeMode};

/// Databases written by each released schema version, oldest first. A new schema version adds its
/// fixture here when it is released (made by that version's code, then never changed).
const FIXTURES: &[(u32, &str)] = &[(1, "schema-1.sqlite3"), (2, "schema-2.sqlite3")];

#[test]
fn every_released_schema_upgrades_with_its_data_intact() {
    for (version, name) in FIXTURES {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pinloom.sqlite3");
        let fixture =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
        std::fs::copy(&fixture, &path).unwrap();
        let before = rusqlite::Connection::open(&path).unwrap();
        let found: u32 = before.query_row("PRAGMA user_version", [], |row| row.get(0)).unwrap();
        assert_eq!(found, *version, "{name} is a schema {version} file");
        drop(before);

        let store = Store::open(&path).unwrap();
        let trees = store.list_trees().unwrap();
        let titles: Vec<_> = trees.iter().map(|tree| tree.title.as_str()).collect();
        assert_eq!(titles, ["Empty tree", "Draft essay", "Why do rivers meander?"], "from {name}");
        assert_eq!(trees[1].mode, TreeMode::Buffer);
        let rivers = trees[2].id;
        let newest = store.newest_node(rivers).unwrap().unwrap();
        let steps = store.ancestor_path(newest).unwrap();
        let root_thread_end = steps[2].id;
        let path_texts: Vec<_> = steps.into_iter().map(|n| n.text).collect();
        // Schema 2's fixture continued the schema 1 thread in a sub-thread.
        let expected = if *version == 1 { 3 } else { 4 };
        assert_eq!(path_texts.len(), expected, "from {name}");
        assert_eq!(path_texts[2], "Und warum entstehen Altarme? 🌊");
        if *version == 2 {
            let summaries = store.thread_summaries(rivers, None).unwrap();
            assert_eq!(summaries[0].text, "Meanders and oxbows.", "summaries survive");
            let counts = store.token_counts(&[newest], "o200k").unwrap();
            assert_eq!(counts.get(&newest), Some(&8), "token counts survive");
        }
        assert_eq!(store.search(rivers, "thalweg", 5).unwrap().len(), 1, "old text is searchable");
        store.open_thread(rivers, None, Some(root_thread_end), "new after upgrade", 1).unwrap();

        let conn = rusqlite::Connection::open(&path).unwrap();
        let now: u32 = conn.query_row("PRAGMA user_version", [], |row| row.get(0)).unwrap();
        assert_eq!(now, SCHEMA_VERSION);
        let check: String = conn.query_row("PRAGMA integrity_check", [], |row| row.get(0)).unwrap();
        assert_eq!(check, "ok");
    }
}
