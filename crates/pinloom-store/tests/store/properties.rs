//! The store's invariants under random sequences of operations. Case count: PROPTEST_CASES
//! (default 64, which keeps the test command quick; raise it for a deeper search).

use pinloom_store::{
    Author, NewNode, NodeId, PathStep, PinId, Store, StoreError, TreeId, TreeMode,
};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Append { parent: usize, text: usize },
    Edit { node: usize },
    Pin { node: usize, start: usize, len: usize },
    AppendInPin { pin: usize },
    SoftDelete { node: usize },
    Restore { node: usize },
    Move { node: usize, target: usize },
    Close { pin: usize },
}

const TEXTS: &[&str] = &["alpha beta gamma", "déjà vu 🌊 again", "one", "x 😀 y 😀 z"];

fn op() -> impl Strategy<Value = Op> {
    let index = 0..64_usize;
    prop_oneof![
        4 => (index.clone(), 0..TEXTS.len()).prop_map(|(parent, text)| Op::Append { parent, text }),
        1 => index.clone().prop_map(|node| Op::Edit { node }),
        2 => (index.clone(), 0..20_usize, 0..8_usize).prop_map(|(node, start, len)| Op::Pin { node, start, len }),
        2 => index.clone().prop_map(|pin| Op::AppendInPin { pin }),
        1 => index.clone().prop_map(|node| Op::SoftDelete { node }),
        1 => index.clone().prop_map(|node| Op::Restore { node }),
        1 => (index.clone(), index.clone()).prop_map(|(node, target)| Op::Move { node, target }),
        1 => index.prop_map(|pin| Op::Close { pin }),
    ]
}

struct World {
    store: Store,
    tree: TreeId,
    nodes: Vec<NodeId>,
    pins: Vec<PinId>,
    _dir: tempfile::TempDir,
}

fn pick<T: Copy>(items: &[T], index: usize) -> Option<T> {
    (!items.is_empty()).then(|| items[index % items.len()])
}

/// Errors an operation may give for a choice the random sequence made (a deleted branch, a
/// move into its own subtree, a range that splits a character). Anything else fails the test.
fn expected_refusal(error: &StoreError) -> bool {
    matches!(
        error,
        StoreError::Deleted { .. } | StoreError::InvalidInput(_) | StoreError::TooDeep { .. }
    )
}

fn apply(world: &mut World, op: &Op) -> Result<(), TestCaseError> {
    let store = &world.store;
    let result: Result<(), StoreError> = match *op {
        Op::Append { parent, text } => {
            let parent = pick(&world.nodes, parent);
            let node = NewNode::text(world.tree, parent, Author::Human, TEXTS[text], 0);
            store.append_node(&node).map(|node| world.nodes.push(node.id))
        }
        Op::Edit { node } => match pick(&world.nodes, node) {
            None => Ok(()),
            Some(node) => store
                .edit_node(
                    node,
                    vec![pinloom_store::Part::Text { text: "edited".into() }],
                    Vec::new(),
                    0,
                )
                .map(|node| world.nodes.push(node.id)),
        },
        Op::Pin { node, start, len } => match pick(&world.nodes, node) {
            None => Ok(()),
            Some(node) => {
                let text = store.node(node).map_err(fail)?.text;
                let units: Vec<u16> = text.encode_utf16().collect();
                let (start, end) = (start.min(units.len()), (start + len + 1).min(units.len()));
                let anchor = String::from_utf16(&units[start..end]).unwrap_or_default();
                store
                    .pin_range(node, start as u32, end as u32, &anchor, "", 0)
                    .map(|pin| world.pins.push(pin.id))
            }
        },
        Op::AppendInPin { pin } => match pick(&world.pins, pin) {
            None => Ok(()),
            Some(pin) => {
                let anchor = store.pin(pin).map_err(fail)?.anchor_node_id;
                let mut node = NewNode::text(world.tree, anchor, Author::Human, "in the pin", 0);
                node.pin_id = Some(pin);
                store.append_node(&node).map(|node| world.nodes.push(node.id))
            }
        },
        Op::SoftDelete { node } => {
            pick(&world.nodes, node).map_or(Ok(()), |node| store.soft_delete(node, 0).map(drop))
        }
        Op::Restore { node } => {
            pick(&world.nodes, node).map_or(Ok(()), |node| store.restore(node).map(drop))
        }
        Op::Move { node, target } => match (pick(&world.nodes, node), pick(&world.nodes, target)) {
            (Some(node), Some(target)) => store.move_subtree(node, target, 0).map(drop),
            _ => Ok(()),
        },
        Op::Close { pin } => {
            pick(&world.pins, pin).map_or(Ok(()), |pin| store.close_pin(pin, "done", 0).map(drop))
        }
    };
    match result {
        Err(error) if !expected_refusal(&error) => {
            Err(TestCaseError::fail(format!("{op:?}: {error:?}")))
        }
        _ => Ok(()),
    }
}

fn fail(error: StoreError) -> TestCaseError {
    TestCaseError::fail(format!("{error:?}"))
}

/// Follows the newest live child in `thread` from `from`, one query a step: what
/// `Store::newest_continuation` does in one statement.
fn newest_by_hand(
    store: &Store,
    from: NodeId,
    thread: Option<PinId>,
) -> Result<NodeId, TestCaseError> {
    let mut at = from;
    loop {
        let children = store.children(at, pinloom_store::Deleted::Left).map_err(fail)?;
        let newest = children
            .iter()
            .filter(|child| child.pin_id == thread)
            .max_by_key(|child| (child.created_at_ms, child.id.0));
        match newest {
            Some(child) => at = child.id,
            None => return Ok(at),
        }
    }
}

fn check_invariants(world: &World) -> Result<(), TestCaseError> {
    let store = &world.store;
    for &id in &world.nodes {
        // Walk up by hand to know whether the node should count as deleted.
        let mut in_deleted_branch = false;
        let mut cursor = Some(id);
        let mut steps = 0;
        while let Some(at) = cursor {
            let node = store.node(at).map_err(fail)?;
            in_deleted_branch |= node.pruned_at_ms.is_some();
            cursor = node.parent_id;
            steps += 1;
            prop_assert!(steps <= world.nodes.len(), "a cycle of parent links through {id:?}");
        }
        match store.ancestor_path(id) {
            Ok(path) => {
                prop_assert!(!in_deleted_branch, "{id:?} is under a deleted node yet has a path");
                prop_assert_eq!(path.last().map(|node| node.id), Some(id));
                let top = &path[0];
                prop_assert!(
                    top.parent_id.is_none() && top.pin_id.is_none(),
                    "path of {:?} does not reach the tree's root",
                    id
                );
                prop_assert!(path.windows(2).all(|pair| pair[1].parent_id == Some(pair[0].id)));
                // The plan's read of the path is the same path, step for step.
                let planned = store.plan_path(id, None).map_err(fail)?;
                let whole: Vec<PathStep> = path.iter().cloned().map(PathStep::from).collect();
                prop_assert_eq!(&planned, &whole);
                // The thread's tail is the end of the path that is in the node's thread.
                let tail = store.thread_tail(id).map_err(fail)?;
                let in_thread = path
                    .iter()
                    .rev()
                    .take_while(|node| node.pin_id == path[path.len() - 1].pin_id)
                    .count();
                prop_assert_eq!(&tail[..], &path[path.len() - in_thread..]);
                // A page's ids are the tail's, and the branch's root is the path's first node.
                let ids: Vec<NodeId> = tail.iter().map(|node| node.id).collect();
                prop_assert_eq!(store.thread_ids(id).map_err(fail)?, ids);
                prop_assert_eq!(store.path_root(id).map_err(fail)?, path[0].id);
                // The newest continuation is where following the newest live child by hand ends.
                let thread = path[path.len() - 1].pin_id;
                prop_assert_eq!(
                    store.newest_continuation(id, thread).map_err(fail)?,
                    Some(newest_by_hand(store, id, thread)?)
                );
            }
            Err(StoreError::Deleted { .. }) => {
                prop_assert!(in_deleted_branch, "{id:?} is live but refused");
                let ids = store.thread_ids(id);
                prop_assert!(matches!(ids, Err(StoreError::Deleted { .. })), "{:?}", ids);
                let planned = store.plan_path(id, None);
                prop_assert!(matches!(planned, Err(StoreError::Deleted { .. })), "{:?}", planned);
                let tail = store.thread_tail(id);
                prop_assert!(matches!(tail, Err(StoreError::Deleted { .. })), "{:?}", tail);
            }
            Err(error) => return Err(fail(error)),
        }
    }
    for &pin in &world.pins {
        let pin = store.pin(pin).map_err(fail)?;
        if let (Some(anchor), Some(node)) = (&pin.anchor, pin.anchor_node_id) {
            let units: Vec<u16> = store.node(node).map_err(fail)?.text.encode_utf16().collect();
            let quoted =
                String::from_utf16(&units[anchor.start as usize..anchor.end as usize]).ok();
            prop_assert_eq!(
                quoted.as_deref(),
                Some(anchor.text.as_str()),
                "pin {:?} lost its passage",
                pin.id
            );
        }
    }
    Ok(())
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|value| value.parse().ok()).unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn random_operations_keep_every_invariant(ops in prop::collection::vec(op(), 1..40)) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("prop.sqlite3")).unwrap();
        let tree = store.create_tree("prop", TreeMode::Dialogue, 0).unwrap().id;
        let root = store.append_node(&NewNode::text(tree, None, Author::Human, "root text 🌊", 0)).unwrap().id;
        let mut world = World { store, tree, nodes: vec![root], pins: Vec::new(), _dir: dir };
        for op in &ops {
            apply(&mut world, op)?;
            check_invariants(&world)?;
        }
    }
}
