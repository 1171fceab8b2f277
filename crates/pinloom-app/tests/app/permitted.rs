//! The rule of what a path may know, through the application layer on a real database file:
//! random trees are written with the app's own calls (branches from any message, pins with their
//! first question, continuations inside pins, notes, exclusions, deletions, edits, compactions,
//! search hits the person adds), and the plan of a random message is checked against an oracle kept here, from
//! the parent links the test itself chose. Every message says `meander river` (so the search
//! finds them all) and a marker of its own; no marker of a message the path may not know may
//! appear in the request body. The path may know its own thread and each ancestor thread up to
//! where the next hangs off (recalled by the search, quoted while no summary is written, or
//! summarised), never an excluded message. The summariser answers with the text it was sent, and
//! summaries are written along the walk, so a summary that outlived an exclusion or a deletion
//! of what it was written from would carry that message's marker into the request.
//! Cases: PROPTEST_CASES (default 16: each case is a fresh database).

use std::collections::HashSet;

use pinloom_app::json::TreeMode;
use pinloom_app::{NodeAction, Pinloom};
use pinloom_test_server::Server;
use proptest::prelude::*;

use crate::wire::pinloom_with;

#[derive(Debug, Clone)]
enum Op {
    /// A message continuing a message (or a second continuation: a branch, as an edit or a
    /// regeneration makes).
    Say(usize),
    /// A pin on a message's "river", and its first question.
    Pin(usize),
    Exclude(usize),
    Delete(usize),
    Note(usize, bool),
    /// The person adds a message to the context by hand.
    Add(usize),
    /// The summariser (one that answers with what it was sent) writes the summary of a
    /// message's thread up to it, at a budget.
    Summarise(usize, u32),
    /// A message edited: the edit is a new branch beside it, the original stays.
    Edit(usize),
    /// The thread of a message compacted on its path to it, the last turns kept.
    Compact(usize, u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => any::<usize>().prop_map(Op::Say),
        2 => any::<usize>().prop_map(Op::Pin),
        1 => any::<usize>().prop_map(Op::Exclude),
        1 => any::<usize>().prop_map(Op::Delete),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(on, included)| Op::Note(on, included)),
        1 => any::<usize>().prop_map(Op::Add),
        2 => (any::<usize>(), 8u32..400).prop_map(|(on, budget)| Op::Summarise(on, budget)),
        1 => any::<usize>().prop_map(Op::Edit),
        1 => (any::<usize>(), 0u32..3).prop_map(|(on, keep)| Op::Compact(on, keep)),
    ]
}

/// What the test wrote, read back by nothing but itself.
#[derive(Default)]
struct Written {
    /// Messages in the order written: id, parent, thread (pin id), marker.
    messages: Vec<(i64, Option<i64>, Option<i64>, String)>,
    excluded: HashSet<i64>,
    deleted: HashSet<i64>,
    /// Notes: id, the message they hang on, whether included, marker.
    notes: Vec<(i64, i64, bool, String)>,
    added: HashSet<i64>,
}

impl Written {
    fn message(&self, id: i64) -> &(i64, Option<i64>, Option<i64>, String) {
        self.messages.iter().find(|message| message.0 == id).unwrap()
    }

    /// The path to `id` by the parent links the test chose, root first.
    fn path(&self, id: i64) -> Vec<i64> {
        let mut path = vec![id];
        while let Some(parent) = self.message(*path.last().unwrap()).1 {
            path.push(parent);
        }
        path.reverse();
        path
    }

    fn deleted_on(&self, path: &[i64]) -> bool {
        path.iter().any(|id| self.deleted.contains(id))
    }
}

async fn write(pinloom: &Pinloom, tree: i64, ops: &[Op]) -> Written {
    let mut written = Written::default();
    let text = |marker: &str| format!("{marker} meander river and more words about the valley");
    let first = pinloom.append_message(tree, None, text("m0q")).await.unwrap().id;
    written.messages.push((first, None, None, "m0q".into()));
    for (k, op) in ops.iter().enumerate() {
        let pick = |index: usize| written.messages[index % written.messages.len()].clone();
        match *op {
            Op::Say(on) => {
                let (parent, _, thread, _) = pick(on);
                let marker = format!("m{}q", k + 1);
                // A continuation stays in its parent's thread.
                let Ok(node) = pinloom.append_message(tree, Some(parent), text(&marker)).await
                else {
                    continue; // under a deleted message: refused, and rightly
                };
                written.messages.push((node.id, Some(parent), thread, marker));
            }
            Op::Pin(on) => {
                let (node, _, _, marker) = pick(on);
                let start = text(&marker).find("river").unwrap() as u32;
                let Ok(pin) =
                    pinloom.pin_range(node, start, start + 5, "river".into(), String::new()).await
                else {
                    continue;
                };
                let marker = format!("m{}q", k + 1);
                let Ok(question) = pinloom.ask_in_pin(pin.id, text(&marker)).await else {
                    continue;
                };
                written.messages.push((question.message.id, Some(node), Some(pin.id), marker));
            }
            Op::Exclude(on) => {
                let (node, ..) = pick(on);
                pinloom.mark_node(node, NodeAction::Exclude).await.unwrap();
                written.excluded.insert(node);
            }
            Op::Delete(on) => {
                let (node, ..) = pick(on);
                if pinloom.mark_node(node, NodeAction::Delete).await.is_ok() {
                    written.deleted.insert(node);
                }
            }
            Op::Note(on, included) => {
                let (node, ..) = pick(on);
                let marker = format!("n{}q", k + 1);
                if let Ok(note) = pinloom.annotate(node, text(&marker), included).await {
                    written.notes.push((note, node, included, marker));
                }
            }
            Op::Add(on) => {
                let (node, ..) = pick(on);
                written.added.insert(node);
            }
            Op::Edit(on) => {
                let (node, parent, thread, _) = pick(on);
                let marker = format!("m{}q", k + 1);
                if let Ok(edit) = pinloom.edit_message(node, text(&marker)).await {
                    written.messages.push((edit.message.id, parent, thread, marker));
                }
            }
            Op::Compact(on, keep) => {
                let (node, ..) = pick(on);
                // Refused when the thread is too short, or under a deleted message.
                let _ = pinloom.compact(node, Some(keep), "Tight".into()).await;
            }
            Op::Summarise(on, budget) => {
                let (node, _, thread, _) = pick(on);
                // Refused under a deleted message, and rightly; what it wrote is checked below.
                let _ =
                    pinloom.regenerate_summary(tree, thread, node, budget, "Tight".into()).await;
            }
        }
    }
    if !written.added.is_empty() {
        let mut settings = pinloom.tree_settings(tree).await.unwrap();
        settings.search_hits = written.added.iter().copied().collect();
        pinloom.set_tree_settings(tree, settings).await.unwrap();
    }
    written
}

fn check(
    written: &Written,
    active: i64,
    plan: &pinloom_app::json::PlanView,
) -> Result<(), TestCaseError> {
    let path = written.path(active);
    let thread = written.message(active).2;
    // The current thread's own messages on the path: what the history may carry.
    let own: HashSet<i64> =
        path.iter().copied().filter(|id| written.message(*id).2 == thread).collect();
    // The whole path, each ancestor thread up to where the next hangs off: what the search may
    // recall, and what an ancestor's stand-in (its last messages, while no summary is written)
    // may quote.
    let on_path: HashSet<i64> = path.iter().copied().collect();
    let notes: HashSet<i64> = written
        .notes
        .iter()
        .filter(|(_, on, included, _)| *included && own.contains(on))
        .map(|(note, ..)| *note)
        .collect();
    for slice in plan.slices.iter().filter(|slice| slice.included) {
        let id = slice.source_id.unwrap_or_default();
        let why = format!("{} {} {id} from {active}", slice.kind, slice.source);
        match slice.source.as_str() {
            "node" => prop_assert!(own.contains(&id), "history off the path: {}", why),
            "retrieval" => {
                prop_assert!(on_path.contains(&id), "a search hit off the path: {}", why);
                prop_assert!(!written.excluded.contains(&id), "an excluded hit: {}", why);
            }
            "addedSearchHit" => {
                prop_assert!(written.added.contains(&id), "added by nobody: {}", why)
            }
            "annotation" => prop_assert!(notes.contains(&id), "a note not asked for: {}", why),
            _ => {}
        }
    }
    // Nothing of anything else is in the request, whatever slice it hides in: summaries an
    // echoing summariser wrote from messages since excluded included.
    let allowed: HashSet<&str> = written
        .messages
        .iter()
        .filter(|(id, ..)| {
            (on_path.contains(id) && !written.excluded.contains(id)) || written.added.contains(id)
        })
        .map(|(.., marker)| marker.as_str())
        .chain(
            written
                .notes
                .iter()
                .filter(|(note, ..)| notes.contains(note))
                .map(|(.., marker)| marker.as_str()),
        )
        .collect();
    let markers = written
        .messages
        .iter()
        .map(|(.., marker)| marker.as_str())
        .chain(written.notes.iter().map(|(.., marker)| marker.as_str()));
    for marker in markers.filter(|marker| !allowed.contains(marker)) {
        let found =
            plan.request_body().split(|c: char| !c.is_alphanumeric()).any(|word| word == marker);
        prop_assert!(
            !found,
            "{} reached the request from {}: {}",
            marker,
            active,
            plan.request_body()
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(16)
    ))]

    #[test]
    fn every_plan_on_a_real_database_holds_only_what_its_path_may_know(
        ops in prop::collection::vec(op(), 1..40),
        actives in prop::collection::vec(any::<usize>(), 1..4),
        window in prop_oneof![Just(8_192i64), 300i64..2_000],
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let server = Server::echoing().await;
            let (pinloom, _dir) = pinloom_with(&server).await;
            let mut tight = crate::wire::local_profile("Tight", &server, window, "o200k");
            tight.completion_endpoint = false;
            pinloom.save_model_profile(tight).await.unwrap();
            let tree = pinloom.create_tree("Random".into(), TreeMode::Dialogue).await.unwrap().id;
            let written = write(&pinloom, tree, &ops).await;
            for pick in actives {
                let active = written.messages[pick % written.messages.len()].0;
                if written.deleted_on(&written.path(active)) {
                    continue; // a deleted message is not planned from
                }
                let Ok(plan) = pinloom
                    .preview(active, "Tight".into(), Some("meander river valley".into()))
                    .await
                else {
                    continue; // refusals (budget) have tests of their own
                };
                check(&written, active, &plan)?;
            }
            Ok::<(), TestCaseError>(())
        })?;
    }
}
