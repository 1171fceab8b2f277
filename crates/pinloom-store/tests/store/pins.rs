use pinloom_store::{Anchor, Author, MAX_PIN_DEPTH, NewNode, PinId, StoreError, TreeMode};

use crate::fresh_store;

#[test]
fn a_pinned_range_keeps_the_passage_verbatim_and_opens_a_thread_one_level_down() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    let text = "Water runs fastest on the outside of a bend 🌊, so that bank erodes.";
    let answer = store.append_node(&NewNode::text(tree, None, Author::Model, text, 1)).unwrap();
    // A browser selection of "outside of a bend 🌊" counts UTF-16 units; the wave is two.
    let start = text[..text.find("outside").unwrap()].encode_utf16().count() as u32;
    let passage = "outside of a bend 🌊";
    let end = start + passage.encode_utf16().count() as u32;

    let pin = store.pin_range(answer.id, start, end, passage, "", 2).unwrap();
    assert_eq!(pin.anchor, Some(Anchor { start, end, text: passage.into() }));
    assert_eq!(pin.title, passage, "a blank title takes the passage");
    assert_eq!((pin.parent_pin_id, pin.anchor_node_id, pin.depth), (None, Some(answer.id), 1));
    assert_eq!(store.pins_anchored_in(answer.id).unwrap(), vec![pin.clone()]);

    let mut first = NewNode::text(tree, Some(answer.id), Author::Human, "Why the outside?", 3);
    first.pin_id = Some(pin.id);
    let first = store.append_node(&first).unwrap();
    assert_eq!(store.thread_of(first.id).unwrap(), (Some(pin.id), 1));
    let reply = store
        .append_node(&NewNode::text(tree, Some(first.id), Author::Model, "Momentum.", 4))
        .unwrap();
    assert_eq!(reply.pin_id, Some(pin.id), "a continuation stays in its thread");
    let path: Vec<_> = store.ancestor_path(reply.id).unwrap().into_iter().map(|n| n.id).collect();
    assert_eq!(
        path,
        [answer.id, first.id, reply.id],
        "the path crosses the pin edge into the parent"
    );
}

#[test]
fn a_range_that_does_not_match_its_text_is_refused_with_what_to_do() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    let node =
        store.append_node(&NewNode::text(tree, None, Author::Model, "abc 🌊 def", 1)).unwrap();
    for (start, end, anchor) in [(0, 3, "abd"), (0, 40, "abc"), (4, 5, "🌊"), (2, 2, "")] {
        let error = store.pin_range(node.id, start, end, anchor, "t", 2).unwrap_err();
        assert!(matches!(error, StoreError::InvalidInput(_)), "{start}..{end}: {error:?}");
        assert!(error.to_string().contains("select the passage again"), "{error}");
    }
    assert!(store.pins_anchored_in(node.id).unwrap().is_empty(), "nothing was written");
}

#[test]
fn a_thread_opened_without_a_highlight_has_no_anchor_text() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Project", TreeMode::Dialogue, 0).unwrap().id;
    let auth = store.open_thread(tree, None, None, "Auth", 1).unwrap();
    assert_eq!((auth.anchor.clone(), auth.anchor_node_id, auth.depth), (None, None, 1));
    let ui = store.open_thread(tree, Some(auth.id), None, "Auth UI", 2).unwrap();
    assert_eq!(ui.depth, 2);
    assert_eq!(store.child_pins(tree, None).unwrap(), vec![auth.clone()]);
    assert_eq!(store.child_pins(tree, Some(auth.id)).unwrap(), vec![ui.clone()]);

    // The first node of an anchorless thread has no parent node; later ones continue it.
    let mut first = NewNode::text(tree, None, Author::Human, "Login form", 3);
    first.pin_id = Some(ui.id);
    let first = store.append_node(&first).unwrap();
    assert_eq!((first.parent_id, first.pin_id), (None, Some(ui.id)));
    assert!(store.open_thread(tree, None, None, "  ", 4).is_err(), "a thread needs a title");
}

#[test]
fn a_chain_holds_fifty_threads_and_no_more_threadmind_limit() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Deep", TreeMode::Dialogue, 0).unwrap().id;
    let mut parent: Option<PinId> = None;
    for level in 1..=MAX_PIN_DEPTH {
        let pin = store.open_thread(tree, parent, None, &format!("level {level}"), 0).unwrap();
        assert_eq!(pin.depth, level);
        parent = Some(pin.id);
    }
    let error = store.open_thread(tree, parent, None, "one too many", 0).unwrap_err();
    assert!(matches!(error, StoreError::TooDeep { limit: 49 }), "{error:?}");
    assert!(error.to_string().contains("at most 50 threads"), "{error}");
    // The root thread and 49 pins: the 50 threads ThreadMind walks and the engine plans.
    assert_eq!(MAX_PIN_DEPTH + 1, pinloom_store::MAX_THREADS_ON_A_CHAIN);
}

#[test]
fn closing_a_pin_records_its_result() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    let pin = store.open_thread(tree, None, None, "Oxbows", 1).unwrap();
    assert!(store.close_pin(pin.id, " ", 2).is_err(), "a result must say something");
    let closed = store.close_pin(pin.id, "Cut-offs of meanders.", 3).unwrap();
    assert_eq!(
        (closed.closed_at_ms, closed.result.as_deref()),
        (Some(3), Some("Cut-offs of meanders."))
    );
    assert!(matches!(
        store.close_pin(PinId(999), "x", 4),
        Err(StoreError::NotFound { kind: "pin", .. })
    ));
}

#[test]
fn sibling_pins_never_appear_on_each_others_paths() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    let answer =
        store.append_node(&NewNode::text(tree, None, Author::Model, "alpha beta", 1)).unwrap();
    let left = store.pin_range(answer.id, 0, 5, "alpha", "", 2).unwrap();
    let right = store.pin_range(answer.id, 6, 10, "beta", "", 3).unwrap();
    let mut in_left = NewNode::text(tree, Some(answer.id), Author::Human, "left q", 4);
    in_left.pin_id = Some(left.id);
    let in_left = store.append_node(&in_left).unwrap();
    let mut in_right = NewNode::text(tree, Some(answer.id), Author::Human, "right q", 5);
    in_right.pin_id = Some(right.id);
    let in_right = store.append_node(&in_right).unwrap();
    let path = store.ancestor_path(in_right.id).unwrap();
    assert!(path.iter().all(|node| node.id != in_left.id));
    assert_eq!(path.len(), 2);
}

/// A tree to import: a root message, a message in thread 0 under it, and `pins`.
fn import_with(pins: Vec<pinloom_store::PinImport>) -> pinloom_store::TreeImport {
    let node = |parent: Option<usize>, pin: Option<usize>| pinloom_store::NodeImport {
        global_id: None,
        parent,
        pin,
        edited_from: None,
        author: Author::Human,
        parts: vec![pinloom_store::Part::Text { text: "words".into() }],
        model: None,
        generation_json: None,
        usage_json: None,
        excluded: false,
        bookmarked: false,
        kept: false,
        incomplete: false,
        pruned_at_ms: None,
        created_at_ms: 1,
        token_counts: Vec::new(),
        receipt_cut: None,
        picked: Vec::new(),
    };
    pinloom_store::TreeImport {
        tree: pinloom_store::NewTree {
            title: "Imported".into(),
            mode: TreeMode::Dialogue,
            system_context: String::new(),
            sharing: pinloom_store::Sharing::Solo,
            created_at_ms: 1,
        },
        slug: None,
        global_id: None,
        buffer_includes_system: false,
        settings_json: "{}".into(),
        updated_at_ms: 1,
        nodes: vec![node(None, None), node(Some(0), Some(0))],
        pins,
        summaries: Vec::new(),
        attachments: Vec::new(),
        annotations: Vec::new(),
        current: None,
    }
}

fn pin_off(anchor_node: usize, parent: Option<usize>, order: usize) -> pinloom_store::PinImport {
    pinloom_store::PinImport {
        parent,
        anchor_node: Some(anchor_node),
        anchor: None,
        title: format!("Thread {order}"),
        slug: None,
        closed: None,
        created_at_ms: 1,
        deleted_at_ms: None,
        order,
    }
}

/// The store never places a thread at a depth its chain does not have: one that hangs off a
/// message of thread 0 opens from thread 0, whatever a caller says.
#[test]
fn a_thread_opens_only_from_the_thread_of_the_message_it_hangs_off() {
    let (store, _dir) = fresh_store();
    let written = |pins| store.import_trees(&[import_with(pins)], &[], |_, _| None, 1, &mut |_| {});
    let refused = written(vec![pin_off(0, None, 0), pin_off(1, None, 1)]).unwrap_err();
    assert!(matches!(refused, StoreError::InvalidInput(_)), "{refused}");
    assert_eq!(
        refused.to_string(),
        "a sub-thread hangs off message 2 of thread 1, so it must open from that thread"
    );
    assert!(store.list_trees().unwrap().is_empty(), "nothing of it was written");

    let (trees, _) = written(vec![pin_off(0, None, 0), pin_off(1, Some(0), 1)]).unwrap();
    let tree = trees[0].tree.id;
    let first = store.live_threads(tree).unwrap();
    let depths: Vec<u32> = first.iter().map(|pin| pin.depth).collect();
    assert_eq!(depths, [1, 2]);
    // Indexed for search once the import's transaction ends, every message once; a refused
    // import left nothing in the index.
    let hits = store.search(tree, "words", 10).unwrap();
    assert_eq!(hits.len(), trees[0].nodes.len());
}
