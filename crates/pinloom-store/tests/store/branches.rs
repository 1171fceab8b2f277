use pinloom_store::{Author, NewNode, Part, StoreError, TreeMode};

use crate::fresh_store;

#[test]
fn an_edit_is_a_new_sibling_and_the_original_is_unchanged() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    let root = store.append_node(&NewNode::text(tree, None, Author::Human, "q", 1)).unwrap();
    let first =
        store.append_node(&NewNode::text(tree, Some(root.id), Author::Human, "draft", 2)).unwrap();
    let edit = store
        .edit_node(first.id, vec![Part::Text { text: "better".into() }], Vec::new(), 3)
        .unwrap();
    assert_eq!(
        (edit.parent_id, edit.edited_from, edit.author),
        (Some(root.id), Some(first.id), Author::Human)
    );
    assert_eq!(store.node(first.id).unwrap().text, "draft");
    assert_eq!(
        store.siblings(edit.id).unwrap().into_iter().map(|n| n.id).collect::<Vec<_>>(),
        [first.id]
    );
    assert_eq!(store.children(root.id, pinloom_store::Deleted::Left).unwrap().len(), 2);
}

#[test]
fn the_first_message_can_be_edited_but_not_duplicated() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    let root = store.append_node(&NewNode::text(tree, None, Author::Human, "q", 1)).unwrap();
    let reply =
        store.append_node(&NewNode::text(tree, Some(root.id), Author::Model, "a", 2)).unwrap();
    let edit =
        store.edit_node(root.id, vec![Part::Text { text: "better q".into() }], Vec::new(), 3);
    let edit = edit.unwrap();
    assert_eq!((edit.parent_id, edit.edited_from), (None, Some(root.id)));
    assert_eq!(
        store.siblings(edit.id).unwrap().into_iter().map(|n| n.id).collect::<Vec<_>>(),
        [root.id]
    );
    assert_eq!(store.ancestor_path(edit.id).unwrap().len(), 1);
    // Only an edit of a first message may start a second one.
    let mut stray = NewNode::text(tree, None, Author::Human, "second root", 4);
    assert!(matches!(store.append_node(&stray), Err(StoreError::InvalidInput(_))));
    stray.edited_from = Some(reply.id);
    assert!(matches!(store.append_node(&stray), Err(StoreError::InvalidInput(_))));
}

#[test]
fn nodes_are_immutable_even_to_raw_sql() {
    let (store, dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    let node = store.append_node(&NewNode::text(tree, None, Author::Human, "fixed", 1)).unwrap();
    let conn = rusqlite::Connection::open(crate::database_path(&dir)).unwrap();
    let error =
        conn.execute("UPDATE nodes SET text = 'changed' WHERE id = ?1", [node.id.0]).unwrap_err();
    assert!(error.to_string().contains("nodes are immutable"), "{error}");
    assert_eq!(store.node(node.id).unwrap().text, "fixed");
}

#[test]
fn tool_calls_and_results_keep_their_parts_and_ids() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Tools", TreeMode::Dialogue, 0).unwrap().id;
    let parts = vec![
        Part::Text { text: "Let me look.".into() },
        Part::ToolCall {
            id: "call_1".into(),
            name: "search".into(),
            arguments: r#"{"q":"oxbow"}"#.into(),
        },
    ];
    let mut call = NewNode::text(tree, None, Author::Model, "", 1);
    call.parts = parts.clone();
    let call = store.append_node(&call).unwrap();
    let mut result = NewNode::text(tree, Some(call.id), Author::Tool, "", 2);
    result.parts = vec![Part::ToolResult { call_id: "call_1".into(), content: "found".into() }];
    let result = store.append_node(&result).unwrap();
    assert_eq!(store.node(call.id).unwrap().parts, parts);
    assert_eq!(store.node(call.id).unwrap().text, "Let me look.", "only text parts are text");
    assert_eq!(store.node(result.id).unwrap().parts[0], result.parts[0]);
}

#[test]
fn a_soft_deleted_branch_leaves_paths_and_comes_back_on_restore() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    let root = store.append_node(&NewNode::text(tree, None, Author::Human, "root", 1)).unwrap();
    let branch = store
        .append_node(&NewNode::text(tree, Some(root.id), Author::Model, "meander", 2))
        .unwrap();
    let leaf = store
        .append_node(&NewNode::text(tree, Some(branch.id), Author::Human, "oxbow", 3))
        .unwrap();

    store.soft_delete(branch.id, 4).unwrap();
    assert!(matches!(store.ancestor_path(leaf.id), Err(StoreError::Deleted { .. })));
    assert_eq!(store.newest_node(tree).unwrap(), Some(root.id));
    assert!(store.children(root.id, pinloom_store::Deleted::Left).unwrap().is_empty());
    assert_eq!(
        store.children(root.id, pinloom_store::Deleted::Included).unwrap().len(),
        1,
        "kept, only hidden"
    );
    assert!(store.search(tree, "oxbow", 10).unwrap().is_empty());
    let error =
        store.append_node(&NewNode::text(tree, Some(leaf.id), Author::Human, "x", 5)).unwrap_err();
    assert!(matches!(error, StoreError::Deleted { .. }), "{error:?}");

    store.restore(branch.id).unwrap();
    assert_eq!(store.ancestor_path(leaf.id).unwrap().len(), 3);
    assert_eq!(store.newest_node(tree).unwrap(), Some(leaf.id));
    assert_eq!(store.search(tree, "oxbow", 10).unwrap().len(), 1);
}

#[test]
fn deleting_a_node_removes_its_subtree_and_its_pins() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    let root = store.append_node(&NewNode::text(tree, None, Author::Human, "root", 1)).unwrap();
    let branch =
        store.append_node(&NewNode::text(tree, Some(root.id), Author::Model, "pin me", 2)).unwrap();
    let pin = store.pin_range(branch.id, 0, 3, "pin", "", 3).unwrap();
    let mut inside = NewNode::text(tree, Some(branch.id), Author::Human, "inside", 4);
    inside.pin_id = Some(pin.id);
    let inside = store.append_node(&inside).unwrap();

    store.delete_node(branch.id).unwrap();
    assert!(matches!(store.node(inside.id), Err(StoreError::NotFound { .. })));
    assert!(matches!(store.pin(pin.id), Err(StoreError::NotFound { .. })));
    assert_eq!(store.tree(tree).unwrap().node_count, 1);
    assert!(store.search(tree, "inside", 10).unwrap().is_empty(), "the search index forgot it too");
}

#[test]
fn a_branch_moves_under_a_new_parent_but_never_under_itself() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    let root = store.append_node(&NewNode::text(tree, None, Author::Human, "root", 1)).unwrap();
    let a = store.append_node(&NewNode::text(tree, Some(root.id), Author::Model, "a", 2)).unwrap();
    let b = store.append_node(&NewNode::text(tree, Some(root.id), Author::Model, "b", 3)).unwrap();
    let a_child =
        store.append_node(&NewNode::text(tree, Some(a.id), Author::Human, "a1", 4)).unwrap();

    let error = store.move_subtree(a.id, a_child.id, 5).unwrap_err();
    assert!(error.to_string().contains("would make a cycle"), "{error}");
    let error = store.move_subtree(a.id, a.id, 5).unwrap_err();
    assert!(error.to_string().contains("would make a cycle"), "{error}");

    store.move_subtree(a.id, b.id, 6).unwrap();
    let path: Vec<_> =
        store.ancestor_path(a_child.id).unwrap().into_iter().map(|n| n.text).collect();
    assert_eq!(path, ["root", "b", "a", "a1"]);
}

#[test]
fn moving_the_first_node_of_a_pin_re_anchors_the_pin() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    let root =
        store.append_node(&NewNode::text(tree, None, Author::Human, "root text", 1)).unwrap();
    let other =
        store.append_node(&NewNode::text(tree, Some(root.id), Author::Model, "other", 2)).unwrap();
    let pin = store.pin_range(root.id, 0, 4, "root", "", 3).unwrap();
    let mut first = NewNode::text(tree, Some(root.id), Author::Human, "q", 4);
    first.pin_id = Some(pin.id);
    let first = store.append_node(&first).unwrap();

    store.move_subtree(first.id, other.id, 5).unwrap();
    let moved = store.pin(pin.id).unwrap();
    assert_eq!((moved.anchor_node_id, moved.anchor, moved.depth), (Some(other.id), None, 1));
    assert_eq!(store.node(first.id).unwrap().pin_id, Some(pin.id));
}
