//! Pins, sub-threads and what a person does to messages, through the use cases, with the requests
//! the provider server saw as the proof of what each context held.

use pinloom_app::json::TreeSettings;
use pinloom_app::{ApiError, ErrorCode, NodeAction};
use pinloom_test_server::Server;

use crate::Sends;
use crate::wire::{dialogue, listen, messages, pinloom_with, says};

const ANSWER: &str = "Meanders form where the outer bank erodes and the inner bank gains silt.";

#[tokio::test]
async fn a_sub_thread_sees_its_ancestry_as_summary_and_anchor_and_never_its_siblings() {
    let server = Server::start(vec![
        says(ANSWER),
        // The first send in the sub-thread asks for the root thread's summary first.
        says("The person asked why rivers meander; erosion of the outer bank."),
        says("Silt settles where the water slows."),
        says("Outer banks erode because the flow is fastest there."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let (events, _received, cancel) = listen();
    let root = pinloom
        .send(
            tree,
            None,
            "Why do rivers meander?".into(),
            "Local".into(),
            events.clone(),
            cancel.clone(),
        )
        .await
        .unwrap();
    let reply = root.reply.message.id;

    let passage = "the inner bank gains silt";
    let start = ANSWER.find(passage).unwrap() as u32;
    let silt = pinloom
        .pin_range(reply, start, start + passage.len() as u32, passage.into(), String::new())
        .await
        .unwrap();
    assert_eq!(silt.title, passage);
    assert_eq!(silt.anchor_node_id, Some(reply));
    let question = pinloom.ask_in_pin(silt.id, "Why there?".into()).await.unwrap();
    let (events2, _r, cancel2) = listen();
    let answered =
        pinloom.regenerate(question.message.id, "Local".into(), events2, cancel2).await.unwrap();
    assert_eq!(answered.reply.pin_id, Some(silt.id));

    let seen = server.seen();
    assert_eq!(seen.len(), 3, "the answer, then the summary, then the sub-thread's reply");
    let summary_request = seen[1].json();
    let summary_prompt = &messages(&summary_request)[1].1;
    assert!(summary_prompt.contains("Person: Why do rivers meander?"), "{summary_prompt}");
    let sub = messages(&seen[2].json());
    let everything: String = sub.iter().map(|(_, text)| text.as_str()).collect();
    assert!(everything.contains("erosion of the outer bank"), "the ancestor's summary: {sub:?}");
    assert!(everything.contains(&format!("\"{passage}\"")), "the verbatim anchor: {sub:?}");
    // The ancestor thread comes as its summary, never as history (a search hit may recall one
    // of its messages: the path may know them).
    let root_messages = [root.prompt.as_ref().unwrap().message.id, reply];
    assert!(
        !answered.plan.slices.iter().any(|slice| slice.included
            && matches!(slice.kind.as_str(), "recentHistory" | "oldHistory")
            && slice.source_id.is_some_and(|id| root_messages.contains(&id))),
        "the ancestor thread is summarised: {:?}",
        answered.plan.slices
    );

    let summaries = pinloom.summaries(tree, None).await.unwrap();
    assert_eq!(summaries.len(), 1);
    assert_eq!(summaries[0].up_to, Some(reply));
    assert_eq!(summaries[0].budget, Some(800));
    assert_eq!(summaries[0].summarizer, "Local");

    // A sibling pin on the same answer: it sees the cached summary and never the silt thread.
    let passage = "the outer bank erodes";
    let start = ANSWER.find(passage).unwrap() as u32;
    let erosion = pinloom
        .pin_range(reply, start, start + passage.len() as u32, passage.into(), "Erosion".into())
        .await
        .unwrap();
    let question = pinloom.ask_in_pin(erosion.id, "Why the outer bank?".into()).await.unwrap();
    pinloom.regenerate(question.message.id, "Local".into(), events, cancel).await.unwrap();
    let seen = server.seen();
    assert_eq!(seen.len(), 4, "the summary was reused, not asked for again");
    let sibling: String = messages(&seen[3].json()).iter().map(|(_, text)| text.clone()).collect();
    assert!(!sibling.contains("Why there?") && !sibling.contains("Silt settles"), "{sibling}");
    assert!(sibling.contains("erosion of the outer bank"));

    // The person's own summary of the root thread at that point wins over the summariser's,
    // in what the next plan sends; both are kept.
    let edited =
        pinloom.write_own_summary(tree, None, reply, "Hand-written gist.".into()).await.unwrap();
    assert_eq!((edited.update_count, edited.chosen), (1, true));
    let plan = pinloom.preview(question.message.id, "Local".into(), None).await.unwrap();
    assert!(plan.request_body().contains("Hand-written gist."), "{}", plan.request_body());
    assert!(!plan.request_body().contains("erosion of the outer bank"), "{}", plan.request_body());
    assert_eq!(pinloom.summaries(tree, None).await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_closed_pin_hands_its_result_to_the_parent_by_hand_or_by_model() {
    let server = Server::start(vec![
        says(ANSWER),
        says("Silt settles on the inner bank."),
        says("Silt settles on the slow inner bank."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    // Priced, so that what the tree cost is counted: $1 a million tokens in, $2 out.
    let mut priced = pinloom.model_profiles().await.unwrap().remove(0);
    priced.prices = Some(pinloom_app::json::Prices {
        input_per_million: 1.0,
        output_per_million: 2.0,
        ..Default::default()
    });
    pinloom.save_model_profile(priced).await.unwrap();
    let tree = dialogue(&pinloom).await;
    let (events, _received, cancel) = listen();
    let root = pinloom
        .send(tree, None, "Why do rivers meander?".into(), "Local".into(), events, cancel)
        .await
        .unwrap();
    let reply = root.reply.message.id;
    let pin = pinloom.pin_range(reply, 0, 8, "Meanders".into(), String::new()).await.unwrap();

    let error = ApiError::from(pinloom.close_pin(pin.id, "  ".into()).await.unwrap_err());
    assert_eq!(error.code, ErrorCode::InvalidInput);
    let error = ApiError::from(
        pinloom.close_pin_summarised(pin.id, None, "Local".into()).await.unwrap_err(),
    );
    assert!(error.message.contains("write its result by hand"), "{}", error.message);

    pinloom.ask_in_pin(pin.id, "Where does the silt go?".into()).await.unwrap();
    // A suggestion is only offered: the pin stays open until the person closes it.
    let suggested = pinloom.suggest_pin_result(pin.id, None, "Local".into()).await.unwrap();
    assert_eq!(suggested, "Silt settles on the inner bank.");
    assert!(!pinloom.pins_on(reply).await.unwrap()[0].closed, "nothing was saved");
    let closed = pinloom.close_pin_summarised(pin.id, None, "Local".into()).await.unwrap();
    assert!(closed.closed);
    assert_eq!(closed.result.as_deref(), Some("Silt settles on the slow inner bank."));
    let request = messages(&server.seen()[2].json());
    assert!(request[1].1.contains("Passage: \"Meanders\""), "{request:?}");
    assert!(request[1].1.contains("Person: Where does the silt go?"), "{request:?}");
    // Both suggestions were requests of their own, listed with what they cost; the tree's cost
    // counts them beside its reply.
    let listed = pinloom.background_requests(Some(tree), 10, false).await.unwrap();
    let kinds: Vec<&str> = listed.iter().map(|request| request.kind.as_str()).collect();
    assert_eq!(kinds, ["pinResult", "pinResult"], "{listed:?}");
    assert!(
        listed.iter().all(|request| request.pin_id == Some(pin.id) && request.cost_usd.is_some())
    );
    let spending = pinloom.tree_spending(tree).await.unwrap();
    assert_eq!((spending.replies, spending.replies_priced), (1, 1));
    assert_eq!((spending.background, spending.background_priced), (2, 2));
    let background: f64 = listed.iter().filter_map(|request| request.cost_usd).sum();
    assert!((spending.background_usd - background).abs() < 1e-12, "{spending:?}");
    assert!(spending.replies_usd > 0.0);
    assert!((spending.total_usd - spending.replies_usd - background).abs() < 1e-12);

    let shown = pinloom.pins_on(reply).await.unwrap();
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].result.as_deref(), Some("Silt settles on the slow inner bank."));
    let by_hand = pinloom.close_pin(pin.id, "Settled: silt.".into()).await.unwrap();
    assert_eq!(pinloom.pins(tree, None).await.unwrap(), vec![by_hand]);
}

#[tokio::test]
async fn excluded_deleted_and_annotated_messages_show_in_the_plan_with_their_reasons() {
    let server = Server::start(vec![]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = pinloom.append_message(tree, None, "First thought.".into()).await.unwrap().id;
    let second = pinloom.append_message(tree, Some(first), "A tangent.".into()).await.unwrap().id;
    let third =
        pinloom.append_message(tree, Some(second), "Back on track.".into()).await.unwrap().id;

    let before = pinloom.preview(third, "Local".into(), None).await.unwrap();
    assert!(before.slices.iter().all(|slice| slice.included));
    pinloom.mark_node(second, NodeAction::Exclude).await.unwrap();
    let note =
        pinloom.annotate(first, "Remember: the reader is a child.".into(), true).await.unwrap();
    pinloom.annotate(first, "A private note.".into(), false).await.unwrap();
    let bookmarked = pinloom.mark_node(first, NodeAction::Bookmark).await.unwrap();
    assert!(bookmarked.bookmarked);

    let after = pinloom.preview(third, "Local".into(), None).await.unwrap();
    let tangent = after.slices.iter().find(|slice| slice.source_id == Some(second)).unwrap();
    assert!(!tangent.included);
    assert_eq!(tangent.reason.as_deref(), Some("excluded"));
    let noted = after.slices.iter().find(|slice| slice.source == "annotation").unwrap();
    assert_eq!(noted.source_id, Some(note));
    assert!(noted.included);
    assert!(!after.request_body().contains("A private note."), "a note is out unless included");
    assert!(after.request_body().contains("the reader is a child"));

    pinloom.include_annotation(note, false).await.unwrap();
    pinloom.mark_node(second, NodeAction::Include).await.unwrap();
    let restored = pinloom.preview(third, "Local".into(), None).await.unwrap();
    assert!(!restored.request_body().contains("the reader is a child"));
    assert!(restored.slices.iter().all(|slice| slice.included));

    let deleted = pinloom.mark_node(second, NodeAction::Delete).await.unwrap();
    assert!(deleted.deleted);
    let error = ApiError::from(pinloom.preview(third, "Local".into(), None).await.unwrap_err());
    assert_eq!(error.code, ErrorCode::NotFound, "{}", error.message);
    pinloom.mark_node(second, NodeAction::Restore).await.unwrap();
    assert!(pinloom.preview(third, "Local".into(), None).await.is_ok());
}

#[tokio::test]
async fn tree_settings_are_checked_and_change_the_plans() {
    let server = Server::start(vec![]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    assert_eq!(pinloom.tree_settings(tree).await.unwrap(), TreeSettings::default());
    let error = ApiError::from(
        pinloom
            .set_tree_settings(
                tree,
                TreeSettings { depth_budgets: Some(vec![]), ..TreeSettings::default() },
            )
            .await
            .unwrap_err(),
    );
    assert!(error.message.contains("one to 50 token counts"), "{}", error.message);
    let error = ApiError::from(
        pinloom
            .set_tree_settings(
                tree,
                TreeSettings { summarizer: Some("Ghost".into()), ..TreeSettings::default() },
            )
            .await
            .unwrap_err(),
    );
    assert!(error.message.contains("no model profile named \"Ghost\""), "{}", error.message);

    let first = pinloom.append_message(tree, None, "Hello river.".into()).await.unwrap().id;
    let roomy = pinloom.preview(first, "Local".into(), None).await.unwrap();
    let settings = TreeSettings { token_buffer: Some(4_000), ..TreeSettings::default() };
    pinloom.set_tree_settings(tree, settings.clone()).await.unwrap();
    assert_eq!(pinloom.tree_settings(tree).await.unwrap(), settings);
    let buffered = pinloom.preview(first, "Local".into(), None).await.unwrap();
    assert_eq!(roomy.available, 8_192 - 1_024);
    assert_eq!(buffered.available, 8_192 - 4_000, "the token buffer replaces the reserve");
}

#[tokio::test]
async fn the_window_sees_threads_with_alternatives_and_pins_as_columns() {
    let server = Server::start(vec![
        says(ANSWER),
        says("Another take."),
        says("Summary of the root thread."),
        says("In the pin."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = crate::wire::ask(&pinloom, tree, None, "Why do rivers meander?").await;
    let (events, _received, cancel) = listen();
    let second = pinloom
        .regenerate(first.reply.message.id, "Local".into(), events.clone(), cancel.clone())
        .await
        .unwrap();
    let view = pinloom.thread_view(tree, None).await.unwrap();
    let ids: Vec<i64> = view.messages.iter().map(|m| m.node.message.id).collect();
    assert_eq!(ids, [first.prompt.unwrap().message.id, second.reply.message.id], "newest branch");
    assert_eq!(view.messages[1].alternatives, [first.reply.message.id, second.reply.message.id]);
    let switched = pinloom.thread_view(tree, Some(first.reply.message.id)).await.unwrap();
    assert_eq!(switched.messages[1].node.message.text, ANSWER);

    let reply = first.reply.message.id;
    let pin = pinloom.pin_range(reply, 0, 8, "Meanders".into(), String::new()).await.unwrap();
    let asked = pinloom
        .send_in_pin(pin.id, None, "What are they?".into(), "Local".into(), events, cancel)
        .await
        .unwrap();
    assert_eq!(asked.reply.message.text, "In the pin.");
    let column = pinloom.pin_view(pin.id, None).await.unwrap();
    assert_eq!(column.pin.as_ref().unwrap().anchor_text.as_deref(), Some("Meanders"));
    let texts: Vec<&str> = column.messages.iter().map(|m| m.node.message.text.as_str()).collect();
    assert_eq!(texts, ["What are they?", "In the pin."]);
    let parent = pinloom.thread_view(tree, Some(reply)).await.unwrap();
    assert_eq!(parent.messages[1].pins, vec![pin]);
    assert_eq!(parent.messages.len(), 2, "the sub-thread's messages stay in their column");
}

#[tokio::test]
async fn an_edited_profile_is_previewed_before_it_is_saved() {
    let server = Server::start(vec![]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let mut parent = None;
    for turn in 0..10 {
        let text = format!("Turn {turn}: a long enough message about rivers and their bends.");
        parent = Some(pinloom.append_message(tree, parent, text).await.unwrap().id);
    }
    let mut edited = crate::wire::local_profile("Local", &server, 8_192, "o200k");
    let roomy = pinloom.preview_unsaved(parent.unwrap(), edited.clone()).await.unwrap();
    assert!(!roomy.truncated);
    edited.context_window = 150;
    edited.reserve = 20;
    let tight = pinloom.preview_unsaved(parent.unwrap(), edited.clone()).await.unwrap();
    assert!(tight.truncated);
    assert_eq!(tight.available, 130);
    edited.reserve = 150;
    let error = ApiError::from(pinloom.preview_unsaved(parent.unwrap(), edited).await.unwrap_err());
    assert!(error.message.contains("must be smaller than the context window"), "{}", error.message);
    let stored = pinloom.model_profiles().await.unwrap();
    let local = stored.iter().find(|p| p.name == "Local").unwrap();
    assert_eq!(local.context_window, 8_192, "nothing was saved");
}

#[tokio::test]
async fn a_thread_an_agent_deleted_is_restored_from_the_window() {
    let server = Server::start(vec![]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = pinloom.append_message(tree, None, "Rivers bend at the outer bank.".into()).await;
    let first = first.unwrap().id;
    let pin = pinloom.pin_range(first, 0, 6, "Rivers".into(), "Bends".into()).await.unwrap();
    let question = pinloom.ask_in_pin(pin.id, "Why there?".into()).await.unwrap();
    let agent = pinloom.threadmind_session("/home/someone/rivers");
    agent.project_switch("rivers".into()).await.unwrap();
    // ThreadMind names the thread by the slug of its title.
    agent.thread_delete("bends".into()).await.unwrap();
    assert!(pinloom.pins(tree, None).await.unwrap().is_empty());

    let deleted = pinloom.deleted_threads(tree).await.unwrap();
    assert_eq!(deleted.iter().map(|thread| thread.title.as_str()).collect::<Vec<_>>(), ["Bends"]);
    let restored = pinloom.restore_thread(deleted[0].id).await.unwrap();
    assert_eq!(restored.iter().map(|pin| pin.id).collect::<Vec<_>>(), [pin.id]);
    assert_eq!(pinloom.pins(tree, None).await.unwrap().len(), 1);
    let column = pinloom.pin_view(pin.id, None).await.unwrap();
    assert_eq!(column.messages.last().unwrap().node.message.id, question.message.id);
    assert!(pinloom.deleted_threads(tree).await.unwrap().is_empty());
    let again = ApiError::from(pinloom.restore_thread(pin.id).await.unwrap_err());
    assert_eq!(again.code, ErrorCode::InvalidInput, "{}", again.message);
}
