//! Invariants over random trees and histories. Case count: PROPTEST_CASES (default 256, which
//! keeps the crate's tests fast on a 2-core machine; CI or a soak run can raise it).

use proptest::prelude::*;

use pinloom_engine::error::EngineError;
use pinloom_engine::plan::{Role, SliceKind, SourceId};
use pinloom_engine::planner::plan;
use pinloom_engine::profile::{ProviderFamily, RoleRules};
use pinloom_engine::render::chat_request;
use pinloom_engine::settings::{Settings, TruncationStrategy};
use pinloom_engine::snapshot::{Author, Part};

use crate::fixtures::{Tree, profile, strategies};

#[derive(Debug, Clone)]
enum Step {
    Say(u8, usize),
    ToolRound(u8, usize),
    Pin(bool),
    Exclude,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0u8..2, 0usize..300).prop_map(|(a, n)| Step::Say(a, n)),
        2 => (1u8..3, 0usize..200).prop_map(|(k, n)| Step::ToolRound(k, n)),
        1 => any::<bool>().prop_map(Step::Pin),
        1 => Just(Step::Exclude),
    ]
}

fn build(steps: &[Step], system: usize, anchor: usize) -> Tree {
    let mut t = Tree::new("prop");
    t.snapshot.tree.system_context = "s".repeat(system);
    t.say(Author::Human, "start");
    let mut pins = 0;
    let mut calls = 0;
    for s in steps {
        match s {
            Step::Say(a, n) => {
                let author = if *a == 0 { Author::Human } else { Author::Model };
                t.say(author, &"w ".repeat(*n));
            }
            Step::ToolRound(k, n) => {
                t.say(Author::Model, "");
                let ids: Vec<String> = (0..*k).map(|i| format!("c{calls}_{i}")).collect();
                calls += 1;
                t.snapshot.nodes.last_mut().unwrap().parts = ids
                    .iter()
                    .map(|id| Part::ToolCall {
                        id: id.clone(),
                        name: "f".into(),
                        arguments: "{}".into(),
                    })
                    .collect();
                for id in ids {
                    t.say(Author::Tool, "");
                    t.snapshot.nodes.last_mut().unwrap().parts =
                        vec![Part::ToolResult { call_id: id, content: "r ".repeat(*n) }];
                }
            }
            Step::Pin(with_anchor) => {
                pins += 1;
                let a = "a".repeat(anchor);
                t.pin(pins, "p", with_anchor.then_some(a.as_str()), "q");
            }
            Step::Exclude => {
                if let Some(n) = t.snapshot.nodes.last_mut() {
                    n.excluded = true;
                }
                t.say(Author::Human, "after exclusion");
            }
        }
    }
    t
}

fn families() -> impl Strategy<Value = (ProviderFamily, u8)> {
    prop_oneof![
        Just((ProviderFamily::OpenAiCompatible, 0)),
        Just((ProviderFamily::OpenAiCompatible, 1)), // Mistral rules
        Just((ProviderFamily::Anthropic, 0)),
        Just((ProviderFamily::Gemini, 0)),
        Just((ProviderFamily::Gemini, 2)), // strict alternation
        Just((ProviderFamily::Ollama, 0)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
    ))]

    #[test]
    fn plan_invariants_hold_for_random_trees(
        steps in prop::collection::vec(step(), 0..60),
        system in 0usize..400,
        anchor in 1usize..80,
        window in 20u32..3_000,
        (family, rules) in families(),
        strategy in strategies(),
        min_recent in 0usize..6,
        cut_boundary in any::<bool>(),
    ) {
        let t = build(&steps, system, anchor);
        let mut prof = profile(family, window);
        prof.message_overhead = 3;
        prof.role_rules = match rules { 1 => RoleRules::mistral(), 2 => RoleRules::strict(), _ => prof.role_rules };
        let settings = Settings {
            truncation: strategy,
            minimum_recent_nodes: min_recent,
            cut_boundary_message: cut_boundary,
            ..Settings::default()
        };
        match plan(&t.snapshot, &prof, &settings) {
            // Each refusal must be warranted: what it says does not fit really does not, and
            // what it says to exclude really makes it fit.
            Err(EngineError::SystemContextOverBudget { system, available }) => {
                prop_assert_eq!(available, window);
                prop_assert!(system > available, "{} fits in {}", system, available);
            }
            Err(EngineError::RequiredOverBudget { required, available, .. }) => {
                prop_assert_eq!(available, window);
                prop_assert!(required > available, "{} fits in {}", required, available);
            }
            Err(EngineError::StopAtLimit { needed, available, exclude }) => {
                prop_assert_eq!(strategy, TruncationStrategy::StopAtLimit);
                prop_assert_eq!(available, window);
                prop_assert!(needed > available, "{} fits in {}", needed, available);
                prop_assert!(!exclude.is_empty(), "a refusal that names nothing to exclude");
                // Excluding what it names makes the same plan go through: messages, and an
                // ancestor thread's stand-in (these trees have no summaries, attachments or hits:
                // an ancestor is carried as its last messages, which go when they are excluded).
                let mut excluded = t.snapshot.clone();
                let threads = thread_of_each_node(&t.snapshot);
                for source in &exclude {
                    match source {
                        SourceId::Node(id) => {
                            excluded.nodes.iter_mut().filter(|n| n.id == *id).for_each(|n| n.excluded = true);
                        }
                        SourceId::Summary(thread) => {
                            excluded
                                .nodes
                                .iter_mut()
                                .filter(|n| threads.get(&n.id) == Some(thread))
                                .for_each(|n| n.excluded = true);
                        }
                        other => prop_assert!(false, "only messages and ancestors can be named here: {:?}", other),
                    }
                }
                let fitted = plan(&excluded, &prof, &settings);
                prop_assert!(fitted.is_ok(), "still refused after excluding {:?}: {:?}", exclude, fitted.err());
            }
            Err(EngineError::NoMessages) => {
                prop_assert!(t.snapshot.nodes.iter().any(|n| n.excluded), "nothing was excluded");
            }
            Err(other) => prop_assert!(false, "unexpected error {other}"),
            Ok(p) => {
                // The included slices never exceed the budget, and `used` is their sum.
                prop_assert!(p.used <= p.available);
                prop_assert_eq!(u64::from(p.used), p.recount_used());
                // Included + pruned = all candidates.
                prop_assert_eq!(p.included().count() + p.pruned_report().len(), p.slices.len());
                // System, anchor and prompt are always present.
                for s in &p.slices {
                    if matches!(s.kind, SliceKind::System | SliceKind::Anchor | SliceKind::Prompt) {
                        prop_assert!(s.is_included(), "{:?} pruned", s.kind);
                    }
                }
                let current_pin_has_anchor = t.snapshot.pins.last().is_some_and(|pin| {
                    pin.anchor.is_some()
                        && t.snapshot.nodes.iter().rev().find_map(|n| match n.edge {
                            pinloom_engine::snapshot::ParentEdge::Pin { pin, .. } => Some(pin),
                            _ => None,
                        }) == Some(pin.id)
                });
                let anchors = p.included().filter(|s| s.kind == SliceKind::Anchor).count();
                prop_assert_eq!(anchors, usize::from(current_pin_has_anchor));
                // Group atomicity: a group is wholly included or wholly pruned.
                for a in &p.slices {
                    for b in &p.slices {
                        if a.group == b.group {
                            prop_assert_eq!(a.is_included(), b.is_included());
                        }
                    }
                }
                // A cut message is counted as the plan's tokenizer counts its rendered text.
                for (slice, whole, kept) in p.cut_report() {
                    prop_assert!(cut_boundary && kept < whole, "{:?}", slice.source);
                    let text = pinloom_engine::render::slice_text(slice, &t.snapshot);
                    prop_assert_eq!(u64::from(kept), prof.tokenizer.count(&text) + 3);
                }
                // Role rules on the rendered messages.
                let r = chat_request(&p, &t.snapshot, &prof);
                prop_assert!(!r.messages.is_empty(), "at least one message");
                check_roles(&r.messages, prof.role_rules)?;
            }
        }
    }
}

/// The thread of every node, read along parent links (these trees are one chain).
fn thread_of_each_node(
    snapshot: &pinloom_engine::snapshot::Snapshot,
) -> std::collections::HashMap<pinloom_engine::snapshot::NodeId, pinloom_engine::snapshot::ThreadRef>
{
    let mut thread = pinloom_engine::snapshot::ThreadRef::Root;
    snapshot
        .nodes
        .iter()
        .map(|node| {
            if let pinloom_engine::snapshot::ParentEdge::Pin { pin, .. } = node.edge {
                thread = pinloom_engine::snapshot::ThreadRef::Pin(pin);
            }
            (node.id, thread)
        })
        .collect()
}

fn check_roles(
    messages: &[pinloom_engine::render::ChatMessage],
    rules: RoleRules,
) -> Result<(), TestCaseError> {
    if rules.first_user {
        prop_assert_eq!(messages[0].role, Role::User);
    }
    // No orphan tool messages: every result answers a call earlier in the messages, and every
    // call is answered.
    let mut calls: Vec<&str> = Vec::new();
    let mut answered: Vec<&str> = Vec::new();
    for m in messages {
        for part in &m.parts {
            match part {
                Part::ToolCall { id, .. } => calls.push(id),
                Part::ToolResult { call_id, .. } => {
                    prop_assert!(calls.contains(&call_id.as_str()), "orphan result {}", call_id);
                    answered.push(call_id);
                }
                Part::Text(_) | Part::Image { .. } => {}
            }
        }
    }
    for c in &calls {
        prop_assert!(answered.contains(c), "unanswered call {}", c);
    }
    for w in messages.windows(2) {
        if rules.assistant_between_tool_and_user {
            prop_assert!(!(w[0].role == Role::Tool && w[1].role == Role::User), "tool then user");
        }
        if rules.strict_alternation {
            prop_assert_ne!(w[0].role, w[1].role);
            prop_assert_ne!(w[1].role, Role::Tool);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
    ))]

    /// Exact counting: the engine's o200k and cl100k counts (quicktok-v1) equal tiktoken's
    /// (tiktoken-rs runs OpenAI's own BPE core) on arbitrary Unicode text.
    #[test]
    fn exact_counts_equal_tiktoken(text in "\\PC{0,200}") {
        use pinloom_engine::tokens::Tokenizer;
        let o200k = tiktoken_rs::o200k_base_singleton();
        let cl100k = tiktoken_rs::cl100k_base_singleton();
        prop_assert_eq!(Tokenizer::O200k.count(&text) as usize, o200k.encode_ordinary(&text).len());
        prop_assert_eq!(Tokenizer::Cl100k.count(&text) as usize, cl100k.encode_ordinary(&text).len());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
    ))]

    /// Issue 47, point 7: on a random plain thread at a random budget, whenever truncateMiddle
    /// keeps fewer of the newest tokens than the newest messages that fit the same room (what
    /// LangChain's `trim_messages` keeps), the plan names what it spent the difference on (its
    /// kept start, marker, step, role fills), and the difference is at most those and the one
    /// message that no longer fitted beside them. The kept start is a whole turn or nothing.
    #[test]
    fn what_the_newest_messages_lose_the_plan_names(
        sizes in prop::collection::vec(1usize..600, 3..80),
        window in 30u32..8_000,
        step in prop_oneof![Just(0u32), Just(25u32)],
    ) {
        let mut t = Tree::new("newest");
        for (k, size) in sizes.iter().enumerate() {
            let author = if k % 2 == 0 { Author::Human } else { Author::Model };
            t.say(author, &"w".repeat(*size));
        }
        let settings = Settings { truncation_step_percent: step, ..Settings::default() };
        let Ok(p) = plan(&t.snapshot, &profile(ProviderFamily::OpenAiCompatible, window), &settings)
        else {
            return Ok(()); // the protected messages alone do not fit: tested elsewhere
        };
        // The history, oldest first (the prompt aside): tokens, and whether it is sent.
        let history: Vec<(u64, bool)> = p
            .slices
            .iter()
            .filter(|slice| slice.kind.is_history() && matches!(slice.source, SourceId::Node(_)))
            .map(|slice| (u64::from(slice.tokens), slice.is_included()))
            .collect();
        let prompt: u64 = p
            .slices
            .iter()
            .filter(|slice| slice.kind == SliceKind::Prompt)
            .map(|slice| u64::from(slice.tokens))
            .sum();
        let room = u64::from(p.available).saturating_sub(prompt);
        let mut newest_that_fit = 0u64;
        let mut fitting = 0usize;
        for &(tokens, _) in history.iter().rev() {
            if newest_that_fit + tokens > room {
                break;
            }
            newest_that_fit += tokens;
            fitting += 1;
        }
        let tail: Vec<u64> =
            history.iter().rev().take_while(|(_, sent)| *sent).map(|&(tokens, _)| tokens).collect();
        let kept_newest: u64 = tail.iter().sum();
        if kept_newest < newest_that_fit {
            let start: u64 = history[..history.len() - tail.len()]
                .iter()
                .filter(|(_, sent)| *sent)
                .map(|&(tokens, _)| tokens)
                .sum();
            let spent = start
                + p.marker.as_ref().map_or(0, |marker| u64::from(marker.tokens))
                + p.step_cut.map_or(0, |cut| u64::from(cut.tokens))
                + p.role_fills.iter().map(|fill| u64::from(fill.tokens)).sum::<u64>();
            prop_assert!(spent > 0, "the newest messages lost room to nothing named: {p:?}");
            // The message that no longer fitted beside what was spent is among those the newest
            // that fit hold and the plan does not: at most the largest of them.
            let boundary = history[history.len() - fitting..history.len() - tail.len()]
                .iter()
                .map(|&(tokens, _)| tokens)
                .max()
                .unwrap_or(0);
            prop_assert!(
                newest_that_fit - kept_newest <= spent + boundary,
                "{newest_that_fit} newest tokens fit, {kept_newest} kept, {spent} spent on the start, \
                 marker, step and fills, and the next message is {boundary}: {:?} {:?} {:?}",
                p.marker, p.step_cut, p.small_budget
            );
        }
        // A kept start is the whole first turn: its question never goes without its reply, and
        // its reply goes without its question only as the oldest message of the tail.
        if history.len() >= 2 {
            let (question, reply) = (history[0].1, history[1].1);
            prop_assert!(!question || reply, "the first question went alone: {:?}", history);
            prop_assert!(
                question || !reply || history[1..].iter().all(|(_, sent)| *sent),
                "the first reply was kept as a start without its question: {:?}",
                history
            );
        }
    }
}
