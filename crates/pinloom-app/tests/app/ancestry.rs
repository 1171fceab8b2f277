//! What a pin knows of its ancestry, through the use cases on a real database file, with the
//! requests a scripted server on 127.0.0.1 received as the proof: summaries written when a pin
//! opens (its first send waits for none), the person's and an agent's summaries used and fitted,
//! a failing summariser that never fails the send, recall from ancestor threads, the reply limit
//! asked for, a refusal that is never a request, each reply's settings, and damaged trees that
//! say so.

use std::time::Duration;

use pinloom_app::json::{
    AncestorState, CompareReach, ExportFormat, ExportRequest, SummaryAuthor, SummaryWriting,
};
use pinloom_app::{ApiError, ErrorCode, Pinloom, PlanFormat, ReplyEvent};
use pinloom_test_server::{Answer, Server};

use crate::Sends;
use crate::wire::{ask, dialogue, listen, messages, pinloom_with, says};

const ANSWER: &str = "Meanders form where the outer bank erodes and the inner bank gains silt.";

/// The whole text a request sent, its messages joined.
fn sent(body: &serde_json::Value) -> String {
    messages(body).into_iter().map(|(role, text)| format!("{role}: {text}\n")).collect()
}

/// Waits until `pinloom` has a summary of the root thread of `tree` (the background write
/// landed), for at most ten seconds.
async fn root_summaries(pinloom: &Pinloom, tree: i64, at_least: usize) {
    for _ in 0..200 {
        if pinloom.summaries(tree, None).await.unwrap().len() >= at_least {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no summary of the root thread landed");
}

/// Asks `text` as the first message of pin `pin` and has `Local` answer; returns the answer's
/// exchange and how many requests the server had seen when the first piece of the reply arrived.
async fn first_send_in_pin(
    pinloom: &Pinloom,
    server: &Server,
    pin: i64,
    text: &str,
) -> (pinloom_app::json::Exchange, usize) {
    let (events, mut received, cancel) = listen();
    let seen_at_first_text = {
        let server_seen = server.clone();
        tokio::spawn(async move {
            while let Some(event) = received.recv().await {
                if let ReplyEvent::Text(_) = event {
                    return server_seen.seen().len();
                }
            }
            0
        })
    };
    let exchange =
        pinloom.send_in_pin(pin, None, text.into(), "Local".into(), events, cancel).await.unwrap();
    (exchange, seen_at_first_text.await.unwrap())
}

/// The root thread's one exchange and a pin opened on `passage` of its answer, through the
/// window's call (which prepares the pin's summaries in the background with `Local`).
async fn rivers_with_pin(pinloom: &Pinloom, passage: &str) -> (i64, i64, i64) {
    let tree = dialogue(pinloom).await;
    let root = ask(pinloom, tree, None, "Why do rivers meander?").await;
    let reply = root.reply.message.id;
    (tree, reply, pin_on_answer(pinloom, reply, passage).await)
}

/// A pin opened on `passage` of `reply` (which reads [`ANSWER`]) through the window's call.
async fn pin_on_answer(pinloom: &Pinloom, reply: i64, passage: &str) -> i64 {
    let start = ANSWER.find(passage).unwrap() as u32;
    let end = start + passage.len() as u32;
    let local = Some("Local".into());
    pinloom.open_pin(reply, start, end, passage.into(), String::new(), local).await.unwrap().id
}

#[tokio::test]
async fn a_pins_summaries_are_written_when_it_opens_so_its_first_send_waits_for_none() {
    let server = Server::start(vec![
        says(ANSWER),
        says("The person asked why rivers meander; the outer bank erodes."),
        says("Silt settles where the water slows."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let (tree, reply, pin) = rivers_with_pin(&pinloom, "the inner bank gains silt").await;
    root_summaries(&pinloom, tree, 1).await;
    let summary_request = sent(&server.seen()[1].json());
    assert!(summary_request.contains("Person: Why do rivers meander?"), "{summary_request}");

    // What the pin knows is ready, and shown, before anything is asked.
    let knows = pinloom.pin_ancestry(pin, "Local".into(), false).await.unwrap();
    assert_eq!(knows.len(), 1);
    assert_eq!(
        (knows[0].state, knows[0].written_by),
        (AncestorState::Summary, Some(SummaryAuthor::Model))
    );
    assert_eq!((knows[0].up_to, knows[0].budget, knows[0].distance), (reply, 800, 1));
    assert!(knows[0].text.contains("the outer bank erodes."));

    let before = server.seen().len();
    let (exchange, seen_at_first_text) =
        first_send_in_pin(&pinloom, &server, pin, "Why does silt settle there?").await;
    assert_eq!(
        seen_at_first_text - before,
        1,
        "between Send and the first text of the reply, only the reply's own request"
    );
    assert_eq!(server.seen().len(), before + 1);
    let request = sent(&server.seen()[before].json());
    assert!(request.contains("the outer bank erodes."), "the summary is sent: {request}");
    assert!(request.contains("\"the inner bank gains silt\""), "and the anchor: {request}");
    assert_eq!(exchange.plan.ancestry[0].state, AncestorState::Summary);
}

/// A tree whose summaries are written `when`, its question answered (with [`ANSWER`]) and a pin
/// opened on the answer through the window's call: the tree and the pin.
async fn pinned_writing_summaries(pinloom: &Pinloom, when: SummaryWriting) -> (i64, i64) {
    let tree = dialogue(pinloom).await;
    let mut settings = pinloom.tree_settings(tree).await.unwrap();
    settings.summary_writing = when;
    pinloom.set_tree_settings(tree, settings).await.unwrap();
    let reply = ask(pinloom, tree, None, "Why do rivers meander?").await.reply.message.id;
    (tree, pin_on_answer(pinloom, reply, "the inner bank gains silt").await)
}

#[tokio::test]
async fn a_tree_that_writes_summaries_only_when_asked_spends_nothing_on_a_pin_never_asked_in() {
    let server = Server::start(vec![
        says(ANSWER),
        says("The person asked why rivers meander; the outer bank erodes."),
        says("Silt settles where the water slows."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let (tree, pin) = pinned_writing_summaries(&pinloom, SummaryWriting::WhenAsked).await;
    // Opened and shown (the window prepares what it shows): nothing is asked of the summariser.
    let knows = pinloom.pin_ancestry(pin, "Local".into(), true).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(server.seen().len(), 1, "only the answer was asked for");
    assert_eq!(knows[0].state, AncestorState::Excerpt);
    assert!(pinloom.background_requests(Some(tree), 10, false).await.unwrap().is_empty());

    // The first question writes it, and waits for it.
    let (exchange, _) =
        first_send_in_pin(&pinloom, &server, pin, "Why does silt settle there?").await;
    assert_eq!(server.seen().len(), 3, "the summary, then the reply");
    assert!(sent(&server.seen()[1].json()).contains("Person: Why do rivers meander?"));
    assert!(sent(&server.seen()[2].json()).contains("the outer bank erodes."));
    assert_eq!(exchange.plan.ancestry[0].state, AncestorState::Summary);
    assert_eq!(pinloom.background_requests(Some(tree), 10, false).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_tree_whose_summaries_are_turned_off_sends_the_threads_last_messages_and_says_why() {
    let server =
        Server::start(vec![says(ANSWER), says("Silt settles where the water slows.")]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let (tree, pin) = pinned_writing_summaries(&pinloom, SummaryWriting::Never).await;
    let knows = pinloom.pin_ancestry(pin, "Local".into(), true).await.unwrap();
    assert_eq!(knows[0].state, AncestorState::Excerpt);
    assert_eq!(
        knows[0].unavailable.as_deref(),
        Some(
            "summary not available: the tree's summaries are turned off (its settings: \
             Summaries written)"
        )
    );
    let (exchange, _) =
        first_send_in_pin(&pinloom, &server, pin, "Why does silt settle there?").await;
    assert_eq!(server.seen().len(), 2, "the answer and the reply: no summary was asked for");
    let request = sent(&server.seen()[1].json());
    assert!(request.contains("Why do rivers meander?"), "the thread stands in: {request}");
    assert!(request.contains("summaries are turned off"), "and says why: {request}");
    assert_eq!(exchange.plan.missing_summaries, 0);
    assert!(pinloom.background_requests(Some(tree), 10, false).await.unwrap().is_empty());
}

#[tokio::test]
async fn pins_closed_before_anything_is_asked_in_them_stop_their_summary_and_the_list_says_so() {
    // The summariser is slow: it reads the request and answers nothing.
    let server = Server::start(vec![says(ANSWER), Answer::silence()]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let (tree, reply, first) = rivers_with_pin(&pinloom, "the inner bank gains silt").await;
    // A second pin where the first hangs needs the same summary: no second request.
    let second = pin_on_answer(&pinloom, reply, "the outer bank erodes").await;
    for _ in 0..200 {
        if server.seen().len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(server.seen().len(), 2, "the answer, and one summary request");

    pinloom.close_pin(first, "Not needed.".into()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!server.closed_by_client(), "the other pin still needs it");
    pinloom.close_pin(second, "Not needed either.".into()).await.unwrap();
    let mut kept = Vec::new();
    for _ in 0..200 {
        kept = pinloom.background_requests(Some(tree), 10, false).await.unwrap();
        if !kept.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(kept.len(), 1, "{kept:?}");
    let failure = kept[0].failure.as_deref().unwrap_or_default();
    assert!(failure.starts_with("cancelled: the pins it was for were closed"), "{failure}");
    assert!(server.closed_by_client(), "the request was stopped, not left running");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(server.seen().len(), 2, "and not tried again");
}

#[tokio::test]
async fn while_a_summary_is_written_the_preview_says_so_and_sends_the_threads_last_messages() {
    // The summariser never answers: the summary stays "being written".
    let server = Server::start(vec![says(ANSWER), Answer::silence()]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let (_, _, pin) = rivers_with_pin(&pinloom, "the inner bank gains silt").await;
    let mut knows = Vec::new();
    for _ in 0..200 {
        knows = pinloom.pin_ancestry(pin, "Local".into(), false).await.unwrap();
        if knows[0].pending {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(knows[0].pending, "{knows:?}");
    assert_eq!(knows[0].state, AncestorState::Excerpt);
    assert_eq!(knows[0].unavailable.as_deref(), Some("summary not available: being written"));
    assert!(knows[0].text.contains("Person: Why do rivers meander?"), "{}", knows[0].text);
    assert!(knows[0].included, "the root thread is not lost meanwhile");
}

#[tokio::test]
async fn a_failing_summariser_never_fails_the_send_and_the_receipt_says_what_stood_in() {
    let server = Server::start(vec![
        says(ANSWER),
        Answer::error(404, r#"{"error":{"message":"model 'local-model' not found"}}"#),
        says("Silt settles where the water slows."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let root = ask(&pinloom, tree, None, "Why do rivers meander?").await;
    let reply = root.reply.message.id;
    // Pinned without the window's background preparation: the send asks for the summary.
    let pin = pinloom.pin_range(reply, 0, 8, "Meanders".into(), String::new()).await.unwrap();
    let (events, _received, cancel) = listen();
    let exchange = pinloom
        .send_in_pin(pin.id, None, "Why there?".into(), "Local".into(), events, cancel)
        .await
        .expect("the send goes on without the summary");
    let seen = server.seen();
    assert_eq!(seen.len(), 3, "the answer, the failed summary, the pin's reply");
    let request = sent(&seen[2].json());
    assert!(request.contains("not available (the summariser failed"), "{request}");
    assert!(request.contains(&format!("Model: {ANSWER}")), "the root's last messages: {request}");
    let ancestor = &exchange.plan.ancestry[0];
    assert_eq!(ancestor.state, AncestorState::Excerpt);
    assert!(
        ancestor.unavailable.as_deref().is_some_and(|why| why.contains("not found")),
        "{ancestor:?}"
    );
    let receipt = exchange.receipt.unwrap();
    let note = receipt.sent.iter().find_map(|slice| slice.note.clone()).unwrap();
    assert!(note.starts_with("summary not available: the summariser failed"), "{note}");
    assert!(note.ends_with("its last messages before the branching point, verbatim"), "{note}");
    // The failed summary request is kept where a person finds it, with why.
    let requests = pinloom.background_requests(None, 10, true).await.unwrap();
    let failed = requests.iter().find(|request| request.failure.is_some()).expect("kept");
    assert_eq!(failed.kind, "summary");
    assert!(failed.failure.as_deref().unwrap().contains("not found"), "{failed:?}");
    assert!(failed.body.as_deref().unwrap().contains("Why do rivers meander?"), "{failed:?}");
    // A list without bodies, as the window reads it, and the one request opened with its body.
    let listed = pinloom.background_requests(Some(tree), 10, false).await.unwrap();
    assert!(listed.iter().all(|request| request.body.is_none()), "{listed:?}");
    assert_eq!(listed.len(), requests.len());
    let opened = pinloom.background_request(failed.id).await.unwrap();
    assert_eq!(opened, *failed);
    let missing = pinloom.background_request(failed.id + 1_000).await.unwrap_err();
    assert!(format!("{missing:#}").contains("is not kept"), "{missing:#}");
}

#[tokio::test]
async fn a_trees_daily_limit_holds_back_what_is_written_on_its_own_and_says_why() {
    let server = Server::start(vec![
        says(ANSWER),
        says("Deposition."),
        says("The person asked why rivers meander."),
        says("On the inner bank."),
        says("Where the water slows."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = ask(&pinloom, tree, None, "Why do rivers meander?").await.reply.message.id;
    let second = ask(&pinloom, tree, Some(first), "And then?").await.reply.message.id;
    let mut settings = pinloom.tree_settings(tree).await.unwrap();
    settings.daily_token_limit = Some(0);
    let refused = pinloom.set_tree_settings(tree, settings.clone()).await.unwrap_err();
    assert!(format!("{refused:#}").contains("writes nothing"), "{refused:#}");
    settings.daily_token_limit = Some(10);
    pinloom.set_tree_settings(tree, settings).await.unwrap();

    // Nothing taken yet: the first pin's summary is written, and takes the day's 10 tokens.
    let pin = pinloom.pin_range(first, 0, 8, "Meanders".into(), String::new()).await.unwrap();
    let (events, _received, cancel) = listen();
    let exchange = pinloom
        .send_in_pin(pin.id, None, "Where?".into(), "Local".into(), events, cancel)
        .await
        .unwrap();
    assert_eq!(exchange.plan.ancestry[0].state, AncestorState::Summary);
    // The next pin's summary is not sent: the pin carries the thread's last messages and why.
    let pin = pinloom.pin_range(second, 0, 6, "Deposi".into(), String::new()).await.unwrap();
    let (events, _received, cancel) = listen();
    let exchange = pinloom
        .send_in_pin(pin.id, None, "Why there?".into(), "Local".into(), events, cancel)
        .await
        .expect("the send goes on without the summary");
    assert_eq!(server.seen().len(), 5, "no second summary request");
    let ancestor = &exchange.plan.ancestry[0];
    assert_eq!(ancestor.state, AncestorState::Excerpt, "{ancestor:?}");
    let why = ancestor.unavailable.as_deref().unwrap_or_default();
    assert!(why.contains("tokens a day in the last 24 hours"), "{why}");
    assert!(why.contains("Settings → This tree"), "{why}");
    // Asked for by hand, it is sent whatever the limit (the scripted server has no answer left
    // for it, so it fails there, not here).
    let failed = pinloom.regenerate_summary(tree, None, second, 800, "Local".into()).await;
    assert!(!format!("{:#}", failed.unwrap_err()).contains("tokens a day"));
    assert_eq!(server.seen().len(), 6, "the hand's request went out");
}

/// A tree whose first question gives a secret code and whose second asks why rivers meander
/// (answered with [`ANSWER`]): the tree, the secret's message and the answer.
async fn secret_then_rivers(pinloom: &Pinloom) -> (i64, i64, i64) {
    let tree = dialogue(pinloom).await;
    let first = ask(pinloom, tree, None, "The secret code is PURPLE-42. Remember it.").await;
    let secret = first.prompt.as_ref().unwrap().message.id;
    let second = ask(pinloom, tree, Some(first.reply.message.id), "Why do rivers meander?").await;
    (tree, secret, second.reply.message.id)
}

#[tokio::test]
async fn a_summary_written_before_its_message_was_excluded_is_never_sent_again() {
    let server = Server::start(vec![
        says("Noted."),
        says(ANSWER),
        // The summariser carries what it read, the code included, as one that echoes would.
        says("The person gave the secret code PURPLE-42 and asked why rivers meander."),
        // Written again once the first message is excluded: from what remains.
        says("The person asked why rivers meander; the outer bank erodes."),
        says("Silt settles where the water slows."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let (tree, secret, reply) = secret_then_rivers(&pinloom).await;
    let pin = pin_on_answer(&pinloom, reply, "the inner bank gains silt").await;
    root_summaries(&pinloom, tree, 1).await;
    let knows = pinloom.pin_ancestry(pin, "Local".into(), false).await.unwrap();
    assert!(knows[0].text.contains("PURPLE-42"), "{:?}", knows[0]);

    // The person excludes the message the summary quoted (the window's Exclude).
    pinloom.mark_node(secret, pinloom_app::NodeAction::Exclude).await.unwrap();
    let summaries = pinloom.summaries(tree, None).await.unwrap();
    let stale = summaries[0].stale.as_deref().unwrap_or_default();
    assert!(stale.contains(&format!("before message #{secret} was excluded")), "{summaries:?}");
    // What the pin knows says so, and carries none of it meanwhile.
    let knows = pinloom.pin_ancestry(pin, "Local".into(), false).await.unwrap();
    assert_eq!(knows[0].state, AncestorState::Excerpt);
    assert!(!knows[0].text.contains("PURPLE"), "{:?}", knows[0]);
    let why = knows[0].unavailable.as_deref().unwrap_or_default();
    assert!(why.contains("was excluded, so it is not sent"), "{why}");

    // Written again in the background from what remains; the pin's request carries neither the
    // old summary nor the excluded message.
    pinloom.pin_ancestry(pin, "Local".into(), true).await.unwrap();
    for _ in 0..200 {
        let now = pinloom.summaries(tree, None).await.unwrap();
        if now.iter().any(|summary| summary.stale.is_none() && summary.text.contains("erodes")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (events, _received, cancel) = listen();
    pinloom
        .send_in_pin(
            pin,
            None,
            "Why does silt settle there?".into(),
            "Local".into(),
            events,
            cancel,
        )
        .await
        .unwrap();
    let seen = server.seen();
    let asked = sent(&seen.last().unwrap().json());
    assert!(asked.contains("Why does silt settle there?"), "{asked}");
    assert!(!asked.contains("PURPLE"), "{asked}");
    assert!(asked.contains("the outer bank erodes"), "the summary written again: {asked}");
}

#[tokio::test]
async fn a_summary_the_person_wrote_that_goes_stale_waits_for_them_and_the_summariser_writes_none()
{
    let server = Server::start(vec![
        says("Noted."),
        says(ANSWER),
        says("Silt settles where the water slows."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let (tree, secret, reply) = secret_then_rivers(&pinloom).await;
    // Written by the person before the pin opens: the summariser has nothing to write.
    let own = "The person gave the code PURPLE-42 and asked why rivers meander.";
    pinloom.write_own_summary(tree, None, reply, own.into()).await.unwrap();
    let pin = pin_on_answer(&pinloom, reply, "the inner bank gains silt").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(server.seen().len(), 2, "the two answers; no summary was asked for");

    pinloom.mark_node(secret, pinloom_app::NodeAction::Exclude).await.unwrap();
    let knows = pinloom.pin_ancestry(pin, "Local".into(), true).await.unwrap();
    assert_eq!(knows[0].state, AncestorState::Excerpt);
    assert!(!knows[0].text.contains("PURPLE"), "{:?}", knows[0]);
    let why = knows[0].unavailable.as_deref().unwrap_or_default();
    assert!(why.contains("edit it, or let the summariser write it again (Regenerate)"), "{why}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(server.seen().len(), 2, "the summariser did not write one behind the person's back");
    first_send_in_pin(&pinloom, &server, pin, "Why does silt settle there?").await;
    let seen = server.seen();
    assert_eq!(seen.len(), 3, "the pin's question, with no summary written first");
    let asked = sent(&seen[2].json());
    assert!(!asked.contains("PURPLE"), "{asked}");
    assert!(asked.contains("Why do rivers meander?"), "the thread stands in: {asked}");

    // Edited, it holds again and is sent.
    let edited = "The person asked why rivers meander.";
    pinloom.write_own_summary(tree, None, reply, edited.into()).await.unwrap();
    let knows = pinloom.pin_ancestry(pin, "Local".into(), false).await.unwrap();
    assert_eq!((knows[0].state, knows[0].text.as_str()), (AncestorState::Summary, edited));
}

#[tokio::test]
async fn an_agents_summary_of_the_whole_thread_never_reaches_a_pin_hanging_before_its_end() {
    let server = Server::start(vec![
        says(ANSWER),
        says("Noted."),
        says("The root asks why rivers meander; the answer is bank erosion."),
        says("Because of erosion."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let root = ask(&pinloom, tree, None, "Why do rivers meander?").await;
    let reply = root.reply.message.id;
    // The thread goes on past the reply the pin will hang off, and an agent summarises it all.
    ask(&pinloom, tree, Some(reply), "The secret code is PURPLE-42. Remember it.").await;
    let session = pinloom.threadmind_session("/work/rivers");
    let slug = pinloom.list_trees().await.unwrap()[0].slug.clone();
    session.project_switch(slug).await.unwrap();
    session.summary_update("Agent: the code is PURPLE-42.".into(), None).await.unwrap();

    let pin = pinloom.pin_range(reply, 0, 8, "Meanders".into(), String::new()).await.unwrap();
    let knows = pinloom.pin_ancestry(pin.id, "Local".into(), false).await.unwrap();
    assert!(!knows[0].whole_thread, "{:?}", knows[0]);
    assert_ne!(knows[0].written_by, Some(SummaryAuthor::Agent));
    assert!(!knows[0].text.contains("PURPLE"), "{:?}", knows[0]);
    let (events, _received, cancel) = listen();
    pinloom
        .send_in_pin(pin.id, None, "Why there?".into(), "Local".into(), events, cancel)
        .await
        .unwrap();
    let seen = server.seen();
    let in_the_pin: Vec<String> = seen
        .iter()
        .map(|request| sent(&request.json()))
        .filter(|request| request.contains("Why there?"))
        .collect();
    assert_eq!(in_the_pin.len(), 1);
    assert!(!in_the_pin[0].contains("PURPLE-42"), "{}", in_the_pin[0]);
}

#[tokio::test]
async fn the_persons_and_an_agents_summaries_are_sent_and_one_too_long_is_fitted_never_dropped() {
    let server = Server::start(vec![
        says(ANSWER),
        // The summariser condenses the person's long summary.
        says("Condensed: meanders come from bank erosion, studied on the Mississippi."),
        says("Silt settles where the water slows."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let root = ask(&pinloom, tree, None, "Why do rivers meander?").await;
    let reply = root.reply.message.id;

    // An agent's summary of the whole thread (ThreadMind's summary_update) is used by sends.
    let session = pinloom.threadmind_session("/work/rivers");
    let slug = pinloom.list_trees().await.unwrap()[0].slug.clone();
    session.project_switch(slug).await.unwrap();
    session.summary_update("Agent: the thread is about meanders.".into(), None).await.unwrap();
    let pin = pinloom.pin_range(reply, 0, 8, "Meanders".into(), String::new()).await.unwrap();
    let knows = pinloom.pin_ancestry(pin.id, "Local".into(), false).await.unwrap();
    assert_eq!(knows[0].written_by, Some(SummaryAuthor::Agent));
    assert!(knows[0].whole_thread);
    assert_eq!(knows[0].text, "Agent: the thread is about meanders.");

    // The person's own, at the point the pin hangs off, wins; far over its 800 tokens, it is
    // condensed by the summariser from its own text, and both are kept.
    let long = "The person studies meanders on the Mississippi near Vicksburg. ".repeat(120);
    pinloom.write_own_summary(tree, None, reply, long.clone()).await.unwrap();
    let (events, _received, cancel) = listen();
    let exchange = pinloom
        .send_in_pin(pin.id, None, "Why there?".into(), "Local".into(), events, cancel)
        .await
        .unwrap();
    let seen = server.seen();
    assert_eq!(seen.len(), 3);
    let condense = sent(&seen[1].json());
    assert!(condense.contains("longer than the room it must fit"), "{condense}");
    assert!(condense.contains("studies meanders on the Mississippi"), "{condense}");
    let request = sent(&seen[2].json());
    assert!(request.contains("Condensed: meanders come from bank erosion"), "{request}");
    assert!(!request.contains(&long[..200]), "the long text is not sent whole");
    let ancestor = &exchange.plan.ancestry[0];
    assert_eq!(
        (ancestor.state, ancestor.written_by),
        (AncestorState::Fitted, Some(SummaryAuthor::Person))
    );
    assert_eq!(ancestor.written_text.as_deref(), Some(long.trim()));
    assert!(ancestor.written_tokens.unwrap() > 800);
    let kept = pinloom.summaries(tree, None).await.unwrap();
    assert!(kept.iter().any(|summary| summary.fitted && summary.budget == Some(800)));
    assert!(kept.iter().any(|summary| summary.written_by == SummaryAuthor::Person));
}

#[tokio::test]
async fn with_no_summariser_that_can_run_a_long_summary_is_cut_at_a_sentence_and_marked() {
    let server = Server::start(vec![
        says(ANSWER),
        Answer::error(500, r#"{"error":{"message":"the server is down"}}"#),
        says("Silt settles where the water slows."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let reply = ask(&pinloom, tree, None, "Why do rivers meander?").await.reply.message.id;
    let pin = pinloom.pin_range(reply, 0, 8, "Meanders".into(), String::new()).await.unwrap();
    let long = "Bank erosion drives meanders. ".repeat(300);
    pinloom.write_own_summary(tree, None, reply, long).await.unwrap();
    let (events, _received, cancel) = listen();
    let exchange = pinloom
        .send_in_pin(pin.id, None, "Why there?".into(), "Local".into(), events, cancel)
        .await
        .unwrap();
    let request = sent(&server.seen()[2].json());
    assert!(
        request.contains(
            "Bank erosion drives meanders. [\u{2026}cut to fit its budget of 800 tokens]"
        ),
        "{request}"
    );
    assert_eq!(exchange.plan.ancestry[0].state, AncestorState::Cut);
}

#[tokio::test]
async fn a_pin_recalls_a_figure_its_ancestors_summary_dropped_and_nothing_after_the_anchor() {
    let server = Server::start(vec![says("It read 43.7 feet.")]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let mut parent = None;
    let figure = "The Vicksburg gauge read 43.7 feet on the twelfth of May.";
    parent = Some(pinloom.append_message(tree, parent, figure.into()).await.unwrap().id);
    for turn in 0..30 {
        let text = format!("Turn {turn}: the river carries silt past the bend and drops it.");
        parent = Some(pinloom.append_message(tree, parent, text).await.unwrap().id);
    }
    let anchor = parent.unwrap();
    // After the anchor, and in a sibling pin: figures the pin may not know.
    let after = "The Vicksburg gauge read 51.2 feet on the first of June.";
    pinloom.append_message(tree, Some(anchor), after.into()).await.unwrap();
    let sibling = pinloom.pin_range(anchor, 0, 4, "Turn".into(), "Sibling".into()).await.unwrap();
    pinloom
        .ask_in_pin(sibling.id, "The Vicksburg gauge read 12.0 feet in the sibling.".into())
        .await
        .unwrap();
    pinloom
        .write_own_summary(tree, None, anchor, "A long talk about silt and bends.".into())
        .await
        .unwrap();

    let pin = pinloom.pin_range(anchor, 0, 4, "Turn".into(), "Gauge".into()).await.unwrap();
    let (events, _received, cancel) = listen();
    let exchange = pinloom
        .send_in_pin(
            pin.id,
            None,
            "What did the Vicksburg gauge read?".into(),
            "Local".into(),
            events,
            cancel,
        )
        .await
        .unwrap();
    let request = sent(&server.seen()[0].json());
    assert!(request.contains(figure), "the figure from the root thread is recalled: {request}");
    assert!(!request.contains("51.2 feet"), "never a message after the anchor");
    assert!(!request.contains("12.0 feet"), "never a sibling pin");
    assert!(
        exchange.plan.slices.iter().any(|slice| slice.kind == "searchResult" && slice.included),
        "{:?}",
        exchange.plan.slices
    );
}

#[tokio::test]
async fn the_reply_limit_kept_free_is_the_one_asked_for_and_a_refusal_is_never_a_request() {
    let server = Server::start(vec![says("Silt.")]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let mut settings = pinloom.tree_settings(tree).await.unwrap();
    settings.token_buffer = Some(512);
    pinloom.set_tree_settings(tree, settings).await.unwrap();
    let exchange = ask(&pinloom, tree, None, "Why do rivers meander?").await;
    assert_eq!((exchange.plan.reply_limit, exchange.plan.available), (512, 8_192 - 512));
    assert_eq!(server.seen()[0].json()["max_tokens"], 512, "the buffer is what is asked for");

    // A profile that stops at the limit, and a thread that does not fit it: four long messages
    // before the four short ones that are always kept.
    let mut small = crate::wire::local_profile("Small", &server, 400, "o200k");
    small.reserve = 10;
    small.assembly.truncation = Some("stopAtLimit".into());
    pinloom.save_model_profile(small).await.unwrap();
    let mut parent = Some(exchange.reply.message.id);
    for turn in 0..8 {
        let text = if turn < 4 {
            format!(
                "Turn {turn}: {}",
                "the river carries silt past the bend and drops it. ".repeat(10)
            )
        } else {
            format!("Turn {turn}: short.")
        };
        parent = Some(pinloom.append_message(tree, parent, text).await.unwrap().id);
    }
    let prompt = parent.unwrap();
    let mut settings = pinloom.tree_settings(tree).await.unwrap();
    settings.token_buffer = None;
    pinloom.set_tree_settings(tree, settings).await.unwrap();
    let plan = pinloom.preview(prompt, "Small".into(), None).await.unwrap();
    assert!(plan.refusal.is_some());
    assert!(
        plan.request_body().is_empty(),
        "a refused plan carries no body: {}",
        plan.request_body()
    );
    let report = pinloom.plan_text(prompt, Some("Small".into()), PlanFormat::Report).await.unwrap();
    assert!(report.contains("\nRefused: "), "{report}");
    assert!(!report.contains("Request: POST"), "{report}");
    let error = ApiError::from(
        pinloom.plan_text(prompt, Some("Small".into()), PlanFormat::Request).await.unwrap_err(),
    );
    assert_eq!(error.code, ErrorCode::ContextOverBudget);
    assert!(error.message.contains("no request:"), "{}", error.message);
    // An agent is told by an error result, with the report that says what to exclude.
    let session = pinloom.threadmind_session("/work/rivers");
    let slug = pinloom.list_trees().await.unwrap()[0].slug.clone();
    session.project_switch(slug).await.unwrap();
    let error = ApiError::from(
        session
            .context_assemble(None, Some(prompt), Some("Small".into()), PlanFormat::Report)
            .await
            .unwrap_err(),
    );
    assert_eq!(error.code, ErrorCode::ContextOverBudget);
    assert!(error.message.contains("Refused: "), "{}", error.message);
}

#[tokio::test]
async fn each_reply_keeps_its_settings_exports_them_and_a_comparison_marks_what_differs() {
    let server = Server::start(vec![says("Erosion."), says("Deposition.")]).await;
    let (pinloom, dir) = pinloom_with(&server).await;
    let mut warm = crate::wire::local_profile("Warm", &server, 8_192, "o200k");
    warm.sampling.temperature = Some(1.2);
    pinloom.save_model_profile(warm).await.unwrap();
    let tree = dialogue(&pinloom).await;
    let first = ask(&pinloom, tree, None, "Why do rivers meander?").await;
    let prompt = first.prompt.unwrap().message.id;
    let (events, _received, cancel) = listen();
    let second = pinloom.regenerate(prompt, "Warm".into(), events, cancel).await.unwrap();

    let comparison = pinloom
        .compare(
            first.reply.message.id,
            second.reply.message.id,
            "Local".into(),
            CompareReach::Picked,
        )
        .await
        .unwrap();
    let (left, right) = (comparison.left.settings.unwrap(), comparison.right.settings.unwrap());
    assert_eq!((left.profile.as_str(), right.profile.as_str()), ("Local", "Warm"));
    assert_eq!((left.temperature, right.temperature), (None, Some(1.2)));
    assert_eq!((left.max_tokens, left.truncation.as_str()), (1_024, "truncateMiddle"));
    assert_eq!(comparison.settings_differ, ["profile", "temperature", "summarizer"]);

    let path = dir.path().join("rivers.json");
    let request = ExportRequest {
        tree_id: tree,
        format: ExportFormat::OpenLoom,
        path: path.display().to_string(),
        without_system_prompts: false,
        without_raw_responses: false,
    };
    pinloom.export_file(request, |_| {}).await.unwrap();
    let document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let parameters: Vec<&serde_json::Value> = document["trees"][0]["nodes"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(|node| node.get("generation")?.get("parameters"))
        .collect();
    assert_eq!(parameters.len(), 2, "{document}");
    assert!(parameters.iter().any(|p| p["temperature"] == 1.2 && p["maxTokens"] == 1_024));
}

#[tokio::test]
async fn a_tree_whose_parent_links_loop_says_so_in_its_listing_and_every_export() {
    let dir = tempfile::tempdir().unwrap();
    let pinloom = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let tree = dialogue(&pinloom).await;
    let first = pinloom.append_message(tree, None, "first".into()).await.unwrap().id;
    let second = pinloom.append_message(tree, Some(first), "second".into()).await.unwrap().id;
    let path = pinloom.database_path().to_owned();
    drop(pinloom);
    {
        // What a damaged file or a careless tool can leave: the first message's parent is the
        // second, so no first message leads to either.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute("UPDATE nodes SET parent_id = ?1 WHERE id = ?2", [second, first]).unwrap();
    }
    let pinloom = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let error = ApiError::from(pinloom.tree_text(tree).await.unwrap_err());
    assert!(
        error.message.contains("is damaged: no first message leads to messages #1, #2"),
        "{}",
        error.message
    );
    assert!(error.message.contains("Restore the database from a backup"), "{}", error.message);
    for format in [ExportFormat::OpenLoom, ExportFormat::Markdown] {
        let out = dir.path().join("out.txt");
        let request = ExportRequest {
            tree_id: tree,
            format,
            path: out.display().to_string(),
            without_system_prompts: false,
            without_raw_responses: false,
        };
        let error = ApiError::from(pinloom.export_file(request, |_| {}).await.unwrap_err());
        assert!(error.message.contains("their parent links loop"), "{format:?}: {}", error.message);
        assert!(!out.exists(), "nothing is written");
    }
}

#[tokio::test]
async fn a_chain_holds_fifty_threads_and_the_deepest_plans_and_shows_every_one() {
    let dir = tempfile::tempdir().unwrap();
    let pinloom = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let session = pinloom.threadmind_session("/work/deep");
    session.project_create("Deep".into(), None, None).await.unwrap();
    session.summary_update("The root of it all.".into(), None).await.unwrap();
    for level in 1..=49 {
        session.thread_create(format!("level {level}"), None).await.unwrap();
    }
    let refused = ApiError::from(session.thread_create("too deep".into(), None).await.unwrap_err());
    assert!(refused.message.contains("at most 50 threads"), "{}", refused.message);
    let context = session.context_get().await.unwrap();
    assert!(context.contains("The root of it all."), "the root is never left out: {context}");
    assert!(context.contains("depth: 50 threads"), "{context}");
}

#[tokio::test]
async fn an_imported_profile_takes_what_it_leaves_out_from_the_model_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let pinloom = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let tree = dialogue(&pinloom).await;
    pinloom.append_message(tree, None, "Why do rivers meander?".into()).await.unwrap();
    let mut document: serde_json::Value = serde_json::from_str(
        &pinloom.export_open_loom(vec![tree], pinloom_app::ExportOptions::default()).await.unwrap(),
    )
    .unwrap();
    // A file that names the model and leaves everything else out.
    document["extensions"]["pinloom"]["modelProfiles"] = serde_json::json!([
        { "name": "Reasoner", "provider": "openai", "modelId": "o1-mini" },
        { "name": "Instruct", "provider": "openai", "modelId": "gpt-3.5-turbo-instruct" },
    ]);
    pinloom.import_document(document.to_string(), "rivers".into()).await.unwrap();
    let profiles = pinloom.model_profiles().await.unwrap();
    let named = |name: &str| profiles.iter().find(|profile| profile.name == name).unwrap();
    let reasoner = named("Reasoner");
    assert!(!reasoner.native_system, "o1-mini takes no system role: the text is injected");
    assert_eq!((reasoner.context_window, reasoner.reserve), (128_000, 8_192));
    assert_eq!(reasoner.tokenizer, "o200k");
    let instruct = named("Instruct");
    assert!(instruct.completion_endpoint, "an instruct model continues documents");
    assert_eq!(instruct.context_window, 4_096);
}

#[tokio::test]
async fn pinlooms_own_threadmind_text_names_an_ancestor_without_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let pinloom = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let tree = dialogue(&pinloom).await;
    let question =
        pinloom.append_message(tree, None, "Why do rivers meander?".into()).await.unwrap();
    let pin = pinloom.pin_range(question.id, 0, 3, "Why".into(), "Why".into()).await.unwrap();
    let asked = pinloom.ask_in_pin(pin.id, "Why?".into()).await.unwrap();
    let markdown = pinloom.threadmind_markdown(asked.message.id).await.unwrap();
    assert!(
        markdown.contains("## Thread: Rivers\n\n_No summary of this thread yet: a send from here carries its last messages before the sub-thread instead."),
        "{markdown}"
    );
    // ThreadMind's own tool skips it, as ThreadMind does.
    let session = pinloom.threadmind_session("/work/rivers");
    let slug = pinloom.list_trees().await.unwrap()[0].slug.clone();
    session.project_switch(slug).await.unwrap();
    session.thread_switch("why".into()).await.unwrap();
    assert!(!session.context_get().await.unwrap().contains("## Thread: Rivers"));
}

#[tokio::test]
async fn a_thread_too_long_for_the_summariser_is_summarised_from_its_earlier_summary_onward() {
    let server = Server::start(vec![says("Summary of it all.")]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    // A summariser with a small window: the root thread is far longer than it.
    let mut small = crate::wire::local_profile("Small summariser", &server, 3_000, "o200k");
    small.reserve = 100;
    pinloom.save_model_profile(small).await.unwrap();
    let tree = dialogue(&pinloom).await;
    let mut settings = pinloom.tree_settings(tree).await.unwrap();
    settings.summarizer = Some("Small summariser".into());
    pinloom.set_tree_settings(tree, settings).await.unwrap();
    let mut parent = None;
    let mut middle = None;
    for turn in 0..60 {
        let text = format!(
            "Turn {turn}: {}",
            "the river carries silt past the bend and drops it. ".repeat(6)
        );
        parent = Some(pinloom.append_message(tree, parent, text).await.unwrap().id);
        if turn == 40 {
            middle = parent;
        }
    }
    // The summary an earlier pin needed, of the thread up to turn 40.
    pinloom
        .write_own_summary(tree, None, middle.unwrap(), "Turns 0 to 40 were about silt.".into())
        .await
        .unwrap();
    let anchor = parent.unwrap();
    let pin = pinloom.pin_range(anchor, 0, 4, "Turn".into(), "Late".into()).await.unwrap();
    pinloom.prepare_pin(pin.id, Some("Local".into())).await.unwrap();
    root_summaries(&pinloom, tree, 2).await;
    let request = sent(&server.seen()[0].json());
    assert!(
        request.contains(
            "[A summary of the thread up to an earlier point:]\nTurns 0 to 40 were about silt."
        ),
        "{request}"
    );
    assert!(request.contains("Turn 59:"), "what followed, to the anchor: {request}");
    assert!(!request.contains("Turn 12:"), "not the messages the earlier summary carries");
    assert!(!request.contains("is left out"), "{request}");
}

#[tokio::test]
async fn regenerating_a_summary_makes_the_summarisers_new_one_the_one_sent() {
    let server =
        Server::start(vec![says(ANSWER), says("Written again: erosion shapes meanders.")]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let reply = ask(&pinloom, tree, None, "Why do rivers meander?").await.reply.message.id;
    let pin = pinloom.pin_range(reply, 0, 8, "Meanders".into(), String::new()).await.unwrap();
    pinloom.write_own_summary(tree, None, reply, "My first take.".into()).await.unwrap();
    let regenerated =
        pinloom.regenerate_summary(tree, None, reply, 800, "Local".into()).await.unwrap();
    assert_eq!(
        (regenerated.written_by, regenerated.chosen, regenerated.summarizer.as_str()),
        (SummaryAuthor::Model, true, "Local")
    );
    let knows = pinloom.pin_ancestry(pin.id, "Local".into(), false).await.unwrap();
    assert_eq!(knows[0].text, "Written again: erosion shapes meanders.");
    assert_eq!(knows[0].written_by, Some(SummaryAuthor::Model));
    let prompt = sent(&server.seen()[1].json());
    assert!(prompt.contains("Person: Why do rivers meander?"), "{prompt}");
    // A message of another thread is refused in words.
    let error = ApiError::from(
        pinloom
            .regenerate_summary(tree, Some(pin.id), reply, 800, "Local".into())
            .await
            .unwrap_err(),
    );
    assert!(error.message.contains("not in the thread being summarised"), "{}", error.message);
}
