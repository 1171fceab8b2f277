use pinloom_store::{SCHEMA_VERSION, Store, TreeMode};

/// Databases written by each released schema version, oldest first. A new schema version adds its
/// fixture here when it is released (made by that version's code, then never changed).
/// Schema 4's was made by opening schema 3's with schema 4's code (`pinloom tree`), schema 5's by
/// opening schema 4's with schema 5's (`pinloom tree` at 52265cd).
const FIXTURES: &[(u32, &str)] = &[
    (1, "schema-1.sqlite3"),
    (2, "schema-2.sqlite3"),
    (3, "schema-3.sqlite3"),
    (4, "schema-4.sqlite3"),
    (5, "schema-5.sqlite3"),
];

#[test]
fn every_released_schema_upgrades_with_its_data_intact() {
    for (version, name) in FIXTURES {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pinloom.sqlite3");
        let fixture = std::path::Path::new(
            &std::env::var("CARGO_MANIFEST_DIR")
                .expect("cargo runs tests with CARGO_MANIFEST_DIR set"),
        )
        .join("tests/fixtures")
        .join(name);
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
        // Schema 2's fixture continued the schema 1 thread in a sub-thread; schema 3's opened a
        // thread off the first message and wrote in it.
        let expected = match version {
            1 => 3,
            2 => 4,
            _ => 2,
        };
        assert_eq!(store.ancestor_path(newest).unwrap().len(), expected, "from {name}");
        let altarme = store.search(rivers, "Altarme", 5).unwrap()[0].node_id;
        let steps = store.ancestor_path(altarme).unwrap();
        let root_thread_end = steps[2].id;
        assert_eq!(steps.len(), 3, "from {name}");
        assert_eq!(steps[2].text, "Und warum entstehen Altarme? 🌊");
        if *version >= 3 {
            let kept = store.node(newest).unwrap();
            assert_eq!(
                kept.pin_id.map(|pin| store.pin(pin).unwrap().slug).as_deref(),
                Some("oxbow-lakes-2")
            );
            assert_eq!(store.calibration("Local model").unwrap(), Some((3_600, 1)));
        }
        if *version >= 2 {
            let summaries = store.thread_summaries(rivers, None).unwrap();
            assert_eq!(summaries[0].text, "Meanders and oxbows.", "summaries survive");
            let counts = store.token_counts(&[newest], "o200k").unwrap();
            if *version == 2 {
                assert_eq!(counts.get(&newest), Some(&8), "token counts survive");
            }
        }
        // Schema 4 named every tree and pin the way ThreadMind names projects and threads.
        let slugs: Vec<_> = trees.iter().map(|tree| tree.slug.as_str()).collect();
        assert_eq!(slugs, ["empty-tree", "draft-essay", "why-do-rivers-meander"], "from {name}");
        let threads: Vec<String> =
            store.live_threads(rivers).unwrap().into_iter().map(|pin| pin.slug).collect();
        let expected: &[&str] = match version {
            1 => &[],
            2 => &["oxbow-lakes"],
            _ => &["oxbow-lakes", "oxbow-lakes-2"],
        };
        assert_eq!(threads, expected, "from {name}");
        assert_eq!(store.search(rivers, "thalweg", 5).unwrap().len(), 1, "old text is searchable");
        store.open_thread(rivers, None, Some(root_thread_end), "new after upgrade", 1).unwrap();
        // Schema 5 keeps receipts beside replies: none for what was written before.
        assert!(store.receipt(newest).unwrap().is_none(), "from {name}");
        assert!(store.cut_replies(&[newest]).unwrap().is_empty(), "from {name}");
        // Schema 6 has a trash: every tree of an older file is live.
        assert!(store.trashed_trees().unwrap().is_empty(), "from {name}");
        // Schema 8 marks profiles that came with a file: every older one is the person's.
        assert!(
            store.profiles().unwrap().iter().all(|profile| profile.imported_from.is_none()),
            "from {name}"
        );

        let conn = rusqlite::Connection::open(&path).unwrap();
        let now: u32 = conn.query_row("PRAGMA user_version", [], |row| row.get(0)).unwrap();
        assert_eq!(now, SCHEMA_VERSION);
        let check: String = conn.query_row("PRAGMA integrity_check", [], |row| row.get(0)).unwrap();
        assert_eq!(check, "ok");
        // Schema 9 gave every row a global id, a UUIDv7 of the row's own time, all distinct.
        for table in ["trees", "nodes", "pins", "attachments", "annotations", "summary_updates"] {
            let (rows, ids, sevens): (i64, i64, i64) = conn
                .query_row(
                    &format!(
                        "SELECT count(*), count(DISTINCT gid),
                             count(*) FILTER (WHERE gid GLOB '????????-????-7???-[89ab]???-????????????')
                         FROM {table}"
                    ),
                    [],
                    |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
                )
                .unwrap();
            assert_eq!((ids, sevens), (rows, rows), "{table} from {name}");
        }
        let dump = store.sync_dump(&|receipt, _| receipt.clone()).unwrap();
        assert!(dump.contains("Und warum entstehen Altarme?"), "from {name}");
        // Schema 11 rebuilt the attachments table for images and PDFs: it keeps its indexes and
        // triggers (a new row gets its global id, a removed one is a change a sync carries).
        let made: Vec<String> = conn
            .prepare(
                "SELECT name FROM sqlite_master WHERE tbl_name = 'attachments'
                 AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY name",
            )
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            made,
            [
                "attachments_by_gid",
                "attachments_by_node",
                "attachments_by_tree",
                "attachments_get_gid",
                "sync_attachments_removed"
            ],
            "from {name}"
        );
        let image = store
            .add_attachment(
                rivers,
                pinloom_store::AttachmentScope::Tree,
                pinloom_store::AttachmentRole::Image,
                "heron.png",
                "data:image/png;base64,QUJD",
                1,
            )
            .unwrap();
        let gid: Option<String> = conn
            .query_row("SELECT gid FROM attachments WHERE id = ?1", [image.id], |row| row.get(0))
            .unwrap();
        assert!(gid.is_some(), "from {name}");
        store.remove_attachment(image.id).unwrap();
        let removed: i64 = conn
            .query_row(
                "SELECT count(*) FROM sync_changes WHERE kind = 'attachment' AND field = 'removed'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(removed, 1, "from {name}");
    }
}
