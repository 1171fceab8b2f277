//! Tree files written to break Pinloom: each imports what can be placed, says what could not, and
//! leaves a database that keeps working. None may panic.

use pinloom_app::json::TreeMode;
use pinloom_app::{ExportOptions, Pinloom};
use serde_json::{Value, json};

async fn fresh() -> (Pinloom, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (Pinloom::open(dir.path().to_owned()).await.unwrap(), dir)
}

fn text(id: &str) -> Value {
    json!({ "id": id, "content": [{ "type": "text", "text": id }], "author": { "role": "human" } })
}

#[tokio::test]
async fn a_note_on_itself_or_on_another_note_is_left_out_and_said() {
    let (pinloom, _dir) = fresh().await;
    let document = json!({
        "format": "open-loom", "version": "2.0",
        "trees": [{
            "id": "t", "title": "Notes", "rootNodeIds": ["r"],
            "nodes": { "r": text("r"), "self": text("self"), "a": text("a"), "b": text("b"), "m": text("m") },
            "edges": [
                { "type": "annotation", "sources": [{ "nodeId": "self" }], "targetNodeId": "self" },
                { "type": "annotation", "sources": [{ "nodeId": "r" }], "targetNodeId": "a" },
                { "type": "annotation", "sources": [{ "nodeId": "a" }], "targetNodeId": "b" },
                { "type": "continuation", "sources": [{ "nodeId": "r" }], "targetNodeId": "m" },
                { "type": "annotation", "sources": [{ "nodeId": "b" }], "targetNodeId": "m" }
            ]
        }]
    });
    let report = pinloom.import_document(document.to_string(), String::new()).await.unwrap();
    let said = report.text();
    assert!(said.contains("a note on another note or on itself"), "{said}");
    assert!(said.contains("an annotation between notes"), "{said}");
    assert_eq!(report.trees[0].messages, 2, "the root and its continuation: {said}");
    let tree = report.trees[0].id;
    let root = pinloom.thread_view(tree, None).await.unwrap().messages[0].node.message.id;
    let notes = pinloom.notes(root).await.unwrap();
    assert_eq!(notes.iter().map(|note| note.text.as_str()).collect::<Vec<_>>(), ["a"]);
    pinloom.export_open_loom(vec![tree], ExportOptions::default()).await.unwrap();
}

#[tokio::test]
async fn thread_orders_at_the_ends_of_the_integers_keep_their_ranks_and_room_for_more() {
    let (pinloom, _dir) = fresh().await;
    let tree = pinloom.create_tree("Rivers".into(), TreeMode::Dialogue).await.unwrap().id;
    let message = pinloom
        .append_message(tree, None, "Rivers bend and sediment settles.".into())
        .await
        .unwrap()
        .id;
    for (start, title) in [(0, "Rivers"), (7, "bend"), (16, "sediment")] {
        let end = start + title.len() as u32;
        pinloom.pin_range(message, start, end, title.into(), String::new()).await.unwrap();
    }
    let mut document: Value = serde_json::from_str(
        &pinloom.export_open_loom(vec![tree], ExportOptions::default()).await.unwrap(),
    )
    .unwrap();
    let threads = document["trees"][0]["extensions"]["pinloom"]["threads"].as_array_mut().unwrap();
    assert_eq!(threads.len(), 3);
    for (thread, order) in threads.iter_mut().zip([json!(u64::MAX), json!(i64::MAX - 1), json!(0)])
    {
        thread["order"] = order;
    }

    let report = pinloom.import_document(document.to_string(), String::new()).await.unwrap();
    let imported = report.trees[0].id;
    // Threads are listed (to ThreadMind, in exports) by their place among their siblings.
    let listed = || async {
        let text =
            pinloom.export_open_loom(vec![imported], ExportOptions::default()).await.unwrap();
        let document: Value = serde_json::from_str(&text).unwrap();
        document["trees"][0]["extensions"]["pinloom"]["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|thread| thread["title"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(listed().await, ["sediment", "bend", "Rivers"]);
    // The tree takes new threads after them, as often as wanted.
    let root = pinloom.thread_view(imported, None).await.unwrap().messages[0].node.message.id;
    pinloom.pin_range(root, 25, 32, "settles".into(), String::new()).await.unwrap();
    pinloom.pin_range(root, 12, 15, "and".into(), String::new()).await.unwrap();
    assert_eq!(listed().await, ["sediment", "bend", "Rivers", "settles", "and"]);
}

#[tokio::test]
async fn a_text_beyond_the_limit_is_refused_by_where_it_is() {
    let (pinloom, _dir) = fresh().await;
    let mut long = text("r");
    long["content"][0]["text"] = json!("x".repeat((16 << 20) + 1));
    let document = json!({
        "format": "open-loom", "version": "2.0",
        "trees": [
            { "id": "a", "title": "Short", "nodes": { "r": text("r") }, "edges": [] },
            { "id": "b", "title": "Long", "nodes": { "r": long }, "edges": [] }
        ]
    });
    let refused = pinloom_app::ApiError::from(
        pinloom.import_document(document.to_string(), String::new()).await.unwrap_err(),
    );
    assert_eq!(
        refused.message,
        "$.trees[1].nodes[\"r\"]: holds a text of 16.0 MiB; Pinloom imports texts up to 16 MiB: \
         shorten it or leave it out; nothing was imported"
    );
    assert!(pinloom.list_trees().await.unwrap().is_empty());
}

#[tokio::test]
async fn many_threads_and_trees_of_one_title_get_their_numbers_in_order() {
    let (pinloom, _dir) = fresh().await;
    let tree = pinloom.create_tree("Rivers".into(), TreeMode::Dialogue).await.unwrap().id;
    let message = pinloom.append_message(tree, None, "Rivers bend.".into()).await.unwrap().id;
    pinloom.pin_range(message, 0, 6, "Rivers".into(), String::new()).await.unwrap();
    let mut document: Value = serde_json::from_str(
        &pinloom.export_open_loom(vec![tree], ExportOptions::default()).await.unwrap(),
    )
    .unwrap();
    // Three thousand threads called "Bends", and the tree three times over.
    let threads = document["trees"][0]["extensions"]["pinloom"]["threads"].as_array_mut().unwrap();
    let first = threads[0].clone();
    threads.clear();
    for number in 0..3_000 {
        let mut thread = first.clone();
        thread["id"] = json!(format!("t{number}"));
        thread["title"] = json!("Bends");
        thread["slug"] = json!("bends");
        thread["order"] = json!(number);
        threads.push(thread);
    }
    let one = document["trees"][0].clone();
    document["trees"] = json!([one.clone(), one.clone(), one]);
    let report = pinloom.import_document(document.to_string(), String::new()).await.unwrap();
    let slugs: Vec<&str> = report.trees.iter().map(|tree| tree.slug.as_str()).collect();
    assert_eq!(slugs, ["rivers-2", "rivers-3", "rivers-4"]);
    let exported: Value = serde_json::from_str(
        &pinloom
            .export_open_loom(vec![report.trees[2].id], ExportOptions::default())
            .await
            .unwrap(),
    )
    .unwrap();
    let thread_slugs: Vec<&str> = exported["trees"][0]["extensions"]["pinloom"]["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|thread| thread["slug"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = std::iter::once("bends".to_owned())
        .chain((2..=3_000).map(|number| format!("bends-{number}")))
        .collect();
    assert_eq!(thread_slugs, expected);
}

#[tokio::test]
async fn a_documents_registry_is_kept_once_and_every_tree_still_exports_it() {
    let (pinloom, dir) = fresh().await;
    let registry = "a long system prompt. ".repeat(5_000);
    let tree = |title: &str| json!({ "id": title, "title": title, "nodes": { "r": text("r") }, "edges": [] });
    let document = json!({
        "format": "open-loom", "version": "2.0",
        "agents": { "agent-1": { "name": "Claude", "type": "model", "configuration": { "systemPrompt": registry } } },
        "extensions": { "aspen-grove": { "theme": "dark" } },
        "trees": (0..50).map(|n| tree(&format!("Tree {n}"))).collect::<Vec<_>>()
    });
    let report = pinloom.import_document(document.to_string(), String::new()).await.unwrap();
    assert_eq!(report.trees.len(), 50);

    // Stored once, not fifty times.
    let database = dir.path().join(pinloom_app::DATABASE_FILE_NAME);
    let conn = rusqlite::Connection::open(database).unwrap();
    let copies: i64 = conn
        .query_row(
            "SELECT count(*) FROM trees WHERE instr(interchange_json, 'a long system prompt') > 0",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(copies, 1);

    // Any tree exported alone still carries the document's registry and extensions.
    for imported in [&report.trees[0], &report.trees[49]] {
        let exported: Value = serde_json::from_str(
            &pinloom.export_open_loom(vec![imported.id], ExportOptions::default()).await.unwrap(),
        )
        .unwrap();
        assert_eq!(exported["agents"]["agent-1"]["configuration"]["systemPrompt"], json!(registry));
        assert_eq!(exported["extensions"]["aspen-grove"]["theme"], "dark");
    }
}
