use pinloom_store::{Author, NewNode, SummaryKey, SummaryWrite, TreeMode};

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
