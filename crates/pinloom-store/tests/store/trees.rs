use pinloom_store::{Author, NewNode, NodeId, StoreError, TreeId, TreeMode, TreeSetup};

use crate::fresh_store;

fn human(tree_id: TreeId, parent_id: Option<NodeId>, text: &str, at: i64) -> NewNode {
    NewNode::text(tree_id, parent_id, Author::Human, text, at)
}

#[test]
fn trees_are_listed_most_recently_changed_first() {
    let (store, _dir) = fresh_store();
    let older = store.create_tree("Older", TreeMode::Dialogue, 1_000).unwrap();
    let newer = store.create_tree("Newer", TreeMode::Buffer, 2_000).unwrap();
    let titles = |store: &pinloom_store::Store| {
        store.list_trees().unwrap().into_iter().map(|tree| tree.title).collect::<Vec<_>>()
    };
    assert_eq!(titles(&store), ["Newer", "Older"]);

    store.append_node(&human(older.id, None, "bump", 3_000)).unwrap();
    assert_eq!(titles(&store), ["Older", "Newer"], "writing a message moves its tree up");
    assert_eq!(store.tree(newer.id).unwrap().mode, TreeMode::Buffer);
    assert_eq!(store.tree(older.id).unwrap().node_count, 1);
}

#[test]
fn a_trees_setup_is_the_tree_without_its_count() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Buffer, 0).unwrap().id;
    store.append_node(&human(tree, None, "first", 1)).unwrap();
    store.set_system_context(tree, "Answer briefly.", 2).unwrap();
    store.set_buffer_includes_system(tree, true, 3).unwrap();
    let whole = store.set_tree_settings(tree, r#"{"tokenBuffer":512}"#, 4).unwrap();
    assert_eq!(
        store.tree_setup(tree).unwrap(),
        TreeSetup {
            id: tree,
            title: whole.title,
            mode: whole.mode,
            system_context: whole.system_context,
            buffer_includes_system: whole.buffer_includes_system,
            settings_json: whole.settings_json,
        }
    );
    assert_eq!(store.tree_setup(tree).unwrap().system_context, "Answer briefly.");
    let missing = store.tree_setup(TreeId(tree.0 + 1)).unwrap_err();
    assert!(matches!(missing, StoreError::NotFound { kind: "tree", .. }), "{missing:?}");
}

#[test]
fn nodes_come_back_in_the_order_asked() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Order", TreeMode::Dialogue, 0).unwrap().id;
    let a = store.append_node(&human(tree, None, "a", 1)).unwrap().id;
    let b = store.append_node(&human(tree, Some(a), "b", 2)).unwrap().id;
    let c = store.append_node(&human(tree, Some(b), "c", 3)).unwrap().id;
    let missing = NodeId(c.0 + 100);
    let texts: Vec<String> =
        store.nodes(&[c, a, c, missing, b]).unwrap().into_iter().map(|node| node.text).collect();
    assert_eq!(texts, ["c", "a", "c", "b"], "asked order, repeats kept, a missing id left out");
}

#[test]
fn a_blank_title_is_refused_and_titles_are_trimmed() {
    let (store, _dir) = fresh_store();
    let error = store.create_tree(" \t ", TreeMode::Dialogue, 0).unwrap_err();
    assert!(matches!(error, StoreError::InvalidInput(_)), "{error:?}");
    assert_eq!(store.create_tree("  Rivers ", TreeMode::Dialogue, 0).unwrap().title, "Rivers");
    assert_eq!(store.list_trees().unwrap().len(), 1);
}

#[test]
fn the_ancestor_path_runs_root_first_and_leaves_out_other_branches() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    let root = store.append_node(&human(tree, None, "root", 1)).unwrap().id;
    let left = store.append_node(&human(tree, Some(root), "left", 2)).unwrap().id;
    let right = store.append_node(&human(tree, Some(root), "right", 3)).unwrap().id;
    let leaf = store.append_node(&human(tree, Some(left), "leaf", 4)).unwrap().id;

    let path = store.ancestor_path(leaf).unwrap();
    let texts: Vec<_> = path.iter().map(|node| node.text.as_str()).collect();
    assert_eq!(texts, ["root", "left", "leaf"], "the sibling branch 'right' is not on the path");
    assert_eq!(path[1].parent_id, Some(root));
    assert!(path.iter().all(|node| node.id != right));
    assert_eq!(store.newest_node(tree).unwrap(), Some(leaf), "the newest node is the last written");
}

#[test]
fn a_long_path_comes_back_whole_and_in_order() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Deep", TreeMode::Dialogue, 0).unwrap().id;
    let mut parent = None;
    for index in 0..2_000 {
        let text = format!("message {index}");
        parent = Some(store.append_node(&human(tree, parent, &text, index)).unwrap().id);
    }
    let path = store.ancestor_path(parent.unwrap()).unwrap();
    assert_eq!(path.len(), 2_000);
    assert!(path.iter().enumerate().all(|(index, node)| node.text == format!("message {index}")));
}

#[test]
fn a_tree_has_one_root() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    store.append_node(&human(tree, None, "first", 1)).unwrap();
    let error = store.append_node(&human(tree, None, "second root", 2)).unwrap_err();
    assert!(matches!(error, StoreError::InvalidInput(_)), "{error:?}");
    assert_eq!(store.tree(tree).unwrap().node_count, 1, "nothing was written");
}

#[test]
fn a_parent_from_another_tree_is_refused() {
    let (store, _dir) = fresh_store();
    let one = store.create_tree("One", TreeMode::Dialogue, 0).unwrap().id;
    let two = store.create_tree("Two", TreeMode::Dialogue, 0).unwrap().id;
    let foreign = store.append_node(&human(one, None, "in one", 1)).unwrap().id;
    let error = store.append_node(&human(two, Some(foreign), "in two", 2)).unwrap_err();
    assert!(error.to_string().contains("belongs to another tree"), "{error}");
    assert_eq!(store.tree(two).unwrap().node_count, 0);
}

#[test]
fn missing_trees_and_nodes_are_not_found() {
    let (store, _dir) = fresh_store();
    assert!(matches!(store.tree(TreeId(42)), Err(StoreError::NotFound { kind: "tree", id: 42 })));
    assert!(matches!(
        store.ancestor_path(NodeId(7)),
        Err(StoreError::NotFound { kind: "node", id: 7 })
    ));
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    let error = store.append_node(&human(tree, Some(NodeId(99)), "orphan", 1)).unwrap_err();
    assert!(matches!(error, StoreError::NotFound { kind: "node", id: 99 }), "{error:?}");
    assert_eq!(store.newest_node(tree).unwrap(), None);
}

#[test]
fn a_path_of_a_hundred_thousand_nodes_comes_back_whole() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Long", TreeMode::Dialogue, 0).unwrap().id;
    let root = store.append_node(&human(tree, None, "message 0", 0)).unwrap().id;
    let mut last = root;
    // Batches of a chain: each node continues the one before; ids in a batch are sequential.
    for batch in 0..10 {
        let first = last.0 + 1;
        let nodes: Vec<_> = (0..10_000_i64)
            .map(|offset| {
                let parent = if offset == 0 { last } else { NodeId(first + offset - 1) };
                human(tree, Some(parent), &format!("message {}", batch * 10_000 + offset + 1), 0)
            })
            .collect();
        last = store.append_nodes(&nodes).unwrap().last().unwrap().id;
    }
    let path = store.ancestor_path(last).unwrap();
    assert_eq!(path.len(), 100_001);
    assert_eq!(path[0].id, root);
    assert!(path.iter().enumerate().all(|(index, node)| node.text == format!("message {index}")));
}

#[test]
fn a_loop_of_parent_links_in_a_damaged_file_is_reported_not_followed() {
    let (store, dir) = fresh_store();
    let tree = store.create_tree("Damaged", TreeMode::Dialogue, 0).unwrap().id;
    let a = store.append_node(&human(tree, None, "a", 1)).unwrap().id;
    let b = store.append_node(&human(tree, Some(a), "b", 2)).unwrap().id;
    let side = store.append_node(&human(tree, Some(a), "side", 3)).unwrap().id;
    let c = store.append_node(&human(tree, Some(side), "c", 4)).unwrap().id;
    // What a hand edit or a damaged page could do: a's parent becomes c, closing a loop.
    let conn = rusqlite::Connection::open(crate::database_path(&dir)).unwrap();
    conn.execute("UPDATE nodes SET parent_id = ?1 WHERE id = ?2", [c.0, a.0]).unwrap();
    for node in [a, b, c] {
        let error = store.ancestor_path(node).unwrap_err();
        assert!(matches!(error, StoreError::Cycle { .. }), "{node:?}: {error:?}");
        assert!(error.to_string().contains("the database is damaged"), "{error}");
    }
    // The move's own walk above c passes through the loop and must still end; b then hangs in
    // the loop too, and says so.
    store.move_subtree(b, c, 5).unwrap();
    assert!(matches!(store.ancestor_path(b), Err(StoreError::Cycle { .. })));
}
