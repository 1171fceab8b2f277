//! Three replicas syncing through one folder of real packs on disk, sealed or not, with random
//! changes and random syncs between them: once every replica has synced twice more, all three
//! hold the same trees. Git's part (merging folders that only gain files) is the folder they
//! share; everything else is the sync's own: packs written, compacted and read back, lines held
//! and packs done, the fold.

use std::collections::HashSet;
use std::path::Path;

use pinloom_store::{Author, NewNode, NodeId, Store, TreeId, TreeMode};
use proptest::prelude::*;
use serde_json::Value;

use crate::sync::pack_files::{compact_own, read_new, write_packs};
use crate::sync::packs::{PackLine, Seal};
use crate::sync::signing::{DeviceKey, Signers, Writer};

/// A receipt as it is (the steps write none).
fn as_it_is(receipt: &Value, _: &dyn Fn(pinloom_store::ReceiptRef, &Value) -> Value) -> Value {
    receipt.clone()
}

/// One replica's sync with the shared folder, as `sync_target_uncoded` does it without git.
fn sync(store: &Store, folder: &Path, seal: &Seal, now: i64) -> pinloom_store::SyncFolded {
    let device = store.sync_device().unwrap();
    let writer = Writer { device: device.clone(), key: DeviceKey::of(store).unwrap() };
    let outgoing = store.sync_outgoing("origin", &as_it_is).unwrap();
    let mut known = store.sync_known("origin").unwrap();
    let mut lines: Vec<PackLine> = outgoing.records.into_iter().map(PackLine::Record).collect();
    lines.extend(outgoing.ops.into_iter().map(PackLine::Op));
    let written: Vec<String> = write_packs(folder, &writer, &lines, seal, now)
        .unwrap()
        .into_iter()
        .flat_map(|pack| pack.lines.into_iter().chain([pack.id]))
        .collect();
    known.extend(written.iter().cloned());
    let mut signers = Signers::of(store, "origin", &writer).unwrap();
    let arrived = read_new(folder, &known, seal, false, &mut signers).unwrap();
    store.pin_sync_signers("origin", &signers.new).unwrap();
    assert!(arrived.damaged.is_empty(), "{:?}", arrived.damaged);
    let folded = store.sync_fold("origin", arrived.records, arrived.ops, &as_it_is, now).unwrap();
    let mut packs = arrived.packs;
    packs.extend(compact_own(folder, &writer, seal, now).unwrap());
    let known = store.sync_known("origin").unwrap();
    let done: Vec<String> = packs.iter().filter_map(|pack| pack.done(&known)).flatten().collect();
    store.mark_sync_known("origin", &done).unwrap();
    store.mark_sync_known("origin", &written).unwrap();
    folded
}

#[derive(Debug, Clone)]
enum Step {
    NewTree(usize),
    Append(usize, usize),
    Rename(usize, usize, u8),
    Move(usize, usize, usize),
    Delete(usize, usize),
    Sync(usize),
}

fn step() -> impl Strategy<Value = Step> {
    let replica = 0..3_usize;
    let pick = 0..64_usize;
    prop_oneof![
        1 => replica.clone().prop_map(Step::NewTree),
        5 => (replica.clone(), pick.clone()).prop_map(|(r, p)| Step::Append(r, p)),
        2 => (replica.clone(), pick.clone(), 0..4_u8).prop_map(|(r, p, t)| Step::Rename(r, p, t)),
        3 => (replica.clone(), pick.clone(), pick.clone()).prop_map(|(r, p, q)| Step::Move(r, p, q)),
        1 => (replica.clone(), pick).prop_map(|(r, p)| Step::Delete(r, p)),
        4 => replica.prop_map(Step::Sync),
    ]
}

fn messages(store: &Store) -> Vec<(TreeId, NodeId)> {
    let mut all = Vec::new();
    for tree in store.list_trees().unwrap() {
        all.extend(store.tree_nodes(tree.id).unwrap().into_iter().map(|node| (tree.id, node.id)));
    }
    all
}

/// Does `step`; a refusal a person could meet too (moving a branch into itself, appending under
/// a deleted message) does nothing.
fn perform(stores: &[Store], step: &Step, at: i64, folder: &Path, seal: &Seal) {
    let pick = |store: &Store, n: usize| {
        let all = messages(store);
        all.get(n % all.len().max(1)).copied()
    };
    match *step {
        Step::NewTree(r) => {
            let tree =
                stores[r].create_tree(&format!("tree {at}"), TreeMode::Dialogue, at).unwrap();
            let root = NewNode::text(tree.id, None, Author::Human, format!("root {at}"), at);
            stores[r].append_node(&root).unwrap();
        }
        Step::Append(r, p) => {
            if let Some((tree, node)) = pick(&stores[r], p) {
                let text = format!("message {r}-{at}");
                let _ = stores[r].append_node(&NewNode::text(
                    tree,
                    Some(node),
                    Author::Model,
                    text,
                    at,
                ));
            }
        }
        Step::Rename(r, p, title) => {
            if let Some((tree, _)) = pick(&stores[r], p) {
                stores[r].rename_tree(tree, &format!("title {title} by {r}"), at).unwrap();
            }
        }
        Step::Move(r, p, q) => {
            if let (Some((tree, node)), Some((other, target))) =
                (pick(&stores[r], p), pick(&stores[r], q))
                && tree == other
            {
                let _ = stores[r].move_subtree(node, target, at);
            }
        }
        Step::Delete(r, p) => {
            if let Some((_, node)) = pick(&stores[r], p) {
                let _ = stores[r].soft_delete(node, at);
            }
        }
        Step::Sync(r) => {
            sync(&stores[r], folder, seal, at);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(48),
        ..ProptestConfig::default()
    })]

    #[test]
    fn three_replicas_through_sealed_packs_end_equal(
        steps in proptest::collection::vec(step(), 1..40),
        sealed in proptest::bool::ANY,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("folder");
        std::fs::create_dir_all(&folder).unwrap();
        let seal = if sealed {
            Seal::folder_key(age::x25519::Identity::generate())
        } else {
            Seal::Plain
        };
        let stores: Vec<Store> = (0..3)
            .map(|n| {
                let store = Store::open(&dir.path().join(format!("{n}.sqlite3"))).unwrap();
                store.set_sync_target("origin", "/srv/trees.git", false, 1).unwrap();
                store
            })
            .collect();
        let start = crate::runtime::now_ms();
        for (n, step) in steps.iter().enumerate() {
            perform(&stores, step, start + i64::try_from(n).unwrap(), &folder, &seal);
        }
        // Everyone syncs twice: the first round writes out, the second takes in the rest.
        let end = start + 1_000;
        for round in 0..2 {
            for store in &stores {
                let folded = sync(store, &folder, &seal, end + round);
                prop_assert!(folded.skipped.is_empty(), "{:?}", folded);
                prop_assert!(folded.waiting.is_empty(), "{:?}", folded);
            }
        }
        let dumps: Vec<String> =
            stores.iter().map(|store| store.sync_dump(&as_it_is).unwrap()).collect();
        prop_assert_eq!(&dumps[0], &dumps[1]);
        prop_assert_eq!(&dumps[1], &dumps[2]);
        // No pack file in the folder holds a word in the clear when it is sealed.
        if sealed && !stores[0].list_trees().unwrap().is_empty() {
            let mut seen = HashSet::new();
            for device in std::fs::read_dir(folder.join("packs")).unwrap().flatten() {
                for pack in std::fs::read_dir(device.path()).unwrap().flatten() {
                    let bytes = std::fs::read(pack.path()).unwrap();
                    prop_assert!(!String::from_utf8_lossy(&bytes).contains("message "));
                    seen.insert(pack.file_name());
                }
            }
            prop_assert!(!seen.is_empty());
        }
    }
}
