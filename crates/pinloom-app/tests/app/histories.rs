//! ChatGPT's and Claude's data exports imported (issue 51): `conversations.json` alone and in the
//! zip as downloaded, written here in each export's current shape (ChatGPT's mapping of nodes with
//! parents and children, `current_node`, hidden system messages, regenerations and edits as
//! siblings, tool and code messages, image pointers; Claude's messages with their parents, text
//! and thinking blocks, files' extracted text, projects' instructions), never a person's data.

use std::io::Write;

use pinloom_app::json::TreeMode;
use pinloom_app::{ApiError, Pinloom};
use serde_json::{Value, json};

use crate::media::png;

const RIVERS: &str = "6f1c2a4e-0b3d-4c5e-8f9a-1b2c3d4e5f60";
const LOOP: &str = "7a2b3c4d-5e6f-4a1b-9c2d-3e4f5a6b7c80";

/// A node of a conversation's mapping.
fn node(id: &str, parent: Option<&str>, children: &[&str], message: Value) -> (String, Value) {
    (id.to_owned(), json!({ "id": id, "message": message, "parent": parent, "children": children }))
}

/// A message, written at the time the number in its id gives (`aaaa0003-…`: the fourth): ChatGPT's
/// ids do not order, its times do, and the newest message is the end of the branch it shows.
fn message(id: &str, role: &str, content: Value, metadata: Value) -> Value {
    let step: f64 = id.get(4..8).and_then(|digits| digits.parse().ok()).unwrap_or(0.0);
    let at = 1_720_000_000.5 + step * 10.0;
    json!({
        "id": id, "author": { "role": role, "name": null, "metadata": {} },
        "create_time": at, "update_time": null, "content": content,
        "status": "finished_successfully", "end_turn": true, "weight": 1.0,
        "metadata": metadata, "recipient": "all", "channel": null
    })
}

fn text(parts: &[&str]) -> Value {
    json!({ "content_type": "text", "parts": parts })
}

/// A conversation with what an export holds: ChatGPT's root without a message, a hidden system
/// message, custom instructions, a question edited (two siblings), an answer regenerated (two
/// siblings, two models), a tool's output, code, reasoning summaries, and a question with two
/// images, one of them in the zip.
fn rivers() -> Value {
    let ids = |n: u32| format!("aaaa{n:04}-0000-4000-8000-000000000000");
    let (root, system, custom, asked, edited, first, second, thoughts, code, tool, reply, pictured) = (
        ids(0),
        ids(1),
        ids(2),
        ids(3),
        ids(4),
        ids(5),
        ids(6),
        ids(7),
        ids(8),
        ids(9),
        ids(10),
        ids(11),
    );
    let mapping: serde_json::Map<String, Value> = [
        node(&root, None, &[&system], Value::Null),
        node(&system, Some(&root), &[&custom], message(&system, "system", text(&[""]), json!({ "is_visually_hidden_from_conversation": true }))),
        node(&custom, Some(&system), &[&asked, &edited], message(&custom, "user", json!({ "content_type": "user_editable_context", "user_profile": "I am a hydrologist.", "user_instructions": "" }), json!({ "is_visually_hidden_from_conversation": true }))),
        node(&asked, Some(&custom), &[&first, &second], message(&asked, "user", text(&["Why do rivers meander?"]), json!({}))),
        node(&edited, Some(&custom), &[], message(&edited, "user", text(&["Why do rivers bend?"]), json!({}))),
        node(&first, Some(&asked), &[], message(&first, "assistant", text(&["Because the outer bank erodes."]), json!({ "model_slug": "gpt-4o" }))),
        node(&second, Some(&asked), &[&thoughts], message(&second, "assistant", text(&["Erosion on the outside of each bend."]), json!({ "model_slug": "gpt-4o-mini" }))),
        node(&thoughts, Some(&second), &[&code], message(&thoughts, "assistant", json!({ "content_type": "thoughts", "thoughts": [{ "summary": "Plan", "content": "…" }] }), json!({}))),
        node(&code, Some(&thoughts), &[&tool], message(&code, "assistant", json!({ "content_type": "code", "language": "python", "text": "print(2 * 21)" }), json!({ "model_slug": "gpt-4o-mini" }))),
        node(&tool, Some(&code), &[&reply], message(&tool, "tool", json!({ "content_type": "execution_output", "text": "42" }), json!({}))),
        node(&reply, Some(&tool), &[&pictured], message(&reply, "assistant", text(&["The sinuosity works out to 42."]), json!({ "model_slug": "gpt-4o-mini" }))),
        node(&pictured, Some(&reply), &[], message(&pictured, "user", json!({
            "content_type": "multimodal_text",
            "parts": [
                { "content_type": "image_asset_pointer", "asset_pointer": "file-service://file-Xq12Ab34Cd56", "size_bytes": 69, "width": 1, "height": 1 },
                { "content_type": "image_asset_pointer", "asset_pointer": "sediment://file_00000000missing", "size_bytes": 69, "width": 1, "height": 1 },
                "What about this bend?"
            ]
        }), json!({}))),
    ]
    .into_iter()
    .collect();
    json!({
        "title": "Meanders", "create_time": 1_720_000_000.0, "update_time": 1_720_000_900.25,
        "mapping": mapping, "moderation_results": [], "current_node": pictured,
        "plugin_ids": null, "conversation_id": RIVERS, "id": RIVERS,
        "default_model_slug": "gpt-4o", "is_archived": false
    })
}

/// A conversation whose two messages name each other as parents (a damaged export), beside one
/// good message.
fn looped() -> Value {
    let mapping: serde_json::Map<String, Value> = [
        node("r", None, &["good"], Value::Null),
        node(
            "good",
            Some("r"),
            &[],
            message("good", "user", text(&["A good question."]), json!({})),
        ),
        node("a", Some("b"), &["b"], message("a", "user", text(&["In a loop."]), json!({}))),
        node("b", Some("a"), &["a"], message("b", "assistant", text(&["Also."]), json!({}))),
    ]
    .into_iter()
    .collect();
    json!({ "title": "Looped", "mapping": mapping, "current_node": "good", "conversation_id": LOOP, "id": LOOP })
}

/// Only what ChatGPT hides: nothing to show.
fn hidden_only() -> Value {
    let mapping: serde_json::Map<String, Value> = [
        node("r", None, &["s"], Value::Null),
        node(
            "s",
            Some("r"),
            &[],
            message(
                "s",
                "system",
                text(&[""]),
                json!({ "is_visually_hidden_from_conversation": true }),
            ),
        ),
    ]
    .into_iter()
    .collect();
    json!({ "title": "Empty", "mapping": mapping, "current_node": "s" })
}

/// A zip as ChatGPT's export is laid out: its JSON files at the root, images beside them.
fn zipped(path: &std::path::Path, files: &[(&str, &[u8])]) {
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in files {
        zip.start_file(*name, options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
}

/// The messages a tree opens on, each with the model that wrote it.
async fn opened(pinloom: &Pinloom, tree: i64) -> Vec<(String, Option<String>)> {
    let view = pinloom.thread_view(tree, None).await.unwrap();
    view.messages.into_iter().map(|m| (m.node.message.text, m.node.model)).collect()
}

async fn fresh() -> (Pinloom, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (Pinloom::open(dir.path().to_owned()).await.unwrap(), dir)
}

#[tokio::test]
async fn a_chatgpt_export_becomes_trees_with_every_branch_and_only_what_is_new_comes_again() {
    let (pinloom, dir) = fresh().await;
    let file = dir.path().join("conversations.json");
    let export = json!([rivers(), looped(), hidden_only()]);
    std::fs::write(&file, serde_json::to_vec_pretty(&export).unwrap()).unwrap();

    let report = pinloom.import_file(file.clone(), |_| {}).await.unwrap();
    let titles: Vec<&str> = report.trees.iter().map(|tree| tree.title.as_str()).collect();
    assert_eq!(titles, ["Meanders", "Looped"]);
    // Asked, edited, two answers, code, the tool's output, the reply, the picture's question.
    assert_eq!(report.trees[0].messages, 8);
    assert_eq!(report.trees[1].messages, 1);
    let notes = report.notes.join("\n");
    for said in [
        "messages ChatGPT hides",
        "custom instructions and the model's memory",
        "reasoning summaries",
        "image file_00000000missing is not in the export",
        "2 messages of \"Looped\" were left out: their parents loop",
        "conversation \"Empty\" has no message to show",
    ] {
        assert!(notes.contains(said), "{said:?} missing from:\n{notes}");
    }

    let tree = report.trees[0].id;
    let text = pinloom.tree_text(tree).await.unwrap();
    for said in [
        "Why do rivers meander?",
        "Why do rivers bend?",
        "Because the outer bank erodes.",
        "Erosion on the outside of each bend.",
        "```python\nprint(2 * 21)\n```",
        "42",
        "What about this bend?",
    ] {
        assert!(text.contains(said.lines().next().unwrap()), "{said:?} missing from:\n{text}");
    }
    // The branch ChatGPT showed is the one the tree opens on, its replies by their models.
    let shown = opened(&pinloom, tree).await;
    let shown: Vec<(&str, Option<&str>)> =
        shown.iter().map(|(text, model)| (text.as_str(), model.as_deref())).collect();
    assert_eq!(shown.first().unwrap().0, "Why do rivers meander?");
    assert_eq!(shown[1], ("Erosion on the outside of each bend.", Some("gpt-4o-mini")));
    assert_eq!(shown.last().unwrap().0, "What about this bend?");
    assert_eq!(
        pinloom.list_trees().await.unwrap().iter().find(|t| t.id == tree).unwrap().global_id,
        RIVERS
    );
    // Nothing in it is a model to send to.
    assert!(pinloom.model_profiles().await.unwrap().iter().all(|p| p.imported_from.is_none()));

    // The same export again: nothing new, and the report says so.
    let again = pinloom.import_file(file, |_| {}).await.unwrap();
    assert!(again.trees.is_empty(), "{:?}", again.trees);
    assert!(again.notes[0].starts_with("2 conversations already here"), "{:?}", again.notes);
    assert_eq!(pinloom.list_trees().await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_tree_opens_where_its_tool_then_the_person_last_was_until_something_is_written() {
    let (pinloom, dir) = fresh().await;
    let file = dir.path().join("conversations.json");
    // ChatGPT showed the first answer, older than the second that regenerated it.
    let mut shown_older = rivers();
    shown_older["current_node"] = json!("aaaa0005-0000-4000-8000-000000000000");
    std::fs::write(&file, serde_json::to_vec(&json!([shown_older])).unwrap()).unwrap();
    let tree = pinloom.import_file(file, |_| {}).await.unwrap().trees[0].id;
    let texts = |shown: Vec<(String, Option<String>)>| {
        shown.into_iter().map(|(text, _)| text).collect::<Vec<_>>()
    };
    assert_eq!(
        texts(opened(&pinloom, tree).await),
        ["Why do rivers meander?", "Because the outer bank erodes."]
    );

    // Switched to the edited question, the tree opens there next time.
    let outline = pinloom.tree_outline(tree, None, 100).await.unwrap();
    let id_of =
        |text: &str| outline.iter().find(|entry| entry.preview.starts_with(text)).unwrap().id;
    pinloom.thread_view(tree, Some(id_of("Why do rivers bend?"))).await.unwrap();
    assert_eq!(texts(opened(&pinloom, tree).await), ["Why do rivers bend?"]);

    // Something written since (from the terminal, a sync) opens instead.
    let after = id_of("The sinuosity works out to 42.");
    pinloom.append_message(tree, Some(after), "And the delta?".into()).await.unwrap();
    assert_eq!(texts(opened(&pinloom, tree).await).last().unwrap(), "And the delta?");
}

#[tokio::test]
async fn a_later_export_adds_the_new_messages_of_a_conversation_imported_before() {
    let (pinloom, dir) = fresh().await;
    let file = dir.path().join("conversations.json");
    std::fs::write(&file, serde_json::to_vec(&json!([rivers()])).unwrap()).unwrap();
    let tree = pinloom.import_file(file.clone(), |_| {}).await.unwrap().trees[0].id;

    // Since, in ChatGPT: the picture answered, and the first question answered a third time.
    let ids = |n: u32| format!("aaaa{n:04}-0000-4000-8000-000000000000");
    let mut later = rivers();
    let mapping = later["mapping"].as_object_mut().unwrap();
    mapping[&ids(11)]["children"] = json!([ids(12)]);
    mapping[&ids(3)]["children"].as_array_mut().unwrap().push(json!(ids(13)));
    for (id, parent, words) in [
        (ids(12), ids(11), "A bend that tight will soon be cut off."),
        (ids(13), ids(3), "Meanders grow by erosion and deposition."),
    ] {
        let (key, value) = node(
            &id,
            Some(&parent),
            &[],
            message(&id, "assistant", text(&[words]), json!({ "model_slug": "gpt-4o" })),
        );
        mapping.insert(key, value);
    }
    later["current_node"] = json!(ids(12));
    std::fs::write(&file, serde_json::to_vec(&json!([later])).unwrap()).unwrap();
    let report = pinloom.import_file(file.clone(), |_| {}).await.unwrap();
    assert!(report.trees.is_empty(), "no new tree: {:?}", report.trees);
    assert_eq!(
        report.notes[0],
        format!("\"Meanders\" was imported before (tree {tree}): 2 new messages were added to it")
    );
    let outline = pinloom.tree_outline(tree, None, 100).await.unwrap();
    assert_eq!(outline.len(), 10, "the 8 messages of before and the 2 new ones, once each");
    let parent_of = |text: &str| {
        let entry = outline.iter().find(|entry| entry.preview.starts_with(text)).unwrap();
        let parent = outline.iter().find(|other| Some(other.id) == entry.parent_id).unwrap();
        parent.preview.clone()
    };
    assert_eq!(parent_of("A bend that tight"), "What about this bend?");
    assert_eq!(parent_of("Meanders grow by erosion"), "Why do rivers meander?");
    // It opens where ChatGPT showed it now.
    let shown = opened(&pinloom, tree).await;
    assert_eq!(shown.last().unwrap().0, "A bend that tight will soon be cut off.");

    // Once more: nothing new.
    let again = pinloom.import_file(file, |_| {}).await.unwrap();
    assert!(again.notes[0].starts_with("1 conversation already here"), "{:?}", again.notes);
    assert_eq!(pinloom.tree_outline(tree, None, 100).await.unwrap().len(), 10);
}

#[tokio::test]
async fn an_export_that_names_a_tree_made_here_adds_nothing_to_it() {
    let (pinloom, dir) = fresh().await;
    let own = pinloom.create_tree("My notes".into(), pinloom_app::json::TreeMode::Dialogue).await;
    let own = own.unwrap();
    pinloom.append_message(own.id, None, "My own question.".into()).await.unwrap();
    // A file that claims the tree: its id is in any export of it, or in a sync folder.
    let mut claim = rivers();
    claim["id"] = json!(own.global_id);
    claim["conversation_id"] = json!(own.global_id);
    let file = dir.path().join("conversations.json");
    std::fs::write(&file, serde_json::to_vec(&json!([claim])).unwrap()).unwrap();
    let report = pinloom.import_file(file, |_| {}).await.unwrap();
    assert!(report.trees.is_empty());
    let said = report.notes.join("\n");
    assert!(said.contains("whose id is one Pinloom made, not its tool's"), "{said}");
    let outline = pinloom.tree_outline(own.id, None, 100).await.unwrap();
    let texts: Vec<&str> = outline.iter().map(|entry| entry.preview.as_str()).collect();
    assert_eq!(texts, ["My own question."], "the tree made here is as it was");
}

#[tokio::test]
async fn the_zip_as_downloaded_brings_the_images_its_messages_point_at() {
    let (pinloom, dir) = fresh().await;
    let file = dir.path().join("export.zip");
    let export = serde_json::to_vec(&json!([rivers()])).unwrap();
    zipped(
        &file,
        &[
            ("user.json", b"{}"),
            ("conversations.json", &export),
            ("file-Xq12Ab34Cd56-bend.png", &png(1, 1)),
            ("chat.html", b"<html></html>"),
        ],
    );
    let report = pinloom.import_file(file, |_| {}).await.unwrap();
    let tree = report.trees[0].id;
    let attachments = pinloom.attachments(tree).await.unwrap();
    assert_eq!(attachments.len(), 1, "{attachments:?}");
    assert_eq!(attachments[0].role, "image");
    assert_eq!(attachments[0].name, "file-Xq12Ab34Cd56-bend.png");
    assert!(attachments[0].node_id.is_some());
    assert!(report.notes.iter().any(|note| note.contains("image file_00000000missing")));
}

#[tokio::test]
async fn a_zip_of_something_else_a_bomb_and_a_cut_file_are_refused_in_words_keeping_what_came() {
    let (pinloom, dir) = fresh().await;
    let refused = |error: anyhow::Error| ApiError::from(error).message;

    let other = dir.path().join("photos.zip");
    zipped(&other, &[("bend.png", &png(1, 1))]);
    let said = refused(pinloom.import_file(other, |_| {}).await.unwrap_err());
    assert!(said.contains("a zip without conversations.json"), "{said}");

    // 20 MB of spaces deflate to a few kilobytes: refused before a byte is inflated.
    let bomb = dir.path().join("bomb.zip");
    let mut spaces = vec![b' '; 20 << 20];
    spaces[0] = b'[';
    *spaces.last_mut().unwrap() = b']';
    zipped(&bomb, &[("conversations.json", &spaces)]);
    let said = refused(pinloom.import_file(bomb, |_| {}).await.unwrap_err());
    assert!(said.contains("more than text compresses"), "{said}");

    // Cut in the middle of its second conversation: the first is imported, and stays.
    let cut = dir.path().join("conversations.json");
    let whole = serde_json::to_string(&json!([rivers(), looped()])).unwrap();
    let at = whole.find("\"Looped\"").unwrap();
    std::fs::write(&cut, &whole[..at]).unwrap();
    let said = refused(pinloom.import_file(cut, |_| {}).await.unwrap_err());
    assert!(
        said.contains("the import stopped: the file is not readable JSON from conversation 2"),
        "{said}"
    );
    assert!(said.contains("the 1 conversations before it were imported and stay"), "{said}");
    let trees = pinloom.list_trees().await.unwrap();
    assert_eq!(trees.iter().map(|t| t.title.as_str()).collect::<Vec<_>>(), ["Meanders"]);
    assert!(trees.iter().all(|t| t.mode == TreeMode::Dialogue));
}

/// A Claude conversation: a question, an answer with its thinking, a retry beside it (the same
/// parent), a follow-up on the retry carrying a file's extracted text, in a project.
fn claude_conversation() -> Value {
    let id = |n: u32| format!("cccc{n:04}-0000-4000-8000-000000000000");
    let block = |kind: &str, said: &str| json!({ "type": kind, kind: said, "citations": [] });
    json!({
        "uuid": "9b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e", "name": "Deltas",
        "created_at": "2024-07-01T10:00:00.000000Z", "updated_at": "2024-07-01T10:30:00.000000Z",
        "account": { "uuid": "00000000-1111-4222-8333-444444444444" },
        "project_uuid": "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b",
        "chat_messages": [
            { "uuid": id(1), "text": "How do deltas form?", "content": [block("text", "How do deltas form?")],
              "sender": "human", "created_at": "2024-07-01T10:00:00Z", "updated_at": "2024-07-01T10:00:00Z",
              "attachments": [], "files": [], "parent_message_uuid": "00000000-0000-4000-8000-000000000000" },
            { "uuid": id(2), "text": "", "content": [block("thinking", "Sediment, slowing water…"), block("text", "Where a river slows at the sea.")],
              "sender": "assistant", "created_at": "2024-07-01T10:00:05Z", "updated_at": "2024-07-01T10:00:05Z",
              "attachments": [], "files": [], "parent_message_uuid": id(1) },
            { "uuid": id(3), "text": "", "content": [block("text", "Sediment drops as the current slows.")],
              "sender": "assistant", "created_at": "2024-07-01T10:01:00Z", "updated_at": "2024-07-01T10:01:00Z",
              "attachments": [], "files": [], "parent_message_uuid": id(1) },
            { "uuid": id(4), "text": "What does my survey say?", "content": [block("text", "What does my survey say?")],
              "sender": "human", "created_at": "2024-07-01T10:02:00Z", "updated_at": "2024-07-01T10:02:00Z",
              "attachments": [{ "file_name": "survey.txt", "file_size": 31, "file_type": "txt", "extracted_content": "Mississippi delta, lobe 7." }],
              "files": [{ "file_name": "survey.txt" }], "parent_message_uuid": id(3) }
        ]
    })
}

#[tokio::test]
async fn a_claude_export_keeps_its_retries_files_and_project_instructions() {
    let (pinloom, dir) = fresh().await;
    let file = dir.path().join("claude-export.zip");
    let conversations = serde_json::to_vec(&json!([claude_conversation()])).unwrap();
    let projects = serde_json::to_vec(&json!([{
        "uuid": "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b", "name": "Rivers",
        "prompt_template": "Answer as a geomorphologist.", "docs": []
    }]))
    .unwrap();
    zipped(
        &file,
        &[
            ("conversations.json", &conversations),
            ("projects.json", &projects),
            ("users.json", b"[]"),
        ],
    );
    let report = pinloom.import_file(file, |_| {}).await.unwrap();
    assert_eq!(report.trees.len(), 1);
    assert_eq!(report.trees[0].title, "Deltas");
    assert_eq!(report.trees[0].messages, 4);
    assert!(
        report.notes.iter().any(|note| note.contains("Claude's thinking")),
        "{:?}",
        report.notes
    );
    let tree = report.trees[0].id;

    // The retry is the branch that opens (Claude's last message is on it), the first answer beside it.
    let view = pinloom.thread_view(tree, None).await.unwrap();
    let shown: Vec<&str> = view.messages.iter().map(|m| m.node.message.text.as_str()).collect();
    assert_eq!(
        shown,
        ["How do deltas form?", "Sediment drops as the current slows.", "What does my survey say?"]
    );
    assert!(pinloom.tree_text(tree).await.unwrap().contains("Where a river slows at the sea."));
    let attachments = pinloom.attachments(tree).await.unwrap();
    assert_eq!(attachments.len(), 1);
    assert_eq!(
        (attachments[0].role.as_str(), attachments[0].name.as_str()),
        ("file", "survey.txt")
    );
    let context = pinloom.tree_context(tree).await.unwrap();
    assert_eq!(context.system_context, "Answer as a geomorphologist.");
}

#[tokio::test]
async fn an_open_webui_export_keeps_its_regenerations_models_and_images() {
    let (pinloom, dir) = fresh().await;
    let image = format!(
        "data:image/png;base64,{}",
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, png(1, 1))
    );
    let id = |n: u32| format!("dddd{n:04}-0000-4000-8000-000000000000");
    let chat = json!({
        "id": "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "user_id": "u", "title": "Floodplains",
        "chat": {
            "id": "", "title": "Floodplains", "models": ["llama3.1:8b"], "params": {},
            "history": {
                "messages": {
                    id(1): { "id": id(1), "parentId": null, "childrenIds": [id(2), id(3)], "role": "user",
                             "content": "What is this floodplain?", "timestamp": 1_720_000_000,
                             "files": [{ "type": "image", "url": image }] },
                    id(2): { "id": id(2), "parentId": id(1), "childrenIds": [], "role": "assistant",
                             "content": "A wide valley floor.", "model": "llama3.1:8b", "timestamp": 1_720_000_010 },
                    id(3): { "id": id(3), "parentId": id(1), "childrenIds": [], "role": "assistant",
                             "content": "Land the river floods.", "model": "qwen2.5:7b", "timestamp": 1_720_000_020 }
                },
                "currentId": id(3)
            },
            "messages": [], "timestamp": 1_720_000_000_000_u64
        },
        "updated_at": 1_720_000_030, "created_at": 1_720_000_000, "archived": false, "pinned": false
    });
    let file = dir.path().join("chat-export-1720000030.json");
    std::fs::write(&file, serde_json::to_vec(&json!([chat])).unwrap()).unwrap();
    let report = pinloom.import_file(file, |_| {}).await.unwrap();
    assert_eq!(report.trees.len(), 1, "{:?}", report.notes);
    assert_eq!((report.trees[0].title.as_str(), report.trees[0].messages), ("Floodplains", 3));
    let tree = report.trees[0].id;
    // The answer Open WebUI showed (the newest) opens, by its model; the other stands beside it.
    let shown = opened(&pinloom, tree).await;
    let shown: Vec<(&str, Option<&str>)> =
        shown.iter().map(|(text, model)| (text.as_str(), model.as_deref())).collect();
    assert_eq!(
        shown,
        [("What is this floodplain?", None), ("Land the river floods.", Some("qwen2.5:7b"))]
    );
    assert!(pinloom.tree_text(tree).await.unwrap().contains("A wide valley floor."));
    let attachments = pinloom.attachments(tree).await.unwrap();
    assert_eq!(attachments.iter().map(|a| a.role.as_str()).collect::<Vec<_>>(), ["image"]);
}

/// `llm`'s logs.db as its migrations leave it (the columns Pinloom reads, and others it does
/// not), with one conversation of two exchanges and a system prompt.
fn llm_log(path: &std::path::Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE conversations (id TEXT PRIMARY KEY, name TEXT, model TEXT);
         CREATE TABLE responses (id TEXT PRIMARY KEY, model TEXT, prompt TEXT, system TEXT,
             prompt_json TEXT, options_json TEXT, response TEXT, response_json TEXT,
             conversation_id TEXT REFERENCES conversations(id), duration_ms INTEGER,
             datetime_utc TEXT, input_tokens INTEGER, output_tokens INTEGER, token_details TEXT);
         INSERT INTO conversations VALUES ('01J0ABCDEFGHJKMNPQRSTVWXYZ', 'Levees', 'gpt-4o-mini');
         INSERT INTO responses VALUES ('01J0ABCDEFGHJKMNPQRSTVWXY0', 'gpt-4o-mini', 'What is a levee?',
             'Answer briefly.', NULL, '{\"temperature\": 0.2}', 'A bank that holds a river in.', NULL,
             '01J0ABCDEFGHJKMNPQRSTVWXYZ', 900, '2024-07-01T10:00:00.123456', 12, 9, NULL);
         INSERT INTO responses VALUES ('01J0ABCDEFGHJKMNPQRSTVWXY1', 'gpt-4o-mini', 'Natural ones too?',
             'Answer briefly.', NULL, '{}', 'Yes: floods build them.', NULL,
             '01J0ABCDEFGHJKMNPQRSTVWXYZ', 700, '2024-07-01T10:01:00.000000', 30, 6, NULL);",
    )
    .unwrap();
}

#[tokio::test]
async fn an_llm_log_becomes_trees_of_its_conversations_once() {
    let (pinloom, dir) = fresh().await;
    let file = dir.path().join("logs.db");
    llm_log(&file);
    let report = pinloom.import_file(file.clone(), |_| {}).await.unwrap();
    assert_eq!(report.trees.len(), 1, "{:?}", report.notes);
    assert_eq!((report.trees[0].title.as_str(), report.trees[0].messages), ("Levees", 4));
    let tree = report.trees[0].id;
    let shown = opened(&pinloom, tree).await;
    let texts: Vec<&str> = shown.iter().map(|(text, _)| text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "What is a levee?",
            "A bank that holds a river in.",
            "Natural ones too?",
            "Yes: floods build them."
        ]
    );
    assert_eq!(shown[1].1.as_deref(), Some("gpt-4o-mini"));
    assert_eq!(pinloom.tree_context(tree).await.unwrap().system_context, "Answer briefly.");
    // As an earlier Pinloom left it: the questions under ids of its own.
    rusqlite::Connection::open(dir.path().join(pinloom_app::DATABASE_FILE_NAME))
        .unwrap()
        .execute_batch(
            "UPDATE nodes SET gid = '01900000-0000-7000-8000-0000000000' || printf('%02d', id)
             WHERE author = 'human'",
        )
        .unwrap();
    // The same log again brings nothing new.
    let again = pinloom.import_file(file.clone(), |_| {}).await.unwrap();
    assert!(again.trees.is_empty());
    assert!(again.notes[0].starts_with("1 conversation already here"), "{:?}", again.notes);
    // Continued with `llm -c` since: the new exchange comes in after the last.
    rusqlite::Connection::open(&file)
        .unwrap()
        .execute_batch(
            "INSERT INTO responses VALUES ('01J0ABCDEFGHJKMNPQRSTVWXY2', 'gpt-4o-mini',
                 'And artificial ones?', NULL, NULL, '{}', 'Built of earth, higher.', NULL,
                 '01J0ABCDEFGHJKMNPQRSTVWXYZ', 500, '2024-07-02T09:00:00.000000', 40, 5, NULL);",
        )
        .unwrap();
    let later = pinloom.import_file(file, |_| {}).await.unwrap();
    assert_eq!(
        later.notes[0],
        format!("\"Levees\" was imported before (tree {tree}): 2 new messages were added to it")
    );
    let shown = opened(&pinloom, tree).await;
    let texts: Vec<&str> = shown.iter().map(|(text, _)| text.as_str()).collect();
    assert_eq!(
        texts[2..],
        [
            "Natural ones too?",
            "Yes: floods build them.",
            "And artificial ones?",
            "Built of earth, higher."
        ]
    );

    // A SQLite file that is not llm's is refused in words.
    let other = dir.path().join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE notes (text TEXT);")
        .unwrap();
    let said = ApiError::from(pinloom.import_file(other, |_| {}).await.unwrap_err()).message;
    assert!(said.contains("not llm's log"), "{said}");

    // One whose `responses` is a view (which could be made to loop, or to read another table)
    // is refused too, before anything is read from it.
    let disguised = dir.path().join("disguised.db");
    rusqlite::Connection::open(&disguised)
        .unwrap()
        .execute_batch(
            "CREATE TABLE conversations (id TEXT PRIMARY KEY, name TEXT, model TEXT);
             INSERT INTO conversations VALUES ('01J0ABCDEFGHJKMNPQRSTVWXYA', 'Loop', NULL);
             CREATE VIEW responses AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)
                 SELECT i AS id, NULL AS conversation_id FROM n;",
        )
        .unwrap();
    let said = ApiError::from(pinloom.import_file(disguised, |_| {}).await.unwrap_err()).message;
    assert!(said.contains("not llm's log"), "{said}");
    assert_eq!(pinloom.list_trees().await.unwrap().len(), 1);
}

#[tokio::test]
async fn an_imported_export_goes_out_as_open_loom_and_comes_back_the_same() {
    let (pinloom, dir) = fresh().await;
    let file = dir.path().join("export.zip");
    let export = serde_json::to_vec(&json!([rivers()])).unwrap();
    zipped(&file, &[("conversations.json", &export), ("file-Xq12Ab34Cd56-bend.png", &png(1, 1))]);
    let tree = pinloom.import_file(file, |_| {}).await.unwrap().trees[0].id;
    let document = pinloom.export_open_loom(vec![tree], Default::default()).await.unwrap();

    let (again, _dir) = fresh().await;
    let back = again.import_document(document, "round trip".into()).await.unwrap().trees[0].id;
    assert_eq!(again.tree_text(back).await.unwrap(), pinloom.tree_text(tree).await.unwrap());
    assert_eq!(opened(&again, back).await, opened(&pinloom, tree).await);
    let attached = |list: Vec<pinloom_app::json::AttachmentView>| {
        list.into_iter().map(|a| (a.role, a.name, a.bytes)).collect::<Vec<_>>()
    };
    assert_eq!(
        attached(again.attachments(back).await.unwrap()),
        attached(pinloom.attachments(tree).await.unwrap())
    );
    let global = |trees: Vec<pinloom_app::json::TreeSummary>| trees[0].global_id.clone();
    assert_eq!(global(again.list_trees().await.unwrap()), RIVERS);
}
