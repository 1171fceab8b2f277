//! The store's three workloads from the Tree store issue, on real SQLite files in a temporary
//! folder:
//! - the ancestor path of a node 10,000 deep in a 100,000-node tree (goal ≤ 5 ms);
//! - appending one node to that 100,000-node tree, commit included (goal ≤ 1 ms);
//! - ancestors plus children of a leaf in a 1,000,000-node tree of branching factor 4, whose
//!   leaves are about 10 deep (goal ≤ 1 ms; loading the whole tree costs about 256 ms).
//!
//! The ancestor path also runs as a baseline in the same process, on the same file: the classic
//! recursive CTE that takes one step per level, which the store used before segments. The ratio
//! between the two holds however busy the machine is. A third run steps the store's own query
//! without decoding the rows, which shows how much of the path is SQLite and how much is Rust.

use criterion::{Criterion, criterion_group, criterion_main};
use pinloom_store::{Author, NewNode, NodeId, Store, TreeId, TreeMode};

const TEXT: &str = "A paragraph of ordinary length, about the size of a chat message in a thread.";

/// A 10,000-deep spine with 90,000 more nodes hanging off it; returns the deepest spine node.
fn deep_tree(store: &Store) -> (TreeId, NodeId) {
    let tree = store.create_tree("deep", TreeMode::Dialogue, 0).expect("tree").id;
    let mut spine = Vec::with_capacity(10_000);
    let mut parent = None;
    for index in 0..10_000 {
        let node = NewNode::text(tree, parent, Author::Human, TEXT, index);
        let id = store.append_node(&node).expect("append").id;
        spine.push(id);
        parent = Some(id);
    }
    let branches: Vec<NewNode> = (0..90_000_usize)
        .map(|index| NewNode::text(tree, Some(spine[index % spine.len()]), Author::Model, TEXT, 0))
        .collect();
    for batch in branches.chunks(20_000) {
        store.append_nodes(batch).expect("append batch");
    }
    (tree, parent.expect("spine"))
}

/// A 1,000,000-node tree where node i continues node (i - 1) / 4, written in id order so that
/// each parent's id is known before its children are written; returns its last leaf.
fn bushy_tree(store: &Store) -> NodeId {
    let tree = store.create_tree("bushy", TreeMode::Dialogue, 0).expect("tree").id;
    let root =
        store.append_node(&NewNode::text(tree, None, Author::Human, TEXT, 0)).expect("root").id;
    let mut last = root;
    let total: i64 = 1_000_000;
    let mut next = 1;
    while next < total {
        let end = (next + 50_000).min(total);
        let batch: Vec<NewNode> = (next..end)
            .map(|index| {
                let parent = NodeId(root.0 + (index - 1) / 4);
                NewNode::text(tree, Some(parent), Author::Model, TEXT, index)
            })
            .collect();
        let written = store.append_nodes(&batch).expect("append batch");
        last = written.last().expect("batch").id;
        assert_eq!(last.0, root.0 + end - 1, "ids must be sequential for the parent arithmetic");
        next = end;
    }
    last
}

/// The baseline: walk one parent link per recursive step and read the same columns.
fn level_by_level_path(conn: &rusqlite::Connection, node: NodeId) -> usize {
    let mut statement = conn
        .prepare_cached(
            "WITH RECURSIVE path(id, depth) AS (
                 SELECT ?1, 0
                 UNION ALL
                 SELECT n.parent_id, path.depth + 1 FROM path JOIN nodes n ON n.id = path.id
                 WHERE n.parent_id IS NOT NULL
             )
             SELECT n.id, n.tree_id, n.parent_id, n.pin_id, n.author, n.text, n.parts_json,
                 n.edited_from, n.model, n.generation_json, n.usage_json, n.excluded,
                 n.bookmarked, n.incomplete, n.pruned_at_ms, n.created_at_ms
             FROM path JOIN nodes n ON n.id = path.id ORDER BY path.depth DESC",
        )
        .expect("prepare");
    let rows = statement
        .query_map([node.0], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(5)?)))
        .expect("query");
    rows.map(|row| row.expect("row").1.len()).sum()
}

fn store_benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("deep.sqlite3")).expect("open");
    let (tree, deepest) = deep_tree(&store);
    c.bench_function("plan path 10k deep in 100k nodes", |b| {
        b.iter(|| store.plan_path(deepest, Some("o200k")).expect("path").len())
    });
    c.bench_function("ancestor path 10k deep in 100k nodes (whole nodes, for views)", |b| {
        b.iter(|| store.ancestor_path(deepest).expect("path").len())
    });
    let baseline = rusqlite::Connection::open(dir.path().join("deep.sqlite3")).expect("open");
    c.bench_function("baseline: one CTE step per level, same path", |b| {
        b.iter(|| level_by_level_path(&baseline, deepest))
    });
    c.bench_function("floor: the store's walk, rows stepped but not decoded", |b| {
        b.iter(|| store.count_path_rows_undecoded(deepest).expect("rows"))
    });
    let mut at = 1_000_000_i64;
    c.bench_function("append one node to 100k nodes with commit", |b| {
        b.iter(|| {
            at += 1;
            let node = NewNode::text(tree, Some(deepest), Author::Human, "one more", at);
            store.append_node(&node).expect("append").id
        })
    });
    drop(store);

    let store = Store::open(&dir.path().join("bushy.sqlite3")).expect("open");
    let leaf = bushy_tree(&store);
    let parent = store.node(leaf).expect("leaf").parent_id.expect("parent");
    c.bench_function("ancestors and children in 1M nodes", |b| {
        b.iter(|| {
            let path = store.ancestor_path(parent).expect("path");
            let children = store.children(parent, pinloom_store::Deleted::Left).expect("children");
            path.len() + children.len()
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = store_benches
}
criterion_main!(benches);
