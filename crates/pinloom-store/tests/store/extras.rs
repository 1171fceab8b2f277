use pinloom_store::{
    AttachmentRole, AttachmentScope, Author, Deleted, ModelProfile, NewNode, NodeId, ReplyLearned,
    StoreError, TreeMode,
};

use crate::fresh_store;

fn profile(name: &str, window: u32, reserve: u32) -> ModelProfile {
    ModelProfile {
        name: name.into(),
        provider: "anthropic-messages".into(),
        model_id: "claude-sonnet-4".into(),
        base_url: None,
        context_window: window,
        reserve,
        native_system: true,
        completion_endpoint: false,
        tokenizer: "claude".into(),
        agent_system_prompt: "Be brief.".into(),
        sampling_json: r#"{"temperature":0.7}"#.into(),
        settings_json: "{}".into(),
        prices_json: Some(r#"{"input":3.0,"output":15.0}"#.into()),
        imported_from: None,
    }
}

#[test]
fn model_profiles_are_validated_and_replaced_by_name() {
    let (store, _dir) = fresh_store();
    let saved = store.put_profile(&profile("Claude Sonnet 4", 200_000, 8_192), 1).unwrap();
    assert_eq!(store.profiles().unwrap(), vec![saved]);
    store.put_profile(&profile("Claude Sonnet 4", 200_000, 4_096), 2).unwrap();
    assert_eq!(store.profile("Claude Sonnet 4").unwrap().reserve, 4_096);

    let error = store.put_profile(&profile("Bad", 8_000, 8_000), 3).unwrap_err();
    assert!(error.to_string().contains("must be smaller than the context window"), "{error}");
    assert!(store.put_profile(&profile("Zero", 0, 0), 3).is_err());
    assert!(store.put_profile(&profile("  ", 10, 1), 3).is_err());
    assert!(matches!(store.profile("Nope"), Err(StoreError::NoSuchProfile(_))));
    store.delete_profile("Claude Sonnet 4").unwrap();
    assert!(store.profiles().unwrap().is_empty());
}

#[test]
fn attachments_hang_on_a_tree_a_thread_or_a_node_with_a_role() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Code", TreeMode::Dialogue, 0).unwrap().id;
    let node = store.append_node(&NewNode::text(tree, None, Author::Human, "q", 1)).unwrap();
    let pin = store.open_thread(tree, None, Some(node.id), "Sub", 2).unwrap();
    store
        .add_attachment(
            tree,
            AttachmentScope::Tree,
            AttachmentRole::Instruction,
            "style",
            "Be terse.",
            3,
        )
        .unwrap();
    store
        .add_attachment(
            tree,
            AttachmentScope::Thread(Some(pin.id)),
            AttachmentRole::File,
            "src/main.rs",
            "fn main() {}",
            4,
        )
        .unwrap();
    store
        .add_attachment(
            tree,
            AttachmentScope::Node(node.id),
            AttachmentRole::Folder,
            "src/",
            "main.rs\nlib.rs",
            5,
        )
        .unwrap();
    let all = store.attachments(tree).unwrap();
    let scopes: Vec<_> = all.iter().map(|a| (a.scope, a.role)).collect();
    assert_eq!(
        scopes,
        [
            (AttachmentScope::Tree, AttachmentRole::Instruction),
            (AttachmentScope::Thread(Some(pin.id)), AttachmentRole::File),
            (AttachmentScope::Node(node.id), AttachmentRole::Folder),
        ]
    );
    store.remove_attachment(all[0].id).unwrap();
    assert_eq!(store.attachments(tree).unwrap().len(), 2);
}

#[test]
fn annotations_stay_out_of_context_unless_included() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Notes", TreeMode::Dialogue, 0).unwrap().id;
    let node = store.append_node(&NewNode::text(tree, None, Author::Model, "answer", 1)).unwrap();
    let note = store.annotate(node.id, "check this", false, 2).unwrap();
    assert!(!note.included);
    store.set_annotation_included(note.id, true).unwrap();
    assert!(store.annotations(node.id).unwrap()[0].included);
    assert!(store.annotate(node.id, " ", false, 3).is_err());
}

#[test]
fn flags_usage_and_token_counts_are_kept_per_node() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Flags", TreeMode::Dialogue, 0).unwrap().id;
    let node = store.append_node(&NewNode::text(tree, None, Author::Model, "answer", 1)).unwrap();
    assert!(store.set_excluded(node.id, true).unwrap().excluded);
    assert!(store.set_bookmarked(node.id, true).unwrap().bookmarked);
    let usage = store.set_usage(node.id, r#"{"input_tokens":12,"output_tokens":3}"#).unwrap();
    assert_eq!(usage.usage_json.as_deref(), Some(r#"{"input_tokens":12,"output_tokens":3}"#));
    store.set_token_counts(node.id, &[("o200k", 2), ("cl100k", 3)]).unwrap();
    store.set_token_counts(node.id, &[("o200k", 4)]).unwrap();
    let counts = store.token_counts(&[node.id, NodeId(999)], "o200k").unwrap();
    assert_eq!(counts.get(&node.id), Some(&4));
    assert_eq!(counts.len(), 1, "a node never counted is absent");
}

#[test]
fn the_outline_pages_through_a_tree_in_write_order() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Map", TreeMode::Dialogue, 0).unwrap().id;
    let mut parent = None;
    for index in 0..25 {
        parent = Some(
            store
                .append_node(&NewNode::text(
                    tree,
                    parent,
                    Author::Human,
                    format!("n{index}"),
                    index,
                ))
                .unwrap()
                .id,
        );
    }
    let first = store.outline(tree, None, 10).unwrap();
    let second = store.outline(tree, first.last().map(|row| row.id), 10).unwrap();
    let third = store.outline(tree, second.last().map(|row| row.id), 10).unwrap();
    assert_eq!((first.len(), second.len(), third.len()), (10, 10, 5));
    assert_eq!(first[0].preview, "n0");
    assert_eq!(first[0].child_count, 1);
    assert_eq!(third[4].child_count, 0);
}

#[test]
fn the_shape_of_a_tree_leaves_out_deleted_branches_and_deleted_threads() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Shape", TreeMode::Dialogue, 0).unwrap().id;
    let text = |parent: Option<NodeId>, author, text: &str| {
        store.append_node(&NewNode::text(tree, parent, author, text, 1)).unwrap().id
    };
    let root = text(None, Author::Human, "Why do rivers meander?");
    let reply = text(Some(root), Author::Model, "Because the outer bank erodes.");
    let gone = text(Some(root), Author::Model, "A reply deleted with what followed it.");
    let after_gone = text(Some(gone), Author::Human, "Gone too.");
    let pin = store.pin_range(reply, 12, 29, "outer bank erodes", "Erosion", 2).unwrap();
    let in_pin = store
        .append_node(&NewNode {
            pin_id: Some(pin.id),
            ..NewNode::text(tree, Some(reply), Author::Human, "How fast?", 3)
        })
        .unwrap()
        .id;
    let deleted_pin = store.pin_range(reply, 0, 7, "Because", "Cause", 4).unwrap();
    let in_deleted_pin = store
        .append_node(&NewNode {
            pin_id: Some(deleted_pin.id),
            ..NewNode::text(tree, Some(reply), Author::Human, "Why?", 5)
        })
        .unwrap()
        .id;
    store.soft_delete(gone, 6).unwrap();
    store.delete_thread(deleted_pin.id, 7).unwrap();

    let shape = store.tree_shape(tree).unwrap();
    let ids: Vec<NodeId> = shape.iter().map(|row| row.id).collect();
    assert_eq!(ids, vec![root, reply, in_pin], "{after_gone:?} and {in_deleted_pin:?} left out");
    assert_eq!(shape[1].parent_id, Some(root));
    assert_eq!(shape[1].author, Author::Model);
    assert_eq!((shape[2].parent_id, shape[2].pin_id), (Some(reply), Some(pin.id)));
}

#[test]
fn search_ranks_by_bm25_and_takes_any_prompt_safely() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Search", TreeMode::Dialogue, 0).unwrap().id;
    let other = store.create_tree("Other", TreeMode::Dialogue, 0).unwrap().id;
    let root = store
        .append_node(&NewNode::text(tree, None, Author::Human, "meander meander oxbow", 1))
        .unwrap();
    let weak = store
        .append_node(&NewNode::text(
            tree,
            Some(root.id),
            Author::Model,
            "a river meander, once, among many other words here",
            2,
        ))
        .unwrap();
    store.append_node(&NewNode::text(other, None, Author::Human, "meander elsewhere", 3)).unwrap();
    store.set_bookmarked(weak.id, true).unwrap();

    let hits = store.search(tree, "Why do rivers MEANDER?", 10).unwrap();
    assert_eq!(
        hits.iter().map(|hit| hit.node_id).collect::<Vec<_>>(),
        [root.id, weak.id],
        "other trees are not searched"
    );
    assert!(hits[0].bm25 < hits[1].bm25, "lower bm25 is the better match");
    assert!(hits[1].bookmarked && !hits[1].pinned);
    for prompt in ["", "\"unbalanced", "NEAR(a b", "a* OR -b", "(((", "😀"] {
        assert!(store.search(tree, prompt, 10).is_ok(), "{prompt:?} must not break the search");
    }
}

#[test]
fn tree_settings_are_stored() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Settings", TreeMode::Buffer, 0).unwrap().id;
    assert!(!store.tree(tree).unwrap().buffer_includes_system, "off by default (seed 002)");
    store.set_system_context(tree, "You are a careful editor.", 1).unwrap();
    store.set_buffer_includes_system(tree, true, 2).unwrap();
    let updated = store.set_tree_settings(tree, r#"{"tokenBuffer":1024}"#, 3).unwrap();
    assert_eq!(updated.system_context, "You are a careful editor.");
    assert!(updated.buffer_includes_system);
    assert_eq!(updated.settings_json, r#"{"tokenBuffer":1024}"#);
    store.delete_tree(tree).unwrap();
    assert!(store.list_trees().unwrap().is_empty());
}

#[test]
fn a_reply_is_written_with_its_usage_flag_and_counts_in_one_go() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Replies", TreeMode::Dialogue, 1).unwrap();
    let question =
        store.append_node(&NewNode::text(tree.id, None, Author::Human, "Why?", 2)).unwrap();
    let mut reply = NewNode::text(tree.id, Some(question.id), Author::Model, "Because the", 3);
    reply.usage_json = Some(r#"{"inputTokens":12}"#.into());
    reply.incomplete = true;
    reply.token_counts = vec![("o200k".into(), 2), ("cl100k".into(), 3)];
    let written = store.append_node(&reply).unwrap();
    assert!(written.incomplete);
    let read = store.node(written.id).unwrap();
    assert_eq!(read, written, "what append returns is what is stored");
    assert_eq!(read.usage_json.as_deref(), Some(r#"{"inputTokens":12}"#));
    let ids = [question.id, written.id, NodeId(999)];
    assert_eq!(
        store.token_counts(&ids, "cl100k").unwrap().into_iter().collect::<Vec<_>>(),
        [(written.id, 3)]
    );

    reply.token_counts = vec![("o200k".into(), u64::MAX)];
    assert!(matches!(store.append_node(&reply), Err(StoreError::InvalidInput(_))));
    assert_eq!(
        store.children(question.id, pinloom_store::Deleted::Included).unwrap().len(),
        1,
        "the refused one left no row"
    );
}

#[test]
fn calibrations_are_kept_per_profile_and_count_their_replies() {
    let (store, _dir) = fresh_store();
    assert_eq!(store.calibration("Claude").unwrap(), None);
    store.record_calibration("Claude", 3_200, 1).unwrap();
    store.record_calibration("Claude", 3_350, 2).unwrap();
    assert_eq!(store.calibration("Claude").unwrap(), Some((3_350, 2)));
    assert_eq!(store.calibration("Gemini").unwrap(), None);
    assert!(matches!(store.record_calibration("Claude", 0, 3), Err(StoreError::InvalidInput(_))));
}

#[test]
fn a_reply_and_what_it_taught_are_written_together_or_not_at_all() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 1).unwrap();
    let prompt = store
        .append_node(&NewNode::text(tree.id, None, Author::Human, "Why meanders?", 2))
        .unwrap();
    let reply = NewNode::text(tree.id, Some(prompt.id), Author::Model, "Erosion.", 3);
    let counted = [(prompt.id, 4)];

    // A calibration that cannot be stored fails the whole write: no reply, no counts.
    let refused =
        ReplyLearned { family_counts: Some(("o200k", &counted)), calibration: Some(("Local", 0)) };
    assert!(matches!(store.append_reply(&reply, &refused), Err(StoreError::InvalidInput(_))));
    assert_eq!(store.children(prompt.id, Deleted::Left).unwrap(), vec![]);
    assert!(store.token_counts(&[prompt.id], "o200k").unwrap().is_empty());

    let learned = ReplyLearned {
        family_counts: Some(("o200k", &counted)),
        calibration: Some(("Local", 3_400)),
    };
    let written = store.append_reply(&reply, &learned).unwrap();
    assert_eq!(store.children(prompt.id, Deleted::Left).unwrap(), vec![written]);
    assert_eq!(store.token_counts(&[prompt.id], "o200k").unwrap().get(&prompt.id), Some(&4));
    assert_eq!(store.calibration("Local").unwrap(), Some((3_400, 1)));
}

#[test]
fn words_in_most_messages_are_not_searched_for_once_there_are_many() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 1).unwrap();
    let mut parent = None;
    let total = pinloom_store::COMMON_TERM_MIN_NODES;
    for index in 0..total {
        let text = if index == 7 {
            "the thalweg is the deepest line of the river".to_owned()
        } else {
            format!("the river bends, turn {index}")
        };
        parent = Some(
            store
                .append_node(&NewNode::text(tree.id, parent, Author::Human, text, index))
                .unwrap()
                .id,
        );
    }
    let hits = store.search(tree.id, "the river and the THALWEG", 10).unwrap();
    assert_eq!(hits.len(), 1, "only the rare word is searched for: {hits:?}");
    assert!(hits[0].bm25 < 0.0, "FTS5's bm25: lower is better");
    assert!(store.search(tree.id, "the river the river", 10).unwrap().is_empty());
}

#[test]
fn a_kept_message_stays_kept_until_released() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 1).unwrap();
    let node =
        store.append_node(&NewNode::text(tree.id, None, Author::Human, "Keep me.", 2)).unwrap();
    assert!(!node.kept);
    assert!(store.set_kept(node.id, true).unwrap().kept);
    assert!(store.ancestor_path(node.id).unwrap()[0].kept, "the path reads it");
    assert!(!store.set_kept(node.id, false).unwrap().kept);
    assert!(matches!(store.set_kept(NodeId(999), true), Err(StoreError::NotFound { .. })));
}

#[test]
fn path_search_finds_only_what_the_path_may_know() {
    // root "meander?" → answer "meander bend" → follow-up "meander again" (the path), with a
    // regenerated answer, an abandoned follow-up, a pin on the answer, a parent-thread message
    // after the pin's anchor, an excluded and a deleted message: all say "meander".
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Path", TreeMode::Dialogue, 0).unwrap().id;
    let say = |parent: Option<NodeId>, author: Author, text: &str| {
        store.append_node(&NewNode::text(tree, parent, author, text, 1)).unwrap()
    };
    let root = say(None, Author::Human, "why does a river meander");
    let answer = say(Some(root.id), Author::Model, "a meander is a bend in the river");
    let regenerated = say(Some(root.id), Author::Model, "another meander answer");
    let follow = say(Some(answer.id), Author::Human, "meander again please");
    let abandoned = say(Some(answer.id), Author::Human, "an abandoned meander question");
    let excluded = say(Some(follow.id), Author::Model, "an excluded meander reply");
    store.set_excluded(excluded.id, true).unwrap();
    let later = say(Some(excluded.id), Author::Human, "a later meander remark");
    let end = say(Some(later.id), Author::Model, "the last meander word");
    store.soft_delete(abandoned.id, 2).unwrap();

    let passage = "bend";
    let start = answer.text.find(passage).unwrap() as u32;
    let pin = store.pin_range(answer.id, start, start + 4, passage, "", 2).unwrap();
    let mut in_pin =
        NewNode::text(tree, Some(answer.id), Author::Human, "meander inside the pin", 3);
    in_pin.pin_id = Some(pin.id);
    let in_pin = store.append_node(&in_pin).unwrap();
    // A continuation stays in its thread.
    let in_pin_reply = say(Some(in_pin.id), Author::Model, "a meander reply in the pin");

    let found = |node: NodeId| -> Vec<NodeId> {
        let mut hits: Vec<NodeId> =
            store.search_path(node, "meander", 50).unwrap().iter().map(|hit| hit.node_id).collect();
        hits.sort();
        hits
    };
    // From the end of the main line: its own ancestors, less the excluded one and the end itself.
    assert_eq!(found(end.id), vec![root.id, answer.id, follow.id, later.id]);
    // From the regenerated answer: only the question before it.
    assert_eq!(found(regenerated.id), vec![root.id]);
    // From inside the pin: its own thread and its parent thread up to the anchor (a detail its
    // summary dropped may be recalled); nothing after the anchor (the follow-up, the end) is
    // reachable at all.
    assert_eq!(found(in_pin_reply.id), vec![root.id, answer.id, in_pin.id]);
    // A search hit carries what the engine needs without another read.
    let hits = store.search_path(in_pin_reply.id, "meander inside", 5).unwrap();
    let hit = hits.iter().find(|hit| hit.node_id == in_pin.id).unwrap();
    assert_eq!(
        (hit.pin_id, hit.author, hit.text.as_str()),
        (Some(pin.id), Author::Human, in_pin.text.as_str())
    );
    assert!(store.search_path(NodeId(9_999), "meander", 5).is_err(), "an unknown node is an error");
}

#[test]
fn a_streaming_reply_is_kept_as_a_draft_and_a_left_draft_becomes_an_incomplete_reply() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Drafts", TreeMode::Dialogue, 0).unwrap().id;
    let question =
        store.append_node(&NewNode::text(tree, None, Author::Human, "Why meanders?", 1)).unwrap();
    let draft = store.save_reply_draft(None, tree, question.id, "Local", "Rivers", 7, 2).unwrap();
    let same = store
        .save_reply_draft(Some(draft), tree, question.id, "Local", "Rivers meander", 7, 3)
        .unwrap();
    assert_eq!(same, draft, "the draft's text is replaced, not added to");
    assert!(store.save_reply_draft(Some(404), tree, question.id, "Local", "x", 7, 3).is_err());

    // A draft still being kept (by process 7, say) is left alone.
    assert!(store.recover_reply_drafts(|_, _| false).unwrap().is_empty());
    assert!(store.children(question.id, pinloom_store::Deleted::Left).unwrap().is_empty());

    // Finished: the reply is written and its draft goes in the same transaction.
    let mut reply = NewNode::text(tree, Some(question.id), Author::Model, "Rivers meander.", 4);
    reply.replaces_draft = Some(draft);
    store.append_node(&reply).unwrap();
    assert!(store.recover_reply_drafts(|_, _| true).unwrap().is_empty(), "no draft is left");

    // Left by a process that stopped: written as an incomplete reply from its model.
    let left = store.save_reply_draft(None, tree, question.id, "Local", "Sediment", 8, 5).unwrap();
    let empty = store.save_reply_draft(None, tree, question.id, "Local", "  ", 8, 5).unwrap();
    let recovered =
        store.recover_reply_drafts(|owner, saved_at_ms| owner == 8 && saved_at_ms == 5).unwrap();
    assert_eq!(recovered.len(), 1, "the empty draft is dropped, not written");
    assert_eq!((recovered[0].text.as_str(), recovered[0].incomplete), ("Sediment", true));
    assert_eq!(recovered[0].model.as_deref(), Some("Local"));
    assert_eq!(recovered[0].parent_id, Some(question.id));
    assert!(store.recover_reply_drafts(|_, _| true).unwrap().is_empty(), "{left} and {empty} went");
}

#[test]
fn alternatives_and_pins_of_a_whole_thread_agree_with_the_one_message_queries() {
    let (store, _dir) = fresh_store();
    let tree = store.create_tree("Branches", TreeMode::Dialogue, 0).unwrap().id;
    let say = |parent: Option<NodeId>, text: &str| {
        store.append_node(&NewNode::text(tree, parent, Author::Human, text, 1)).unwrap()
    };
    let root = say(None, "a river bends");
    // An edit of the first message is a second first message.
    let edited = vec![pinloom_store::Part::Text { text: "a river turns".into() }];
    let second_root = store.edit_node(root.id, edited, Vec::new(), 2).unwrap();
    let answer = say(Some(root.id), "one answer");
    let regenerated = say(Some(root.id), "another answer");
    let deleted = say(Some(root.id), "a deleted answer");
    store.soft_delete(deleted.id, 2).unwrap();
    let follow = say(Some(answer.id), "and then");
    let pin = store.pin_range(answer.id, 0, 3, "one", "", 3).unwrap();
    let mut in_pin = NewNode::text(tree, Some(answer.id), Author::Human, "in the pin", 4);
    in_pin.pin_id = Some(pin.id);
    store.append_node(&in_pin).unwrap();

    let path = store.ancestor_path(follow.id).unwrap();
    let all = store.alternatives(&path).unwrap();
    let pins = store.pins_anchored_in_each(&path.iter().map(|n| n.id).collect::<Vec<_>>()).unwrap();
    for node in &path {
        let mut expected: Vec<NodeId> =
            store.siblings(node.id).unwrap().iter().map(|n| n.id).collect();
        expected.push(node.id);
        expected.sort_unstable();
        assert_eq!(all[&node.id], expected, "alternatives of {}", node.text);
        assert_eq!(
            pins.get(&node.id).cloned().unwrap_or_default(),
            store.pins_anchored_in(node.id).unwrap(),
            "pins of {}",
            node.text
        );
    }
    assert_eq!(all[&root.id], vec![root.id, second_root.id], "two first messages");
    assert_eq!(all[&answer.id], vec![answer.id, regenerated.id], "the deleted answer is left out");
}
