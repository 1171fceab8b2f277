//! One test per assembly rule, named after the rule and its seed.

use pinloom_engine::error::EngineError;
use pinloom_engine::plan::{
    AncestorContent, ExcerptReason, Provenance, PruneReason, Role, SliceKind, SliceStatus, SourceId,
};
use pinloom_engine::planner::{ancestry, available_budget, plan};
use pinloom_engine::profile::{ModelProfile, ProviderFamily, RoleRules};
use pinloom_engine::render::{buffer_document, chat_request, slice_text};
use pinloom_engine::settings::{
    AssemblyStrategy, DEEPPIN_ANCHOR_FRAMING, Settings, TaskFrameShares, TruncationStrategy,
};
use pinloom_engine::snapshot::{
    Attachment, AttachmentKind, AttachmentScope, Author, CachedCount, FuseSource, NodeId,
    NodeRecord, ParentEdge, Part, PickedSource, PinId, PinRecord, RetrievalCandidate,
    SummaryAuthor, SummaryNote, SummaryRecord, SummaryState, ThreadRef, TreeInfo, TreeMode,
};
use pinloom_engine::tokens::{CharHeuristic, Tokenizer, TokenizerId};

use crate::fixtures::{Tree, profile};

const OPENAI: ProviderFamily = ProviderFamily::OpenAiCompatible;

fn ids(
    plan: &pinloom_engine::ContextPlan,
    kind_filter: impl Fn(SliceKind) -> bool,
) -> Vec<SourceId> {
    plan.included().filter(|s| kind_filter(s.kind)).map(|s| s.source).collect()
}

fn history_ids(plan: &pinloom_engine::ContextPlan) -> Vec<u64> {
    plan.included()
        .filter_map(|s| match (s.kind, s.source) {
            (
                SliceKind::RecentHistory | SliceKind::OldHistory | SliceKind::Prompt,
                SourceId::Node(n),
            ) => Some(n.0),
            _ => None,
        })
        .collect()
}

#[test]
fn ancestry_is_root_first_seed_000() {
    let mut t = Tree::new("t");
    t.say(Author::Human, "a");
    t.say(Author::Model, "b");
    t.say(Author::Human, "c");
    // Hand the nodes in reverse so the walk must use its index.
    t.snapshot.nodes.reverse();
    let path = ancestry(&t.snapshot, 50).unwrap();
    let order: Vec<u64> = path.nodes.iter().map(|&i| t.snapshot.nodes[i].id.0).collect();
    assert_eq!(order, vec![1, 2, 3]);
}

#[test]
fn siblings_and_other_branches_are_never_included_seed_003() {
    let mut t = Tree::new("t");
    let root = t.say(Author::Human, "root");
    // A sibling branch off the root, then the active branch.
    t.push(ParentEdge::Continuation(root), Author::Model, "sibling answer");
    let kept = t.push(ParentEdge::Continuation(root), Author::Model, "kept answer");
    t.push(ParentEdge::Continuation(kept), Author::Human, "follow-up");
    let p = plan(&t.snapshot, &profile(OPENAI, 10_000), &Settings::default()).unwrap();
    assert_eq!(history_ids(&p), vec![1, 3, 4]);
    assert!(p.slices.iter().all(|s| s.source != SourceId::Node(NodeId(2))), "not even a candidate");
}

#[test]
fn a_cycle_is_an_error_seed_000() {
    let mut t = Tree::new("t");
    t.say(Author::Human, "a");
    t.say(Author::Model, "b");
    t.snapshot.nodes[0].edge = ParentEdge::Continuation(NodeId(2));
    let err = plan(&t.snapshot, &profile(OPENAI, 1000), &Settings::default()).unwrap_err();
    assert!(matches!(err, EngineError::Cycle { .. }), "{err}");
    assert!(err.to_string().contains("circular reference"));
}

#[test]
fn depth_guard_stops_chains_over_50_threads_seed_000() {
    let mut t = Tree::new("t");
    t.say(Author::Human, "root");
    for pin in 1..50 {
        t.pin(pin, "p", None, "q");
    }
    assert!(
        plan(&t.snapshot, &profile(OPENAI, 100_000), &Settings::default()).is_ok(),
        "50 is fine"
    );
    t.pin(50, "p", None, "q");
    let err = plan(&t.snapshot, &profile(OPENAI, 100_000), &Settings::default()).unwrap_err();
    assert_eq!(err, EngineError::DepthExceeded { depth: 51, limit: 50 });
}

fn three_level_tree() -> Tree {
    let mut t = Tree::new("Main");
    t.say(Author::Human, "main question");
    let a = t.say(Author::Model, "main answer");
    t.pin(1, "Pin A", Some("multi-head attention"), "what is multi-head?");
    let b = t.say(Author::Model, "pin a answer");
    t.pin(2, "Pin B", Some("vs CNN receptive field"), "how does it differ?");
    let c = t.say(Author::Model, "pin b answer");
    t.pin(3, "Pin C", Some("local receptive fields"), "How does this fundamentally differ?");
    t.summary(ThreadRef::Root, a, Some(150), "main summary");
    t.summary(ThreadRef::Pin(PinId(1)), b, Some(300), "pin a summary");
    t.summary(ThreadRef::Pin(PinId(2)), c, Some(800), "pin b summary");
    t
}

#[test]
fn ancestor_summaries_root_first_nearest_gets_largest_budget_seed_003() {
    let t = three_level_tree();
    let p = plan(&t.snapshot, &profile(OPENAI, 10_000), &Settings::default()).unwrap();
    let summaries = ids(&p, |k| k == SliceKind::AncestorSummary);
    assert_eq!(
        summaries,
        vec![
            SourceId::Summary(ThreadRef::Root),
            SourceId::Summary(ThreadRef::Pin(PinId(1))),
            SourceId::Summary(ThreadRef::Pin(PinId(2))),
        ]
    );
    // Ancestor messages are represented by their summaries, not repeated.
    assert_eq!(history_ids(&p), vec![7]);
}

#[test]
fn deeper_ancestors_reuse_the_last_depth_budget_seed_003() {
    let s = Settings::default();
    assert_eq!(
        (1..=6).map(|d| s.depth_budget(d)).collect::<Vec<_>>(),
        vec![800, 500, 300, 150, 150, 150]
    );
}

#[test]
fn a_summary_for_the_wrong_budget_or_endpoint_is_reported_missing_seed_003() {
    let mut t = three_level_tree();
    // The root's summary ends past the anchor point: it would leak a non-ancestor.
    t.snapshot.summaries[0].up_to = Some(NodeId(99));
    let p = plan(&t.snapshot, &profile(OPENAI, 10_000), &Settings::default()).unwrap();
    assert_eq!(p.missing_summaries.len(), 1);
    assert_eq!(p.missing_summaries[0].thread, ThreadRef::Root);
    assert_eq!(p.missing_summaries[0].budget, 300, "distance 3 gets the third budget");
    assert_eq!(p.missing_summaries[0].condense, None);
    // Meanwhile the root thread is not lost: its last messages stand in, verbatim.
    let root = &p.ancestors[0];
    assert_eq!(root.thread, ThreadRef::Root);
    assert!(
        matches!(
            &root.content,
            AncestorContent::Excerpt { quoted, reason: ExcerptReason::NotWritten } if quoted == &[NodeId(1), NodeId(2)]
        ),
        "{:?}",
        root.content
    );
    assert_eq!(root.text, "Person: main question\n\nModel: main answer");
    let slice = &p.slices[root.slice];
    assert!(slice.is_included());
    let sent = slice_text(slice, &t.snapshot);
    assert!(sent.contains("not available (not written yet)"), "{sent}");
}

#[test]
fn a_chosen_summary_over_its_depth_budget_is_cut_at_a_sentence_and_condensed_never_dropped() {
    let mut t = three_level_tree();
    // 400 tokens > 300 at distance 3, written by the person (no budget).
    let sentence = "The root thread settled one thing. ";
    t.snapshot.summaries[0].text = sentence.repeat(46);
    t.snapshot.summaries[0].budget = None;
    t.snapshot.summaries[0].written_by = SummaryAuthor::Person;
    t.snapshot.summaries[0].chosen = true;
    let p = plan(&t.snapshot, &profile(OPENAI, 10_000), &Settings::default()).unwrap();
    let root = &p.ancestors[0];
    assert!(matches!(root.content, AncestorContent::Cut { record: 0, .. }), "{:?}", root.content);
    assert!(p.slices[root.slice].is_included(), "never dropped for its length");
    assert!(root.text.ends_with("[…cut to fit its budget of 300 tokens]"), "{}", root.text);
    assert!(root.text.starts_with(sentence.trim_end()));
    let kept = root.text.trim_end_matches(" […cut to fit its budget of 300 tokens]");
    assert!(kept.ends_with("thing."), "cut at a sentence: {kept}");
    assert!(Tokenizer::Chars(CharHeuristic::FourChars).count(&root.text) <= 300);
    assert_eq!(p.missing_summaries.len(), 1);
    assert_eq!(p.missing_summaries[0].condense, Some(t.snapshot.summaries[0].id));

    // Once the summariser has condensed it, the fitted version is sent, and nothing is missing.
    let mut fitted =
        SummaryRecord::written(ThreadRef::Root, NodeId(2), 300, "The root settled it.");
    fitted.id = 40;
    fitted.fitted_from = Some(t.snapshot.summaries[0].id);
    t.snapshot.summaries.push(fitted);
    let p = plan(&t.snapshot, &profile(OPENAI, 10_000), &Settings::default()).unwrap();
    assert!(matches!(p.ancestors[0].content, AncestorContent::Fitted { record: 3, from: 0 }));
    assert_eq!(p.ancestors[0].text, "The root settled it.");
    assert!(p.missing_summaries.is_empty());
}

#[test]
fn a_summary_the_summariser_wrote_that_counts_over_later_is_cut_not_dropped() {
    let mut t = three_level_tree();
    // Written for 300 tokens, but a recount (the calibration moved) finds 320.
    t.snapshot.summaries[0].budget = Some(300);
    t.snapshot.summaries[0].text = "Attention weighs every token. ".repeat(43);
    let p = plan(&t.snapshot, &profile(OPENAI, 10_000), &Settings::default()).unwrap();
    assert!(matches!(p.ancestors[0].content, AncestorContent::Cut { .. }));
    assert!(p.slices[p.ancestors[0].slice].is_included());
    assert!(p.missing_summaries.is_empty(), "the summariser's own: cutting it is enough");
}

#[test]
fn written_on_purpose_wins_over_the_summarisers_own_at_the_same_point() {
    let mut t = three_level_tree();
    let root_end = NodeId(2);
    // An agent's summary of the whole root thread (summary_update)…
    let mut agent = SummaryRecord::written(ThreadRef::Root, root_end, 1, "agent's whole thread");
    (agent.id, agent.up_to, agent.budget) = (21, None, None);
    (agent.written_by, agent.chosen) = (SummaryAuthor::Agent, true);
    t.snapshot.summaries.push(agent);
    let p = plan(&t.snapshot, &profile(OPENAI, 10_000), &Settings::default()).unwrap();
    assert_eq!(p.ancestors[0].text, "agent's whole thread", "over the summariser's at 150");
    assert!(p.missing_summaries.is_empty());
    // …and the person's own, at the point the pin hangs off, over both.
    t.summary(ThreadRef::Root, root_end, None, "the person's own");
    let p = plan(&t.snapshot, &profile(OPENAI, 10_000), &Settings::default()).unwrap();
    assert_eq!(p.ancestors[0].text, "the person's own");
    let sent = chat_request(&p, &t.snapshot, &profile(OPENAI, 10_000));
    assert!(sent.system.unwrap_or_default().contains("the person's own"));
}

#[test]
fn an_empty_summary_is_no_summary_and_the_threads_messages_stand_in_seed_000() {
    let mut t = three_level_tree();
    t.snapshot.summaries[1].text = "  ".into();
    t.snapshot.summary_notes.push(SummaryNote {
        thread: ThreadRef::Pin(PinId(1)),
        up_to: NodeId(4),
        state: SummaryState::Failed("model not found".into()),
    });
    let p = plan(&t.snapshot, &profile(OPENAI, 10_000), &Settings::default()).unwrap();
    let a = &p.ancestors[1];
    assert_eq!(a.thread, ThreadRef::Pin(PinId(1)));
    assert!(matches!(
        &a.content,
        AncestorContent::Excerpt { reason: ExcerptReason::Failed(why), .. } if why == "model not found"
    ));
    assert!(p.slices[a.slice].is_included());
    assert_eq!(a.text, "Person: what is multi-head?\n\nModel: pin a answer");
}

#[test]
fn an_excerpt_keeps_the_newest_messages_that_fit_and_the_end_of_one_too_long() {
    let mut t = Tree::new("Main");
    t.say(Author::Human, "an old question about rivers");
    t.say(Author::Model, &"meander ".repeat(200)); // 400 tokens alone
    t.pin(1, "Pin", Some("meander"), "why?");
    let settings = Settings { depth_budgets: vec![60], ..Settings::default() };
    let p = plan(&t.snapshot, &profile(OPENAI, 10_000), &settings).unwrap();
    let root = &p.ancestors[0];
    // The answer alone, cut to its end: no message is quoted whole.
    assert!(matches!(&root.content, AncestorContent::Excerpt { quoted, .. } if quoted.is_empty()));
    assert!(root.text.starts_with("Model: …meander"), "{}", root.text);
    assert!(Tokenizer::Chars(CharHeuristic::FourChars).count(&root.text) <= 60);
}

#[test]
fn every_ancestor_is_carried_or_named_with_its_reason() {
    // A window so small that the summaries cannot all fit: those left out say why.
    let t = three_level_tree();
    let p = plan(&t.snapshot, &profile(OPENAI, 80), &Settings::default()).unwrap();
    assert_eq!(p.ancestors.len(), 3);
    assert!(
        p.ancestors.iter().any(|entry| !p.slices[entry.slice].is_included()),
        "the window leaves some out"
    );
    for entry in &p.ancestors {
        let slice = &p.slices[entry.slice];
        assert_eq!(slice.source, SourceId::Summary(entry.thread));
        if !slice.is_included() {
            assert!(p.pruned_report().iter().any(|cut| cut.source == slice.source));
        }
    }
}

#[test]
fn anchor_text_is_verbatim_framed_and_never_trimmed_seed_003() {
    let mut t = three_level_tree();
    let long_anchor = "local receptive fields ".repeat(20);
    t.snapshot.pins[2].anchor.as_mut().unwrap().text = long_anchor.clone();
    // Ancestor summaries as long as their depth budgets allow, so the budget must choose.
    for summary in &mut t.snapshot.summaries {
        summary.text = "an earlier finding about attention ".repeat(8);
    }
    let roomy = plan(&t.snapshot, &profile(OPENAI, 100_000), &Settings::default()).unwrap();
    let tokens = |p: &pinloom_engine::ContextPlan, kind: SliceKind| -> u32 {
        p.slices.iter().filter(|s| s.kind == kind).map(|s| s.tokens).sum()
    };
    assert!(roomy.slices.iter().all(|s| s.is_included()), "all fit a roomy window");
    let anchor_tokens = tokens(&roomy, SliceKind::Anchor);
    let summaries = tokens(&roomy, SliceKind::AncestorSummary);
    // Room for everything but one summary's worth: the anchor is under pressure.
    let window = roomy.used - summaries / 3 - 1;
    let p = plan(&t.snapshot, &profile(OPENAI, window), &Settings::default()).unwrap();
    let cut: Vec<_> = p
        .slices
        .iter()
        .filter(|s| s.kind == SliceKind::AncestorSummary && !s.is_included())
        .collect();
    assert!(!cut.is_empty(), "the budget cut a summary: {:?}", p.slices);
    assert!(cut.iter().all(|s| s.status == SliceStatus::Pruned(PruneReason::OverBudget)));
    let anchor = p.slices.iter().find(|s| s.kind == SliceKind::Anchor).unwrap();
    assert!(anchor.is_included());
    assert_eq!(anchor.cut_from, None, "never trimmed");
    assert_eq!(anchor.tokens, anchor_tokens, "whole");
    let request = chat_request(&p, &t.snapshot, &profile(OPENAI, window));
    let expected = DEEPPIN_ANCHOR_FRAMING.replace("{anchor}", &long_anchor);
    assert!(request.system.unwrap().contains(&expected));
}

#[test]
fn anchor_framing_wording_is_a_setting_seed_003() {
    let t = three_level_tree();
    let settings = Settings { anchor_framing: "Focus: «{anchor}»".into(), ..Settings::default() };
    let p = plan(&t.snapshot, &profile(OPENAI, 10_000), &settings).unwrap();
    let request = chat_request(&p, &t.snapshot, &profile(OPENAI, 10_000));
    assert!(request.system.unwrap().contains("Focus: «local receptive fields»"));
}

#[test]
fn a_pin_opened_without_a_highlight_has_no_anchor_seed_000() {
    let mut t = Tree::new("t");
    t.say(Author::Human, "root");
    t.pin(1, "p", None, "question");
    let p = plan(&t.snapshot, &profile(OPENAI, 1000), &Settings::default()).unwrap();
    assert!(p.slices.iter().all(|s| s.kind != SliceKind::Anchor));
}

#[test]
fn system_context_is_agent_then_tree_then_instructions_seed_002() {
    let mut t = Tree::new("t");
    let n = t.say(Author::Human, "hi");
    t.snapshot.tree.system_context = "TREE".into();
    t.snapshot.attachments.push(Attachment {
        id: 9,
        scope: AttachmentScope::Node(n),
        kind: AttachmentKind::Instruction("NODE INSTRUCTION".into()),
    });
    t.snapshot.attachments.push(Attachment {
        id: 8,
        scope: AttachmentScope::Tree,
        kind: AttachmentKind::Instruction("TREE INSTRUCTION".into()),
    });
    let mut prof = profile(OPENAI, 1000);
    prof.system_prompt = "AGENT".into();
    let p = plan(&t.snapshot, &prof, &Settings::default()).unwrap();
    assert_eq!(
        ids(&p, |k| k == SliceKind::System),
        vec![
            SourceId::AgentPrompt,
            SourceId::TreeSystemContext,
            SourceId::Attachment(8),
            SourceId::Attachment(9)
        ]
    );
    let request = chat_request(&p, &t.snapshot, &prof);
    assert_eq!(
        request.system.as_deref(),
        Some("AGENT\n\nTREE\n\nTREE INSTRUCTION\n\nNODE INSTRUCTION")
    );
}

#[test]
fn system_context_alone_over_budget_is_a_clear_error_seed_002() {
    let mut t = Tree::new("t");
    t.say(Author::Human, "hi");
    t.snapshot.tree.system_context = "x".repeat(400);
    let err = plan(&t.snapshot, &profile(OPENAI, 50), &Settings::default()).unwrap_err();
    assert_eq!(err, EngineError::SystemContextOverBudget { system: 100, available: 50 });
    assert!(err.to_string().contains("system context alone"));
}

#[test]
fn excluded_pruned_and_annotation_nodes_are_left_out_seed_002() {
    let mut t = Tree::new("t");
    t.say(Author::Human, "a");
    let b = t.say(Author::Model, "b");
    t.say(Author::Human, "c");
    t.push(ParentEdge::Annotation(NodeId(3)), Author::Human, "note");
    t.say(Author::Model, "d");
    t.say(Author::Human, "e");
    t.snapshot.nodes[1].excluded = true;
    t.snapshot.nodes[2].pruned = true;
    let _ = b;
    let p = plan(&t.snapshot, &profile(OPENAI, 10_000), &Settings::default()).unwrap();
    assert_eq!(history_ids(&p), vec![1, 5, 6]);
    let reasons: Vec<_> = p.pruned_report().iter().map(|e| (e.source, e.reason)).collect();
    assert!(reasons.contains(&(SourceId::Node(NodeId(2)), PruneReason::Excluded)));
    assert!(reasons.contains(&(SourceId::Node(NodeId(3)), PruneReason::SoftDeleted)));
    assert!(reasons.contains(&(SourceId::Node(NodeId(4)), PruneReason::Annotation)));
}

#[test]
fn an_annotation_explicitly_included_is_kept_seed_002() {
    let mut t = Tree::new("t");
    t.say(Author::Human, "a");
    t.push(ParentEdge::Annotation(NodeId(1)), Author::Human, "note");
    t.snapshot.nodes[1].include_annotation = true;
    t.say(Author::Human, "b");
    let p = plan(&t.snapshot, &profile(OPENAI, 10_000), &Settings::default()).unwrap();
    assert_eq!(history_ids(&p), vec![1, 2, 3]);
}

#[test]
fn edge_roles_go_instruction_then_context_then_primary_seed_002() {
    let mut t = Tree::new("t");
    let n = t.say(Author::Human, "primary");
    t.snapshot.attachments.push(Attachment {
        id: 1,
        scope: AttachmentScope::Node(n),
        kind: AttachmentKind::Context { title: "ref".into(), text: "REFERENCE".into() },
    });
    t.snapshot.attachments.push(Attachment {
        id: 2,
        scope: AttachmentScope::Node(n),
        kind: AttachmentKind::Instruction("INSTRUCTION".into()),
    });
    let p = plan(&t.snapshot, &profile(OPENAI, 10_000), &Settings::default()).unwrap();
    let order: Vec<SliceKind> = p.included().map(|s| s.kind).collect();
    assert_eq!(order, vec![SliceKind::System, SliceKind::ContextSource, SliceKind::Prompt]);
}

#[test]
fn dialogue_maps_authors_to_roles_and_merges_consecutive_same_author_seed_002() {
    let mut t = Tree::new("t");
    t.say(Author::Human, "one");
    t.say(Author::Human, "two");
    t.say(Author::Model, "three");
    t.say(Author::Human, "four");
    let prof = profile(OPENAI, 10_000);
    let p = plan(&t.snapshot, &prof, &Settings::default()).unwrap();
    let r = chat_request(&p, &t.snapshot, &prof);
    let roles: Vec<Role> = r.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, vec![Role::User, Role::Assistant, Role::User]);
    assert_eq!(r.messages[0].parts, vec![Part::Text("one\n\ntwo".into())]);
}

fn tool_tree() -> Tree {
    let mut t = Tree::new("t");
    t.say(Author::Human, "weather?");
    let call = t.say(Author::Model, "");
    t.snapshot.nodes.last_mut().unwrap().parts = vec![
        Part::ToolCall { id: "c1".into(), name: "weather".into(), arguments: "{}".into() },
        Part::ToolCall { id: "c2".into(), name: "time".into(), arguments: "{}".into() },
    ];
    let _ = call;
    t.say(Author::Tool, "");
    t.snapshot.nodes.last_mut().unwrap().parts =
        vec![Part::ToolResult { call_id: "c1".into(), content: "sunny".into() }];
    t.say(Author::Tool, "");
    t.snapshot.nodes.last_mut().unwrap().parts =
        vec![Part::ToolResult { call_id: "c2".into(), content: "noon".into() }];
    t.say(Author::Model, "It is sunny at noon.");
    t.say(Author::Human, "thanks");
    t
}

#[test]
fn merging_never_crosses_a_tool_call_and_its_results_seed_002() {
    let t = tool_tree();
    let prof = profile(OPENAI, 10_000);
    let p = plan(&t.snapshot, &prof, &Settings::default()).unwrap();
    let r = chat_request(&p, &t.snapshot, &prof);
    let roles: Vec<Role> = r.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        vec![Role::User, Role::Assistant, Role::Tool, Role::Tool, Role::Assistant, Role::User]
    );
}

#[test]
fn a_tool_call_and_all_its_results_stay_or_go_together_engine_anchors_2() {
    let t = tool_tree();
    let p = plan(&t.snapshot, &profile(OPENAI, 10_000), &Settings::default()).unwrap();
    let groups: Vec<u32> = p
        .slices
        .iter()
        .filter(|s| matches!(s.source, SourceId::Node(NodeId(2..=4))))
        .map(|s| s.group)
        .collect();
    assert!(groups.windows(2).all(|w| w[0] == w[1]), "call and results share a group");
    // A result whose call was excluded is an orphan and is dropped.
    let mut t = tool_tree();
    t.snapshot.nodes[1].excluded = true;
    let p = plan(&t.snapshot, &profile(OPENAI, 10_000), &Settings::default()).unwrap();
    let report = p.pruned_report();
    assert!(report.iter().any(
        |e| e.source == SourceId::Node(NodeId(3)) && e.reason == PruneReason::OrphanToolResult
    ));
    // A call missing one of its results goes too.
    let mut t = tool_tree();
    t.snapshot.nodes[3].excluded = true;
    let p = plan(&t.snapshot, &profile(OPENAI, 10_000), &Settings::default()).unwrap();
    assert!(
        p.pruned_report()
            .iter()
            .any(|e| e.source == SourceId::Node(NodeId(2))
                && e.reason == PruneReason::OrphanToolCall)
    );
    assert!(
        p.pruned_report()
            .iter()
            .any(|e| e.source == SourceId::Node(NodeId(3))
                && e.reason == PruneReason::OrphanToolCall)
    );
}

#[test]
fn buffer_mode_leaves_system_context_out_unless_the_tree_turns_it_on_seed_002() {
    let mut t = Tree::new("t");
    t.snapshot.tree.mode = TreeMode::Buffer;
    t.snapshot.tree.system_context = "SYSTEM".into();
    t.say(Author::Human, "Once upon ");
    t.say(Author::Model, "a time");
    t.snapshot.working_buffer = ", there was".into();
    let prof = profile(OPENAI, 10_000);
    let p = plan(&t.snapshot, &prof, &Settings::default()).unwrap();
    assert_eq!(buffer_document(&p, &t.snapshot), "Once upon a time, there was");
    assert!(p.pruned_report().iter().any(|e| e.reason == PruneReason::BufferModeSystemContextOff));
    t.snapshot.tree.buffer_mode_system_context = true;
    let p = plan(&t.snapshot, &prof, &Settings::default()).unwrap();
    assert_eq!(buffer_document(&p, &t.snapshot), "SYSTEM\n\nOnce upon a time, there was");
}

#[test]
fn priority_table_prunes_lowest_priority_first_seed_004() {
    let mut t = Tree::new("t");
    t.say(Author::Human, "hello");
    let file = |id, path: &str, content: &str| Attachment {
        id,
        scope: AttachmentScope::Tree,
        kind: AttachmentKind::File { path: path.into(), content: content.into(), size_bytes: 10 },
    };
    t.snapshot.attachments.push(file(1, "main.ts", &"m".repeat(400)));
    t.snapshot.attachments.push(Attachment {
        id: 2,
        scope: AttachmentScope::Tree,
        kind: AttachmentKind::Folder { path: "src".into(), entries: vec!["a.rs".into(); 50] },
    });
    // prompt 2 tokens, file ~105, folder ~165: room for the file, not the folder.
    let p = plan(&t.snapshot, &profile(OPENAI, 150), &Settings::default()).unwrap();
    let report = p.pruned_report();
    assert_eq!(report.len(), 1);
    assert_eq!(report[0].source, SourceId::Attachment(2));
    assert_eq!(report[0].reason, PruneReason::OverBudget);
    assert_eq!(report[0].priority, 7);
    // Swap the table: folders above files.
    let mut settings = Settings::default();
    settings.priorities.folders = 3;
    settings.priorities.files = 7;
    let p = plan(&t.snapshot, &profile(OPENAI, 150), &settings).unwrap();
    assert_eq!(p.pruned_report()[0].source, SourceId::Attachment(1));
}

#[test]
fn system_and_prompt_are_never_pruned_seed_004() {
    let mut t = Tree::new("t");
    t.snapshot.tree.system_context = "s".repeat(40);
    for i in 0..20 {
        t.say(if i % 2 == 0 { Author::Human } else { Author::Model }, &"x".repeat(40));
    }
    let p = plan(
        &t.snapshot,
        &profile(OPENAI, 60),
        &Settings { minimum_recent_nodes: 1, ..Settings::default() },
    )
    .unwrap();
    assert!(
        p.slices
            .iter()
            .filter(|s| matches!(s.kind, SliceKind::System | SliceKind::Prompt))
            .all(|s| s.is_included())
    );
}

#[test]
fn recent_history_is_the_last_50_messages_and_older_is_old_history_seed_004() {
    let mut t = Tree::new("t");
    for i in 0..60 {
        t.say(if i % 2 == 0 { Author::Human } else { Author::Model }, "m");
    }
    let p = plan(&t.snapshot, &profile(OPENAI, 100_000), &Settings::default()).unwrap();
    let recent = p.slices.iter().filter(|s| s.kind == SliceKind::RecentHistory).count();
    let old = p.slices.iter().filter(|s| s.kind == SliceKind::OldHistory).count();
    let prompt = p.slices.iter().filter(|s| s.kind == SliceKind::Prompt).count();
    assert_eq!((old, recent, prompt), (9, 50, 1));
}

#[test]
fn files_render_as_file_blocks_and_oversized_files_are_pruned_seed_004() {
    let mut t = Tree::new("t");
    t.say(Author::Human, "review");
    t.snapshot.attachments.push(Attachment {
        id: 1,
        scope: AttachmentScope::Tree,
        kind: AttachmentKind::File {
            path: "src/main.ts".into(),
            content: "let x = 1;".into(),
            size_bytes: 10,
        },
    });
    t.snapshot.attachments.push(Attachment {
        id: 2,
        scope: AttachmentScope::Tree,
        kind: AttachmentKind::File {
            path: "big.bin".into(),
            content: "…".into(),
            size_bytes: 200 * 1024,
        },
    });
    let prof = profile(OPENAI, 10_000);
    let p = plan(&t.snapshot, &prof, &Settings::default()).unwrap();
    let r = chat_request(&p, &t.snapshot, &prof);
    assert_eq!(r.system.as_deref(), Some("--- file: src/main.ts ---\nlet x = 1;"));
    assert_eq!(p.pruned_report()[0].reason, PruneReason::FileTooLarge);
}

#[test]
fn folder_listings_cap_entries_and_leave_out_excluded_patterns_seed_004() {
    let mut entries: Vec<String> = vec![
        "node_modules/x.js".into(),
        ".git/HEAD".into(),
        "dist/app.js".into(),
        "app.min.js".into(),
    ];
    entries.extend((0..150).map(|i| format!("src/f{i}.rs")));
    let listing = pinloom_engine::planner::folder_listing("proj", &entries, &Settings::default());
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines[0], "--- folder: proj ---");
    assert_eq!(lines.len(), 101);
    assert_eq!(lines[1], "src/f0.rs");
}

#[test]
fn available_budget_is_window_minus_reserve_seed_004() {
    let gpt = ModelProfile::shipped(OPENAI, "gpt-4o");
    assert_eq!(available_budget(&gpt, &TreeInfo::default()), 128_000 - 4_096);
    let claude = ModelProfile::shipped(ProviderFamily::Anthropic, "claude-sonnet-4");
    assert_eq!(available_budget(&claude, &TreeInfo::default()), 200_000 - 8_192);
}

#[test]
fn unknown_models_get_100000_with_8192_reserved_seed_004() {
    let p = ModelProfile::shipped(ProviderFamily::Ollama, "some-local-model");
    assert_eq!((p.context_window, p.reserve), (100_000, 8_192));
}

#[test]
fn a_trees_token_buffer_replaces_the_reserve_seed_002() {
    let p = ModelProfile::shipped(OPENAI, "gpt-4o");
    let tree = TreeInfo { token_buffer: Some(1_024), ..TreeInfo::default() };
    assert_eq!(available_budget(&p, &tree), 128_000 - 1_024);
}

fn long_chat(n: usize, chars: usize) -> Tree {
    let mut t = Tree::new("t");
    for i in 0..n {
        t.say(
            if i % 2 == 0 { Author::Human } else { Author::Model },
            &format!("{i:0>width$}", width = chars),
        );
    }
    t
}

#[test]
fn truncate_middle_keeps_start_and_last_n_with_a_visible_marker_seed_002() {
    let t = long_chat(40, 400); // 100 tokens each
    let prof = profile(OPENAI, 2_000);
    let p = plan(&t.snapshot, &prof, &Settings::default()).unwrap();
    let kept = history_ids(&p);
    assert_eq!(&kept[..2], &[1, 2], "the start is kept");
    assert_eq!(&kept[kept.len() - 4..], &[37, 38, 39, 40], "the last 4 are kept");
    let marker = p.marker.as_ref().unwrap();
    assert_eq!(marker.omitted, 40 - kept.len());
    assert_eq!((p.kept_start, p.small_budget, p.start_given_up), (2, None, None));
    let r = chat_request(&p, &t.snapshot, &prof);
    let texts: Vec<String> = r.messages.iter().map(|m| format!("{:?}", m.parts)).collect();
    assert!(texts.iter().any(|t| t.contains("earlier messages omitted")));
    assert!(p.used <= p.available);
}

#[test]
fn a_small_budget_gives_up_the_start_the_marker_and_the_step_for_recent_turns() {
    let t = long_chat(20, 40); // 10 tokens each
    let p = plan(&t.snapshot, &profile(OPENAI, 100), &Settings::default()).unwrap();
    // The newest ten fit: no first turn, no marker, no step takes any of the room.
    assert_eq!(history_ids(&p), (11..=20).collect::<Vec<_>>());
    assert!(p.marker.is_none() && p.step_cut.is_none());
    assert_eq!(p.kept_start, 0);
    let small = p.small_budget.expect("the plan says the budget is small");
    assert_eq!((small.room, small.omitted), (60, 10), "100 less the 4 protected messages");
    assert_eq!(p.used, 100);
}

#[test]
fn the_kept_start_is_a_whole_turn_or_nothing() {
    // A long first question and a one-line reply: the question alone is over a quarter of the
    // history's room, so neither is kept (the reply without its question would read as one).
    let mut t = Tree::new("t");
    t.say(Author::Human, &"a long opening question ".repeat(100)); // 600 tokens
    t.say(Author::Model, "Yes.");
    for i in 0..40 {
        let author = if i % 2 == 0 { Author::Human } else { Author::Model };
        t.say(author, &format!("{i:0>400}")); // 100 tokens each
    }
    let p = plan(&t.snapshot, &profile(OPENAI, 2_500), &Settings::default()).unwrap();
    let kept = history_ids(&p);
    assert!(!kept.contains(&1) && !kept.contains(&2), "{kept:?}");
    let given_up = p.start_given_up.expect("the plan says why the start is not kept");
    assert_eq!(given_up.tokens, 601);
    assert!(u64::from(given_up.tokens) * 4 > u64::from(given_up.room), "{given_up:?}");
    assert!(p.marker.is_some() && p.small_budget.is_none());
    // With a short opening question, the whole first turn is kept.
    t.snapshot.nodes[0].parts = vec![Part::Text("Why do rivers bend?".into())];
    let p = plan(&t.snapshot, &profile(OPENAI, 2_500), &Settings::default()).unwrap();
    assert_eq!(&history_ids(&p)[..2], &[1, 2]);
    assert_eq!((p.kept_start, p.start_given_up), (2, None));
}

#[test]
fn rolling_window_keeps_the_most_recent_that_fits_seed_002() {
    let t = long_chat(20, 40);
    let settings =
        Settings { truncation: TruncationStrategy::RollingWindow, ..Settings::default() };
    let p = plan(&t.snapshot, &profile(OPENAI, 100), &settings).unwrap();
    let kept = history_ids(&p);
    let first = kept[0];
    assert_eq!(kept, (first..=20).collect::<Vec<_>>(), "a contiguous tail");
    assert!(first > 2);
    assert!(p.used <= p.available);
}

#[test]
fn a_message_the_user_keeps_survives_truncation_like_the_prompt() {
    for truncation in [TruncationStrategy::TruncateMiddle, TruncationStrategy::RollingWindow] {
        let mut t = long_chat(20, 40);
        t.snapshot.nodes[9].kept = true; // node 10, deep in the middle
        let settings = Settings { truncation, ..Settings::default() };
        let p = plan(&t.snapshot, &profile(OPENAI, 100), &settings).unwrap();
        let kept = history_ids(&p);
        assert!(kept.contains(&10), "{truncation:?}: {kept:?}");
        assert!(kept.ends_with(&[17, 18, 19, 20]), "the recent ones still stay: {kept:?}");
        assert!(p.used <= p.available);
        let kept_slice = p.slices.iter().find(|s| s.source == SourceId::Node(NodeId(10))).unwrap();
        assert!(kept_slice.is_included());
    }
}

#[test]
fn stop_at_limit_refuses_and_names_what_to_exclude_seed_002() {
    let t = long_chat(20, 40);
    let settings = Settings { truncation: TruncationStrategy::StopAtLimit, ..Settings::default() };
    let err = plan(&t.snapshot, &profile(OPENAI, 100), &settings).unwrap_err();
    let EngineError::StopAtLimit { needed, available, exclude } = &err else { panic!("{err}") };
    assert_eq!((*needed, *available), (200, 100));
    // Ten 10-token messages must go, oldest first.
    assert_eq!(exclude.len(), 10);
    assert_eq!(exclude[0], SourceId::Node(NodeId(1)));
    assert!(plan(&t.snapshot, &profile(OPENAI, 200), &settings).is_ok());
}

#[test]
fn at_least_one_message_is_always_kept_or_the_error_says_why_seed_002() {
    let t = long_chat(3, 400);
    let err = plan(
        &t.snapshot,
        &profile(OPENAI, 50),
        &Settings { minimum_recent_nodes: 1, ..Settings::default() },
    )
    .unwrap_err();
    assert!(matches!(err, EngineError::RequiredOverBudget { .. }));
    let mut t = long_chat(2, 4);
    for n in &mut t.snapshot.nodes {
        n.excluded = true;
    }
    assert_eq!(
        plan(&t.snapshot, &profile(OPENAI, 50), &Settings::default()).unwrap_err(),
        EngineError::NoMessages
    );
    let t = long_chat(20, 40);
    let p = plan(
        &t.snapshot,
        &profile(OPENAI, 30),
        &Settings { minimum_recent_nodes: 1, ..Settings::default() },
    )
    .unwrap();
    // A budget this small sends no marker: the two messages before the prompt take its room.
    assert_eq!(history_ids(&p), vec![18, 19, 20]);
}

#[test]
fn minimum_recent_nodes_are_never_dropped_by_truncation_seed_002() {
    let t = long_chat(40, 400); // 100 tokens each
    let settings = Settings { minimum_recent_nodes: 6, keep_start_nodes: 0, ..Settings::default() };
    // Six 100-token messages, the marker, and the room of a budget that is not small.
    let p = plan(&t.snapshot, &profile(OPENAI, 1_700), &settings).unwrap();
    assert!(history_ids(&p).ends_with(&[35, 36, 37, 38, 39, 40]));
    assert!(p.marker.is_some());
    // A budget that fits the six alone keeps them, and no marker takes their room.
    let p = plan(&t.snapshot, &profile(OPENAI, 600), &settings).unwrap();
    assert_eq!(history_ids(&p), vec![35, 36, 37, 38, 39, 40]);
    assert!(p.marker.is_none() && p.small_budget.is_some());
    assert!(plan(&t.snapshot, &profile(OPENAI, 599), &settings).is_err());
}

#[test]
fn task_frames_give_root_goal_path_summaries_and_sibling_results_their_shares_seed_001() {
    let mut t = three_level_tree();
    // A closed sibling of Pin C, in Pin B's thread.
    t.snapshot.pins.push(PinRecord {
        id: PinId(9),
        parent_thread: ThreadRef::Pin(PinId(2)),
        title: "sibling".into(),
        anchor: None,
        hangs_off: None,
        closed: true,
        result: Some("sibling result".into()),
    });
    let frames = AssemblyStrategy::TaskFrames(TaskFrameShares::default());
    let settings =
        Settings { assembly: frames, include_closed_sibling_results: true, ..Settings::default() };
    let p = plan(&t.snapshot, &profile(OPENAI, 1000), &settings).unwrap();
    let kinds: Vec<SliceKind> = p.included().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        vec![
            SliceKind::RootGoal,
            SliceKind::AncestorSummary,
            SliceKind::AncestorSummary,
            SliceKind::SiblingResult,
            SliceKind::Anchor,
            SliceKind::Prompt
        ]
    );
    // A 5 % share of 100 tokens (5) cannot hold a 4-token goal plus... it can; shrink the window.
    let p = plan(&t.snapshot, &profile(OPENAI, 60), &settings).unwrap();
    let goal = p.slices.iter().find(|s| s.kind == SliceKind::RootGoal).unwrap();
    assert_eq!(goal.status, SliceStatus::Pruned(PruneReason::OutsideShare), "4 tokens > 5 % of 60");
}

#[test]
fn closed_sibling_results_are_included_only_when_opted_in_seed_001() {
    let mut t = three_level_tree();
    t.snapshot.pins.push(PinRecord {
        id: PinId(9),
        parent_thread: ThreadRef::Pin(PinId(2)),
        title: "sibling".into(),
        anchor: None,
        hangs_off: None,
        closed: true,
        result: Some("sibling result".into()),
    });
    let frames = AssemblyStrategy::TaskFrames(TaskFrameShares::default());
    let settings = Settings { assembly: frames, ..Settings::default() };
    let p = plan(&t.snapshot, &profile(OPENAI, 1000), &settings).unwrap();
    let s = p.slices.iter().find(|s| s.kind == SliceKind::SiblingResult).unwrap();
    assert_eq!(s.status, SliceStatus::Pruned(PruneReason::NotOptedIn));
}

fn candidate(node: u64, text: &str, bm25: f64) -> RetrievalCandidate {
    RetrievalCandidate {
        node: NodeId(node),
        text: text.into(),
        author: Author::Model,
        created_at_ms: 0,
        bm25,
        bookmarked: false,
        pinned: false,
        added: false,
    }
}

/// Retrieval settings with the hits unframed and the tail cut exactly, so token sums are
/// easy to follow.
fn plain_retrieval(share_percent: u32) -> Settings {
    let mut settings = Settings {
        search_result_framing: "{text}".into(),
        truncation_step_percent: 0,
        ..Settings::default()
    };
    settings.retrieval.share_percent = share_percent;
    settings
}

#[test]
fn retrieval_slice_is_scored_filtered_and_chosen_within_its_share_seed_001() {
    // 30 messages of 10 tokens in a 200-token window: truncation cuts the early middle, which
    // is where retrieval earns its place.
    let mut t = long_chat(30, 40);
    // long_chat's message `id` says its index, `id - 1`.
    let text = |id: u64| format!("{:0>40}", id - 1);
    t.snapshot.retrieval = vec![
        candidate(3, &text(3), 1.0), // weak
        candidate(5, &text(5), 9.0), // strong
        candidate(4, &text(4), 5.0), // filtered out below
        candidate(1, &text(1), 9.0), // the thread's start, which a budget this small gives up
    ];
    let mut settings = plain_retrieval(5); // 10 tokens: the best hit only
    settings.retrieval.filters.exclude = vec![NodeId(4)];
    // Search outranks old history (seed 004's table), not the recent messages.
    settings.recent_history_size = 6;
    let p = plan(&t.snapshot, &profile(OPENAI, 200), &settings).unwrap();
    let included = ids(&p, |k| k == SliceKind::SearchResult);
    assert_eq!(included, vec![SourceId::Retrieval(NodeId(5))]);
    let history = ids(&p, |k| k != SliceKind::SearchResult);
    assert!(!history.contains(&SourceId::Node(NodeId(5))), "the hit is what truncation cut");
    let reasons: Vec<_> = p.pruned_report().iter().map(|e| (e.source, e.reason)).collect();
    assert!(reasons.contains(&(SourceId::Retrieval(NodeId(3)), PruneReason::OutsideShare)));
    assert!(reasons.contains(&(SourceId::Retrieval(NodeId(4)), PruneReason::Filtered)));
    assert!(reasons.contains(&(SourceId::Retrieval(NodeId(1)), PruneReason::OutsideShare)));
}

#[test]
fn retrieval_never_brings_another_branch_unless_the_person_added_it() {
    // 1 → 2 → 3, with 9 a regenerated answer to 1 that this path abandoned.
    let mut t = Tree::new("t");
    let first = t.say(Author::Human, "how does auth work?");
    t.say(Author::Model, "with tokens");
    t.say(Author::Human, "and sessions?");
    let other = t.push(ParentEdge::Continuation(first), Author::Model, "the abandoned answer");
    t.snapshot.active = NodeId(3);
    t.snapshot.retrieval = vec![candidate(other.0, "the abandoned answer", 9.0)];
    let p = plan(&t.snapshot, &profile(OPENAI, 1000), &plain_retrieval(50)).unwrap();
    let reasons: Vec<_> = p.pruned_report().iter().map(|e| (e.source, e.reason)).collect();
    assert_eq!(reasons, vec![(SourceId::Retrieval(other), PruneReason::OffPath)]);

    // Added by hand, the same message is the person's to send, and labelled as theirs.
    t.snapshot.retrieval[0].added = true;
    let p = plan(&t.snapshot, &profile(OPENAI, 1000), &plain_retrieval(50)).unwrap();
    let added = p.slices.iter().find(|s| s.source == SourceId::AddedSearchHit(other)).unwrap();
    assert!(added.is_included());
    assert_eq!(added.provenance, Provenance::AddedByPerson);
}

#[test]
fn a_fused_answer_carries_the_chosen_answers_after_its_question_and_nothing_else_of_theirs() {
    // 1 → 2 → 3 (the question), with 4, 5 and 6 three answers to it; 7 answers 2 instead.
    let mut t = Tree::new("t");
    t.say(Author::Human, "rivers?");
    let second = t.say(Author::Model, "they flow");
    let question = t.say(Author::Human, "why do they meander?");
    let answers: Vec<NodeId> = ["erosion", "uplift", "sediment"]
        .iter()
        .map(|text| t.push(ParentEdge::Continuation(question), Author::Model, text))
        .collect();
    let elsewhere = t.push(ParentEdge::Continuation(second), Author::Model, "a stray answer");
    t.snapshot.active = question;
    let source = |node: NodeId, answers: NodeId, text: &str| FuseSource {
        node,
        answers: Some(answers),
        author: Author::Model,
        deleted: false,
        text: text.into(),
        label: format!("model {}", node.0),
    };
    t.snapshot.fuse_sources = vec![
        source(answers[0], question, "erosion"),
        source(elsewhere, second, "a stray answer"),
        source(answers[2], question, "sediment"),
    ];

    let p = plan(&t.snapshot, &profile(OPENAI, 1000), &Settings::default()).unwrap();
    let fused: Vec<_> = p.included().filter(|s| s.kind == SliceKind::FuseSource).collect();
    assert_eq!(
        fused.iter().map(|s| s.source).collect::<Vec<_>>(),
        [
            SourceId::FuseSource(answers[0]),
            SourceId::FuseSource(answers[2]),
            SourceId::FuseInstruction
        ]
    );
    assert!(fused.iter().all(|s| s.provenance == Provenance::ChosenToFuse));
    let reasons: Vec<_> = p.pruned_report().iter().map(|e| (e.source, e.reason)).collect();
    assert_eq!(reasons, [(SourceId::FuseSource(elsewhere), PruneReason::OffPath)]);

    let request = chat_request(&p, &t.snapshot, &profile(OPENAI, 1000));
    let turns: Vec<(Role, String)> = request
        .messages
        .iter()
        .map(|m| (m.role, m.parts.iter().map(|part| part.text()).collect::<String>()))
        .collect();
    // The question, the answers and the instruction make one turn of the person's.
    assert_eq!(turns.len(), 3, "{turns:?}");
    assert_eq!(
        turns[2],
        (
            Role::User,
            "why do they meander?\n\nAnswer [1], by model 4:\nerosion\n\nAnswer [2], by model \
             6:\nsediment\n\nAbove are 2 answers to my question. Write one answer from them: \
             keep what each gets right, settle where they disagree, say each point once, and \
             mark every point with the number of the answer it comes from, as [1] or [1][2]."
                .to_owned()
        )
    );
    let sent = turns.iter().map(|(_, text)| text.as_str()).collect::<Vec<_>>().join("\n");
    assert!(!sent.contains("uplift"), "an answer not chosen is not sent");
    assert!(!sent.contains("stray"), "an answer to another message is not sent");
}

#[test]
fn a_question_over_picked_messages_carries_them_labelled_and_nothing_else_of_their_branches() {
    // 1 → 2 and 1 → 3 are two branches; 4 → 5 is the question asked over 2 and 3, and its answer.
    let mut t = Tree::new("t");
    let first = t.say(Author::Human, "why do rivers meander?");
    let erosion = t.say(Author::Model, "erosion");
    let uplift = t.push(ParentEdge::Continuation(first), Author::Model, "uplift");
    let question = t.push(ParentEdge::Root, Author::Human, "what do both say?");
    let answer = t.push(ParentEdge::Continuation(question), Author::Model, "both agree");
    let follow = t.push(ParentEdge::Continuation(answer), Author::Human, "and then?");
    let picked = |node: NodeId, text: &str, question: NodeId| PickedSource {
        question,
        node,
        label: format!("the main thread, answer {}", node.0),
        text: text.into(),
        excluded: false,
        deleted: false,
        with_summary: false,
        summary: None,
        thread: ThreadRef::Root,
    };
    t.snapshot.picked = vec![
        picked(erosion, "erosion", question),
        picked(uplift, "uplift", question),
        // Asked over by another question, off this path.
        picked(first, "why do rivers meander?", first),
    ];
    t.snapshot.active = follow;

    let p = plan(&t.snapshot, &profile(OPENAI, 1000), &Settings::default()).unwrap();
    let kept: Vec<_> = p.included().filter(|s| s.kind == SliceKind::Picked).collect();
    assert_eq!(
        kept.iter().map(|s| s.source).collect::<Vec<_>>(),
        [SourceId::Picked(erosion), SourceId::Picked(uplift)]
    );
    assert!(kept.iter().all(|s| s.provenance == Provenance::AddedByPerson));
    let reasons: Vec<_> = p.pruned_report().iter().map(|e| (e.source, e.reason)).collect();
    assert_eq!(reasons, [(SourceId::Picked(first), PruneReason::OffPath)]);
    let request = chat_request(&p, &t.snapshot, &profile(OPENAI, 1000));
    let system = request.system.clone().unwrap_or_default();
    assert!(system.contains("Added by you, from the main thread, answer 2:\nerosion"), "{system}");
    let sent: String =
        request.messages.iter().flat_map(|m| m.parts.iter().map(|p| p.text())).collect();
    assert!(!(system + &sent).contains("why do rivers meander?"), "their branch stays out");

    // Deleted since: left out and why; its summary asked for, and none written: a summary to
    // write, of its thread up to it.
    t.snapshot.picked[1].deleted = true;
    t.snapshot.picked[0].with_summary = true;
    let p = plan(&t.snapshot, &profile(OPENAI, 1000), &Settings::default()).unwrap();
    let reasons: Vec<_> = p.pruned_report().iter().map(|e| (e.source, e.reason)).collect();
    assert!(reasons.contains(&(SourceId::Picked(uplift), PruneReason::SoftDeleted)));
    assert_eq!(
        p.missing_summaries.iter().map(|m| (m.thread, m.up_to)).collect::<Vec<_>>(),
        [(ThreadRef::Root, erosion)]
    );
    // Written, it goes before its message, a label that cannot be read as a placeholder kept.
    t.snapshot.picked[0].summary = Some("the person asked; erosion".into());
    t.snapshot.picked[0].label = "the pin “{text}”".into();
    let p = plan(&t.snapshot, &profile(OPENAI, 1000), &Settings::default()).unwrap();
    let texts: Vec<String> = p
        .included()
        .filter(|s| s.kind == SliceKind::Picked)
        .map(|s| slice_text(s, &t.snapshot).into_owned())
        .collect();
    assert_eq!(
        texts,
        [
            "Added by you, a summary of the pin “{text}” up to the message picked from it:\nthe \
             person asked; erosion",
            "Added by you, from the pin “{text}”:\nerosion"
        ]
    );
}

#[test]
fn the_pruned_report_accounts_for_every_candidate_seed_004() {
    let t = long_chat(30, 40);
    let p = plan(&t.snapshot, &profile(OPENAI, 120), &Settings::default()).unwrap();
    assert_eq!(p.included().count() + p.pruned_report().len(), p.slices.len());
    assert_eq!(p.slices.iter().filter(|s| matches!(s.source, SourceId::Node(_))).count(), 30);
    assert!(p.pruned_report().iter().all(|e| e.reason == PruneReason::Truncated && e.tokens == 10));
}

#[test]
fn cached_counts_are_used_and_missing_ones_reported_for_caching() {
    let mut t = long_chat(3, 40);
    let prof = profile(OPENAI, 1000);
    t.snapshot.nodes[0].cached_tokens =
        [CachedCount { tokenizer: prof.tokenizer.id(), tokens: 77 }].into_iter().collect();
    t.snapshot.nodes[1].cached_tokens =
        [CachedCount { tokenizer: TokenizerId::O200k, tokens: 5 }].into_iter().collect();
    let p = plan(&t.snapshot, &prof, &Settings::default()).unwrap();
    assert_eq!(p.slices[0].tokens, 77, "the cached count is trusted");
    assert_eq!(
        p.newly_counted,
        vec![(NodeId(2), 10), (NodeId(3), 10)],
        "another tokenizer's count is not"
    );
}

#[test]
fn first_non_system_message_is_user_where_the_provider_requires_it_engine_anchors_3() {
    let mut t = Tree::new("t");
    t.say(Author::Model, "I start.");
    t.say(Author::Human, "ok");
    let prof = profile(ProviderFamily::Anthropic, 1000);
    let p = plan(&t.snapshot, &prof, &Settings::default()).unwrap();
    let r = chat_request(&p, &t.snapshot, &prof);
    assert_eq!(r.messages[0].role, Role::User);
    assert_eq!(p.role_fills.len(), 1);
    assert_eq!(p.used as u64, p.recount_used());
    // OpenAI does not require it.
    let prof = profile(OPENAI, 1000);
    let p = plan(&t.snapshot, &prof, &Settings::default()).unwrap();
    assert!(p.role_fills.is_empty());
}

#[test]
fn mistral_bridges_tool_to_user_and_prefixes_a_final_assistant_engine_anchors_3() {
    let t = tool_tree();
    let mut prof = profile(OPENAI, 10_000);
    prof.role_rules = RoleRules::mistral();
    // Drop the model's answer so a user message follows the tool results directly.
    let mut t2 = t.clone();
    t2.snapshot.nodes[4].excluded = true;
    let p = plan(&t2.snapshot, &prof, &Settings::default()).unwrap();
    let r = chat_request(&p, &t2.snapshot, &prof);
    let roles: Vec<Role> = r.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        vec![Role::User, Role::Assistant, Role::Tool, Role::Tool, Role::Assistant, Role::User]
    );
    // A thread ending on the model: the last assistant is sent as a prefix.
    let mut t3 = t.clone();
    t3.say(Author::Model, "continuing");
    let p = plan(&t3.snapshot, &prof, &Settings::default()).unwrap();
    assert!(chat_request(&p, &t3.snapshot, &prof).prefix_last_assistant);
}

#[test]
fn strict_alternation_flattens_tools_and_alternates_engine_anchors_3() {
    let t = tool_tree();
    let mut prof = profile(ProviderFamily::Gemini, 10_000);
    prof.role_rules = RoleRules::strict();
    let p = plan(&t.snapshot, &prof, &Settings::default()).unwrap();
    let r = chat_request(&p, &t.snapshot, &prof);
    let roles: Vec<Role> = r.messages.iter().map(|m| m.role).collect();
    // The two tool results became one user turn; the call became assistant text.
    assert_eq!(roles, vec![Role::User, Role::Assistant, Role::User, Role::Assistant, Role::User]);
    assert!(
        matches!(&r.messages[2].parts[0], Part::Text(t) if t.starts_with("[tool result (c1): sunny]"))
    );
}

#[test]
fn system_context_is_injected_into_the_first_user_message_without_native_support_seed_002() {
    let mut t = Tree::new("t");
    t.snapshot.tree.system_context = "SYS".into();
    t.say(Author::Human, "hello");
    let mut prof = profile(ProviderFamily::Gemini, 1000);
    prof.native_system = false;
    let p = plan(&t.snapshot, &prof, &Settings::default()).unwrap();
    let r = chat_request(&p, &t.snapshot, &prof);
    assert_eq!(r.system, None);
    assert_eq!(r.messages[0].parts, vec![Part::Text("SYS\n\nhello".into())]);
}

#[test]
fn node_record_helpers_cover_tool_parts() {
    let n = NodeRecord::text(1, ParentEdge::Root, Author::Model, "x");
    assert!(!n.has_tool_call() && !n.has_tool_result());
}

#[test]
fn appending_one_node_updates_the_plan_incrementally_seed_001() {
    use pinloom_engine::incremental::{AppendPath, append_node};
    let mut t = long_chat(20, 40);
    let prof = profile(OPENAI, 1000);
    let settings = Settings::default();
    let mut p = plan(&t.snapshot, &prof, &settings).unwrap();
    t.say(Author::Model, &"y".repeat(40));
    assert_eq!(
        append_node(&mut p, &t.snapshot, &prof, &settings).unwrap(),
        AppendPath::Incremental
    );
    let full = plan(&t.snapshot, &prof, &settings).unwrap();
    assert_eq!(p.used, full.used);
    assert_eq!(history_ids(&p), history_ids(&full));
    // Over budget: the oldest kept history goes, the marker follows, the budget holds.
    let prof = profile(OPENAI, 150);
    let rolling = Settings { truncation: TruncationStrategy::RollingWindow, ..Settings::default() };
    let mut p = plan(&t.snapshot, &prof, &rolling).unwrap();
    for _ in 0..5 {
        t.say(Author::Human, &"z".repeat(40));
        append_node(&mut p, &t.snapshot, &prof, &rolling).unwrap();
        assert!(p.used <= p.available);
        assert_eq!(u64::from(p.used), p.recount_used());
        let kept = history_ids(&p);
        assert_eq!(*kept.last().unwrap(), t.snapshot.active.0);
    }
}

/// Six messages of 100 tokens (four characters a token) in a 380-token window: rolling window
/// keeps the last three whole with its 18-token marker, and the 62 tokens left go to the end of
/// the fourth newest, behind its 12-token notice, cut at a word, only when the setting asks.
/// (One protected recent node, so truncation has room.)
fn chat_of_long_messages() -> Tree {
    let mut t = Tree::new("t");
    let words = "word ".repeat(79);
    for i in 0..6 {
        let author = if i % 2 == 0 { Author::Human } else { Author::Model };
        t.say(author, &format!("{words}end{i}"));
    }
    t
}

fn rolling(cut_boundary_message: bool) -> Settings {
    Settings {
        truncation: TruncationStrategy::RollingWindow,
        minimum_recent_nodes: 1,
        cut_boundary_message,
        ..Settings::default()
    }
}

#[test]
fn the_boundary_message_is_cut_to_fill_the_budget_only_when_asked() {
    let t = chat_of_long_messages();
    let prof = profile(OPENAI, 380);
    let whole_only = plan(&t.snapshot, &prof, &rolling(false)).unwrap();
    assert!(whole_only.cut_report().is_empty());
    assert_eq!(history_ids(&whole_only), vec![4, 5, 6]);

    let cutting = rolling(true);
    let p = plan(&t.snapshot, &prof, &cutting).unwrap();
    let cuts = p.cut_report();
    assert_eq!(cuts.len(), 1);
    let (slice, whole, kept) = cuts[0];
    assert_eq!(slice.source, SourceId::Node(NodeId(3)), "the newest message truncation dropped");
    assert_eq!(whole, 100);
    assert!(kept < whole && kept >= 32, "{kept}");
    assert!(p.used > whole_only.used && p.used <= p.available, "{} of {}", p.used, p.available);
    assert!(p.truncated());
    let messages = chat_request(&p, &t.snapshot, &prof).messages;
    let Some(Part::Text(first)) = messages[0].parts.first() else { panic!("{messages:?}") };
    // The marker (a user message) and node 3 (the person's) merge into the first message.
    assert!(first.starts_with("[… 2 earlier messages omitted"), "{first}");
    let Some((_, kept_text)) = first.split_once(&cutting.cut_message_notice) else {
        panic!("no notice: {first}")
    };
    assert!(kept_text.starts_with("word "), "cut at a word: {kept_text}");
    assert!(kept_text.ends_with(" word end2"), "the end of node 3 is kept: {kept_text}");
    assert_eq!(messages[0].role, Role::User);
}

#[test]
fn stop_at_limit_never_cuts_and_a_tool_group_is_never_cut() {
    let t = chat_of_long_messages();
    let prof = profile(OPENAI, 350);
    let stop = Settings { truncation: TruncationStrategy::StopAtLimit, ..rolling(true) };
    assert!(matches!(plan(&t.snapshot, &prof, &stop), Err(EngineError::StopAtLimit { .. })));

    // Nodes 3 and 4 become a tool call and its result: a group of 101 tokens at the boundary,
    // with 80 tokens left over once nodes 5 and 6 are kept.
    let mut t = chat_of_long_messages();
    t.snapshot.nodes[2].author = Author::Model;
    t.snapshot.nodes[2].parts.push(Part::ToolCall {
        id: "c".into(),
        name: "n".into(),
        arguments: "{}".into(),
    });
    t.snapshot.nodes[3].author = Author::Tool;
    t.snapshot.nodes[3].parts =
        vec![Part::ToolResult { call_id: "c".into(), content: "ok".into() }];
    let p = plan(&t.snapshot, &profile(OPENAI, 280), &rolling(true)).unwrap();
    assert_eq!(history_ids(&p), vec![5, 6]);
    assert!(p.cut_report().is_empty(), "a tool call and its result are kept or dropped whole");
}
