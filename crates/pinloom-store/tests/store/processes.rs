//! Several processes on one file. The test binary re-runs itself as the other process: the
//! ignored `child_writer` test does the writing when the environment names a role for it.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use pinloom_store::{Author, NewNode, Store, TreeMode};

const ROLE: &str = "PINLOOM_TEST_CHILD_ROLE";
const DB: &str = "PINLOOM_TEST_CHILD_DB";
const BATCH: usize = 50;

fn spawn_child(role: &str, db: &std::path::Path) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "processes::child_writer",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, role)
        .env(DB, db)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// The other process. Does nothing unless run by one of the tests below.
#[test]
#[ignore]
fn child_writer() {
    let (Ok(role), Some(db)) = (std::env::var(ROLE), std::env::var_os(DB)) else { return };
    let store = Store::open(std::path::Path::new(&db)).unwrap();
    let tree = store.create_tree(&role, TreeMode::Dialogue, 0).unwrap().id;
    match role.as_str() {
        "concurrent" => {
            let mut parent = None;
            for index in 0..300 {
                let node =
                    NewNode::text(tree, parent, Author::Human, format!("{role} {index}"), index);
                parent = Some(store.append_node(&node).unwrap().id);
            }
        }
        "killed" => {
            let root =
                store.append_node(&NewNode::text(tree, None, Author::Human, "root", 0)).unwrap();
            // Batches of children of the root until killed; each line on stdout says one more
            // batch is committed.
            for batch in 0_i64.. {
                let nodes: Vec<NewNode> = (0..BATCH as i64)
                    .map(|index| {
                        let text = format!("batch {batch} node {index} {}", "x".repeat(500));
                        NewNode::text(tree, Some(root.id), Author::Model, text, index)
                    })
                    .collect();
                store.append_nodes(&nodes).unwrap();
                println!("committed {}", (batch + 1) * BATCH as i64);
            }
        }
        other => panic!("unknown role {other}"),
    }
}

#[test]
fn two_processes_writing_one_file_both_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.sqlite3");
    drop(Store::open(&db).unwrap());
    let mut first = spawn_child("concurrent", &db);
    let mut second = spawn_child("concurrent", &db);
    assert!(first.wait().unwrap().success(), "the first writer failed");
    assert!(second.wait().unwrap().success(), "the second writer failed");

    let store = Store::open(&db).unwrap();
    let trees = store.list_trees().unwrap();
    assert_eq!(trees.len(), 2);
    assert!(trees.iter().all(|tree| tree.node_count == 300), "{trees:?}");
    for tree in trees {
        let newest = store.newest_node(tree.id).unwrap().unwrap();
        assert_eq!(store.ancestor_path(newest).unwrap().len(), 300, "each chain is whole");
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |row| row.get(0)).unwrap();
    assert_eq!(check, "ok");
}

#[test]
fn a_writer_killed_mid_batch_leaves_every_committed_node_and_no_partial_batch() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("killed.sqlite3");
    drop(Store::open(&db).unwrap());
    let mut child = spawn_child("killed", &db);
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut committed = 0_u64;
    while committed < 2_000 {
        let line = lines.next().expect("the writer stopped early").unwrap();
        if let Some(count) = line.strip_prefix("committed ") {
            committed = count.parse().unwrap();
        }
    }
    child.kill().unwrap(); // SIGKILL: no destructors, no rollback, mid-transaction.
    child.wait().unwrap();

    let store = Store::open(&db).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |row| row.get(0)).unwrap();
    assert_eq!(check, "ok");
    let tree = store.list_trees().unwrap().into_iter().find(|tree| tree.title == "killed").unwrap();
    let batched = tree.node_count - 1; // the root
    assert!(batched >= committed, "{batched} nodes, {committed} reported committed");
    assert_eq!(batched % BATCH as u64, 0, "a batch is all there or not at all");
    let root = store.ancestor_path(store.newest_node(tree.id).unwrap().unwrap()).unwrap()[0].id;
    let children = store.children(root, pinloom_store::Deleted::Included).unwrap();
    assert_eq!(children.len() as u64, batched);
    assert!(children.iter().all(|node| node.text.len() > 500), "no node was cut short");
}

#[test]
fn another_connections_write_changes_the_data_version() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("watched.sqlite3");
    let watcher = Store::open(&db).unwrap();
    let writer = Store::open(&db).unwrap();
    let before = watcher.data_version().unwrap();
    assert_eq!(watcher.data_version().unwrap(), before, "nothing changed yet");
    writer.create_tree("elsewhere", TreeMode::Dialogue, 0).unwrap();
    assert_ne!(watcher.data_version().unwrap(), before, "the watcher notices the other write");
    let seen = watcher.data_version().unwrap();
    watcher.create_tree("here", TreeMode::Dialogue, 0).unwrap();
    assert_eq!(watcher.data_version().unwrap(), seen, "its own writes do not count");
}
