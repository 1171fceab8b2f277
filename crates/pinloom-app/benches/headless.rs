//! The headless paths on a large tree, from a real SQLite file: Open Loom export and import of a
//! 10,000-message tree (with 50 pinned threads and their summaries), and ThreadMind's
//! `context_get` as an agent calls it at the start of a session. Each is set beside a baseline
//! run in the same process: for export, reading the same nodes and writing them as bare JSON; for
//! import, the store appending the same messages in one transaction, with no document to read;
//! for `context_get`, reading the folder's active thread. Numbers go to benches/README.md; there
//! are no timing asserts.

#![allow(clippy::unwrap_used)] // a benchmark's setup failing should stop it loudly

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use pinloom_app::{ExportOptions, Pinloom};
use pinloom_engine::tokens::Tokenizer;
use pinloom_store::{
    Author, NewNode, NodeId, PinId, Store, SummaryKey, SummaryWrite, TreeMode, Workspace,
};

mod common;
use common::message;

const MESSAGES: usize = 10_000;
const PINS: usize = 50;
const FOLDER: &str = "/bench/project";

fn counted(
    tree: pinloom_store::TreeId,
    parent: Option<NodeId>,
    author: Author,
    text: String,
    at: i64,
) -> NewNode {
    let mut node = NewNode::text(tree, parent, author, text.clone(), at);
    node.token_counts = vec![
        ("o200k".into(), Tokenizer::O200k.count(&text)),
        ("cl100k".into(), Tokenizer::Cl100k.count(&text)),
    ];
    node
}

/// One 10,000-message thread, a pin on every 200th message with a question and a summary of the
/// root thread up to it, and the last pin active in the bench's folder.
fn build(path: &std::path::Path) -> (i64, PinId) {
    let store = Store::open(path).unwrap();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    let mut parent = None;
    let mut ids = Vec::with_capacity(MESSAGES);
    for index in 0..MESSAGES {
        let author = if index % 2 == 0 { Author::Human } else { Author::Model };
        let id = store
            .append_node(&counted(tree, parent, author, message(index), index as i64))
            .unwrap()
            .id;
        ids.push(id);
        parent = Some(id);
    }
    let mut last = None;
    for pin in 0..PINS {
        let anchor = ids[pin * (MESSAGES / PINS) + 1];
        let opened =
            store.open_thread(tree, None, Some(anchor), &format!("Bend {pin}"), 1).unwrap();
        let mut question = counted(tree, Some(anchor), Author::Human, "Why here?".into(), 2);
        question.pin_id = Some(opened.id);
        store.append_node(&question).unwrap();
        let key = SummaryKey {
            fitted_from: None,
            tree_id: tree,
            pin_id: None,
            path_end: Some(anchor),
            budget: Some(800),
            summarizer: "W".into(),
        };
        store.set_summary(&key, &SummaryWrite::model(&message(pin), 4_000, 1_000, 3)).unwrap();
        last = Some(opened.id);
    }
    let pin = last.unwrap();
    store.set_workspace(FOLDER, Workspace { tree_id: Some(tree), pin_id: Some(pin) }, 4).unwrap();
    (tree.0, pin)
}

fn headless(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(pinloom_app::DATABASE_FILE_NAME);
    let (tree, _) = build(&path);
    let pinloom = runtime.block_on(Pinloom::open(dir.path().to_owned())).unwrap();
    let store = Store::open(&path).unwrap();
    let document =
        runtime.block_on(pinloom.export_open_loom(vec![tree], ExportOptions::default())).unwrap();
    println!(
        "Open Loom document of {MESSAGES} messages and {PINS} threads: {} bytes",
        document.len()
    );

    let mut group = c.benchmark_group("headless");
    group.sample_size(10);
    group.bench_function("export 10,000-message tree as Open Loom", |b| {
        b.iter(|| {
            runtime
                .block_on(pinloom.export_open_loom(vec![tree], ExportOptions::default()))
                .unwrap()
        })
    });
    group.bench_function("baseline: read the same nodes, write bare JSON", |b| {
        b.iter(|| {
            let nodes = store.tree_nodes(pinloom_store::TreeId(tree)).unwrap();
            let bare: Vec<serde_json::Value> = nodes
                .iter()
                .map(|node| serde_json::json!({ "id": node.id.0, "parent": node.parent_id.map(|p| p.0), "text": node.text }))
                .collect();
            black_box(serde_json::to_string_pretty(&bare).unwrap())
        })
    });
    group.bench_function("import that document into a new file", |b| {
        b.iter_batched(
            || {
                let target = tempfile::tempdir().unwrap();
                let fresh = runtime.block_on(Pinloom::open(target.path().to_owned())).unwrap();
                (target, fresh)
            },
            |(target, fresh)| {
                runtime.block_on(fresh.import_document(document.clone(), String::new())).unwrap();
                drop(target);
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("baseline: append the same messages in one transaction", |b| {
        b.iter_batched(
            || {
                let target = tempfile::tempdir().unwrap();
                let fresh = Store::open(&target.path().join("b.sqlite3")).unwrap();
                let tree = fresh.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
                (target, fresh, tree)
            },
            |(target, fresh, tree)| {
                // Counted as the import counts them, with both exact tokenizers. In a new file
                // the nodes get ids 1, 2, 3, …, so each can name the one before it.
                let batch: Vec<NewNode> = (0..MESSAGES)
                    .map(|index| {
                        let parent = (index > 0).then_some(NodeId(index as i64));
                        counted(tree, parent, Author::Model, message(index), index as i64)
                    })
                    .collect();
                fresh.append_nodes(&batch).unwrap();
                drop(target);
            },
            BatchSize::PerIteration,
        )
    });
    let session = pinloom.threadmind_session(FOLDER);
    group.sample_size(50);
    group.bench_function("context_get of a pin on a 10,000-message tree", |b| {
        b.iter(|| black_box(runtime.block_on(session.context_get()).unwrap()))
    });
    group.bench_function("baseline: read the folder's active thread", |b| {
        b.iter(|| black_box(store.workspace(FOLDER).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, headless);
criterion_main!(benches);
