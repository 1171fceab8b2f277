//! Imports and exports through files, as the window's dialogs and drops do them: progress that
//! reaches the end, exports that replace their file only when whole, and files that are not
//! documents refused with what to do, writing nothing.

use std::sync::{Arc, Mutex};

use pinloom_app::json::{ExportFormat, ExportRequest, TransferProgress};
use pinloom_app::{ApiError, ErrorCode, ExportOptions, MAX_IMPORT_BYTES, Pinloom};
use serde_json::{Value, json};

async fn fresh() -> (Pinloom, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (Pinloom::open(dir.path().to_owned()).await.unwrap(), dir)
}

/// An Open Loom document holding one chain of `length` messages, alternating person and model.
fn chain_document(length: usize) -> String {
    let id = |index: usize| format!("m{index:05}");
    let mut nodes = serde_json::Map::new();
    let mut edges = Vec::new();
    for index in 0..length {
        let role = if index % 2 == 0 { "human" } else { "model" };
        nodes.insert(
            id(index),
            json!({
                "id": id(index),
                "content": [{ "type": "text", "text": format!("Message {index} of the chain.") }],
                "author": { "role": role },
            }),
        );
        if index > 0 {
            edges.push(json!({
                "type": "continuation",
                "sources": [{ "nodeId": id(index - 1) }],
                "targetNodeId": id(index),
            }));
        }
    }
    json!({
        "format": "open-loom",
        "version": "2.0",
        "trees": [{ "id": "t1", "rootNodeIds": [id(0)], "nodes": nodes, "edges": edges }],
    })
    .to_string()
}

/// A progress callback and what it heard.
fn recorder() -> (impl FnMut(TransferProgress) + Send + 'static, Arc<Mutex<Vec<TransferProgress>>>)
{
    let heard = Arc::new(Mutex::new(Vec::new()));
    let into = heard.clone();
    (move |step| into.lock().unwrap().push(step), heard)
}

fn export_request(tree_id: i64, format: ExportFormat, path: &std::path::Path) -> ExportRequest {
    ExportRequest {
        tree_id,
        format,
        path: path.to_string_lossy().into_owned(),
        without_system_prompts: false,
        without_raw_responses: false,
    }
}

#[tokio::test]
async fn a_file_imports_with_progress_to_the_last_message_and_exports_back_whole() {
    let (pinloom, dir) = fresh().await;
    let file = dir.path().join("long chain.json");
    std::fs::write(&file, chain_document(1_234)).unwrap();

    let (progress, heard) = recorder();
    let report = pinloom.import_file(file.clone(), progress).await.unwrap();
    assert_eq!(report.trees.len(), 1);
    assert_eq!(
        (report.trees[0].title.as_str(), report.trees[0].messages),
        ("long chain", 1_234),
        "an untitled tree is named after its file"
    );
    let heard = heard.lock().unwrap().clone();
    let size = std::fs::metadata(&file).unwrap().len();
    assert_eq!(heard.first(), Some(&TransferProgress::Reading { bytes: 0, total: size }));
    let checked = heard.iter().position(|step| *step == TransferProgress::Checked { total: 1_234 });
    let checked = checked.unwrap_or_else(|| panic!("no Checked step in {heard:?}"));
    assert_eq!(heard[checked - 1], TransferProgress::Reading { bytes: size, total: size });
    let written: Vec<u64> = heard[checked + 1..]
        .iter()
        .map(|step| match step {
            TransferProgress::Writing { messages, total: 1_234 } => *messages,
            other => panic!("after the check only writing is reported, found {other:?}"),
        })
        .collect();
    assert_eq!(written, [500, 1_000, 1_234], "every 500 messages and at the end");

    let tree = report.trees[0].id;
    let exported = dir.path().join("out.json");
    let (progress, heard) = recorder();
    let done = pinloom
        .export_file(export_request(tree, ExportFormat::OpenLoom, &exported), progress)
        .await
        .unwrap();
    let text = std::fs::read_to_string(&exported).unwrap();
    assert_eq!((done.bytes, done.messages), (text.len() as u64, 1_234));
    let direct = pinloom.export_open_loom(vec![tree], ExportOptions::default()).await.unwrap();
    let timeless = |text: &str| {
        let mut value: Value = serde_json::from_str(text).unwrap();
        value.as_object_mut().unwrap().remove("exportedAt");
        value
    };
    assert_eq!(timeless(&text), timeless(&direct), "the file holds the same document");
    let heard = heard.lock().unwrap().clone();
    assert_eq!(heard.first(), Some(&TransferProgress::Collecting { messages: 0, total: 1_234 }));
    assert!(heard.contains(&TransferProgress::Collecting { messages: 1_000, total: 1_234 }));
    assert_eq!(heard.last(), Some(&TransferProgress::Saving { bytes: text.len() as u64 }));

    let markdown = dir.path().join("out.md");
    let (progress, _) = recorder();
    pinloom
        .export_file(export_request(tree, ExportFormat::Markdown, &markdown), progress)
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(&markdown).unwrap(),
        pinloom.tree_markdown(tree).await.unwrap()
    );
    assert_eq!(partial_files(dir.path()), Vec::<String>::new());
}

/// The files an export writes before renaming them, left in `folder`.
fn partial_files(folder: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".pinloom-partial"))
        .collect()
}

#[tokio::test]
async fn a_failed_export_leaves_the_file_it_was_to_replace_as_it_was() {
    let (pinloom, dir) = fresh().await;
    let file = dir.path().join("kept.json");
    std::fs::write(&file, "the earlier export").unwrap();
    let (progress, _) = recorder();
    let missing = pinloom
        .export_file(export_request(404, ExportFormat::OpenLoom, &file), progress)
        .await
        .unwrap_err();
    assert_eq!(ApiError::from(missing).code, ErrorCode::NotFound);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "the earlier export");

    let tree = pinloom.create_tree("Kept".into(), pinloom_app::json::TreeMode::Dialogue).await;
    let tree = tree.unwrap().id;
    let nowhere = dir.path().join("no such folder").join("out.json");
    let (progress, _) = recorder();
    let error = pinloom
        .export_file(export_request(tree, ExportFormat::Markdown, &nowhere), progress)
        .await
        .unwrap_err();
    let error = ApiError::from(error);
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert!(
        error.message.contains("cannot write") && error.message.contains("out.json"),
        "{error}"
    );
    let (progress, _) = recorder();
    let folder = pinloom
        .export_file(export_request(tree, ExportFormat::Markdown, dir.path()), progress)
        .await
        .unwrap_err();
    assert!(ApiError::from(folder).message.contains("is a folder"));
    assert_eq!(partial_files(dir.path()), Vec::<String>::new());
}

#[tokio::test]
async fn files_that_are_not_documents_are_refused_with_what_to_do_and_nothing_is_written() {
    let (pinloom, dir) = fresh().await;
    let refused = |path: std::path::PathBuf| {
        let pinloom = pinloom.clone();
        async move {
            let (progress, _) = recorder();
            let error = ApiError::from(pinloom.import_file(path, progress).await.unwrap_err());
            assert_eq!(error.code, ErrorCode::InvalidInput, "{error}");
            error.message
        }
    };
    let missing = refused(dir.path().join("missing.json")).await;
    assert!(missing.starts_with("cannot read") && missing.contains("missing.json"), "{missing}");
    let folder = refused(dir.path().to_owned()).await;
    assert!(folder.contains("it is not a file"), "{folder}");
    let device = refused("/dev/zero".into()).await;
    assert!(device.contains("it is not a file"), "{device}");

    // Larger than an import reads: refused from its size, before a byte is read.
    let huge = dir.path().join("huge.json");
    std::fs::File::create(&huge).unwrap().set_len(MAX_IMPORT_BYTES + 1).unwrap();
    let size = refused(huge).await;
    assert!(size.contains("more than the 512 MB an import reads"), "{size}");

    let binary = dir.path().join("picture.json");
    std::fs::write(&binary, [b'{', 0xff, 0xfe, b'}']).unwrap();
    let binary = refused(binary).await;
    assert!(binary.contains("not UTF-8 text (byte 1 is not)"), "{binary}");

    let text = dir.path().join("notes.json");
    std::fs::write(&text, "[1, 2, 3]").unwrap();
    let text = refused(text).await;
    assert!(text.contains("neither an Open Loom document"), "{text}");

    assert!(pinloom.list_trees().await.unwrap().is_empty(), "nothing was written");
}
