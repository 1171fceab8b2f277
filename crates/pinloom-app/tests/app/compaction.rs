//! Compaction of the thread you are in, through the use cases on a real database file with a
//! scripted summariser on 127.0.0.1: the older part of a thread is replaced in its requests by
//! the summary (a slice of the plan, named in the report), the last turns stay verbatim, a
//! message excluded inside the span makes it stale (the messages are sent as they are again),
//! undo brings them back, and bad input changes nothing.

use pinloom_app::json::{CompactionWhen, PlanView};
use pinloom_app::{NodeAction, Pinloom, PlanFormat};
use pinloom_test_server::{Answer, Server};

use crate::Sends;
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

    let done = pinloom.compact(last, Some(1), "Local".into()).await.unwrap();
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
        let refused = pinloom.compact(last, Some(keep), "Local".into()).await.unwrap_err();
        let message = format!("{refused:#}");
        assert!(message.contains("a compaction needs at least 2"), "{message}");
    }
    assert!(server.seen().is_empty(), "nothing was asked of the summariser");
    // A pin with nothing of its own yet has no history to compact.
    let pin = pinloom.pin_range(ids[1], 0, 7, "Message".into(), String::new()).await.unwrap();
    let question = pinloom.ask_in_pin(pin.id, "Why?".into()).await.unwrap();
    let refused = pinloom.compact(question.message.id, Some(0), "Local".into()).await.unwrap_err();
    assert!(format!("{refused:#}").contains("1 message on its path"), "{refused:#}");

    // A summariser that fails leaves the thread as it was, the failure in the requests' list.
    let failed = pinloom.compact(last, Some(1), "Local".into()).await.unwrap_err();
    assert!(format!("{failed:#}").contains("the thread was not compacted"), "{failed:#}");
    assert!(preview(&pinloom, last).await.compaction.is_none());
    let requests = pinloom.background_requests(Some(tree), 10, false).await.unwrap();
    assert!(requests[0].failure.as_deref().unwrap().contains("down"), "{requests:?}");
}

/// A dialogue of `count` messages of about 85 tokens each, saying their numbers, for a model
/// whose window is 4,096 tokens: the tree and the messages' ids.
async fn long_thread(pinloom: &Pinloom, count: usize) -> (i64, Vec<i64>) {
    let tree = dialogue(pinloom).await;
    let mut ids = Vec::new();
    for k in 1..=count {
        let text = format!("Message m{k}x. {}", "The river bends around the old mill. ".repeat(10));
        ids.push(pinloom.append_message(tree, ids.last().copied(), text).await.unwrap().id);
    }
    (tree, ids)
}

/// `Small`: a 4,096-token window at `server`, so that fifty such messages do not fit it, nor the
/// summariser's room (what is left of it beside the summary and the instruction).
async fn small_model(pinloom: &Pinloom, server: &Server) {
    let mut small = crate::wire::local_profile("Small", server, 4_096, "o200k");
    small.completion_endpoint = false;
    pinloom.save_model_profile(small).await.unwrap();
}

async fn compaction_when(pinloom: &Pinloom, tree: i64, when: CompactionWhen, keep: u32) {
    let mut settings = pinloom.tree_settings(tree).await.unwrap();
    settings.compaction = when;
    settings.compaction_keep_turns = Some(keep);
    settings.retrieval =
        Some(pinloom_app::json::RetrievalChoice { share_percent: 0, ..Default::default() });
    pinloom.set_tree_settings(tree, settings).await.unwrap();
}

#[tokio::test]
async fn automatic_compaction_stands_for_the_history_a_send_would_cut_in_steps_the_summariser_can_read()
 {
    const STEP: &str = "Up to m29x the river was measured; the planted code is BLUE-3.";
    let server =
        Server::start(vec![says(STEP), says(SUMMARY), says("The mill is downstream.")]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    small_model(&pinloom, &server).await;
    let (tree, ids) = long_thread(&pinloom, 50).await;
    compaction_when(&pinloom, tree, CompactionWhen::Automatic, 1).await;

    // The preview says what the send will do before it does it.
    let before = pinloom.preview(ids[49], "Small".into(), Some("And then?".into())).await.unwrap();
    assert!(before.truncated, "fifty messages do not fit 4,096 tokens");
    let due = before.compaction_due.clone().expect("a compaction is due");
    assert!(due.automatic && due.cut > 0 && due.keep_turns == 1, "{due:?}");
    assert_eq!(due.up_to, ids[47], "the last two messages are the kept turn");
    assert_eq!(due.messages, 48);
    assert!(server.seen().is_empty(), "a preview asks nothing");

    let (events, _received, cancel) = crate::wire::listen();
    let exchange = pinloom
        .send(tree, Some(ids[49]), "And then?".into(), "Small".into(), events, cancel)
        .await
        .unwrap();
    let seen = server.seen();
    assert_eq!(seen.len(), 3, "two summaries, then the reply");
    // The summariser's room holds about thirty such messages: the first summary reads the start,
    // the second that summary and what followed, and nothing is left out unread.
    assert!(seen[0].body.contains("m1x") && !seen[0].body.contains("m48x"), "{}", seen[0].body);
    assert!(seen[1].body.contains("BLUE-3") && seen[1].body.contains("m48x"), "{}", seen[1].body);
    assert!(!seen[1].body.contains("m49x"), "the kept turn is not summarised");
    assert!(!seen[1].body.contains("m1x."), "the second reads the first's summary instead");
    for body in [&seen[0].body, &seen[1].body] {
        assert!(!body.contains("is left out"), "{body}");
    }
    // The reply's request: the summary for all but the last turn, nothing cut.
    let reply = &seen[2].body;
    assert!(reply.contains("GREEN-7") && reply.contains("And then?"), "{reply}");
    assert!(!reply.contains("m1x.") && !reply.contains("m48x.") && reply.contains("m49x."));
    let plan = &exchange.plan;
    assert!(!plan.truncated, "{:?}", plan.slices);
    let note = plan.compaction.clone().expect("the send's plan names the compaction");
    assert_eq!((note.first, note.up_to, note.messages), (Some(ids[0]), ids[47], 48));
    assert!(note.included);
    assert!(plan.compaction_due.is_none(), "nothing more to compact");

    let requests = pinloom.background_requests(Some(tree), 10, false).await.unwrap();
    let kinds: Vec<&str> = requests.iter().map(|request| request.kind.as_str()).collect();
    assert_eq!(kinds, ["compaction", "compaction"], "{requests:?}");
    assert!(requests.iter().all(|request| request.failure.is_none() && request.planned_tokens > 0));
}

#[tokio::test]
async fn asked_compaction_is_offered_and_a_failed_automatic_one_leaves_the_send_to_truncation() {
    let server = Server::start(vec![
        says("Fine."),
        Answer::error(500, r#"{"error":{"message":"the summariser is down"}}"#),
        says("Still fine."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    small_model(&pinloom, &server).await;
    let (tree, ids) = long_thread(&pinloom, 50).await;

    // Ask (the default): the send is cut, and offered compaction; nothing is summarised.
    compaction_when(&pinloom, tree, CompactionWhen::Ask, 2).await;
    let (events, _received, cancel) = crate::wire::listen();
    let asked = pinloom
        .send(tree, Some(ids[49]), "And then?".into(), "Small".into(), events, cancel)
        .await
        .unwrap();
    let due = asked.plan.compaction_due.clone().expect("compaction is offered");
    assert!(!due.automatic && due.reason.contains("the budget cuts"), "{due:?}");
    assert!(asked.plan.truncated && asked.plan.compaction.is_none());
    assert_eq!(server.seen().len(), 1, "the reply alone");

    // Off: not offered.
    compaction_when(&pinloom, tree, CompactionWhen::Off, 2).await;
    let off = pinloom.preview(asked.reply.message.id, "Small".into(), None).await.unwrap();
    assert!(off.truncated && off.compaction_due.is_none());

    // Automatic, and the summariser fails: the send goes with truncation, the failure listed.
    compaction_when(&pinloom, tree, CompactionWhen::Automatic, 2).await;
    let (events, _received, cancel) = crate::wire::listen();
    let failed = pinloom
        .send(tree, Some(asked.reply.message.id), "Go on.".into(), "Small".into(), events, cancel)
        .await
        .unwrap();
    assert!(failed.plan.truncated && failed.plan.compaction.is_none());
    assert_eq!(server.seen().len(), 3);
    let requests = pinloom.background_requests(Some(tree), 10, false).await.unwrap();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0].kind, "compaction");
    assert!(requests[0].failure.as_deref().unwrap().contains("down"), "{requests:?}");
}

#[tokio::test]
async fn compaction_settings_out_of_range_are_refused_saying_what_to_use() {
    let server = Server::start(Vec::new()).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    for (at, keep, says) in [
        (Some(0), None, "use 1 to 100"),
        (Some(101), None, "use 1 to 100"),
        (None, Some(0), "keeps 1 to 1000 turns"),
    ] {
        let mut settings = pinloom.tree_settings(tree).await.unwrap();
        settings.compact_at_percent = at;
        settings.compaction_keep_turns = keep;
        let refused = pinloom.set_tree_settings(tree, settings).await.unwrap_err();
        assert!(format!("{refused:#}").contains(says), "{refused:#}");
    }
    assert_eq!(pinloom.tree_settings(tree).await.unwrap().compact_at_percent, None);
}
