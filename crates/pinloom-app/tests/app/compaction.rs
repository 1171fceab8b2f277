//! Compaction of the thread you are in, through the use cases on a real database file with a
//! scripted summariser on 127.0.0.1: the older part of a thread is replaced in its requests by
//! the summary (a slice of the plan, named in the report), the last turns stay verbatim, a
//! message excluded inside the span makes it stale (the messages are sent as they are again),
//! undo brings them back, and bad input changes nothing.

use pinloom_app::json::PlanView;
use pinloom_app::{NodeAction, Pinloom, PlanFormat};
use pinloom_test_server::{Answer, Server};

use crate::wire::{dialogue, pinloom_with, says};

const SUMMARY: &str = "The person and the model discussed meanders; the planted code is GREEN-7.";

/// A dialogue of eight messages, each saying its number: the tree and the messages' ids.
async fn eight_messages(pinloom: &Pinloom) -> (i64, Vec<i64>) {
    let tree = dialogue(pinloom).await;
    let mut ids = Vec::new();
    for k in 1..=8 {
        let text = format!("Message number m{k}x about rivers and their banks.");
        ids.push(pinloom.append_message(tree, ids.last().copied(), text).await.unwrap().id);
    }
    (tree, ids)
}

async fn preview(pinloom: &Pinloom, node: i64) -> PlanView {
    pinloom.preview(node, "Local".into(), Some("And then?".into())).await.unwrap()
}

/// Search hits off for `tree` (`share` 0), or back at seed 001's share.
async fn search_share(pinloom: &Pinloom, tree: i64, share: u32) {
    let mut settings = pinloom.tree_settings(tree).await.unwrap();
    let choice = pinloom_app::json::RetrievalChoice { share_percent: share, ..Default::default() };
    settings.retrieval = Some(choice);
    pinloom.set_tree_settings(tree, settings).await.unwrap();
}

/// Whether the request body carries message `k`'s own words.
fn carries(plan: &PlanView, k: usize) -> bool {
    plan.request_body().contains(&format!("m{k}x"))
}

#[tokio::test]
async fn a_compacted_thread_sends_its_summary_for_its_older_part_until_a_message_of_it_changes() {
    let server = Server::start(vec![says(SUMMARY)]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let (tree, ids) = eight_messages(&pinloom).await;
    let last = *ids.last().unwrap();
    // Without search hits, what the request carries of the older part is the summary alone.
    search_share(&pinloom, tree, 0).await;

    let done = pinloom.compact(last, 1, "Local".into()).await.unwrap();
    assert_eq!((done.first, done.up_to, done.messages), (ids[0], ids[5], 6));
    assert_eq!(done.text, SUMMARY);
    assert!(server.seen()[0].body.contains("m1x"), "the summariser read the span");
    assert!(!server.seen()[0].body.contains("m7x"), "and not the turn kept verbatim");

    let plan = preview(&pinloom, last).await;
    let note = plan.compaction.clone().expect("the plan names its compaction");
    assert!(note.included && note.stale.is_none(), "{note:?}");
    assert_eq!((note.first, note.up_to, note.messages), (Some(ids[0]), ids[5], 6));
    assert!(plan.request_body().contains("GREEN-7"), "the summary is sent");
    assert!(plan.request_body().contains("Summary of the first 6 messages"));
    for k in 1..=6 {
        assert!(!carries(&plan, k), "message {k} is compacted: {}", plan.request_body());
    }
    assert!(carries(&plan, 7) && carries(&plan, 8), "the last turn stays verbatim");
    let compacted = plan
        .slices
        .iter()
        .filter(|slice| slice.source == "node" && slice.reason.as_deref() == Some("compacted"));
    assert_eq!(compacted.map(|slice| slice.count).sum::<u32>(), 6);
    // The search still recovers a detail of the compacted part.
    search_share(&pinloom, tree, 30).await;
    let asked = Some("What did message m2x say?".to_owned());
    let plan = pinloom.preview(last, "Local".into(), asked).await.unwrap();
    let hit = plan.slices.iter().find(|slice| {
        slice.source == "retrieval" && slice.source_id == Some(ids[1]) && slice.included
    });
    assert!(hit.is_some(), "{:?}", plan.slices);
    search_share(&pinloom, tree, 0).await;
    let report = pinloom.plan_text(last, Some("Local".into()), PlanFormat::Report).await.unwrap();
    let said = format!("Messages #{}–#{} (6) are compacted into", ids[0], ids[5]);
    assert!(report.contains(&said), "{}", report);
    assert!(report.contains(&format!("`pinloom uncompact {}`", done.id)), "{}", report);

    // A message of the span excluded: the summary no longer holds, the messages go as they are.
    pinloom.mark_node(ids[2], NodeAction::Exclude).await.unwrap();
    let plan = preview(&pinloom, last).await;
    let note = plan.compaction.clone().unwrap();
    assert!(note.stale.as_deref().unwrap().contains("was excluded"), "{note:?}");
    assert_eq!(note.reason.as_deref(), Some("staleCompaction"));
    assert!(!plan.request_body().contains("GREEN-7"), "{}", plan.request_body());
    assert!(carries(&plan, 1) && !carries(&plan, 3), "{}", plan.request_body());

    // Undone, the thread is as it was; undone twice, it says so.
    pinloom.mark_node(ids[2], NodeAction::Include).await.unwrap();
    pinloom.undo_compaction(done.id).await.unwrap();
    let plan = preview(&pinloom, last).await;
    assert!(plan.compaction.is_none());
    assert!((1..=8).all(|k| carries(&plan, k)));
    let again = pinloom.undo_compaction(done.id).await.unwrap_err();
    assert!(format!("{again:#}").contains("is not in effect"), "{again:#}");
}

#[tokio::test]
async fn a_compaction_that_cannot_be_made_says_why_and_changes_nothing() {
    let server = Server::start(vec![Answer::error(
        500,
        r#"{"error":{"message":"the summariser is down"}}"#,
    )])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let (tree, ids) = eight_messages(&pinloom).await;
    let last = *ids.last().unwrap();
    for keep in [4, 7, 1_000] {
        let refused = pinloom.compact(last, keep, "Local".into()).await.unwrap_err();
        let message = format!("{refused:#}");
        assert!(message.contains("a compaction needs at least 2"), "{message}");
    }
    assert!(server.seen().is_empty(), "nothing was asked of the summariser");
    // A pin with nothing of its own yet has no history to compact.
    let pin = pinloom.pin_range(ids[1], 0, 7, "Message".into(), String::new()).await.unwrap();
    let question = pinloom.ask_in_pin(pin.id, "Why?".into()).await.unwrap();
    let refused = pinloom.compact(question.message.id, 0, "Local".into()).await.unwrap_err();
    assert!(format!("{refused:#}").contains("1 message on its path"), "{refused:#}");

    // A summariser that fails leaves the thread as it was, the failure in the requests' list.
    let failed = pinloom.compact(last, 1, "Local".into()).await.unwrap_err();
    assert!(format!("{failed:#}").contains("the thread was not compacted"), "{failed:#}");
    assert!(preview(&pinloom, last).await.compaction.is_none());
    let requests = pinloom.background_requests(Some(tree), 10, false).await.unwrap();
    assert!(requests[0].failure.as_deref().unwrap().contains("down"), "{requests:?}");
}
