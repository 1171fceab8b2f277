//! W1 from the database (issue 6): plan a send at the end of a 10,000-message path with a 128k
//! budget, through the application layer, from a real SQLite file, retrieval search included
//! (the prompt shares two rare words with about 200 earlier messages). Warm: the path is in memory
//! from the previous send. Cold: it is read, decoded and its stored counts looked up from the
//! file. The baseline, run in the same process on the same file, is what a layer without cached
//! paths or counts would do: read the path and re-tokenize it newest first until the budget is
//! spent. Numbers go to benches/README.md; there are no timing asserts.

#![allow(clippy::unwrap_used)] // a benchmark's setup failing should stop it loudly

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use pinloom_app::Pinloom;
use pinloom_app::json::ModelProfile;
use pinloom_engine::tokens::Tokenizer;
use pinloom_store::{Author, NewNode, NodeId, Store, TreeMode};

const MESSAGES: usize = 10_000;
const MESSAGE_BYTES: usize = 400;
const BUDGET: u32 = 128_000;

/// Deterministic prose of about `bytes` bytes: sentences from a small vocabulary.
fn message(seed: usize, bytes: usize) -> String {
    const VOCABULARY: [&str; 24] = [
        "rivers", "carry", "silt", "past", "the", "bend", "where", "water", "slows", "and",
        "banks", "erode", "over", "years", "a", "meander", "grows", "until", "it", "cuts",
        "through", "leaving", "an", "oxbow",
    ];
    let mut state = seed as u64 * 2_654_435_761 + 1;
    let mut text = String::with_capacity(bytes + 16);
    // Rarer words, in about one message in a hundred, and in the last (the prompt), so the
    // retrieval search has real matches to rank, as it would in a person's own vocabulary.
    if seed.is_multiple_of(97) || seed == MESSAGES - 1 {
        text.push_str("thalweg ");
    }
    if seed.is_multiple_of(89) || seed == MESSAGES - 1 {
        text.push_str("sinuosity ");
    }
    while text.len() < bytes {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        text.push_str(VOCABULARY[(state % VOCABULARY.len() as u64) as usize]);
        text.push(if state.is_multiple_of(11) { '.' } else { ' ' });
    }
    text
}

/// A database holding one 10,000-message thread, written as the app writes (counts included).
fn build(dir: &std::path::Path) -> i64 {
    let store = Store::open(&dir.join(pinloom_app::DATABASE_FILE_NAME)).unwrap();
    let tree = store.create_tree("W1", TreeMode::Dialogue, 0).unwrap().id;
    let mut parent: Option<NodeId> = None;
    for index in 0..MESSAGES {
        let author = if index % 2 == 0 { Author::Human } else { Author::Model };
        let text = message(index, MESSAGE_BYTES);
        let mut node = NewNode::text(tree, parent, author, text.clone(), index as i64);
        node.token_counts = vec![
            ("o200k".into(), Tokenizer::O200k.count(&text)),
            ("cl100k".into(), Tokenizer::Cl100k.count(&text)),
        ];
        parent = Some(store.append_node(&node).unwrap().id);
    }
    parent.unwrap().0
}

fn profile() -> ModelProfile {
    ModelProfile::new("W1", "openai", "gpt-4o", i64::from(BUDGET) + 4_096, 4_096, "o200k")
}

/// The baseline: read the path and count it newest first with the exact tokenizer until the
/// budget is spent.
fn naive(store: &Store, end: i64) -> usize {
    let path = store.ancestor_path(NodeId(end)).unwrap();
    let mut used = 0_u64;
    let mut kept = 0;
    for node in path.iter().rev() {
        let tokens = Tokenizer::O200k.count(&node.text) + 4;
        if used + tokens > u64::from(BUDGET) {
            break;
        }
        used += tokens;
        kept += 1;
    }
    kept
}

fn w1_from_database(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let end = build(dir.path());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let pinloom = runtime.block_on(Pinloom::open(dir.path().to_owned())).unwrap();
    runtime.block_on(pinloom.save_model_profile(profile())).unwrap();
    let store = Store::open(&dir.path().join(pinloom_app::DATABASE_FILE_NAME)).unwrap();
    let _ = Tokenizer::O200k.count("warm up"); // the dictionary loads once, outside the timing

    let mut group = c.benchmark_group("W1_from_database_10k_messages_128k");
    group.bench_function("warm_path_in_memory", |b| {
        b.iter(|| {
            black_box(runtime.block_on(pinloom.plan_for_benchmark(end, "W1", false)).unwrap())
        })
    });
    group.bench_function("cold_path_read_from_file", |b| {
        b.iter(|| black_box(runtime.block_on(pinloom.plan_for_benchmark(end, "W1", true)).unwrap()))
    });
    group.sample_size(20);
    group.bench_function("baseline_read_and_retokenize", |b| {
        b.iter(|| black_box(naive(&store, end)))
    });
    group.finish();
}

criterion_group!(benches, w1_from_database);
criterion_main!(benches);
