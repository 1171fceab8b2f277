//! Threads as ThreadMind sees them: slugs, order, delete, move, and each folder's active thread.

use pinloom_store::{
    Author, NewNode, NewTree, Sharing, StoreError, SummaryKey, SummaryWrite, TreeMode, Workspace,
};

use crate::fresh_store;

fn project(store: &pinloom_store::Store, title: &str) -> pinloom_store::Tree {
    store
        .create_tree_with(&NewTree {
            title: title.into(),
            mode: TreeMode::Dialogue,
            system_context: "Be brief.".into(),
            sharing: Sharing::Team,
            created_at_ms: 1,
        })
        .unwrap()
}

#[test]
fn trees_and_threads_are_named_like_threadmind_names_them() {
    let (store, _dir) = fresh_store();
    let app = project(&store, "My App");
    let again = project(&store, "My App");
    assert_eq!((app.slug.as_str(), again.slug.as_str()), ("my-app", "my-app-2"));
    assert_eq!((app.system_context.as_str(), app.sharing), ("Be brief.", Sharing::Team));
    assert_eq!(store.tree_by_slug("my-app-2").unwrap().map(|t| t.id), Some(again.id));
    assert_eq!(store.tree_by_slug("nope").unwrap(), None);

    let auth = store.open_thread(app.id, None, None, "Auth", 2).unwrap();
    let auth_again = store.open_thread(app.id, None, None, "Auth", 3).unwrap();
    let main = store.open_thread(app.id, Some(auth.id), None, "Main", 4).unwrap();
    assert_eq!(
        [auth.slug.as_str(), auth_again.slug.as_str(), main.slug.as_str()],
        ["auth", "auth-2", "main-2"],
        "collisions count up from 2, and `main` is the root thread's"
    );
    // Slugs are per tree.
    assert_eq!(store.open_thread(again.id, None, None, "Auth", 5).unwrap().slug, "auth");
    assert_eq!(store.pin_by_slug(app.id, "auth-2").unwrap().map(|p| p.id), Some(auth_again.id));
}

#[test]
fn deleting_a_thread_hides_it_and_everything_below_and_frees_its_slug() {
    let (store, _dir) = fresh_store();
    let tree = project(&store, "Rivers").id;
    let root = store.append_node(&NewNode::text(tree, None, Author::Human, "Why?", 2)).unwrap();
    let bends = store.open_thread(tree, None, Some(root.id), "Bends", 3).unwrap();
    let first = store
        .append_node(&NewNode {
            pin_id: Some(bends.id),
            ..NewNode::text(tree, Some(root.id), Author::Human, "Outer bank?", 4)
        })
        .unwrap();
    let deeper = store.open_thread(tree, Some(bends.id), Some(first.id), "Deeper", 5).unwrap();
    let empty = store.open_thread(tree, Some(deeper.id), None, "Empty", 6).unwrap();
    let sibling = store.open_thread(tree, None, Some(root.id), "Sibling", 7).unwrap();
    let key = SummaryKey {
        fitted_from: None,
        tree_id: tree,
        pin_id: Some(deeper.id),
        path_end: None,
        budget: None,
        summarizer: String::new(),
    };
    store.set_summary(&key, &SummaryWrite::model("Deeper summary.", 15, 4, 8)).unwrap();
    let folder = "/home/someone/project";
    store
        .set_workspace(folder, Workspace { tree_id: Some(tree), pin_id: Some(empty.id) }, 9)
        .unwrap();

    let deleted = store.delete_thread(bends.id, 10).unwrap();
    assert_eq!(deleted, [bends.id, deeper.id, empty.id]);
    let live: Vec<_> = store.live_threads(tree).unwrap().into_iter().map(|p| p.slug).collect();
    assert_eq!(live, ["sibling"]);
    assert!(store.pins_anchored_in(root.id).unwrap().iter().all(|p| p.id == sibling.id));
    assert_eq!(store.node(first.id).unwrap().pruned_at_ms, Some(10), "its messages are hidden");
    assert_eq!(store.newest_node(tree).unwrap(), Some(root.id));
    assert_eq!(
        store.workspace(folder).unwrap(),
        Workspace { tree_id: Some(tree), pin_id: None },
        "an active thread that was deleted gives way to the root thread"
    );
    assert_eq!(store.summary_log(tree).unwrap().len(), 1, "the log stays for the stats");
    assert_eq!(store.all_pins(tree).unwrap().len(), 4, "nothing was erased");
    assert!(matches!(store.delete_thread(bends.id, 11), Err(StoreError::NotFound { .. })));
    let new_bends = store.open_thread(tree, None, None, "Bends", 12).unwrap();
    assert_eq!(new_bends.slug, "bends");

    // What an agent deleted comes back from the window, slug taken since or not.
    let deleted: Vec<_> = store.deleted_threads(tree).unwrap().into_iter().map(|p| p.id).collect();
    assert_eq!(deleted, [bends.id], "only the top of each deletion is offered");
    let refused = store.restore_thread(deeper.id, 13).unwrap_err();
    assert!(refused.to_string().contains("restore that one first"), "{refused}");
    assert_eq!(store.restore_thread(bends.id, 13).unwrap(), [bends.id, deeper.id, empty.id]);
    let live: Vec<_> = store.live_threads(tree).unwrap().into_iter().map(|p| p.slug).collect();
    assert_eq!(live, ["bends-2", "deeper", "empty", "sibling", "bends"]);
    assert_eq!(store.node(first.id).unwrap().pruned_at_ms, None, "its messages are back");
    assert_eq!(store.newest_in_thread(tree, Some(bends.id)).unwrap(), Some(first.id));
    assert!(store.deleted_threads(tree).unwrap().is_empty());
    assert!(matches!(store.restore_thread(bends.id, 14), Err(StoreError::InvalidInput(_))));
}

#[test]
fn a_moved_thread_goes_last_under_its_new_parent_with_its_messages() {
    let (store, _dir) = fresh_store();
    let tree = project(&store, "Rivers").id;
    let root = store.append_node(&NewNode::text(tree, None, Author::Human, "Why?", 2)).unwrap();
    let auth = store.open_thread(tree, None, Some(root.id), "Auth", 3).unwrap();
    let ui = store.open_thread(tree, Some(auth.id), None, "UI", 4).unwrap();
    let dash = store.open_thread(tree, None, Some(root.id), "Dash", 5).unwrap();
    let in_dash = store
        .append_node(&NewNode {
            pin_id: Some(dash.id),
            ..NewNode::text(tree, Some(root.id), Author::Human, "Charts", 6)
        })
        .unwrap();
    let mut pinned = NewNode::text(tree, Some(root.id), Author::Human, "Auth first", 7);
    pinned.pin_id = Some(auth.id);
    let in_auth = store.append_node(&pinned).unwrap();
    let other = store.open_thread(tree, None, Some(root.id), "Other", 8).unwrap();

    // UI had no message to hang off; under Dash it hangs off Dash's newest.
    let moved = store.move_thread(ui.id, Some(dash.id), 9).unwrap();
    assert_eq!(
        (moved.parent_pin_id, moved.anchor_node_id, moved.depth),
        (Some(dash.id), Some(in_dash.id), 2)
    );
    let order: Vec<_> = store.live_threads(tree).unwrap().into_iter().map(|p| p.slug).collect();
    assert_eq!(order, ["auth", "dash", "other", "ui"]);

    // Auth's own message moves with it, under Other, which has none: it hangs off nothing.
    let moved = store.move_thread(auth.id, Some(other.id), 10).unwrap();
    assert_eq!((moved.anchor_node_id, moved.depth), (None, 2));
    let message = store.node(in_auth.id).unwrap();
    assert_eq!((message.parent_id, message.pin_id), (None, Some(auth.id)));
    assert_eq!(store.ancestor_path(in_auth.id).unwrap().len(), 1);

    let cycle = store.move_thread(other.id, Some(auth.id), 11).unwrap_err();
    assert!(cycle.to_string().contains("cycle"), "{cycle}");
    let onto_itself = store.move_thread(dash.id, Some(dash.id), 11).unwrap_err();
    assert!(onto_itself.to_string().contains("cycle"), "{onto_itself}");
    let back = store.move_thread(ui.id, None, 12).unwrap();
    assert_eq!((back.parent_pin_id, back.anchor_node_id, back.depth), (None, Some(root.id), 1));
}

#[test]
fn each_folder_has_its_own_active_thread() {
    let (store, _dir) = fresh_store();
    let tree = project(&store, "Rivers").id;
    let pin = store.open_thread(tree, None, None, "Bends", 2).unwrap();
    assert_eq!(store.workspace("/a").unwrap(), Workspace { tree_id: None, pin_id: None });
    store.set_workspace("/a", Workspace { tree_id: Some(tree), pin_id: Some(pin.id) }, 3).unwrap();
    store.set_workspace("/b", Workspace { tree_id: Some(tree), pin_id: None }, 4).unwrap();
    assert_eq!(store.workspace("/a").unwrap().pin_id, Some(pin.id));
    assert_eq!(store.workspace("/b").unwrap().pin_id, None);
    let other = project(&store, "Other").id;
    let refused = store
        .set_workspace("/a", Workspace { tree_id: Some(other), pin_id: Some(pin.id) }, 5)
        .unwrap_err();
    assert!(refused.to_string().contains("another tree"), "{refused}");
    store.delete_tree(tree).unwrap();
    assert_eq!(store.workspace("/b").unwrap(), Workspace { tree_id: None, pin_id: None });
}
