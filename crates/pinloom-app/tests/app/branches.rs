//! Branches seen and judged: one prompt sent to several models at once (each reply a sibling
//! branch with its own plan and receipt, a failing or stopped model on its own side only), and
//! two whole branches compared from where they part, with what their requests did not share.

use std::sync::Mutex;

use pinloom_app::json::{CompareReach, ContextSource, FanOut, LaneAnswer, SendTarget};
use pinloom_app::{CancellationToken, ErrorCode, FanOutLane};
use pinloom_test_server::{Answer, Server, Then};
use tokio::sync::mpsc::unbounded_channel;

use crate::Sends;
use crate::wire::{
    ask, chat_stream, completion_stream, dialogue, essay, listen, local_profile, messages,
    pinloom_with, says,
};

/// A lane for `profile` whose pieces nobody reads, stopped by `cancel`.
fn lane(profile: &str, cancel: &CancellationToken) -> FanOutLane {
    let (events, _) = unbounded_channel();
    FanOutLane { profile: profile.into(), events, cancel: cancel.clone() }
}

fn lanes(profiles: &[&str]) -> Vec<FanOutLane> {
    profiles.iter().map(|profile| lane(profile, &CancellationToken::new())).collect()
}

fn thread_prompt(tree: i64, parent: Option<i64>, text: &str) -> SendTarget {
    SendTarget::Thread { tree_id: tree, parent_id: parent, text: text.into(), images: Vec::new() }
}

/// `question` as the tree's first message, answered three times at once by `Local`.
async fn three_samples(pinloom: &pinloom_app::Pinloom, tree: i64, question: &str) -> FanOut {
    let lanes = lanes(&["Local", "Local", "Local"]);
    pinloom.fan_out(thread_prompt(tree, None, question), lanes, |_: &LaneAnswer| {}).await.unwrap()
}

#[tokio::test]
async fn one_prompt_goes_to_two_models_and_a_failing_one_fails_on_its_own_side() {
    let good =
        Server::start(vec![Answer::sse(&chat_stream(&["Erosion ", "on the outside."], 12), 0)])
            .await;
    let refusing = Server::start(vec![Answer::error(
        401,
        r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#,
    )])
    .await;
    let (pinloom, _dir) = pinloom_with(&good).await;
    pinloom.save_model_profile(local_profile("Refusing", &refusing, 8_192, "o200k")).await.unwrap();
    let tree = dialogue(&pinloom).await;

    let heard = Mutex::new(Vec::new());
    let fan_out = pinloom
        .fan_out(
            thread_prompt(tree, None, "Why do rivers meander?"),
            lanes(&["Local", "Refusing"]),
            |answer: &LaneAnswer| heard.lock().unwrap().push(answer.lane),
        )
        .await
        .unwrap();

    let mut heard = heard.into_inner().unwrap();
    heard.sort_unstable();
    assert_eq!(heard, [0, 1], "each model was heard of as it ended");
    let [answered, refused] = &fan_out.answers[..] else { panic!("two answers") };
    let exchange = answered.exchange.as_ref().expect("the good model answered");
    assert_eq!(exchange.reply.message.text, "Erosion on the outside.");
    assert_eq!(exchange.reply.message.parent_id, Some(fan_out.prompt.message.id));
    assert_eq!(exchange.reply.model.as_deref(), Some("Local"));
    let receipt = exchange.receipt.as_ref().expect("the reply has its receipt");
    assert_eq!(receipt.profile, "Local");
    assert_eq!(receipt.counted, Some(12));
    assert!(answered.error.is_none());

    assert!(refused.exchange.is_none());
    let error = refused.error.as_ref().expect("the refusing model's error stays on its side");
    assert_eq!(error.code, ErrorCode::ProviderKey);
    assert!(error.message.contains("Refusing"), "it names the model: {}", error.message);

    // Both were asked the same question in a request of their own; it was written once.
    for server in [&good, &refusing] {
        let seen = server.seen();
        assert_eq!(seen.len(), 1);
        assert_eq!(
            messages(&seen[0].json()),
            [("user".to_owned(), "Why do rivers meander?".to_owned())]
        );
    }
    let view = pinloom.thread_view(tree, None).await.unwrap();
    let texts: Vec<_> = view.messages.iter().map(|m| m.node.message.text.as_str()).collect();
    assert_eq!(texts, ["Why do rivers meander?", "Erosion on the outside."]);
    assert_eq!(view.messages[1].alternatives.len(), 1, "the failed model left no reply");
}

#[tokio::test]
async fn each_model_plans_within_its_own_budget_and_the_comparison_names_what_differed() {
    // A long first exchange, then one question to a large and a small model: the small one's
    // budget cannot hold the long answer.
    let long_answer = "The outer bank erodes while the inner bank gains silt. ".repeat(40);
    let large = Server::start(vec![
        says(&long_answer),
        Answer::sse(&chat_stream(&["Oxbow lakes form."], 900), 0),
    ])
    .await;
    let small = Server::start(vec![Answer::sse(&chat_stream(&["Cut-offs."], 40), 0)]).await;
    let (pinloom, _dir) = pinloom_with(&large).await;
    let mut tight = local_profile("Small", &small, 300, "o200k");
    tight.reserve = 100;
    tight.assembly.truncation = Some("rollingWindow".into());
    tight.assembly.minimum_recent_nodes = Some(1);
    tight.prices = Some(pinloom_app::Prices {
        input_per_million: 3.0,
        output_per_million: 15.0,
        cache_read_per_million: None,
        cache_write_per_million: None,
    });
    pinloom.save_model_profile(tight).await.unwrap();
    let tree = dialogue(&pinloom).await;
    let first = ask(&pinloom, tree, None, "Why do rivers meander?").await;

    let fan_out = pinloom
        .fan_out(
            thread_prompt(tree, Some(first.reply.message.id), "What happens next?"),
            lanes(&["Local", "Small"]),
            |_: &LaneAnswer| {},
        )
        .await
        .unwrap();
    let replies: Vec<_> = fan_out
        .answers
        .iter()
        .map(|answer| answer.exchange.as_ref().expect("both answered"))
        .collect();

    let large_request = messages(&large.seen()[1].json());
    let small_request = messages(&small.seen()[0].json());
    assert_eq!(large_request.len(), 3, "the large model got the whole history");
    // The small model's own plan cut the history to fit its budget: one user message, the
    // truncation marker merged before the question.
    assert_eq!(small_request.len(), 1, "{small_request:?}");
    assert_eq!(small_request[0].0, "user");
    assert!(small_request[0].1.ends_with("What happens next?"), "{small_request:?}");
    assert!(!small_request[0].1.contains("outer bank"), "{small_request:?}");
    let (large_receipt, small_receipt) =
        (replies[0].receipt.as_ref().unwrap(), replies[1].receipt.as_ref().unwrap());
    assert!(large_receipt.planned > small_receipt.planned);
    assert_eq!(small_receipt.available, 200);

    let comparison = pinloom
        .compare(
            replies[0].reply.message.id,
            replies[1].reply.message.id,
            "Local".into(),
            CompareReach::Picked,
        )
        .await
        .unwrap();
    assert_eq!(
        comparison.common_ancestor.as_ref().map(|node| node.message.id),
        Some(fan_out.prompt.message.id)
    );
    assert_eq!(comparison.rows.len(), 1, "the two replies pair");
    assert!(comparison.rows[0].differs);
    assert_eq!(comparison.left.model.as_deref(), Some("Local"));
    assert_eq!(comparison.right.model.as_deref(), Some("Small"));
    assert_eq!(comparison.left.context_source, ContextSource::Sent);
    assert_eq!(comparison.left.context_tokens, large_receipt.planned);
    assert_eq!(comparison.right.context_tokens, small_receipt.planned);
    assert_eq!(comparison.right.context_profile, "Small");
    assert_eq!(comparison.right.reply_tokens, Some(1));
    // The small model has prices: its side costs what its receipt says; the other has none.
    let small_cost = small_receipt.cost.expect("a priced profile's reply has a cost").total;
    assert!((small_cost - (40.0 * 3.0 + 15.0) / 1_000_000.0).abs() < 1e-12);
    assert_eq!(comparison.right.cost, Some(small_cost));
    assert_eq!((comparison.right.priced_replies, comparison.right.replies), (1, 1));
    assert_eq!(comparison.left.cost, None);
    assert!(comparison.left.took_ms.is_some());
    // The context diff: what the large model's request carried and the small one's did not.
    let left_only: Vec<Option<i64>> =
        comparison.context.left_only.iter().map(|entry| entry.source_id).collect();
    assert_eq!(
        left_only,
        [Some(first.prompt.as_ref().unwrap().message.id), Some(first.reply.message.id)]
    );
    assert!(comparison.context.left_only[1].preview.starts_with("The outer bank erodes"));
    assert!(comparison.context.right_only.is_empty());
    assert_eq!(comparison.context.shared, 1, "both sent the question");
}

#[tokio::test]
async fn one_model_is_stopped_while_the_other_goes_on() {
    let mut partial = chat_stream(&["Meanders ", "grow because"], 10);
    let stop_at = String::from_utf8(partial.clone()).unwrap().find("\"finish_reason\":\"stop\"");
    let frame_start =
        String::from_utf8(partial[..stop_at.unwrap()].to_vec()).unwrap().rfind("data: ").unwrap();
    partial.truncate(frame_start);
    let slow = Server::start(vec![Answer::sse(&partial, 0).then(Then::Hang)]).await;
    let quick = Server::start(vec![says("Erosion.")]).await;
    let (pinloom, _dir) = pinloom_with(&slow).await;
    pinloom.save_model_profile(local_profile("Quick", &quick, 8_192, "o200k")).await.unwrap();
    let tree = dialogue(&pinloom).await;

    let (events, mut received, stop_slow) = listen();
    let slow_lane = FanOutLane { profile: "Local".into(), events, cancel: stop_slow.clone() };
    let quick_lane = lane("Quick", &CancellationToken::new());
    let stopper = tokio::spawn(async move {
        // Stopped once its first words are on screen, as a person reading them would.
        let mut streamed = String::new();
        while let Some(event) = received.recv().await {
            if let pinloom_app::ReplyEvent::Text(text) = event {
                streamed.push_str(&text);
                if streamed.contains("grow because") {
                    stop_slow.cancel();
                }
            }
        }
    });
    let fan_out = pinloom
        .fan_out(
            thread_prompt(tree, None, "Why?"),
            vec![slow_lane, quick_lane],
            |_: &LaneAnswer| {},
        )
        .await
        .unwrap();
    stopper.await.unwrap();

    let stopped = fan_out.answers[0].exchange.as_ref().expect("what arrived is kept");
    assert_eq!(stopped.reply.message.text, "Meanders grow because");
    assert!(stopped.reply.incomplete);
    assert_eq!(stopped.interruption.as_ref().map(|error| error.code), Some(ErrorCode::Cancelled));
    let finished = fan_out.answers[1].exchange.as_ref().unwrap();
    assert_eq!(finished.reply.message.text, "Erosion.");
    assert!(!finished.reply.incomplete, "the other model was not stopped");
    // The stopped model's connection is closed; the server notices a moment later.
    for _ in 0..100 {
        if slow.closed_by_client() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(slow.closed_by_client(), "the stopped request's connection was closed");
}

#[tokio::test]
async fn a_fan_out_that_cannot_be_sent_writes_nothing() {
    let server = Server::start(Vec::new()).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let refusal = |error: anyhow::Error| pinloom_app::ApiError::from(error);

    let one = pinloom
        .fan_out(thread_prompt(tree, None, "Why?"), lanes(&["Local"]), |_: &LaneAnswer| {})
        .await
        .map_err(refusal)
        .unwrap_err();
    assert_eq!(one.code, ErrorCode::InvalidInput);
    assert!(one.message.contains("ask for 2 to 8 at once"), "{}", one.message);
    let nine = pinloom
        .fan_out(thread_prompt(tree, None, "Why?"), lanes(&["Local"; 9]), |_: &LaneAnswer| {})
        .await
        .map_err(refusal)
        .unwrap_err();
    assert_eq!(nine.code, ErrorCode::InvalidInput);
    assert!(nine.message.contains("9 answers were asked for"), "{}", nine.message);
    let unknown = pinloom
        .fan_out(
            thread_prompt(tree, None, "Why?"),
            lanes(&["Local", "Nowhere"]),
            |_: &LaneAnswer| {},
        )
        .await
        .map_err(refusal)
        .unwrap_err();
    assert_eq!(unknown.code, ErrorCode::InvalidInput);
    assert!(unknown.message.contains("no model profile named \"Nowhere\""), "{}", unknown.message);
    pinloom.save_model_profile(local_profile("Second", &server, 8_192, "o200k")).await.unwrap();
    let written = pinloom.append_message(tree, None, "A document".into()).await.unwrap();
    let continued = pinloom
        .fan_out(
            SendTarget::Continue { node_id: written.id, length: None },
            lanes(&["Local", "Second"]),
            |_: &LaneAnswer| {},
        )
        .await
        .map_err(refusal)
        .unwrap_err();
    assert!(continued.message.contains("this tree is a dialogue"), "{}", continued.message);
    pinloom.mark_node(written.id, pinloom_app::NodeAction::Delete).await.unwrap();

    assert!(pinloom.thread_view(tree, None).await.unwrap().messages.is_empty());
    assert!(server.seen().is_empty(), "nothing was sent");
}

#[tokio::test]
async fn one_model_answers_several_times_as_siblings_with_receipts_of_their_own() {
    let server = Server::start(vec![says("Erosion."), says("Uplift."), says("Sediment.")]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;

    let samples = three_samples(&pinloom, tree, "Why do rivers meander?").await;

    let mut texts: Vec<String> = Vec::new();
    let mut replies = std::collections::HashSet::new();
    for answer in &samples.answers {
        let exchange = answer.exchange.as_ref().expect("every sample answered");
        assert_eq!(answer.profile, "Local");
        assert_eq!(exchange.reply.message.parent_id, Some(samples.prompt.message.id));
        let id = exchange.reply.message.id;
        let receipt = pinloom.receipt(id).await.unwrap().expect("each sample keeps its receipt");
        assert_eq!(receipt.profile, "Local");
        replies.insert(id);
        texts.push(exchange.reply.message.text.clone());
    }
    texts.sort();
    assert_eq!(texts, ["Erosion.", "Sediment.", "Uplift."]);
    assert_eq!(replies.len(), 3, "three replies, each with its receipt");
    assert_eq!(server.seen().len(), 3, "three requests, each its own");
    for seen in server.seen() {
        assert_eq!(
            messages(&seen.json()),
            [("user".to_owned(), "Why do rivers meander?".to_owned())],
            "every sample was asked the question alone"
        );
    }
    let view = pinloom.thread_view(tree, None).await.unwrap();
    assert_eq!(view.messages[1].alternatives.len(), 3, "three siblings under the question");
}

#[tokio::test]
async fn answering_again_or_an_edit_with_several_models_adds_siblings() {
    let first =
        Server::start(vec![says("Erosion."), says("Erosion, again."), says("Uplift.")]).await;
    let second = Server::start(vec![says("Sediment."), says("Faults.")]).await;
    let (pinloom, _dir) = pinloom_with(&first).await;
    pinloom.save_model_profile(local_profile("Second", &second, 8_192, "o200k")).await.unwrap();
    let tree = dialogue(&pinloom).await;
    let asked = ask(&pinloom, tree, None, "Why meanders?").await;

    let fan_out = pinloom
        .fan_out(
            SendTarget::Regenerate { node_id: asked.reply.message.id },
            lanes(&["Local", "Second"]),
            |_: &LaneAnswer| {},
        )
        .await
        .unwrap();
    let prompt = asked.prompt.as_ref().unwrap().message.id;
    assert_eq!(fan_out.prompt.message.id, prompt, "a reply's prompt is answered again");
    let view = pinloom.thread_view(tree, Some(asked.reply.message.id)).await.unwrap();
    assert_eq!(view.messages[1].alternatives.len(), 3, "three answers side by side");
    assert_eq!(
        messages(&second.seen()[0].json()),
        [("user".to_owned(), "Why meanders?".to_owned())],
        "answering again sends the same question, not the earlier answer"
    );

    // An edit goes to both models as one new branch of the question.
    let edited = pinloom
        .fan_out(
            SendTarget::Edit { node_id: prompt, text: "Why do mountains rise?".into() },
            lanes(&["Local", "Second"]),
            |_: &LaneAnswer| {},
        )
        .await
        .unwrap();
    assert_eq!(edited.prompt.edited_from, Some(prompt));
    let replies: Vec<&str> = edited
        .answers
        .iter()
        .map(|answer| answer.exchange.as_ref().unwrap().reply.message.text.as_str())
        .collect();
    assert_eq!(replies, ["Uplift.", "Faults."]);
    assert_eq!(
        messages(&second.seen()[1].json()),
        [("user".to_owned(), "Why do mountains rise?".to_owned())]
    );
}

#[tokio::test]
async fn two_whole_branches_are_compared_from_where_they_part() {
    let server =
        Server::start(vec![says("Erosion."), says("Sediment."), says("Oxbow lakes.")]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = ask(&pinloom, tree, None, "Why do rivers meander?").await;
    let prompt = first.prompt.as_ref().unwrap().message.id;
    let (events, _received, cancel) = listen();
    let again = pinloom.regenerate(prompt, "Local".into(), events, cancel).await.unwrap();
    // The first answer's branch goes on.
    let next = ask(&pinloom, tree, Some(first.reply.message.id), "And then?").await;

    // Picked as the two siblings of the fork, compared as the branches they start.
    let comparison = pinloom
        .compare(
            first.reply.message.id,
            again.reply.message.id,
            "Local".into(),
            CompareReach::Branches,
        )
        .await
        .unwrap();
    assert_eq!(comparison.shared, 1);
    assert_eq!(comparison.left.end, next.reply.message.id, "the left branch reaches its end");
    assert_eq!(comparison.right.end, again.reply.message.id);
    let rows: Vec<(Option<&str>, Option<&str>)> = comparison
        .rows
        .iter()
        .map(|row| {
            (
                row.left.as_ref().map(|node| node.message.text.as_str()),
                row.right.as_ref().map(|node| node.message.text.as_str()),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (Some("Erosion."), Some("Sediment.")),
            (Some("And then?"), None),
            (Some("Oxbow lakes."), None),
        ]
    );
    let sides: Vec<&str> = comparison.rows[0].diff.iter().map(|span| span.side.as_str()).collect();
    assert_eq!(sides, ["left", "right"]);
    assert!(comparison.rows.iter().all(|row| row.differs));
    assert_eq!((comparison.left.replies, comparison.right.replies), (2, 1));
    assert_eq!(comparison.left.cost, None, "the profile has no prices");
    // The left's last request carried the first exchange; the right's only the question.
    let left_only: Vec<Option<i64>> =
        comparison.context.left_only.iter().map(|entry| entry.source_id).collect();
    assert_eq!(
        left_only,
        [Some(first.reply.message.id), Some(next.prompt.as_ref().unwrap().message.id)]
    );
    assert_eq!(comparison.context.shared, 1);

    // Picked as they are, the fork's two answers pair alone; a side that ends with the
    // person's message is described by the request a send from it would make.
    let picked = pinloom
        .compare(
            next.prompt.as_ref().unwrap().message.id,
            again.reply.message.id,
            "Local".into(),
            CompareReach::Picked,
        )
        .await
        .unwrap();
    assert_eq!(picked.rows.len(), 2);
    assert_eq!(picked.left.context_source, ContextSource::Planned);
    assert_eq!(picked.right.context_source, ContextSource::Sent);

    let same = pinloom
        .compare(prompt, prompt, "Local".into(), CompareReach::Picked)
        .await
        .map_err(pinloom_app::ApiError::from)
        .unwrap_err();
    assert_eq!(same.code, ErrorCode::InvalidInput);
    let other_tree = dialogue(&pinloom).await;
    let elsewhere = pinloom.append_message(other_tree, None, "Elsewhere".into()).await.unwrap();
    let apart = pinloom
        .compare(prompt, elsewhere.id, "Local".into(), CompareReach::Picked)
        .await
        .map_err(pinloom_app::ApiError::from)
        .unwrap_err();
    assert!(apart.message.contains("different trees"), "{}", apart.message);
}

#[tokio::test]
async fn a_reply_edited_by_the_person_is_a_sibling_and_later_requests_carry_the_edit() {
    let server =
        Server::start(vec![says("Rivers meander because of gravity."), says("Yes.")]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let asked = ask(&pinloom, tree, None, "Why do rivers meander?").await;
    let original = asked.reply.message.id;

    let edited = pinloom
        .edit_reply(original, "Rivers meander because the outer bank erodes.".into())
        .await
        .unwrap();
    assert_eq!(edited.edited_from, Some(original), "the edit names the reply it came from");
    assert_eq!(edited.message.author, pinloom_app::json::Author::Model);
    assert_eq!(edited.model.as_deref(), Some("Local"), "it still stands for that model's turn");
    assert_eq!(edited.message.parent_id, asked.reply.message.parent_id);
    assert_eq!(server.seen().len(), 1, "an edited reply is saved, not sent");

    let view = pinloom.thread_view(tree, Some(edited.message.id)).await.unwrap();
    assert_eq!(view.messages[1].alternatives, [original, edited.message.id], "the original stays");

    ask(&pinloom, tree, Some(edited.message.id), "Does the inner bank grow?").await;
    assert_eq!(
        messages(&server.seen()[1].json()),
        [
            ("user".to_owned(), "Why do rivers meander?".to_owned()),
            ("assistant".to_owned(), "Rivers meander because the outer bank erodes.".to_owned()),
            ("user".to_owned(), "Does the inner bank grow?".to_owned()),
        ],
        "the next request carries the edit, not the original"
    );

    let refusal = |error: anyhow::Error| pinloom_app::ApiError::from(error);
    let empty = pinloom.edit_reply(original, "  ".into()).await.map_err(refusal).unwrap_err();
    assert_eq!(empty.code, ErrorCode::InvalidInput);
    let prompt = asked.prompt.as_ref().unwrap().message.id;
    let human = pinloom.edit_reply(prompt, "Why?".into()).await.map_err(refusal).unwrap_err();
    assert_eq!(human.code, ErrorCode::InvalidInput);
    assert!(human.message.contains("only a model's reply"), "{}", human.message);
    let alternatives =
        pinloom.thread_view(tree, Some(original)).await.unwrap().messages[1].alternatives.clone();
    assert_eq!(alternatives.len(), 2, "the refused edits wrote nothing");
}

#[tokio::test]
async fn chosen_answers_fuse_into_a_new_sibling_whose_request_carries_them_and_nothing_else() {
    let server = Server::start(vec![
        says("Erosion of the outer bank."),
        says("Uplift of the land."),
        says("Sediment on the inner bank."),
        says("The outer bank erodes [1] while sediment builds the inner bank [2]."),
        says("An oxbow lake."),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let samples = three_samples(&pinloom, tree, "Why do rivers meander?").await;
    let answer = |text: &str| {
        samples
            .answers
            .iter()
            .filter_map(|answer| answer.exchange.as_ref())
            .find(|exchange| exchange.reply.message.text.starts_with(text))
            .unwrap()
            .reply
            .message
            .id
    };
    let (erosion, uplift, sediment) = (answer("Erosion"), answer("Uplift"), answer("Sediment"));

    let (events, _received, cancel) = listen();
    let fused = pinloom
        .reply_to(
            SendTarget::Fuse { node_ids: vec![erosion, sediment] },
            "Local".into(),
            events,
            cancel,
        )
        .await
        .unwrap();

    assert_eq!(fused.reply.message.parent_id, Some(samples.prompt.message.id), "a sibling");
    assert_eq!(fused.reply.fused_from, [erosion, sediment], "attributed to its sources");
    let request = server.seen()[3].json();
    let turns = messages(&request);
    assert_eq!(turns.len(), 1, "the question, the answers and the instruction: {turns:?}");
    let (role, text) = &turns[0];
    assert_eq!(role, "user");
    assert!(text.starts_with("Why do rivers meander?\n\nAnswer [1], by Local:\nErosion of the outer bank.\n\nAnswer [2], by Local:\nSediment on the inner bank.\n\nAbove are 2 answers"), "{text}");
    assert!(!text.contains("Uplift"), "an answer not chosen stays out: {text}");
    let receipt = pinloom.receipt(fused.reply.message.id).await.unwrap().expect("its receipt");
    let fused_kinds = receipt.sent.iter().filter(|slice| slice.kind == "fuseSource").count();
    assert_eq!(fused_kinds, 3, "two answers and the instruction, listed on the receipt");

    let view = pinloom.thread_view(tree, Some(fused.reply.message.id)).await.unwrap();
    assert_eq!(view.messages[1].alternatives.len(), 4, "three samples and the fused answer");
    assert_eq!(view.messages[1].node.fused_from, [erosion, sediment]);

    // What cannot be fused says what to choose instead, and writes nothing.
    let refusal = |error: anyhow::Error| pinloom_app::ApiError::from(error);
    let fuse = |ids: Vec<i64>| {
        let (events, _received, cancel) = listen();
        pinloom.reply_to(SendTarget::Fuse { node_ids: ids }, "Local".into(), events, cancel)
    };
    let one = fuse(vec![erosion]).await.map_err(refusal).unwrap_err();
    assert!(one.message.contains("choose 2 to 8 answers"), "{}", one.message);
    let twice = fuse(vec![erosion, erosion]).await.map_err(refusal).unwrap_err();
    assert!(twice.message.contains("chosen twice"), "{}", twice.message);
    let own = fuse(vec![samples.prompt.message.id, erosion]).await.map_err(refusal).unwrap_err();
    assert!(own.message.contains("only models' answers"), "{}", own.message);
    let later = ask(&pinloom, tree, Some(uplift), "And then?").await;
    let apart = fuse(vec![erosion, later.reply.message.id]).await.map_err(refusal).unwrap_err();
    assert!(apart.message.contains("answer different messages"), "{}", apart.message);
    assert_eq!(server.seen().len(), 5, "no refused fusion was sent");
}

#[tokio::test]
async fn a_document_is_continued_several_ways_at_once_as_siblings_of_its_end() {
    let server = Server::start(vec![
        Answer::sse(&completion_stream(&[" slowly to the sea."]), 0),
        Answer::sse(&completion_stream(&[" past the old mill."]), 0),
        Answer::sse(&completion_stream(&[" under the ice."]), 0),
    ])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let (tree, start) = essay(&pinloom, "The river ran").await;

    let woven = pinloom
        .fan_out(
            SendTarget::Continue { node_id: start.id, length: None },
            lanes(&["Local", "Local", "Local"]),
            |_: &LaneAnswer| {},
        )
        .await
        .unwrap();

    assert_eq!(woven.prompt.message.id, start.id, "the document's end is continued, not rewritten");
    let mut endings: Vec<String> = woven
        .answers
        .iter()
        .map(|answer| {
            let exchange = answer.exchange.as_ref().expect("each lane continued");
            assert_eq!(exchange.reply.message.parent_id, Some(start.id));
            exchange.reply.message.text.clone()
        })
        .collect();
    endings.sort();
    assert_eq!(endings, [" past the old mill.", " slowly to the sea.", " under the ice."]);
    for seen in server.seen() {
        assert_eq!(seen.path, "/v1/completions");
        assert_eq!(seen.json()["prompt"], "The river ran", "each lane continues the same text");
    }
    let view = pinloom.thread_view(tree, None).await.unwrap();
    assert_eq!(view.messages[1].alternatives.len(), 3, "three continuations side by side");
}
