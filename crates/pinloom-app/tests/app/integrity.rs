//! What a path may know, end to end on a real database and a real HTTP server: a regenerated
//! branch or a parent thread after the anchor never reaches a request, a person's own pick is
//! labelled as theirs, and every reply keeps a receipt that is checked against what the provider
//! counted.

use pinloom_app::json::Provenance;
use pinloom_app::{ExportOptions, Verdict};
use pinloom_test_server::{Answer, Server};

use crate::Sends;
use crate::wire::{
    ask, chat_stream, dialogue, listen, local_profile, messages, pinloom_with, says,
};

fn sent_text(seen: &pinloom_test_server::Seen) -> String {
    messages(&seen.json()).into_iter().map(|(_, text)| text).collect::<Vec<_>>().join("\n")
}

#[tokio::test]
async fn regenerated_branches_never_see_each_other() {
    let server = Server::start(vec![
        says("Erosion carves the outer bank of the bend."),
        says("Sediment piles on the inner bank of the bend."),
        says("Fine."),
        says("Fine."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = ask(&pinloom, tree, None, "Why do rivers bend?").await;
    let (events, _received, cancel) = listen();
    let second =
        pinloom.regenerate(first.reply.message.id, "Local".into(), events, cancel).await.unwrap();

    // Each branch asks about words only the other branch's answer holds, where a search of the
    // whole tree would find them.
    ask(&pinloom, tree, Some(first.reply.message.id), "Tell me about the sediment on the bank")
        .await;
    ask(&pinloom, tree, Some(second.reply.message.id), "Tell me about erosion on the bank").await;
    let seen = server.seen();
    let on_first = sent_text(&seen[2]);
    assert!(on_first.contains("Erosion carves"), "its own branch: {on_first}");
    assert!(!on_first.contains("Sediment piles"), "the regenerated alternative: {on_first}");
    let on_second = sent_text(&seen[3]);
    assert!(on_second.contains("Sediment piles"), "its own branch: {on_second}");
    assert!(!on_second.contains("Erosion carves"), "the abandoned answer: {on_second}");

    // The inspector agrees with the request: nothing of the other branch, even among the cut.
    let plan = pinloom
        .preview(second.reply.message.id, "Local".into(), Some("erosion carves".into()))
        .await
        .unwrap();
    let other = first.reply.message.id;
    assert!(plan.slices.iter().all(|slice| slice.source_id != Some(other)), "{:?}", plan.slices);
}

#[tokio::test]
async fn a_pin_never_sees_its_parent_thread_after_the_anchor() {
    let server = Server::start(vec![
        says("Rivers meander because the outer bank erodes while the inner bank fills."),
        says("Oxbow lakes form when a meander loop is cut off by the flow."),
        says("The person asked why rivers meander."),
        says("Because the flow is fastest on the outside."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = ask(&pinloom, tree, None, "Why do rivers meander?").await;
    let reply = first.reply.message.id;
    ask(&pinloom, tree, Some(reply), "And what are oxbow lakes?").await;

    let passage = "the outer bank erodes";
    let start = first.reply.message.text.find(passage).unwrap() as u32;
    let pin = pinloom
        .pin_range(reply, start, start + passage.len() as u32, passage.into(), String::new())
        .await
        .unwrap();
    let question = pinloom
        .ask_in_pin(pin.id, "Why does it erode, and do oxbow lakes matter?".into())
        .await
        .unwrap();
    let (events, _received, cancel) = listen();
    pinloom.regenerate(question.message.id, "Local".into(), events, cancel).await.unwrap();

    let seen = server.seen();
    assert_eq!(seen.len(), 4, "two answers, the summary, the sub-thread's reply");
    let sub = sent_text(&seen[3]);
    assert!(sub.contains(passage), "the verbatim anchor: {sub}");
    assert!(!sub.contains("Oxbow lakes form"), "the parent thread after the anchor: {sub}");
    assert!(!sub.contains("what are oxbow lakes"), "the parent thread after the anchor: {sub}");
    // The ancestor thread comes as its summary (its messages before the anchor may be recalled
    // by the search: the path may know them).
    assert!(sub.contains("The person asked why rivers meander."), "its summary: {sub}");
}

#[tokio::test]
async fn a_search_hit_the_person_adds_is_sent_and_labelled_as_theirs() {
    let server = Server::start(vec![
        says("Erosion carves the outer bank."),
        says("Sediment piles on the inner bank."),
        says("Fine."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = ask(&pinloom, tree, None, "Why do rivers bend?").await;
    let (events, _received, cancel) = listen();
    let other = pinloom
        .regenerate(first.reply.message.id, "Local".into(), events, cancel)
        .await
        .unwrap()
        .reply
        .message
        .id;
    let mut settings = pinloom.tree_settings(tree).await.unwrap();
    // Named twice, beside a message that does not exist and one of another tree: offered once.
    let elsewhere = pinloom.create_tree("Deltas".into(), pinloom_app::json::TreeMode::Dialogue);
    let elsewhere = elsewhere.await.unwrap().id;
    let foreign = pinloom.append_message(elsewhere, None, "Silt.".into()).await.unwrap().id;
    settings.search_hits = vec![other, 999_999, other, foreign];
    pinloom.set_tree_settings(tree, settings).await.unwrap();

    let plan = pinloom
        .preview(first.reply.message.id, "Local".into(), Some("And then?".into()))
        .await
        .unwrap();
    let picked: Vec<_> =
        plan.slices.iter().filter(|slice| slice.source == "addedSearchHit").collect();
    assert_eq!(picked.len(), 1, "{picked:?}");
    let added = plan.slices.iter().find(|slice| slice.source_id == Some(other)).unwrap();
    assert!(added.included, "{added:?}");
    assert_eq!(added.provenance, Provenance::AddedByPerson);
    assert_eq!(added.source, "addedSearchHit");

    ask(&pinloom, tree, Some(first.reply.message.id), "And then?").await;
    let sent = sent_text(&server.seen()[2]);
    assert!(sent.contains("Sediment piles"), "the person's own pick is sent: {sent}");
}

/// The search box chooses one hit at a time: the list is read and written in one step, other
/// settings stay as they were, and only a message of the tree itself can be chosen.
#[tokio::test]
async fn a_search_hit_is_chosen_and_unchosen_in_one_step_and_only_from_its_own_tree() {
    let server = Server::start(Vec::new()).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = pinloom.append_message(tree, None, "Why do rivers bend?".into()).await.unwrap().id;
    let second = pinloom.append_message(tree, Some(first), "And deltas?".into()).await.unwrap().id;
    let mut settings = pinloom.tree_settings(tree).await.unwrap();
    settings.token_buffer = Some(2048);
    pinloom.set_tree_settings(tree, settings).await.unwrap();

    let chosen = pinloom.set_search_hit(tree, second, true).await.unwrap();
    assert_eq!((chosen.search_hits.clone(), chosen.token_buffer), (vec![second], Some(2048)));
    pinloom.set_search_hit(tree, first, true).await.unwrap();
    let again = pinloom.set_search_hit(tree, second, true).await.unwrap();
    assert_eq!(again.search_hits, [second, first], "choosing a chosen hit changes nothing");
    pinloom.set_search_hit(tree, second, false).await.unwrap();

    let elsewhere = pinloom.create_tree("Deltas".into(), pinloom_app::json::TreeMode::Dialogue);
    let elsewhere = elsewhere.await.unwrap().id;
    let foreign = pinloom.append_message(elsewhere, None, "Silt.".into()).await.unwrap().id;
    let refused =
        pinloom_app::ApiError::from(pinloom.set_search_hit(tree, foreign, true).await.unwrap_err());
    assert_eq!(refused.code, pinloom_app::ErrorCode::InvalidInput);
    assert!(
        refused.message.contains(&format!("message #{foreign} is not in this tree")),
        "{refused:?}"
    );
    let stored = pinloom.tree_settings(tree).await.unwrap();
    assert_eq!((stored.search_hits, stored.token_buffer), (vec![first], Some(2048)));
}

#[tokio::test]
async fn every_reply_keeps_a_receipt_and_a_diff_against_the_request_before() {
    let server = Server::start(vec![says("Erosion."), says("Sediment.")]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = ask(&pinloom, tree, None, "Why do rivers bend?").await;
    let receipt = first.receipt.clone().expect("a reply carries its receipt");
    assert_eq!(receipt.verdict, Verdict::Matched, "{receipt:?}");
    assert_eq!(receipt.counted, Some(20), "what the server reported");
    assert_eq!(receipt.profile, "Local");
    assert!(receipt.exact_counts, "o200k counts are exact");
    assert_eq!(u64::from(receipt.planned), first.plan.used as u64);
    let stored = pinloom.receipt(first.reply.message.id).await.unwrap();
    assert_eq!(stored.as_ref(), Some(&receipt), "the receipt is kept with the reply");
    assert_eq!(pinloom.receipt(first.prompt.unwrap().message.id).await.unwrap(), None);

    let second = ask(&pinloom, tree, Some(first.reply.message.id), "And the sediment?").await;
    let diff = pinloom.request_diff(second.reply.message.id).await.unwrap();
    assert_eq!(diff.earlier, Some(first.reply.message.id));
    assert!(diff.went.is_empty(), "nothing left the context: {diff:?}");
    let came: Vec<Option<i64>> = diff.came.iter().map(|entry| entry.source_id).collect();
    assert!(came.contains(&Some(first.reply.message.id)), "the answer joined: {diff:?}");
    assert!(diff.unchanged >= 1, "the first question was sent both times: {diff:?}");

    let error = pinloom_app::ApiError::from(
        pinloom.request_diff(second.prompt.unwrap().message.id).await.unwrap_err(),
    );
    assert!(error.message.contains("has no receipt"), "{}", error.message);
}

#[tokio::test]
async fn a_server_that_counts_less_than_was_sent_is_flagged_as_a_cut_context() {
    // A local server with a smaller window than the profile says silently drops the start of
    // the prompt; its prompt count is the only sign.
    let server = Server::start(vec![Answer::sse(&chat_stream(&["Noted."], 40), 0)]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let mut parent = None;
    for turn in 0..12 {
        let text = format!("Note {turn}: the river carries silt past the bend and drops it there.");
        parent = Some(pinloom.append_message(tree, parent, text).await.unwrap().id);
    }
    let exchange = ask(&pinloom, tree, parent, "What did the notes say?").await;
    let receipt = exchange.receipt.unwrap();
    assert_eq!(receipt.verdict, Verdict::ProviderCut, "{receipt:?}");
    let message = receipt.message.unwrap();
    assert!(message.contains("40"), "says what the provider counted: {message}");

    let view = pinloom.thread_view(tree, None).await.unwrap();
    let reply = view.messages.last().unwrap();
    assert_eq!(reply.node.message.id, exchange.reply.message.id);
    assert!(reply.provider_cut, "the thread marks the reply");
    let next = pinloom.preview(reply.node.message.id, "Local".into(), Some("More?".into())).await;
    assert!(next.unwrap().provider_cut.is_some(), "the next request is warned about");
}

#[tokio::test]
async fn receipts_travel_with_an_open_loom_export() {
    let server = Server::start(vec![says("Erosion."), says("Sediment.")]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = ask(&pinloom, tree, None, "Why do rivers bend?").await;
    let second = ask(&pinloom, tree, Some(first.reply.message.id), "And then?").await;
    let document = pinloom.export_open_loom(vec![tree], ExportOptions::default()).await.unwrap();
    assert!(document.contains("\"receipt\""), "the receipts are exported");

    let (other, _other_dir) = pinloom_with(&server).await;
    let report = other.import_document(document, "rivers.json".into()).await.unwrap();
    let imported = other.thread_view(report.trees[0].id, None).await.unwrap();
    let replies: Vec<i64> = imported
        .messages
        .iter()
        .filter(|message| message.node.model.is_some())
        .map(|message| message.node.message.id)
        .collect();
    assert_eq!(replies.len(), 2);
    let original = second.receipt.unwrap();
    let copy = other.receipt(replies[1]).await.unwrap().expect("the receipt was imported");
    assert_eq!(
        (copy.planned, copy.counted, copy.verdict),
        (original.planned, original.counted, original.verdict)
    );
    // Ids in the receipt name the imported messages, not the exporting database's.
    let sent_ids: Vec<i64> = copy.sent.iter().filter_map(|slice| slice.source_id).collect();
    let imported_ids: Vec<i64> = imported.messages.iter().map(|m| m.node.message.id).collect();
    assert!(
        sent_ids.iter().all(|id| imported_ids.contains(id)),
        "{sent_ids:?} in {imported_ids:?}"
    );
    let diff = other.request_diff(replies[1]).await.unwrap();
    assert_eq!(diff.earlier, Some(replies[0]));
}

#[tokio::test]
async fn profiles_without_prices_have_no_cost_and_with_prices_do() {
    let server = Server::start(vec![says("Erosion.")]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let mut priced = local_profile("Priced", &server, 8_192, "o200k");
    priced.prices = Some(pinloom_app::Prices {
        input_per_million: 3.0,
        output_per_million: 15.0,
        cache_read_per_million: None,
        cache_write_per_million: None,
    });
    pinloom.save_model_profile(priced).await.unwrap();
    let tree = dialogue(&pinloom).await;
    let (events, _received, cancel) = listen();
    let exchange =
        pinloom.send(tree, None, "Why?".into(), "Priced".into(), events, cancel).await.unwrap();
    let cost = exchange.receipt.unwrap().cost.expect("a priced model has a cost");
    // 20 prompt tokens at $3/M and 1 reply token at $15/M.
    let expected = 20.0 * 3.0 / 1e6 + 15.0 / 1e6;
    assert!((cost.total - expected).abs() < 1e-12, "{cost:?}");
}

#[tokio::test]
async fn ollama_cutting_to_its_own_window_is_flagged_and_said_in_the_plan_report() {
    // Ollama keeps only its `num_ctx` worth of the prompt and says so in `prompt_eval_count`.
    let reply = "{\"model\":\"llama3.2\",\"message\":{\"role\":\"assistant\",\"content\":\"Noted.\"},\"done\":false}\n{\"model\":\"llama3.2\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\",\"prompt_eval_count\":120,\"eval_count\":2}\n";
    let server = Server::start(vec![Answer::ndjson(reply.as_bytes(), 0)]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let mut ollama =
        pinloom_app::json::ModelProfile::new("Llama", "ollama", "llama3.2", 32_768, 2_048, "other");
    ollama.base_url = Some(server.base.clone());
    pinloom.save_model_profile(ollama).await.unwrap();
    let tree = dialogue(&pinloom).await;
    let mut parent = None;
    for turn in 0..40 {
        let text = format!(
            "Note {turn}: the river carries silt past the bend and drops it where the flow slows down."
        );
        parent = Some(pinloom.append_message(tree, parent, text).await.unwrap().id);
    }
    let (events, _received, cancel) = listen();
    let exchange = pinloom
        .send(tree, parent, "What did the notes say?".into(), "Llama".into(), events, cancel)
        .await
        .unwrap();
    assert_eq!(server.seen()[0].path, "/api/chat");
    let receipt = exchange.receipt.unwrap();
    assert_eq!(receipt.provider, "ollama");
    assert!(!receipt.exact_counts, "Ollama's models are counted by estimate");
    assert_eq!(receipt.counted, Some(120));
    assert_eq!(receipt.verdict, Verdict::ProviderCut, "{receipt:?}");
    let message = receipt.message.unwrap();
    assert!(message.contains("num_ctx"), "says what to change: {message}");

    // The CLI's and the MCP's plan report carries the same warning for the next request.
    let report = pinloom
        .plan_text(exchange.reply.message.id, Some("Llama".into()), pinloom_app::PlanFormat::Report)
        .await
        .unwrap();
    assert!(report.contains("Warning: The last reply on this path"), "{report}");
}

#[tokio::test]
async fn a_refusal_to_cut_a_long_thread_names_runs_of_messages_by_their_numbers() {
    let server = Server::start(vec![]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let mut small = local_profile("Small", &server, 2_000, "o200k");
    small.assembly.truncation = Some("stopAtLimit".into());
    small.assembly.minimum_recent_nodes = Some(1);
    pinloom.save_model_profile(small).await.unwrap();
    let tree = dialogue(&pinloom).await;
    let mut parent = None;
    let mut ids = Vec::new();
    for turn in 0..40 {
        let text = format!("Turn {turn}: {}", "the river drops its silt at the bend ".repeat(8));
        let message = pinloom.append_message(tree, parent, text).await.unwrap();
        ids.push(message.id);
        parent = Some(message.id);
    }
    let question = pinloom.append_message(tree, parent, "And deltas?".into()).await.unwrap();
    let (events, _received, cancel) = listen();
    let refused = pinloom
        .send(tree, Some(question.id), "Why?".into(), "Small".into(), events, cancel)
        .await
        .unwrap_err();
    let message = pinloom_app::ApiError::from(refused).message;
    // The oldest messages as one run by the numbers the thread shows, not one quote each.
    let run = format!("the oldest {{}} messages, #{}–#", ids[0]);
    let (before, after) = run.split_once("{}").unwrap();
    let at = message.find(before).unwrap_or_else(|| panic!("{message}"));
    let rest = &message[at + before.len()..];
    let count: usize = rest.split(' ').next().unwrap().parse().unwrap();
    assert!((10..40).contains(&count), "{message}");
    let last = ids[count - 1];
    assert!(rest.starts_with(&format!("{count}{after}{last}")), "{message}");
    assert!(!message.contains("“Turn"), "no quotes: {message}");
}

#[tokio::test]
async fn a_refusal_to_cut_names_what_to_exclude_and_the_inspector_still_lists_it() {
    let long =
        |topic: &str| format!("{topic} {}", "and the water keeps moving downstream ".repeat(90));
    let server =
        Server::start(vec![says(&long("Erosion carves the outer bank")), says("Fine.")]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let mut small = local_profile("Small", &server, 1_000, "o200k");
    small.assembly.truncation = Some("stopAtLimit".into());
    small.assembly.minimum_recent_nodes = Some(1);
    pinloom.save_model_profile(small).await.unwrap();
    let tree = dialogue(&pinloom).await;
    let first =
        pinloom.append_message(tree, None, long("Why do rivers bend so much")).await.unwrap();
    let answered = ask(&pinloom, tree, Some(first.id), "Go on").await;
    let question =
        pinloom.append_message(tree, Some(answered.reply.message.id), "And deltas?".into()).await;
    let question = question.unwrap().id;

    // The send is refused with its own code, naming the messages by their words, never by id.
    let (events, _received, cancel) = listen();
    let refused = pinloom
        .send(tree, Some(question), "And oxbow lakes?".into(), "Small".into(), events, cancel)
        .await
        .unwrap_err();
    let refused = pinloom_app::ApiError::from(refused);
    assert_eq!(refused.code, pinloom_app::ErrorCode::ContextOverBudget, "{}", refused.message);
    assert!(
        refused.message.contains("your message “Why do rivers bend so much"),
        "{}",
        refused.message
    );
    assert!(!refused.message.contains("Node("), "no debug ids: {}", refused.message);
    assert_eq!(server.seen().len(), 1, "nothing was sent for the refused request");

    // The inspector's preview lists the slices, the ones to exclude marked.
    let plan = pinloom.preview(question, "Small".into(), None).await.unwrap();
    let refusal = plan.refusal.as_deref().expect("the preview carries the refusal");
    assert!(refusal.contains("stops at the limit"), "{refusal}");
    let marked: Vec<_> = plan.slices.iter().filter(|slice| slice.exclude_to_fit).collect();
    assert!(marked.iter().any(|slice| slice.source_id == Some(first.id)), "{:?}", plan.slices);

    // Excluding what was named makes it fit, and the send goes out.
    for slice in &marked {
        if slice.source == "node" {
            let id = slice.source_id.unwrap();
            pinloom.mark_node(id, pinloom_app::NodeAction::Exclude).await.unwrap();
        }
    }
    let plan = pinloom.preview(question, "Small".into(), None).await.unwrap();
    assert_eq!(plan.refusal, None, "{:?}", plan.slices);
    let (events, _received, cancel) = listen();
    let answered = pinloom.regenerate(question, "Small".into(), events, cancel).await.unwrap();
    assert_eq!(answered.reply.message.text, "Fine.");
    assert!(
        !sent_text(&server.seen()[1]).contains("Why do rivers bend"),
        "the excluded message stays out"
    );
}

#[tokio::test]
async fn a_closed_pins_result_reaches_its_parent_thread_and_nothing_else_of_it() {
    let server = Server::start(vec![
        says("Rivers meander because the outer bank erodes while the inner bank fills."),
        says("Sediment settles where the water slows."),
        says("The person asked why rivers meander."),
        says("Because the flow is fastest on the outside."),
        says("Deltas come next."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = ask(&pinloom, tree, None, "Why do rivers meander?").await;
    let reply = first.reply.message.id;
    // Another answer to the same question: a pin closed on it is on another branch.
    let (events, _received, cancel) = listen();
    let other = pinloom.regenerate(reply, "Local".into(), events, cancel).await.unwrap();
    let other = other.reply.message.id;
    let elsewhere =
        pinloom.pin_range(other, 0, 8, "Sediment".into(), "Elsewhere".into()).await.unwrap();
    pinloom.close_pin(elsewhere.id, "A result from the other branch.".into()).await.unwrap();

    let passage = "the outer bank erodes";
    let start = first.reply.message.text.find(passage).unwrap() as u32;
    let pin = pinloom
        .pin_range(reply, start, start + passage.len() as u32, passage.into(), "Erosion".into())
        .await
        .unwrap();
    let asked = pinloom.ask_in_pin(pin.id, "Why does the outside erode faster?".into()).await;
    let asked = asked.unwrap().message.id;
    let (events, _received, cancel) = listen();
    pinloom.regenerate(asked, "Local".into(), events, cancel).await.unwrap();
    pinloom.close_pin(pin.id, "Erosion wins on the outside of a bend.".into()).await.unwrap();

    ask(&pinloom, tree, Some(reply), "And where do deltas form?").await;
    let sent = sent_text(server.seen().last().unwrap());
    assert!(sent.contains("Erosion wins on the outside of a bend."), "the result: {sent}");
    assert!(sent.contains("\"Erosion\""), "named by the pin's title: {sent}");
    assert!(!sent.contains("Why does the outside erode faster?"), "the pin's messages: {sent}");
    assert!(!sent.contains("fastest on the outside"), "the pin's reply: {sent}");
    assert!(!sent.contains("other branch"), "a pin on another branch: {sent}");

    // The inspector lists it as a pin's result on this path.
    let plan = pinloom.preview(reply, "Local".into(), Some("More?".into())).await.unwrap();
    let result = plan.slices.iter().find(|slice| slice.kind == "pinResult").unwrap();
    assert!(result.included, "{result:?}");
    assert_eq!(result.source_id, Some(pin.id));
    assert_eq!(result.provenance, Provenance::Path);
}

/// A passage of a pin's reply brought back into the parent thread: its cost is shown first, it
/// is written as an attributed message after the thread's end, and the thread's later requests
/// carry it and nothing else of the pin.
#[tokio::test]
async fn a_promoted_passage_is_carried_by_the_parent_thread_and_nothing_else_of_the_pin() {
    let server = Server::start(vec![
        says("Rivers meander because the outer bank erodes while the inner bank fills."),
        says("The person asked why rivers meander."),
        says("The flow is fastest on the outside, so erosion wins there."),
        says("Deltas come next."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = ask(&pinloom, tree, None, "Why do rivers meander?").await;
    let reply = first.reply.message.id;
    let passage = "the outer bank erodes";
    let start = first.reply.message.text.find(passage).unwrap() as u32;
    let pin = pinloom
        .pin_range(reply, start, start + passage.len() as u32, passage.into(), "Erosion".into())
        .await
        .unwrap();
    let asked = pinloom.ask_in_pin(pin.id, "Why does the outside erode faster?".into()).await;
    let asked = asked.unwrap().message.id;
    let (events, _received, cancel) = listen();
    let answer = pinloom.regenerate(asked, "Local".into(), events, cancel).await.unwrap();
    let answer = answer.reply.message.id;

    let conclusion = "erosion wins there";
    let preview = pinloom
        .promotion_preview(answer, reply, Some(conclusion.into()), "Local".into())
        .await
        .unwrap();
    assert!(
        preview.text.starts_with("Brought back from the pin \u{201c}Erosion\u{201d}, written by "),
        "{}",
        preview.text
    );
    assert!(preview.text.ends_with(conclusion), "{}", preview.text);
    assert!(preview.tokens > 4, "{preview:?}");
    let refused = |error: anyhow::Error| pinloom_app::ApiError::from(error);
    let elsewhere =
        pinloom.promotion_preview(answer, reply, Some("not said".into()), "Local".into());
    let elsewhere = refused(elsewhere.await.unwrap_err());
    assert_eq!(elsewhere.code, pinloom_app::ErrorCode::InvalidInput);
    assert!(elsewhere.message.contains("not in that message's text"), "{elsewhere:?}");
    let already =
        refused(pinloom.promote(first.prompt.unwrap().message.id, reply, None).await.unwrap_err());
    assert!(already.message.contains("already in this thread's context"), "{already:?}");

    let promoted = pinloom.promote(answer, reply, Some(conclusion.into())).await.unwrap();
    assert_eq!((promoted.parent_id, promoted.text.clone()), (Some(reply), preview.text.clone()));
    let asked_after = server.seen().len();
    ask(&pinloom, tree, Some(promoted.id), "And where do deltas form?").await;
    let sent = sent_text(&server.seen()[asked_after]);
    assert!(sent.contains(&preview.text), "the promoted message, whole: {sent}");
    assert!(!sent.contains("Why does the outside erode faster?"), "the pin's question: {sent}");
    assert!(!sent.contains("fastest on the outside"), "the rest of the pin's reply: {sent}");
}

#[tokio::test]
async fn a_pin_sees_its_closed_siblings_results_only_when_the_tree_says_so() {
    let server = Server::start(vec![
        says("Rivers meander because the outer bank erodes while the inner bank fills."),
        says("The person asked why rivers meander."),
        says("The inner bank fills with silt."),
        says("Silt, as the sibling found."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = ask(&pinloom, tree, None, "Why do rivers meander?").await;
    let reply = first.reply.message.id;
    let text = &first.reply.message.text;
    let span = |passage: &str| {
        let start = text.find(passage).unwrap() as u32;
        (start, start + passage.len() as u32)
    };
    let (start, end) = span("the outer bank erodes");
    let done = pinloom.pin_range(reply, start, end, "the outer bank erodes".into(), "Outer".into());
    let done = done.await.unwrap();
    pinloom.ask_in_pin(done.id, "Why the outside?".into()).await.unwrap();
    pinloom
        .close_pin(done.id, "The outside erodes because the flow is fastest there.".into())
        .await
        .unwrap();
    let (start, end) = span("the inner bank fills");
    let open = pinloom.pin_range(reply, start, end, "the inner bank fills".into(), "Inner".into());
    let open = open.await.unwrap();

    let asked = pinloom.ask_in_pin(open.id, "What fills it?".into()).await.unwrap().message.id;
    let (events, _received, cancel) = listen();
    pinloom.regenerate(asked, "Local".into(), events, cancel).await.unwrap();
    let sent = sent_text(server.seen().last().unwrap());
    assert!(!sent.contains("flow is fastest there"), "not opted in: {sent}");

    let mut settings = pinloom.tree_settings(tree).await.unwrap();
    settings.include_closed_sibling_results = true;
    pinloom.set_tree_settings(tree, settings).await.unwrap();
    let (events, _received, cancel) = listen();
    pinloom.regenerate(asked, "Local".into(), events, cancel).await.unwrap();
    let sent = sent_text(server.seen().last().unwrap());
    assert!(
        sent.contains("The outside erodes because the flow is fastest there."),
        "opted in: {sent}"
    );
    assert!(!sent.contains("Why the outside?"), "the sibling's messages never: {sent}");
}

#[tokio::test]
async fn the_tree_settings_the_window_offers_reach_the_request() {
    let server = Server::start(vec![
        says("Meanders form where the outer bank erodes."),
        says("The person asked about meanders."),
        says("Fine."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = ask(&pinloom, tree, None, "Why do rivers meander?").await;

    // Refusals say what to change.
    let mut settings = pinloom.tree_settings(tree).await.unwrap();
    settings.anchor_framing = Some("Focus on this.".into());
    let refused = pinloom_app::ApiError::from(
        pinloom.set_tree_settings(tree, settings.clone()).await.unwrap_err(),
    );
    assert!(refused.message.contains("{anchor}"), "{}", refused.message);
    settings.anchor_framing = Some("Look closely at «{anchor}».".into());
    settings.task_frames = Some(pinloom_app::json::TaskFramesChoice {
        root_goal_percent: 50,
        path_summaries_percent: 40,
        sibling_results_percent: 10,
    });
    let refused = pinloom_app::ApiError::from(
        pinloom.set_tree_settings(tree, settings.clone()).await.unwrap_err(),
    );
    assert!(refused.message.contains("90 % at most"), "{}", refused.message);
    settings.task_frames = None;
    settings.token_buffer = Some(3_000);
    settings.retrieval = Some(pinloom_app::json::RetrievalChoice {
        recency_percent: 0,
        relevance_percent: 0,
        salience_percent: 0,
        share_percent: 10,
        authors: vec![],
        since_ms: None,
        exclude: vec![],
    });
    let refused = pinloom_app::ApiError::from(
        pinloom.set_tree_settings(tree, settings.clone()).await.unwrap_err(),
    );
    assert!(refused.message.contains("weights are all 0"), "{}", refused.message);
    settings.retrieval.as_mut().unwrap().relevance_percent = 100;
    pinloom.set_tree_settings(tree, settings).await.unwrap();

    // The token buffer replaces the profile's reserve in the budget.
    let plan = pinloom.preview(first.reply.message.id, "Local".into(), Some("And?".into()));
    assert_eq!(plan.await.unwrap().available, 8_192 - 3_000);

    // A counting choice saved on the profile is what the next preview counts with (the plan
    // kept for the old profile is dropped).
    let mut profile = crate::wire::local_profile("Local", &server, 8_192, "fourChars");
    profile.native_system = false;
    pinloom.save_model_profile(profile).await.unwrap();
    let plan = pinloom.preview(first.reply.message.id, "Local".into(), Some("And?".into()));
    assert_eq!(plan.await.unwrap().tokenizer, "4 chars/token (fixed)");

    // The anchor wording is what a pin's request says; the system context is shown and cleared.
    pinloom.set_system_context(tree, "Answer as a geologist.".into()).await.unwrap();
    assert_eq!(pinloom.tree_context(tree).await.unwrap().system_context, "Answer as a geologist.");
    pinloom.set_system_context(tree, String::new()).await.unwrap();
    assert_eq!(pinloom.tree_context(tree).await.unwrap().system_context, "");
    pinloom.set_buffer_includes_system(tree, true).await.unwrap();
    assert!(pinloom.tree_context(tree).await.unwrap().buffer_includes_system);
    let reply = first.reply.message.id;
    let pin = pinloom.pin_range(reply, 0, 8, "Meanders".into(), String::new()).await.unwrap();
    let asked = pinloom.ask_in_pin(pin.id, "Where exactly?".into()).await.unwrap().message.id;
    let (events, _received, cancel) = listen();
    pinloom.regenerate(asked, "Local".into(), events, cancel).await.unwrap();
    let sent = sent_text(server.seen().last().unwrap());
    assert!(sent.contains("Look closely at «Meanders»."), "the tree's anchor wording: {sent}");
    assert!(!sent.contains("geologist"), "the cleared system context: {sent}");
}

#[tokio::test]
async fn a_message_the_tree_never_recalls_stays_out_of_the_search_hits() {
    let server = Server::start(vec![]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let mut tight = crate::wire::local_profile("Tight", &server, 220, "o200k");
    tight.completion_endpoint = false;
    pinloom.save_model_profile(tight).await.unwrap();
    let tree = dialogue(&pinloom).await;
    let filler = "The valley was quiet that morning and the river ran low between its banks.";
    let mut last = None;
    let mut basalt = 0;
    for k in 0..14 {
        let text = if k == 2 {
            "The basalt columns at Staffa formed from slowly cooling lava.".to_owned()
        } else {
            format!("{filler} Note {k}.")
        };
        let node = pinloom.append_message(tree, last, text).await.unwrap().id;
        if k == 2 {
            basalt = node;
        }
        last = Some(node);
    }
    // Its search hit: in the request, or cut for room or by the tree's filter, with why.
    let hit = |plan: &pinloom_app::json::PlanView| {
        let found = plan
            .slices
            .iter()
            .find(|slice| slice.source == "retrieval" && slice.source_id == Some(basalt));
        found.map(|slice| slice.reason.clone().unwrap_or_else(|| "included".into()))
    };
    // Search hits may take a third of the budget: room for the one hit.
    let mut settings = pinloom.tree_settings(tree).await.unwrap();
    let share = pinloom_app::json::RetrievalChoice { share_percent: 30, ..Default::default() };
    settings.retrieval = Some(share.clone());
    pinloom.set_tree_settings(tree, settings.clone()).await.unwrap();
    let draft = Some("How did the basalt columns at Staffa form?".to_owned());
    let plan = pinloom.preview(last.unwrap(), "Tight".into(), draft.clone()).await.unwrap();
    assert!(plan.truncated, "the thread is cut, so the search has work to do");
    let found = hit(&plan).expect("found in the cut part");
    assert_ne!(found, "filtered");

    settings.retrieval =
        Some(pinloom_app::json::RetrievalChoice { exclude: vec![basalt], ..share });
    pinloom.set_tree_settings(tree, settings).await.unwrap();
    let plan = pinloom.preview(last.unwrap(), "Tight".into(), draft).await.unwrap();
    assert_eq!(hit(&plan).as_deref(), Some("filtered"), "never recalled once the tree says so");
}
