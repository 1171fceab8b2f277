//! Renaming, and the trash: trees, branches and threads leave their lists when deleted, come
//! back whole when restored, and are erased only when the trash is emptied.

use pinloom_store::{Author, EmptiedTrash, NewNode, StoreError, TreeMode, Workspace};

use crate::fresh_store;

#[test]
fn a_renamed_tree_keeps_its_slug_and_a_blank_title_is_refused() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 1).unwrap();
    let renamed = store.rename_tree(tree.id, "  Rivers and deltas ", 2).unwrap();
    assert_eq!(renamed.title, "Rivers and deltas");
    assert_eq!(renamed.slug, "rivers", "agents keep finding it by its project id");
    let error = store.rename_tree(tree.id, "   ", 3).unwrap_err();
    assert!(matches!(error, StoreError::InvalidInput(_)), "{error}");
    assert_eq!(store.tree(tree.id).unwrap().title, "Rivers and deltas");
}

#[test]
fn a_trashed_tree_leaves_the_lists_and_comes_back_whole() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 1).unwrap();
    let other = store.create_tree("Deltas", TreeMode::Dialogue, 2).unwrap();
    let first = store.append_node(&NewNode::text(tree.id, None, Author::Human, "q", 3)).unwrap();
    let active = Workspace { tree_id: Some(tree.id), pin_id: None };
    store.set_workspace("/work", active, 4).unwrap();

    let trashed = store.trash_tree(tree.id, 10).unwrap();
    assert_eq!(trashed.deleted_at_ms, Some(10));
    let listed: Vec<_> = store.list_trees().unwrap().into_iter().map(|t| t.id).collect();
    assert_eq!(listed, [other.id]);
    assert_eq!(store.tree_by_slug("rivers").unwrap(), None, "no agent can switch into it");
    assert_eq!(store.workspace("/work").unwrap().tree_id, None);
    let in_trash: Vec<_> = store.trashed_trees().unwrap().into_iter().map(|t| t.id).collect();
    assert_eq!(in_trash, [tree.id]);
    assert_eq!(store.trash_tree(tree.id, 20).unwrap().deleted_at_ms, Some(10), "trashed once");

    let restored = store.restore_tree(tree.id).unwrap();
    assert_eq!(restored.deleted_at_ms, None);
    assert_eq!(store.newest_node(tree.id).unwrap(), Some(first.id));
    assert!(store.trashed_trees().unwrap().is_empty());
}

#[test]
fn emptying_the_trash_erases_only_what_is_in_it() {
    let (store, _dir) = fresh_store();
    let kept = store.create_tree("Rivers", TreeMode::Dialogue, 1).unwrap();
    let gone = store.create_tree("Deltas", TreeMode::Dialogue, 2).unwrap();
    let root = store.append_node(&NewNode::text(kept.id, None, Author::Human, "q", 3)).unwrap();
    let answer =
        store.append_node(&NewNode::text(kept.id, Some(root.id), Author::Model, "a", 4)).unwrap();
    let branch =
        store.append_node(&NewNode::text(kept.id, Some(root.id), Author::Model, "b", 5)).unwrap();
    let below =
        store.append_node(&NewNode::text(kept.id, Some(branch.id), Author::Human, "c", 6)).unwrap();
    store.append_node(&NewNode::text(gone.id, None, Author::Human, "x", 7)).unwrap();
    store.soft_delete(branch.id, 8).unwrap();
    store.trash_tree(gone.id, 9).unwrap();

    let deleted: Vec<_> = store.deleted_branches().unwrap().into_iter().map(|n| n.id).collect();
    assert_eq!(deleted, [branch.id], "the message deleted, not what hung under it");

    let emptied = store.empty_trash().unwrap();
    assert_eq!(emptied, EmptiedTrash { trees: 1, branches: 1, threads: 0 });
    assert!(store.trashed_trees().unwrap().is_empty());
    assert!(store.deleted_branches().unwrap().is_empty());
    assert!(matches!(store.tree(gone.id), Err(StoreError::NotFound { .. })));
    assert!(matches!(store.node(below.id), Err(StoreError::NotFound { .. })), "its branch too");
    assert_eq!(store.node(answer.id).unwrap().text, "a", "the live branch stays");
    assert_eq!(store.newest_node(kept.id).unwrap(), Some(answer.id));
}
