use pinloom_store::{Author, NewNode, SummaryAuthor, SummaryKey, SummaryWrite, TreeMode};

use crate::fresh_store;

#[test]
fn every_write_of_a_summary_is_logged_and_the_latest_is_current() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Project", TreeMode::Dialogue, 0).unwrap().id;
    let thread = store.open_thread(tree, None, None, "Auth", 1).unwrap();
    let key = SummaryKey {
        fitted_from: None,
        tree_id: tree,
        pin_id: Some(thread.id),
        path_end: None,
        budget: None,
        summarizer: String::new(),
    };
    assert_eq!(store.summary(&key).unwrap(), None);

    store.set_summary(&key, &SummaryWrite::model("JWT auth.", 4_000, 1_143, 10)).unwrap();
    let latest = store
        .set_summary(&key, &SummaryWrite::model("JWT auth with refresh tokens.", 6_000, 1_715, 20))
        .unwrap();
    assert_eq!(
        (latest.text.as_str(), latest.update_count, latest.input_chars),
        ("JWT auth with refresh tokens.", 2, 6_000)
    );
    let log = store.summary_updates(&key).unwrap();
    assert_eq!(log.iter().map(|u| u.input_chars).collect::<Vec<_>>(), [4_000, 6_000]);
    assert_eq!(store.thread_summaries(tree, Some(thread.id)).unwrap().len(), 1);
}

#[test]
fn summaries_are_cached_per_path_end_budget_and_summarizer() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    let root = store.append_node(&NewNode::text(tree, None, Author::Human, "q", 1)).unwrap();
    let key = |budget, summarizer: &str| SummaryKey {
        fitted_from: None,
        tree_id: tree,
        pin_id: None,
        path_end: Some(root.id),
        budget: Some(budget),
        summarizer: summarizer.into(),
    };
    store.set_summary(&key(800, "model-a"), &SummaryWrite::model("long", 10, 3, 1)).unwrap();
    store.set_summary(&key(300, "model-a"), &SummaryWrite::model("short", 10, 3, 1)).unwrap();
    store.set_summary(&key(800, "model-b"), &SummaryWrite::model("other", 10, 3, 1)).unwrap();
    assert_eq!(store.summary(&key(300, "model-a")).unwrap().unwrap().text, "short");
    assert_eq!(store.summary(&key(800, "model-b")).unwrap().unwrap().text, "other");
    assert_eq!(store.thread_summaries(tree, None).unwrap().len(), 3);
    assert!(
        store.set_summary(&key(0, "model-a"), &SummaryWrite::model("x", 1, 1, 1)).is_err(),
        "a zero budget is refused"
    );
}

#[test]
fn a_summary_must_end_in_its_own_thread() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    let root = store.append_node(&NewNode::text(tree, None, Author::Human, "q", 1)).unwrap();
    let pin = store.open_thread(tree, None, Some(root.id), "Sub", 2).unwrap();
    let key = SummaryKey {
        fitted_from: None,
        tree_id: tree,
        pin_id: Some(pin.id),
        path_end: Some(root.id),
        budget: None,
        summarizer: String::new(),
    };
    let error = store.set_summary(&key, &SummaryWrite::model("x", 1, 1, 3)).unwrap_err();
    assert!(error.to_string().contains("not in the thread being summarised"), "{error}");
}

#[test]
fn a_fitted_summary_is_kept_beside_its_source_and_goes_when_the_source_changes() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    let root = store.append_node(&NewNode::text(tree, None, Author::Human, "q", 1)).unwrap();
    let mine = SummaryKey {
        tree_id: tree,
        pin_id: None,
        path_end: Some(root.id),
        budget: None,
        summarizer: String::new(),
        fitted_from: None,
    };
    let long = "A long summary the person wrote.";
    let source =
        store.set_summary(&mine, &SummaryWrite::chosen(long, SummaryAuthor::Person, 2)).unwrap();
    assert!(source.chosen && source.written_by == SummaryAuthor::Person);
    let fitted = store
        .set_fitted_summary(source.id, long, 300, "Local", &SummaryWrite::model("Short.", 30, 8, 3))
        .unwrap()
        .expect("written while the source is unchanged");
    assert_eq!(fitted.key.fitted_from, Some(source.id));
    assert_eq!((fitted.key.budget, fitted.key.summarizer.as_str()), (Some(300), "Local"));
    assert_eq!(store.thread_summaries(tree, None).unwrap().len(), 2, "both are kept");

    // The person's text changes: the fitted version of the old text goes, and one condensed from
    // the old text arriving late is not written.
    store
        .set_summary(&mine, &SummaryWrite::chosen("Rewritten.", SummaryAuthor::Person, 4))
        .unwrap();
    assert_eq!(store.thread_summaries(tree, None).unwrap().len(), 1);
    let late = store
        .set_fitted_summary(source.id, long, 300, "Local", &SummaryWrite::model("Stale.", 30, 8, 5))
        .unwrap();
    assert_eq!(late, None);
    assert_eq!(store.summary_updates(&mine).unwrap().len(), 2, "the log keeps both texts");
}

#[test]
fn a_trees_parent_links_must_make_a_tree() {
    use pinloom_store::{NodeId, StoreError, TreeId, check_tree_links};
    let tree = TreeId(1);
    let ok = [(NodeId(1), None), (NodeId(2), Some(NodeId(1))), (NodeId(3), Some(NodeId(1)))];
    check_tree_links(tree, &ok).unwrap();
    let looped = [(NodeId(1), None), (NodeId(2), Some(NodeId(3))), (NodeId(3), Some(NodeId(2)))];
    let error = check_tree_links(tree, &looped).unwrap_err();
    assert!(matches!(error, StoreError::BrokenTree { tree: 1, .. }));
    assert!(error.to_string().contains("no first message leads to messages #2, #3"), "{error}");
    let outside = [(NodeId(1), None), (NodeId(2), Some(NodeId(9)))];
    let error = check_tree_links(tree, &outside).unwrap_err();
    assert!(error.to_string().contains("message 2 names message 9"), "{error}");
}
