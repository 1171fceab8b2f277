//! A 100,000-message tree end to end, as a person meets it: an Open Loom file imported through
//! `import_file`, the tree opened as the window opens it (its summary, the newest thread, the
//! plan of that thread's last message), a send planned at the deepest message from a cold start,
//! and the tree exported to a file through `export_file`. Each step is timed in one run, beside
//! its same-run baseline: for the import, the store appending the same messages (counted) in one
//! transaction; for the export, reading the same nodes and writing them as bare JSON to a file
//! synced to disk, as the export's file is.
//!
//! `cargo bench -p pinloom-app --bench large_tree` (set `PINLOOM_LARGE_TREE_MESSAGES` for
//! another size). Figures go to benches/README.md; there are no timing asserts.

#![allow(clippy::unwrap_used)] // a benchmark's setup failing should stop it loudly

use std::time::{Duration, Instant};

use pinloom_app::Pinloom;
use pinloom_app::json::{ExportFormat, ExportRequest, ModelProfile};
use pinloom_engine::tokens::Tokenizer;
use pinloom_store::{Author, NewNode, NodeId, Store, TreeMode};
use serde_json::{Value, json};

mod common;
use common::message;

/// The main line's length: the deepest message is this many messages down.
const SPINE: usize = 10_000;
/// Each branch off the main line holds this many messages.
const BRANCH: usize = 100;

/// The tree's shape: `(parent, author)` of each message in order; a main line of [`SPINE`]
/// messages, then branches of [`BRANCH`] messages hanging off it evenly until `total`.
fn shape(total: usize) -> Vec<Option<usize>> {
    let mut parents: Vec<Option<usize>> =
        (0..SPINE.min(total)).map(|index| index.checked_sub(1)).collect();
    let branches = total.saturating_sub(SPINE).div_ceil(BRANCH);
    for branch in 0..branches {
        let hangs_off = (branch * SPINE / branches.max(1)).min(SPINE - 1);
        let mut parent = hangs_off;
        for _ in 0..BRANCH {
            if parents.len() == total {
                break;
            }
            parents.push(Some(parent));
            parent = parents.len() - 1;
        }
    }
    parents
}

/// The Open Loom document of the tree. The main line's last message is the newest, so a cold
/// open lands on the deepest thread.
fn document(parents: &[Option<usize>]) -> String {
    let id = |index: usize| format!("m{index}");
    let mut nodes = serde_json::Map::new();
    let mut edges = Vec::new();
    let newest = SPINE.min(parents.len()) - 1;
    for (index, parent) in parents.iter().enumerate() {
        let second = if index == newest { parents.len() } else { index };
        nodes.insert(
            id(index),
            json!({
                "id": id(index),
                "content": [{ "type": "text", "text": message(index) }],
                "author": { "role": if index % 2 == 0 { "human" } else { "model" } },
                "createdAt": pinloom_time(second),
            }),
        );
        if let Some(parent) = parent {
            edges.push(json!({
                "type": "continuation",
                "sources": [{ "nodeId": id(*parent) }],
                "targetNodeId": id(index),
            }));
        }
    }
    let document = json!({
        "format": "open-loom",
        "version": "2.0",
        "trees": [{
            "id": "t1",
            "title": "Rivers, at length",
            "rootNodeIds": [id(0)],
            "nodes": Value::Object(nodes),
            "edges": edges,
        }],
    });
    serde_json::to_string(&document).unwrap()
}

/// `second` seconds after the start of 2026 (up to four weeks), as Open Loom writes times.
fn pinloom_time(second: usize) -> String {
    let (days, rest) = (second / 86_400, second % 86_400);
    format!(
        "2026-01-{:02}T{:02}:{:02}:{:02}.000Z",
        1 + days,
        rest / 3_600,
        rest / 60 % 60,
        rest % 60
    )
}

/// The median time of `runs` calls of `run`.
fn median_of(runs: usize, mut run: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            run();
            started.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn ms(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1000.0)
}

fn main() {
    // `cargo bench` passes `--bench`; a filter naming another benchmark skips this one.
    if std::env::args().skip(1).any(|arg| !arg.starts_with('-') && !"large_tree".contains(&arg)) {
        return;
    }
    let total: usize = std::env::var("PINLOOM_LARGE_TREE_MESSAGES")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(100_000);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let work = tempfile::tempdir().unwrap();
    let parents = shape(total);
    let file = work.path().join("rivers.json");
    std::fs::write(&file, document(&parents)).unwrap();
    let bytes = std::fs::metadata(&file).unwrap().len();
    println!("A tree of {total} messages (main line {SPINE} deep), {bytes} bytes of Open Loom");
    let _ = Tokenizer::O200k.count("warm up"); // the vocabularies load once, outside the timing
    let _ = Tokenizer::Cl100k.count("warm up");

    // Import, through the file, into a new data folder.
    let data = work.path().join("data");
    let pinloom = runtime.block_on(Pinloom::open(data.clone())).unwrap();
    let started = Instant::now();
    let report = runtime.block_on(pinloom.import_file(file.clone(), |_| {})).unwrap();
    let import = started.elapsed();
    let tree = report.trees[0].id;
    assert_eq!(report.trees[0].messages, total);

    // Baseline: the store appending the same messages, counted as the import counts them.
    let baseline_dir = tempfile::tempdir().unwrap();
    let baseline_store = Store::open(&baseline_dir.path().join("b.sqlite3")).unwrap();
    let started = Instant::now();
    let base_tree = baseline_store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    let batch: Vec<NewNode> = parents
        .iter()
        .enumerate()
        .map(|(index, parent)| {
            let author = if index % 2 == 0 { Author::Human } else { Author::Model };
            let text = message(index);
            // In a new file the nodes get ids 1, 2, 3, … in this order.
            let parent = parent.map(|parent| NodeId(parent as i64 + 1));
            let mut node = NewNode::text(base_tree, parent, author, text.clone(), index as i64);
            node.token_counts = vec![
                ("o200k".into(), Tokenizer::O200k.count(&text)),
                ("cl100k".into(), Tokenizer::Cl100k.count(&text)),
            ];
            node
        })
        .collect();
    baseline_store.append_nodes(&batch).unwrap();
    let store_write = started.elapsed();
    drop(batch);

    let profile = ModelProfile::new("Large", "openai", "gpt-4o", 132_096, 4_096, "o200k");
    runtime.block_on(pinloom.save_model_profile(profile)).unwrap();
    drop(pinloom);

    // Open as the window opens a tree, from a fresh start: its summary, its newest thread, and
    // the plan the inspector shows for that thread's last message.
    let started = Instant::now();
    let pinloom = runtime.block_on(Pinloom::open(data.clone())).unwrap();
    runtime.block_on(pinloom.tree_summary(tree)).unwrap();
    let view = runtime.block_on(pinloom.thread_view(tree, None)).unwrap();
    let newest = view.messages.last().unwrap().node.message.id;
    let open_plan = runtime.block_on(pinloom.preview(newest, "Large".into(), None)).unwrap();
    let open = started.elapsed();
    let shown = view.total;

    // A send planned at the deepest message (the main line's last, the newest written), cold
    // (paths and plans dropped first) and warm.
    let deepest: i64 = rusqlite::Connection::open(data.join(pinloom_app::DATABASE_FILE_NAME))
        .unwrap()
        .query_row(
            "SELECT id FROM nodes WHERE tree_id = ?1 ORDER BY created_at_ms DESC LIMIT 1",
            [tree],
            |row| row.get(0),
        )
        .unwrap();
    let depth = runtime.block_on(pinloom.thread_view(tree, Some(deepest))).unwrap().total;
    let cold = median_of(5, || {
        runtime.block_on(pinloom.plan_for_benchmark(deepest, "Large", true)).unwrap();
    });
    let warm = median_of(5, || {
        runtime.block_on(pinloom.plan_for_benchmark(deepest, "Large", false)).unwrap();
    });

    // Export to a file, and its baseline.
    let target = work.path().join("out.json");
    let export = median_of(3, || {
        let request = ExportRequest {
            tree_id: tree,
            format: ExportFormat::OpenLoom,
            path: target.display().to_string(),
            without_system_prompts: false,
            without_raw_responses: false,
        };
        runtime.block_on(pinloom.export_file(request, |_| {})).unwrap();
    });
    let exported = std::fs::metadata(&target).unwrap().len();
    let store = Store::open(&data.join(pinloom_app::DATABASE_FILE_NAME)).unwrap();
    let bare = median_of(3, || {
        let nodes = store.tree_nodes(pinloom_store::TreeId(tree)).unwrap();
        let bare: Vec<Value> = nodes
            .iter()
            .map(|node| json!({ "id": node.id.0, "parent": node.parent_id.map(|p| p.0), "text": node.text }))
            .collect();
        let text = serde_json::to_string_pretty(&bare).unwrap();
        // Written as durably as the export is (which syncs before it replaces the file).
        let mut file = std::fs::File::create(work.path().join("bare.json")).unwrap();
        std::io::Write::write_all(&mut file, text.as_bytes()).unwrap();
        file.sync_all().unwrap();
    });

    let bare_bytes = std::fs::metadata(work.path().join("bare.json")).unwrap().len();
    let synced = sync_figures(&runtime, &pinloom, work.path(), &data, tree, deepest);
    println!("| step | time | baseline in the same run | ratio |");
    println!("|---|---|---|---|");
    println!(
        "| import the file ({} MB) | {} | store's own bulk write, counted: {} | {:.2}× |",
        bytes / 1_000_000,
        ms(import),
        ms(store_write),
        import.as_secs_f64() / store_write.as_secs_f64()
    );
    println!(
        "| open as the window does (summary, newest thread of {shown} messages, its plan: {} tokens) | {} | | |",
        open_plan.used,
        ms(open)
    );
    println!(
        "| plan a send at the deepest message ({depth} deep), cold (median of 5) | {} | | |",
        ms(cold)
    );
    println!("| the same, warm (median of 5) | {} | | |", ms(warm));
    println!(
        "| export to a file ({} MB, median of 3) | {} | nodes as bare JSON to a synced file ({} MB): {} | {:.2}× |",
        exported / 1_000_000,
        ms(export),
        bare_bytes / 1_000_000,
        ms(bare),
        export.as_secs_f64() / bare.as_secs_f64()
    );
    println!(
        "| first sync to a bare repository on disk ({} records in {} files) | {} | the export above: {} | {:.2}× |",
        synced.records,
        synced.files,
        ms(synced.first),
        ms(export),
        synced.first.as_secs_f64() / export.as_secs_f64()
    );
    println!(
        "| git alone committing and pushing the same files to a fresh repository | {} | | |",
        ms(synced.git_first)
    );
    println!(
        "| of Pinloom's part: reading what the folder lacks out of the database | {} | | |",
        ms(synced.read)
    );
    println!(
        "| a new machine's first sync (clone, fold everything into an empty database) | {} | the import above: {} | {:.2}× |",
        ms(synced.receive),
        ms(import),
        synced.receive.as_secs_f64() / import.as_secs_f64()
    );
    let compressed = zstd::bulk::compress(&std::fs::read(&target).unwrap(), 3).unwrap().len();
    println!(
        "| the remote's size after the first sync | {:.1} MB | the export compressed with zstd (level 3): {:.1} MB | {:.2}× |",
        synced.repository_bytes as f64 / 1e6,
        compressed as f64 / 1e6,
        synced.repository_bytes as f64 / compressed as f64
    );
    println!(
        "| sync of one new message (median of 3) | {} | git alone adding, committing and pushing one file to the same repository: {} | Pinloom's own part {} |",
        ms(synced.one),
        ms(synced.git_one),
        ms(synced.one.saturating_sub(synced.git_one))
    );
}

/// What the sync of the large tree took.
struct SyncFigures {
    files: usize,
    records: usize,
    repository_bytes: u64,
    first: Duration,
    git_first: Duration,
    read: Duration,
    receive: Duration,
    one: Duration,
    git_one: Duration,
}

fn git(args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// The first sync of the tree to a bare repository on disk (no network) and the sync of one new
/// message after it, each beside git doing the same commits and pushes alone: the same working
/// files through a second repository (`--git-dir` elsewhere, `--work-tree` the sync folder).
fn sync_figures(
    runtime: &tokio::runtime::Runtime,
    pinloom: &Pinloom,
    work: &std::path::Path,
    data: &std::path::Path,
    tree: i64,
    deepest: i64,
) -> SyncFigures {
    let path = |name: &str| work.join(name).display().to_string();
    git(&["init", "-q", "--bare", "-b", "main", &path("trees.git")]);
    let started = Instant::now();
    runtime.block_on(pinloom.sync(Some(path("trees.git")))).unwrap();
    let first = started.elapsed();
    let folder = data.join("pinloom-sync/origin").display().to_string();
    let files = walk_files(std::path::Path::new(&folder));

    // Git alone: the same files into a fresh repository and pushed to a fresh bare one.
    git(&["init", "-q", "--bare", "-b", "main", &path("alone.git")]);
    let alone = path("alone-repo");
    let with_alone = |args: &[&str]| {
        let mut all = vec!["--git-dir", alone.as_str(), "--work-tree", folder.as_str()];
        all.extend_from_slice(args);
        git(&all);
    };
    let identity = ["-c", "user.name=Bench", "-c", "user.email=bench@localhost"];
    let started = Instant::now();
    with_alone(&["init", "-q", "-b", "main"]);
    with_alone(&["add", "-A"]);
    with_alone(&[&identity[..], &["commit", "-q", "-m", "all"]].concat());
    with_alone(&["push", "-q", &path("alone.git"), "HEAD:main"]);
    let git_first = started.elapsed();

    // Of Pinloom's own part of the first sync: the records the folder lacks read out of the
    // database (as for a target that has none).
    let store = Store::open(&data.join(pinloom_app::DATABASE_FILE_NAME)).unwrap();
    let started = Instant::now();
    // The tree has no receipts, so how a receipt names messages does not matter here.
    let outgoing = store.sync_outgoing("probe", &|receipt, _| receipt.clone()).unwrap();
    let read = started.elapsed();
    let records = outgoing.records.len();
    drop(outgoing);
    let repository_bytes = bytes_under(std::path::Path::new(&path("trees.git")));

    // A new machine's first sync: everything arrives and is folded into an empty database.
    let other = runtime.block_on(Pinloom::open(work.join("other-machine"))).unwrap();
    let started = Instant::now();
    let arrived = runtime.block_on(other.sync(Some(path("trees.git")))).unwrap();
    let receive = started.elapsed();
    assert_eq!(arrived.received_records, records);

    let mut one_runs = Vec::new();
    let mut git_runs = Vec::new();
    for run in 0..3 {
        let text = format!("One more thought, number {run}.");
        runtime.block_on(pinloom.append_message(tree, Some(deepest), text)).unwrap();
        let started = Instant::now();
        runtime.block_on(pinloom.sync(None)).unwrap();
        one_runs.push(started.elapsed());
        // Git alone: the one new file (and the sync's change files) committed and pushed.
        let started = Instant::now();
        with_alone(&["fetch", "-q", &path("alone.git")]);
        with_alone(&["add", "-A"]);
        with_alone(&[&identity[..], &["commit", "-q", "-m", "one"]].concat());
        with_alone(&["push", "-q", &path("alone.git"), "HEAD:main"]);
        git_runs.push(started.elapsed());
    }
    one_runs.sort();
    git_runs.sort();
    SyncFigures {
        files,
        records,
        repository_bytes,
        first,
        git_first,
        read,
        receive,
        one: one_runs[1],
        git_one: git_runs[1],
    }
}

/// The bytes of every file under `dir` (a bare repository: its objects, packed or loose).
fn bytes_under(dir: &std::path::Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let meta = entry.metadata().unwrap();
        total += if meta.is_dir() { bytes_under(&entry.path()) } else { meta.len() };
    }
    total
}

fn walk_files(dir: &std::path::Path) -> usize {
    let mut count = 0;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_name() == ".git" {
            continue;
        }
        if path.is_dir() {
            count += walk_files(&path);
        } else {
            count += 1;
        }
    }
    count
}
