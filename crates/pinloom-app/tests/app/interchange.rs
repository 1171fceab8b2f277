//! Open Loom v2 export and import on real database files: round trips, the spec's example,
//! socketteer's loom, other apps' data kept, and refusals that write nothing.

use pinloom_app::json::{AttachTo, TreeSettings};
use pinloom_app::{ApiError, ExportOptions, NodeAction, Pinloom};
use pinloom_test_server::Server;
use serde_json::{Value, json};

use crate::wire::{ask, dialogue, pinloom_with, says};

/// A document kept in `tests/fixtures/interchange` (its SOURCES.md says where each is from).
fn fixture(name: &str) -> String {
    let path = std::path::Path::new(
        &std::env::var("CARGO_MANIFEST_DIR").expect("cargo runs tests with CARGO_MANIFEST_DIR set"),
    )
    .join("tests/fixtures/interchange")
    .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The document without its export time (the one member a second export may change).
fn timeless(document: &str) -> Value {
    let mut value: Value = serde_json::from_str(document).unwrap();
    value.as_object_mut().unwrap().remove("exportedAt");
    value
}

async fn fresh() -> (Pinloom, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (Pinloom::open(dir.path().to_owned()).await.unwrap(), dir)
}

/// A tree using everything Pinloom keeps: replies with usage, a pinned passage and its
/// question, an edit, flags, notes, attachments, summaries with a log, a closed pin, a
/// ThreadMind thread and a deleted one, settings naming a message, a custom summariser.
async fn rich_tree(pinloom: &Pinloom) -> i64 {
    let tree = dialogue(pinloom).await;
    pinloom.set_system_context(tree, "Answer like a geographer.".into()).await.unwrap();
    let first = ask(pinloom, tree, None, "Why do rivers meander?").await;
    let answer = first.reply.message.id;
    let question = first.prompt.unwrap().message.id;
    let second = ask(pinloom, tree, Some(answer), "And oxbows?").await;
    pinloom
        .edit_message(second.prompt.unwrap().message.id, "And oxbow lakes?".into())
        .await
        .unwrap();
    pinloom.mark_node(question, NodeAction::Bookmark).await.unwrap();
    pinloom.mark_node(answer, NodeAction::Keep).await.unwrap();
    pinloom.mark_node(second.reply.message.id, NodeAction::Exclude).await.unwrap();
    let pin = pinloom.pin_range(answer, 0, 7, "Erosion".into(), String::new()).await.unwrap();
    pinloom.ask_in_pin(pin.id, "Where does it erode?".into()).await.unwrap();
    pinloom.close_pin(pin.id, "On the outer bank.".into()).await.unwrap();
    let noted = pinloom.annotate(answer, "Check the textbook.".into(), false).await.unwrap();
    pinloom.include_annotation(noted, true).await.unwrap();
    pinloom.annotate(question, "A classic.".into(), false).await.unwrap();
    pinloom
        .attach_text(
            tree,
            AttachTo::Tree,
            "Glossary".into(),
            "Thalweg: the deepest line.".into(),
            false,
        )
        .await
        .unwrap();
    pinloom
        .attach_text(tree, AttachTo::Node(answer), "Rule".into(), "Cite sources.".into(), true)
        .await
        .unwrap();
    pinloom.write_own_summary(tree, None, answer, "Rivers meander.".into()).await.unwrap();
    pinloom
        .write_own_summary(tree, None, answer, "Rivers meander by erosion.".into())
        .await
        .unwrap();
    let session = pinloom.threadmind_session("/work/project");
    let slug = pinloom.list_trees().await.unwrap()[0].slug.clone();
    session.project_switch(slug).await.unwrap();
    session.thread_create("Deltas".into(), None).await.unwrap();
    session.summary_update("Deltas form at the mouth.".into(), None).await.unwrap();
    session.thread_create("Gone".into(), Some("main".into())).await.unwrap();
    session.thread_delete("gone".into()).await.unwrap();
    let settings = TreeSettings {
        summarizer: Some("Local".into()),
        search_hits: vec![question],
        ..TreeSettings::default()
    };
    pinloom.set_tree_settings(tree, settings).await.unwrap();
    pinloom.mark_node(second.reply.message.id, NodeAction::Delete).await.unwrap();
    tree
}

#[tokio::test]
async fn export_import_export_gives_the_same_document() {
    let server = Server::start(vec![
        says("Erosion on the outside of bends."),
        says("Cut-off meanders."),
        says("Momentum."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = rich_tree(&pinloom).await;
    let first = pinloom.export_open_loom(vec![tree], ExportOptions::default()).await.unwrap();
    let document: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(
        (document["format"].as_str(), document["version"].as_str()),
        (Some("open-loom"), Some("2.0"))
    );
    let ours = &document["trees"][0]["extensions"]["pinloom"];
    assert_eq!(ours["threads"].as_array().unwrap().len(), 3, "{ours}");
    assert_eq!(ours["summaries"].as_array().unwrap().len(), 2, "{ours}");
    assert_eq!(document["extensions"]["pinloom"]["modelProfiles"][0]["name"], "Local");

    // Into another database: everything comes back, ids and all.
    let (elsewhere, _other) = fresh().await;
    let report = elsewhere.import_document(first.clone(), "rivers".into()).await.unwrap();
    // It maps whole; the one word is that the profile it carried waits to be enabled.
    assert_eq!(
        report.notes,
        ["model profile \"Local\" came with the file and is not enabled: nothing is planned for \
          or sent to it until you enable it in Settings → Models from imported files"]
    );
    assert_eq!((report.trees[0].slug.as_str(), report.trees[0].threads), ("rivers", 3));
    let imported = report.trees[0].id;
    let second =
        elsewhere.export_open_loom(vec![imported], ExportOptions::default()).await.unwrap();
    assert_eq!(as_if_sent_here(timeless(&second)), timeless(&first));

    // The imported tree is the same tree to ThreadMind and to the planner.
    let session = elsewhere.threadmind_session("/work/project");
    session.project_switch("rivers".into()).await.unwrap();
    let original = pinloom.threadmind_session("/work/project");
    assert_eq!(session.stats_show().await.unwrap(), original.stats_show().await.unwrap());
    assert_eq!(session.thread_list().await.unwrap(), original.thread_list().await.unwrap());
    session.thread_switch("deltas".into()).await.unwrap();
    original.thread_switch("deltas".into()).await.unwrap();
    assert_eq!(session.context_get().await.unwrap(), original.context_get().await.unwrap());

    // Into the same database: a second tree, its slug made unique and its global ids its own
    // (the tree's are taken here: it is a copy, and the report says so), the rest the same.
    let again = pinloom.import_document(first.clone(), String::new()).await.unwrap();
    assert_eq!(again.trees[0].slug, "rivers-2");
    assert!(
        again.notes.iter().any(|note| note.contains("imported as a copy")),
        "{:?}",
        again.notes
    );
    let third =
        pinloom.export_open_loom(vec![again.trees[0].id], ExportOptions::default()).await.unwrap();
    let mut third = as_if_sent_here(timeless(&third));
    third["trees"][0]["extensions"]["pinloom"]["slug"] = json!("rivers");
    let first = timeless(&first);
    with_global_ids_of(&mut third, &first);
    assert_eq!(third, first);
}

/// Gives `copy`'s tree and messages the global ids of `original`'s, after checking each differs.
fn with_global_ids_of(copy: &mut Value, original: &Value) {
    let tree = &original["trees"][0]["extensions"]["pinloom"]["globalId"];
    assert_ne!(&copy["trees"][0]["extensions"]["pinloom"]["globalId"], tree);
    copy["trees"][0]["extensions"]["pinloom"]["globalId"] = tree.clone();
    // Messages carry one; the document's nodes for notes do not (a note is not a message).
    let nodes = original["trees"][0]["nodes"].as_object().unwrap();
    let mut messages = 0;
    for (key, node) in nodes {
        let id = &node["extensions"]["pinloom"]["globalId"];
        if id.is_null() {
            assert!(copy["trees"][0]["nodes"][key]["extensions"]["pinloom"]["globalId"].is_null());
            continue;
        }
        let copied = &mut copy["trees"][0]["nodes"][key]["extensions"]["pinloom"]["globalId"];
        assert!(id.is_string() && copied != id, "{id} {copied}");
        *copied = id.clone();
        messages += 1;
    }
    assert!(messages > 5, "the rich tree's messages carry global ids: {messages}");
}

/// The one difference an import makes to a tree's document: its receipts say they came from a
/// file (checked, then set back for comparing).
fn as_if_sent_here(mut document: Value) -> Value {
    for node in ["n2", "n4"] {
        let receipt = &mut document["trees"][0]["nodes"][node]["extensions"]["pinloom"]["receipt"];
        assert_eq!(receipt["imported"], json!(true), "{node}'s receipt came from a file");
        receipt["imported"] = json!(false);
    }
    document
}

#[tokio::test]
async fn the_specs_example_and_socketteers_loom_are_read() {
    let (pinloom, _dir) = fresh().await;
    let report = pinloom
        .import_document(fixture("minimal-example.json"), "minimal-example".into())
        .await
        .unwrap();
    assert_eq!((report.trees[0].title.as_str(), report.trees[0].messages), ("Hello", 3));
    assert!(report.notes.is_empty(), "{:?}", report.notes);
    let tree = report.trees[0].id;
    let view = pinloom.thread_view(tree, None).await.unwrap();
    let texts: Vec<&str> = view.messages.iter().map(|m| m.node.message.text.as_str()).collect();
    assert_eq!(texts, ["Once upon a time", " there was a loom."], "c is the newest branch");
    let exported: Value = serde_json::from_str(
        &pinloom.export_open_loom(vec![tree], ExportOptions::default()).await.unwrap(),
    )
    .unwrap();
    let out = &exported["trees"][0];
    assert_eq!(
        out["nodes"][out["currentNodeId"].as_str().unwrap()]["content"][0]["text"],
        " there was a loom."
    );
    assert_eq!(out["edges"].as_array().unwrap().len(), 2);

    let report = pinloom.import_document(fixture("weavers.json"), "weavers".into()).await.unwrap();
    let weavers = &report.trees[0];
    assert_eq!((weavers.title.as_str(), weavers.messages), ("weavers", 14));
    assert!(
        report.notes.iter().any(|note| note.contains("\"socketteer-loom\" are kept for export")),
        "{:?}",
        report.notes
    );
    let document: Value = serde_json::from_str(
        &pinloom.export_open_loom(vec![weavers.id], ExportOptions::default()).await.unwrap(),
    )
    .unwrap();
    let tree = &document["trees"][0];
    assert_eq!(tree["mode"], "buffer");
    let kept = &tree["extensions"]["socketteer-loom"];
    assert_eq!(kept["generation_settings"]["model"], "davinci", "the loom's settings are kept");
    assert!(kept["chapters"].is_object() && kept["canonical"].is_array());
    let selected = tree["nodes"][tree["currentNodeId"].as_str().unwrap()].clone();
    assert!(selected["content"][0]["text"].as_str().unwrap().starts_with(" (between correlated"));
    assert_eq!(selected["generation"]["requestId"], "cmpl-6p0R8olD5DafIB8BkGkXOcSDHSepM");
    assert_eq!(selected["generation"]["completionIndex"], 3);
    assert_eq!(selected["author"]["role"], "model");
    assert!(selected.get("createdAt").is_none(), "a local time without a zone is not guessed");
    assert_eq!(
        selected["extensions"]["socketteer-loom"]["meta"]["creation_timestamp"],
        "2023-02-28-20.00.31"
    );
}

/// A document from another app, with everything Pinloom does not model.
fn foreign_document() -> Value {
    json!({
        "format": "open-loom",
        "version": "2.3",
        "exportedAt": "2026-07-08T21:14:00Z",
        "generator": { "name": "Aspen Grove", "version": "0.9.0" },
        "agents": { "agent-claude": { "name": "Claude", "type": "model", "configuration": { "systemPrompt": "Be vivid.", "temperature": 1.0 } } },
        "extensions": { "aspen-grove": { "theme": "dark" } },
        "futureField": 1,
        "trees": [{
            "id": "t", "title": "Marie", "mode": "chorus", "systemContext": "You are Marie.",
            "description": "Voice study", "tags": [{ "name": "research", "color": "#7A9E7E" }],
            "rootNodeIds": ["r"], "currentNodeId": "m",
            "createdAt": "2026-06-30T10:00:00Z", "updatedAt": "2026-07-08T21:10:00Z",
            "extensions": { "loomsidian": { "collapsed": true } },
            "nodes": {
                "r": { "id": "r", "content": [{ "type": "text", "text": "Begin." }], "author": { "role": "human", "agentId": "agent-asher" }, "createdAt": "2026-07-01T12:00:00Z" },
                "m": { "id": "m", "content": [{ "type": "text", "text": "The rain " }, { "type": "image", "ref": "data:image/png;base64,AA==", "mimeType": "image/png", "altText": "rain" }],
                       "author": { "role": "mixed", "agentId": "agent-claude" }, "createdAt": "yesterday",
                       "meta": { "bookmarked": true, "bookmarkLabel": "tone", "rating": 1, "note": "good" },
                       "generation": { "provider": "openrouter", "model": "anthropic/claude-sonnet-4.5", "usage": { "promptTokens": 9, "completionTokens": 2, "totalTokens": 11 },
                                       "rawResponse": { "bodyHash": "sha256:c04d", "encoding": "identity", "body": "{}" } },
                       "extensions": { "aspen-grove": { "localId": "a7x2" } } },
                "s": { "id": "s", "content": [{ "type": "text", "text": "Side." }], "author": { "role": "model" } },
                "note": { "id": "note", "content": [{ "type": "text", "text": "Check this." }], "author": { "role": "human" } }
            },
            "edges": [
                { "id": "e1", "type": "continuation", "sources": [{ "nodeId": "r", "role": "primary" }, { "nodeId": "s", "role": "context" }], "targetNodeId": "m", "createdAt": "2026-07-01T12:30:05Z", "extensions": { "aspen-grove": { "w": 1 } } },
                { "id": "e2", "type": "continuation", "sources": [{ "nodeId": "r" }], "targetNodeId": "s" },
                { "id": "e3", "type": "continuation", "sources": [{ "nodeId": "s" }], "targetNodeId": "m" },
                { "id": "e4", "type": "annotation", "sources": [{ "nodeId": "m" }], "targetNodeId": "note" },
                { "id": "e5", "type": "reference", "sources": [{ "nodeId": "s" }], "targetNodeId": "r" },
                { "id": "e6", "type": "continuation", "sources": [{ "nodeId": "ghost" }], "targetNodeId": "s" }
            ]
        }]
    })
}

#[tokio::test]
async fn other_apps_data_is_reported_kept_and_written_back() {
    let (pinloom, _dir) = fresh().await;
    let report =
        pinloom.import_document(foreign_document().to_string(), String::new()).await.unwrap();
    let text = report.text();
    for expected in [
        "agent registry is kept for export",
        "extensions \"aspen-grove\" are kept for export",
        "$.futureField is not part of Open Loom 2.0",
        "$.trees[0].extensions \"loomsidian\" are kept for export",
        "$.trees[0].description is kept for export",
        "image content blocks are kept for export",
        "mixed authorship",
        "$.trees[0].nodes[\"m\"].createdAt is not an ISO-8601 time",
        "message details \"bookmarkLabel\", \"note\", \"rating\" are kept for export",
        "sources beyond the primary one",
        "$.trees[0].edges[2] is a second continuation into one node",
        "$.trees[0].edges[4] has an edge type Pinloom does not model",
        "$.trees[0].edges[5] has no source in the tree and was dropped",
        "mode \"chorus\" is not one Pinloom knows",
    ] {
        assert!(text.contains(expected), "the report says {expected:?}:\n{text}");
    }
    let tree = report.trees[0].id;
    assert_eq!(report.trees[0].messages, 3, "the note became a note, not a message");
    let found = pinloom.search(tree, "rain".into()).await.unwrap();
    assert_eq!(found[0].preview, "The rain \nrain", "alt text stands in for the image");

    let first = pinloom.export_open_loom(vec![tree], ExportOptions::default()).await.unwrap();
    let out: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(out["agents"]["agent-claude"]["configuration"]["systemPrompt"], "Be vivid.");
    assert_eq!(out["extensions"]["aspen-grove"]["theme"], "dark");
    let tree_out = &out["trees"][0];
    assert_eq!(
        (tree_out["mode"].as_str(), tree_out["description"].as_str()),
        (Some("chorus"), Some("Voice study"))
    );
    assert_eq!(tree_out["extensions"]["loomsidian"]["collapsed"], true);
    let current = &tree_out["nodes"][tree_out["currentNodeId"].as_str().unwrap()];
    let original = &foreign_document()["trees"][0]["nodes"]["m"];
    for key in ["content", "author", "generation"] {
        assert_eq!(current[key], original[key], "{key} is written back exactly");
    }
    assert!(current.get("createdAt").is_none(), "an unreadable time is left out, not guessed");
    assert_eq!(current["meta"]["bookmarkLabel"], "tone");
    assert_eq!(current["meta"]["bookmarked"], true);
    assert_eq!(current["extensions"]["aspen-grove"]["localId"], "a7x2");
    let edges = tree_out["edges"].as_array().unwrap();
    let into_current = edges
        .iter()
        .find(|e| e["targetNodeId"] == tree_out["currentNodeId"] && e["type"] == "continuation")
        .unwrap();
    assert_eq!(into_current["sources"][1]["role"], "context");
    assert_eq!(into_current["extensions"]["aspen-grove"]["w"], 1);
    assert!(edges.iter().any(|e| e["type"] == "reference"), "an unknown edge type is kept");
    assert_eq!(edges.iter().filter(|e| e["type"] == "annotation").count(), 1);

    // Again: the second export equals the first.
    let (elsewhere, _other) = fresh().await;
    let again = elsewhere.import_document(first.clone(), String::new()).await.unwrap();
    let second = elsewhere
        .export_open_loom(vec![again.trees[0].id], ExportOptions::default())
        .await
        .unwrap();
    assert_eq!(timeless(&second), timeless(&first));

    // What the spec asks exporters to offer to leave out.
    let bare = pinloom
        .export_open_loom(vec![tree], ExportOptions { system_prompts: false, raw_responses: false })
        .await
        .unwrap();
    let bare: Value = serde_json::from_str(&bare).unwrap();
    assert!(bare["trees"][0].get("systemContext").is_none());
    assert!(bare["agents"]["agent-claude"]["configuration"].get("systemPrompt").is_none());
    let node = &bare["trees"][0]["nodes"][bare["trees"][0]["currentNodeId"].as_str().unwrap()];
    assert!(
        node["generation"].get("rawResponse").is_none() && node["generation"]["model"].is_string()
    );
}

#[tokio::test]
async fn a_document_that_cannot_be_read_writes_nothing_and_says_where() {
    let (pinloom, _dir) = fresh().await;
    let before = pinloom.model_profiles().await.unwrap().len();
    let refused = |text: &str| {
        let pinloom = pinloom.clone();
        let text = text.to_owned();
        async move {
            ApiError::from(pinloom.import_document(text, String::new()).await.unwrap_err()).message
        }
    };
    let malformed =
        refused("{\n  \"format\": \"open-loom\",\n  \"version\": \"2.0\" \n  \"trees\": []\n}")
            .await;
    assert!(
        malformed.contains("not valid JSON") && malformed.contains("line 4 column 3"),
        "{malformed}"
    );
    let version = refused(r#"{"format":"open-loom","version":"3.0","trees":[]}"#).await;
    assert!(
        version.starts_with("$.version: Open Loom \"3.0\" is not a version Pinloom reads"),
        "{version}"
    );
    let format = refused(r#"{"format":"loom","version":"2.0"}"#).await;
    assert!(format.starts_with("$.format: is \"loom\""), "{format}");
    let shapeless =
        refused(r#"{"format":"open-loom","version":"2.0","trees":[{"title":"x","nodes":[]}]}"#)
            .await;
    assert!(shapeless.starts_with("$.trees[0].nodes: is missing or not an object"), "{shapeless}");
    let v1 = refused(r#"{"nodes":{},"bookmarkedNodes":[],"rootNodeId":"a"}"#).await;
    assert!(v1.contains("Open Loom v1"), "{v1}");
    // A document whose second tree breaks a rule the store checks: the first is not written either.
    let mut two = foreign_document();
    let mut broken = two["trees"][0].clone();
    broken["extensions"] =
        json!({ "pinloom": { "threads": [{ "id": "p", "title": "Loop", "parent": "p" }] } });
    broken["nodes"]["s"]["extensions"] = json!({ "pinloom": { "thread": "p" } });
    two["trees"].as_array_mut().unwrap().push(broken);
    let message = refused(&two.to_string()).await;
    assert_eq!(message, "nothing was imported: pin 0 of the import is its own ancestor");
    for message in [&malformed, &version, &format, &shapeless, &v1] {
        assert!(message.ends_with("nothing was imported"), "{message}");
    }
    assert!(pinloom.list_trees().await.unwrap().is_empty(), "nothing was written");
    assert_eq!(pinloom.model_profiles().await.unwrap().len(), before);
}

#[tokio::test]
async fn a_damaged_graph_is_repaired_and_reported() {
    let (pinloom, _dir) = fresh().await;
    let text = |id: &str| json!({ "id": id, "content": [{ "type": "text", "text": id }], "author": { "role": "human" } });
    let document = json!({
        "format": "open-loom", "version": "2.0",
        "trees": [{
            "id": "t", "title": "Loops", "rootNodeIds": ["r", "y"],
            "nodes": { "r": text("r"), "x": text("x"), "y": text("y"), "z": text("z") },
            "edges": [
                { "type": "continuation", "sources": [{ "nodeId": "r" }], "targetNodeId": "z" },
                { "type": "continuation", "sources": [{ "nodeId": "x" }], "targetNodeId": "y" },
                { "type": "continuation", "sources": [{ "nodeId": "y" }], "targetNodeId": "x" }
            ]
        }]
    });
    let report = pinloom.import_document(document.to_string(), String::new()).await.unwrap();
    assert_eq!(report.trees[0].messages, 4, "nothing is lost");
    let said = report.text();
    assert!(said.contains("close a loop; that edge was dropped"), "{said}");
    assert!(said.contains("rootNodeIds listed nodes that are not roots"), "{said}");
    let tree = report.trees[0].id;
    let exported: Value = serde_json::from_str(
        &pinloom.export_open_loom(vec![tree], ExportOptions::default()).await.unwrap(),
    )
    .unwrap();
    assert_eq!(exported["trees"][0]["rootNodeIds"].as_array().unwrap().len(), 2);
    assert_eq!(exported["trees"][0]["edges"].as_array().unwrap().len(), 2);
}
