//! The conversation loop end to end: a real database file, a provider server on 127.0.0.1
//! speaking the OpenAI-compatible stream byte for byte, and the use cases every front end calls.

use pinloom_app::json::SendTarget;
use pinloom_app::{
    ApiError, CancellationToken, Connections, ErrorCode, Pinloom, PlanFormat, ReplyEvent,
};
use pinloom_providers::ProviderId;
use pinloom_test_server::{Answer, Server, Then};

use crate::Sends;
use crate::wire::{
    ask, chat_stream, completion_stream, continue_locally, dialogue, essay, listen, local_profile,
    messages, pinloom_with, says,
};

fn stored_count(dir: &std::path::Path, node: i64, family: &str) -> Option<i64> {
    let conn = rusqlite::Connection::open(dir.join(pinloom_app::DATABASE_FILE_NAME)).unwrap();
    conn.query_row(
        "SELECT tokens FROM node_tokens WHERE node_id = ?1 AND family = ?2",
        rusqlite::params![node, family],
        |row| row.get(0),
    )
    .ok()
}

#[tokio::test]
async fn a_send_streams_the_reply_into_a_new_message_with_its_usage_and_counts() {
    let server = Server::start(vec![Answer::sse(
        &chat_stream(&["Because ", "the outer ", "bank erodes."], 31),
        7,
    )])
    .await;
    let (pinloom, dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    pinloom.set_system_context(tree, "Answer like a geographer.".into()).await.unwrap();
    let (events, mut received, cancel) = listen();

    let exchange = pinloom
        .send(tree, None, "Why do rivers meander?".into(), "Local".into(), events, cancel)
        .await
        .unwrap();

    let prompt = exchange.prompt.unwrap();
    assert_eq!(exchange.reply.message.text, "Because the outer bank erodes.");
    assert_eq!(exchange.reply.message.parent_id, Some(prompt.message.id));
    assert_eq!(exchange.reply.model.as_deref(), Some("Local"));
    assert!(!exchange.reply.incomplete);
    assert!(exchange.interruption.is_none());
    let usage: serde_json::Value =
        serde_json::from_str(exchange.reply.usage_json.as_deref().unwrap()).unwrap();
    assert_eq!(usage["inputTokens"], 31);

    let mut streamed = String::new();
    while let Ok(event) = received.try_recv() {
        if let ReplyEvent::Text(text) = event {
            streamed.push_str(&text);
        }
    }
    assert_eq!(streamed, "Because the outer bank erodes.", "the pieces arrived as they came");

    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!((seen[0].method.as_str(), seen[0].path.as_str()), ("POST", "/v1/chat/completions"));
    let body = seen[0].json();
    assert_eq!(body["model"], "local-model");
    assert_eq!(
        messages(&body),
        [
            ("system".to_owned(), "Answer like a geographer.".to_owned()),
            ("user".to_owned(), "Why do rivers meander?".to_owned()),
        ]
    );
    // The request shown by the plan is the request sent.
    let shown: serde_json::Value = serde_json::from_str(exchange.plan.request_body()).unwrap();
    assert_eq!(shown, body);

    // Counted once, when written, for each exact family.
    let o200k = pinloom_engine::tokens::Tokenizer::O200k.count("Why do rivers meander?");
    assert_eq!(stored_count(dir.path(), prompt.message.id, "o200k"), Some(o200k as i64));
    assert!(stored_count(dir.path(), exchange.reply.message.id, "cl100k").is_some());

    let view = pinloom.thread_view(tree, None).await.unwrap();
    let texts: Vec<_> = view.messages.iter().map(|m| m.node.message.text.as_str()).collect();
    assert_eq!(texts, ["Why do rivers meander?", "Because the outer bank erodes."]);
}

#[tokio::test]
async fn the_next_send_carries_the_history_and_reuses_the_path_in_memory() {
    let server = Server::start(vec![says("Erosion."), says("Oxbow lakes.")]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = ask(&pinloom, tree, None, "Why meanders?").await;
    let second = ask(&pinloom, tree, Some(first.reply.message.id), "And then?").await;
    let body = server.seen()[1].json();
    assert_eq!(
        messages(&body),
        [
            ("user".to_owned(), "Why meanders?".to_owned()),
            ("assistant".to_owned(), "Erosion.".to_owned()),
            ("user".to_owned(), "And then?".to_owned()),
        ]
    );
    // A plan made from a fresh read of the file equals the one made from the extended path.
    let warm = pinloom.preview(second.reply.message.id, "Local".into(), None).await.unwrap();
    let cold = {
        let reopened = pinloom_app::Pinloom::open(_dir.path().to_owned()).await.unwrap();
        reopened.preview(second.reply.message.id, "Local".into(), None).await.unwrap()
    };
    assert_eq!(warm, cold);
}

#[tokio::test]
async fn a_broken_stream_keeps_what_arrived_marked_incomplete() {
    let mut broken = chat_stream(&["Rivers ", "meander ", "because"], 10);
    // Cut the stream after the third piece, before it finishes.
    let cut =
        String::from_utf8(broken.clone()).unwrap().find("\"finish_reason\":\"stop\"").unwrap();
    let frame_start = String::from_utf8(broken[..cut].to_vec()).unwrap().rfind("data: ").unwrap();
    broken.truncate(frame_start);
    let server = Server::start(vec![Answer::sse(&broken, 0)]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let (events, _received, cancel) = listen();
    let exchange =
        pinloom.send(tree, None, "Why?".into(), "Local".into(), events, cancel).await.unwrap();
    assert_eq!(exchange.reply.message.text, "Rivers meander because");
    assert!(exchange.reply.incomplete);
    let interruption = exchange.interruption.unwrap();
    assert_eq!(interruption.code, ErrorCode::ProviderUnavailable);
    let view = pinloom.thread_view(tree, None).await.unwrap();
    assert_eq!(view.messages.len(), 2, "the partial reply is saved");
}

#[tokio::test]
async fn cancelling_keeps_the_partial_reply_and_closes_the_connection() {
    let opening = chat_stream(&["The outer bank"], 10);
    let first_frames = String::from_utf8(opening).unwrap();
    let head: String =
        first_frames.split("\n\n").take(2).map(|frame| format!("{frame}\n\n")).collect();
    let server = Server::start(vec![Answer::sse(head.as_bytes(), 0).then(Then::Hang)]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let (events, mut received, _) = listen();
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        while let Some(event) = received.recv().await {
            if matches!(event, ReplyEvent::Text(_)) {
                stopper.cancel();
            }
        }
    });
    let exchange =
        pinloom.send(tree, None, "Why?".into(), "Local".into(), events, cancel).await.unwrap();
    assert_eq!(exchange.reply.message.text, "The outer bank");
    assert!(exchange.reply.incomplete);
    assert_eq!(exchange.interruption.unwrap().code, ErrorCode::Cancelled);
    for _ in 0..100 {
        if server.closed_by_client() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(server.closed_by_client(), "the HTTP stream was ended");
}

#[tokio::test]
async fn a_refusal_before_any_text_saves_the_prompt_and_says_what_to_do() {
    let server = Server::start(vec![Answer::error(
        404,
        r#"{"error":{"message":"The model `local-model` does not exist.","type":"invalid_request_error","code":"model_not_found"}}"#,
    )])
    .await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let (events, _received, cancel) = listen();
    let error = ApiError::from(
        pinloom.send(tree, None, "Why?".into(), "Local".into(), events, cancel).await.unwrap_err(),
    );
    assert_eq!(error.code, ErrorCode::ProviderRefused, "{}", error.message);
    assert!(error.message.starts_with("Local did not answer"), "{}", error.message);
    let view = pinloom.thread_view(tree, None).await.unwrap();
    assert_eq!(view.messages.len(), 1, "the person's message is kept, to answer again");

    let (events, _received, cancel) = listen();
    let error = ApiError::from(
        pinloom
            .send(
                tree,
                Some(view.messages[0].node.message.id),
                "Why?".into(),
                "Nobody".into(),
                events,
                cancel,
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert!(error.message.contains("no model profile named \"Nobody\""), "{}", error.message);
}

#[tokio::test]
async fn regenerating_and_editing_make_new_branches() {
    let server = Server::start(vec![says("Erosion."), says("Sediment."), says("Tectonics.")]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let first = ask(&pinloom, tree, None, "Why meanders?").await;
    let (events, _received, cancel) = listen();
    let again = pinloom
        .regenerate(first.reply.message.id, "Local".into(), events.clone(), cancel.clone())
        .await
        .unwrap();
    assert!(again.prompt.is_none());
    assert_eq!(again.reply.message.parent_id, first.reply.message.parent_id, "a sibling reply");
    assert_eq!(again.reply.message.text, "Sediment.");

    let prompt = first.prompt.unwrap().message.id;
    let edited = pinloom
        .edit_and_send(prompt, "Why do mountains rise?".into(), "Local".into(), events, cancel)
        .await
        .unwrap();
    let edit = edited.prompt.unwrap();
    assert_eq!(edit.edited_from, Some(prompt));
    assert_ne!(edit.message.id, prompt, "the original stays");
    let body = server.seen()[2].json();
    assert_eq!(messages(&body), [("user".to_owned(), "Why do mountains rise?".to_owned())]);

    let comparison = pinloom
        .compare(
            first.reply.message.id,
            again.reply.message.id,
            "Local".into(),
            pinloom_app::json::CompareReach::Picked,
        )
        .await
        .unwrap();
    assert_eq!(comparison.common_ancestor.map(|node| node.message.id), Some(prompt));
    assert_eq!(comparison.left.model.as_deref(), Some("Local"));
    assert_eq!(comparison.rows.len(), 1);
    let right = comparison.rows[0].right.as_ref().unwrap();
    assert_eq!(right.message.text, "Sediment.");
    let sides: Vec<&str> = comparison.rows[0].diff.iter().map(|span| span.side.as_str()).collect();
    assert_eq!(sides, ["left", "right"]);
    assert!(comparison.left.context_tokens > 0);
    assert_eq!(comparison.left.context_tokens, comparison.right.context_tokens);
}

#[tokio::test]
async fn a_buffer_is_continued_through_the_completion_endpoint() {
    let server =
        Server::start(vec![Answer::sse(&completion_stream(&[" slowly", " to the sea."]), 0)]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let (_, opening) = essay(&pinloom, "The river wound").await;
    let exchange = continue_locally(&pinloom, opening.id).await;
    assert_eq!(exchange.reply.message.text, " slowly to the sea.");
    let seen = server.seen();
    assert_eq!(seen[0].path, "/v1/completions");
    assert_eq!(seen[0].json()["prompt"], "The river wound");
    assert_eq!(seen[0].json()["max_tokens"], 1_024, "the model's reserve when no length is asked");

    // A loom's length: the continuation asks for at most that many tokens, and plans for it.
    let (events, _received, cancel) = listen();
    let target = SendTarget::Continue { node_id: exchange.reply.message.id, length: Some(48) };
    let short = pinloom.reply_to(target, "Local".into(), events, cancel).await;
    assert!(short.is_err(), "the scripted server has no second answer");
    assert_eq!(server.seen()[1].json()["max_tokens"], 48);
    let (events, _received, cancel) = listen();
    let target = SendTarget::Continue { node_id: opening.id, length: Some(0) };
    let refused = pinloom.reply_to(target, "Local".into(), events, cancel).await.unwrap_err();
    assert!(format!("{refused:#}").contains("at least 1"), "{refused:#}");
    assert_eq!(server.seen().len(), 2, "nothing was sent for a length of 0");

    let dialogue_tree = dialogue(&pinloom).await;
    let first = pinloom.append_message(dialogue_tree, None, "Hi".into()).await.unwrap();
    let (events, _received, cancel) = listen();
    let error = ApiError::from(
        pinloom.continue_buffer(first.id, "Local".into(), events, cancel).await.unwrap_err(),
    );
    assert!(error.message.contains("send a message instead"), "{}", error.message);
}

#[tokio::test]
async fn a_preview_sends_nothing_and_shows_what_a_small_window_cuts() {
    let server = Server::start(vec![]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    pinloom.save_model_profile(local_profile("Tiny", &server, 160, "o200k")).await.unwrap();
    let tree = dialogue(&pinloom).await;
    let mut parent = None;
    for turn in 0..12 {
        let text = format!("Message {turn}: the river carries silt past the bend and drops it.");
        parent = Some(pinloom.append_message(tree, parent, text).await.unwrap().id);
    }
    let last = parent.unwrap();
    let roomy = pinloom.preview(last, "Local".into(), None).await.unwrap();
    assert!(!roomy.truncated);
    // The prompt's words are found in the path's own messages, which the history carries
    // whole: those hits are listed, and left out as already there.
    for slice in &roomy.slices {
        let already_there =
            slice.kind == "searchResult" && slice.reason.as_deref() == Some("alreadyInHistory");
        assert!(slice.included || already_there, "{slice:?}");
    }
    let tight = pinloom.preview(last, "Tiny".into(), None).await.unwrap();
    assert!(tight.truncated);
    assert!(tight.used <= tight.available, "{} > {}", tight.used, tight.available);
    let cut: Vec<_> = tight.slices.iter().filter(|slice| !slice.included).collect();
    assert!(!cut.is_empty());
    assert!(cut.iter().all(|slice| slice.reason.is_some()), "every cut says why");
    assert!(tight.omitted_messages > 0);
    // 160 tokens is a small budget: the newest messages have it all, and the report says why.
    assert!(tight.small_budget.is_some() && tight.kept_start == 0);
    let report = pinloom.plan_text(last, Some("Tiny".into()), PlanFormat::Report).await.unwrap();
    assert!(report.contains("The budget is small ("), "{report}");
    assert!(!report.contains("A marker stands for"), "{report}");

    let draft = pinloom
        .preview(last, "Local".into(), Some("And where does the silt go?".into()))
        .await
        .unwrap();
    let prompt = draft.slices.iter().find(|slice| slice.kind == "prompt").unwrap();
    assert_eq!(prompt.source, "draft");
    assert_eq!(prompt.preview, "And where does the silt go?");
    assert!(draft.used > roomy.used);
    assert!(draft.request_body().contains("And where does the silt go?"));
    assert!(server.seen().is_empty(), "a preview sends nothing");

    // The draft was taken off the path again: the plain preview is unchanged.
    assert_eq!(pinloom.preview(last, "Local".into(), None).await.unwrap(), roomy);

    // A message the person keeps survives the small window.
    let dropped =
        tight.slices.iter().find(|slice| !slice.included && slice.source == "node").unwrap();
    let id = dropped.source_id.unwrap();
    assert!(pinloom.mark_node(id, pinloom_app::NodeAction::Keep).await.unwrap().kept);
    let kept = pinloom.preview(last, "Tiny".into(), None).await.unwrap();
    let slice = kept.slices.iter().find(|slice| slice.source_id == Some(id)).unwrap();
    assert!(slice.included, "kept: {slice:?}");
    assert!(kept.used <= kept.available);
}

#[tokio::test]
async fn a_long_thread_s_plan_folds_its_runs_and_lists_their_slices_on_demand() {
    let server = Server::start(vec![]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    pinloom.save_model_profile(local_profile("Tiny", &server, 300, "o200k")).await.unwrap();
    let tree = dialogue(&pinloom).await;
    let mut parent = None;
    for turn in 0..200 {
        let text = format!("Message {turn}: the river carries silt past the bend and drops it.");
        parent = Some(pinloom.append_message(tree, parent, text).await.unwrap().id);
    }
    let last = parent.unwrap();
    let view = pinloom.preview(last, "Tiny".into(), None).await.unwrap();

    // The lines tile the plan in order; the cut middle of the thread is one of them.
    let mut next = 0;
    for line in &view.slices {
        assert_eq!(line.first, next, "{line:?}");
        next += line.count;
    }
    assert!(view.slices.len() < 40, "{} lines for {next} slices", view.slices.len());
    let run = view.slices.iter().find(|line| line.count > 1).expect("a run is folded");
    assert!(run.count >= 12);
    assert!(!run.included);
    assert_eq!(run.reason.as_deref(), Some("truncated"));

    // Its slices, read when the run is opened, are the plan's own, one line each.
    let members = pinloom.preview_slices(last, "Tiny".into(), run.first, run.count).await.unwrap();
    assert_eq!(members.len(), run.count as usize);
    assert!(members.iter().all(|slice| slice.count == 1
        && slice.kind == run.kind
        && slice.reason == run.reason
        && slice.source == "node"));
    assert_eq!(members.iter().map(|slice| slice.tokens).sum::<u32>(), run.tokens);
    let places: Vec<u32> = members.iter().map(|slice| slice.first).collect();
    assert_eq!(places, (run.first..run.first + run.count).collect::<Vec<_>>());
    assert_eq!(members[0].source_id, run.source_id, "a run is named by its first slice");
    // Past the end, nothing.
    assert!(pinloom.preview_slices(last, "Tiny".into(), next, 10).await.unwrap().is_empty());
}

#[tokio::test]
async fn an_estimated_model_learns_its_characters_per_token_from_usage() {
    // 23 characters reported as 23 tokens: one character a token, far below the start of 3.5.
    let server = Server::start(vec![Answer::sse(&chat_stream(&["Yes."], 23), 0)]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    pinloom.save_model_profile(local_profile("Estimated", &server, 8_192, "other")).await.unwrap();
    let tree = dialogue(&pinloom).await;
    let (events, _received, cancel) = listen();
    let exchange = pinloom
        .send(tree, None, "Do rivers ever run dry?".into(), "Estimated".into(), events, cancel)
        .await
        .unwrap();
    assert_eq!(exchange.plan.tokenizer, "estimate at 3.500 chars/token");
    let after = pinloom.preview(exchange.reply.message.id, "Estimated".into(), None).await.unwrap();
    // A quarter of the way from 3.5 to 1.0.
    assert_eq!(after.tokenizer, "estimate at 2.875 chars/token");
}

#[tokio::test]
async fn messages_written_before_counting_are_counted_once_and_stored() {
    let server = Server::start(vec![says("Yes.")]).await;
    let (pinloom, dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    // Written the way an older Pinloom wrote: no counts.
    let older = {
        let store =
            pinloom_store::Store::open(&dir.path().join(pinloom_app::DATABASE_FILE_NAME)).unwrap();
        let node = pinloom_store::NewNode::text(
            pinloom_store::TreeId(tree),
            None,
            pinloom_store::Author::Human,
            "An old question about deltas.",
            1,
        );
        store.append_node(&node).unwrap().id.0
    };
    assert_eq!(stored_count(dir.path(), older, "o200k"), None);
    ask(&pinloom, tree, Some(older), "Still there?").await;
    let expected = pinloom_engine::tokens::Tokenizer::O200k.count("An old question about deltas.");
    assert_eq!(stored_count(dir.path(), older, "o200k"), Some(expected as i64));
}

#[tokio::test]
async fn ollama_models_are_offered_as_profiles_that_save_and_send() {
    let fixtures = std::path::Path::new(
        &std::env::var("CARGO_MANIFEST_DIR").expect("cargo runs tests with CARGO_MANIFEST_DIR set"),
    )
    .join("../pinloom-providers/tests/fixtures");
    let tags = std::fs::read_to_string(fixtures.join("ollama-tags-response.json")).unwrap();
    let show =
        std::fs::read_to_string(fixtures.join("ollama-show-response.converted.json")).unwrap();
    let small = r#"{"model_info":{"general.architecture":"llama","llama.context_length":8192},"template":"{{ .System }}{{ .Prompt }}","capabilities":["completion"]}"#;
    let reply = "{\"model\":\"llama3.2:latest\",\"message\":{\"role\":\"assistant\",\"content\":\"Hi.\"},\"done\":false}\n{\"model\":\"llama3.2:latest\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\",\"prompt_eval_count\":9,\"eval_count\":2}\n";
    let server = Server::start(vec![
        Answer::error(200, &tags),
        Answer::error(200, &show),
        Answer::error(200, small),
        Answer::ndjson(reply.as_bytes(), 0),
    ])
    .await;
    let (pinloom, dir) = pinloom_with(&server).await;
    let found = pinloom.discover_ollama_models(Some(server.base.clone())).await.unwrap();
    let names: Vec<&str> = found.iter().map(|profile| profile.name.as_str()).collect();
    assert_eq!(names, ["deepseek-r1:latest (Ollama)", "llama3.2:latest (Ollama)"]);
    let llama = found[1].clone();
    // Llama 3 is counted exactly by its own vocabulary, found by its name; the first model by
    // the `llama-bpe` pre-tokenizer its show answer names, whatever it is called.
    assert_eq!((llama.context_window, llama.tokenizer.as_str()), (8_192, "llama3"));
    assert_eq!(found[0].tokenizer, "llama3");
    assert!(
        pinloom.model_profiles().await.unwrap().iter().all(|p| p.provider != "ollama"),
        "nothing saved"
    );

    pinloom.save_model_profile(llama).await.unwrap();
    let tree = dialogue(&pinloom).await;
    let (events, _received, cancel) = listen();
    let exchange = pinloom
        .send(tree, None, "Hello?".into(), "llama3.2:latest (Ollama)".into(), events, cancel)
        .await
        .unwrap();
    assert_eq!(exchange.reply.message.text, "Hi.");
    let request = &server.seen()[3];
    assert_eq!(request.path, "/api/chat");
    assert_eq!(request.json()["options"]["num_ctx"], 8_192);
    // The plan counted with Llama 3's vocabulary, and the count it made is kept for next time.
    assert_eq!(exchange.plan.tokenizer, "Llama 3");
    let prompt = exchange.prompt.unwrap().message.id;
    let expected = pinloom_engine::tokens::Tokenizer::Llama3.count("Hello?");
    assert_eq!(stored_count(dir.path(), prompt, "llama3"), Some(expected as i64));
}

#[tokio::test]
async fn a_reply_cut_off_by_a_crash_comes_back_incomplete_with_what_had_arrived() {
    // The server sends the start of a reply, then nothing more: the app is killed meanwhile.
    let mut partial = String::new();
    for piece in ["Rivers meander ", "because the outer bank erodes"] {
        let json = serde_json::json!({
            "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "local",
            "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": null}]
        });
        partial.push_str(&format!("data: {json}\n\n"));
    }
    let server = Server::start(vec![Answer::sse(partial.as_bytes(), 0).then(Then::Hang)]).await;
    let (pinloom, dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let (events, mut received, cancel) = listen();
    let sending = {
        let pinloom = pinloom.clone();
        tokio::spawn(async move {
            pinloom.send(tree, None, "Why meanders?".into(), "Local".into(), events, cancel).await
        })
    };
    // Both pieces arrived, then a save came due.
    let whole = "Rivers meander because the outer bank erodes";
    let mut arrived = String::new();
    let mut saved_said = 0;
    while saved_said < whole.len() as u64 {
        let next = tokio::time::timeout(std::time::Duration::from_secs(20), received.recv());
        match next.await.expect("the reply streams and is saved within seconds") {
            Some(ReplyEvent::Text(piece)) => arrived.push_str(&piece),
            // The window is told what is safe, as it becomes so.
            Some(ReplyEvent::Saved { characters }) => saved_said = characters,
            _ => {}
        }
    }
    assert_eq!(arrived, whole);
    let database = dir.path().join(pinloom_app::DATABASE_FILE_NAME);
    let saved = || {
        let conn = rusqlite::Connection::open(&database).unwrap();
        conn.query_row("SELECT coalesce(max(length(text)), 0) FROM reply_drafts", [], |row| {
            row.get::<_, i64>(0)
        })
        .unwrap()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while saved() < arrived.len() as i64 {
        assert!(std::time::Instant::now() < deadline, "what arrived is saved within a second");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    // Another process opening the database meanwhile leaves the live reply alone.
    let other = pinloom_app::Pinloom::open(dir.path().to_owned()).await.unwrap();
    let view = other.thread_view(tree, None).await.unwrap();
    assert_eq!(view.messages.len(), 1, "only the question: the reply is still arriving");
    drop(other);

    // The process dies: nothing of the send's own clean-up runs.
    sending.abort();
    let _ = sending.await;
    drop(pinloom);
    // Time passes: the draft is no longer being kept alive.
    rusqlite::Connection::open(&database)
        .unwrap()
        .execute("UPDATE reply_drafts SET saved_at_ms = saved_at_ms - 60000", [])
        .unwrap();

    let reopened = pinloom_app::Pinloom::open(dir.path().to_owned()).await.unwrap();
    let view = reopened.thread_view(tree, None).await.unwrap();
    let texts: Vec<&str> = view.messages.iter().map(|m| m.node.message.text.as_str()).collect();
    assert_eq!(texts, ["Why meanders?", "Rivers meander because the outer bank erodes"]);
    let reply = &view.messages[1].node;
    assert!(reply.incomplete, "marked incomplete");
    assert_eq!(reply.model.as_deref(), Some("Local"));
    assert_eq!(saved(), 0, "the draft became the reply");
}

#[tokio::test]
async fn stop_also_stops_an_ancestor_summary_being_written() {
    // The question in a pin needs its parent thread's summary first; the summariser never
    // answers. Stop must end the wait, as it ends a reply.
    let server =
        Server::start(vec![says("Rivers bend at the outer bank."), Answer::silence()]).await;
    let (pinloom, _dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let answer = ask(&pinloom, tree, None, "Why do rivers bend?").await.reply.message.id;
    let pin = pinloom.pin_range(answer, 0, 6, "Rivers".into(), String::new()).await.unwrap();
    let (events, _received, _) = listen();
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        // Once the summary request has been sent.
        while server.seen().len() < 2 {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        stopper.cancel();
    });
    let sent =
        pinloom.send_in_pin(pin.id, None, "Why there?".into(), "Local".into(), events, cancel);
    // Without Stop reaching it, the summary would wait for the provider's 5-minute limit.
    let stopped = tokio::time::timeout(std::time::Duration::from_secs(60), sent)
        .await
        .expect("Stop ended the summary's wait");
    let error = ApiError::from(stopped.unwrap_err());
    assert_eq!(error.code, ErrorCode::Cancelled, "{}", error.message);
}

#[tokio::test]
async fn a_finished_reply_is_saved_even_when_another_process_holds_the_database_a_while() {
    let server = Server::start(vec![says("Rivers bend where the outer bank erodes.")]).await;
    let (pinloom, dir) = pinloom_with(&server).await;
    let tree = dialogue(&pinloom).await;
    let question = pinloom.append_message(tree, None, "Why do rivers bend?".into()).await.unwrap();
    // Another process takes the write lock and keeps it past the 5-second busy timeout.
    let database = dir.path().join(pinloom_app::DATABASE_FILE_NAME);
    let (locked, lock_taken) = std::sync::mpsc::channel();
    let holder = std::thread::spawn(move || {
        let conn = rusqlite::Connection::open(database).unwrap();
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        locked.send(()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(6_500));
        conn.execute_batch("COMMIT").unwrap();
    });
    lock_taken.recv().unwrap();
    let (events, _received, cancel) = listen();
    let exchange = pinloom.regenerate(question.id, "Local".into(), events, cancel).await.unwrap();
    assert_eq!(exchange.reply.message.text, "Rivers bend where the outer bank erodes.");
    assert!(!exchange.reply.incomplete);
    holder.join().unwrap();
    let view = pinloom.thread_view(tree, None).await.unwrap();
    assert_eq!(view.messages.len(), 2, "the reply is in the database");
}

#[tokio::test]
async fn a_first_start_says_which_models_can_answer_and_offers_the_local_servers_it_finds() {
    let models = r#"{"object":"list","data":[{"id":"qwen2.5-7b-instruct.gguf","object":"model","meta":{"n_ctx_train":32768}}]}"#;
    let props = r#"{"default_generation_settings":{"n_ctx":8192}}"#;
    // llama.cpp's server: looked at, then asked for its models and the window it runs with; at
    // the second look, only looked at.
    let llama = Server::start(vec![
        Answer::error(200, models),
        Answer::error(200, models),
        Answer::error(200, props),
        Answer::error(200, models),
    ])
    .await;
    // The saved local profile's server, looked at each time.
    let empty = r#"{"object":"list","data":[]}"#;
    let local = Server::start(vec![Answer::error(200, empty), Answer::error(200, empty)]).await;
    // An address nothing listens on.
    let nobody = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let connections = Connections {
        retry: pinloom_providers::retry::RetryPolicy::never(),
        local_servers: vec![
            pinloom_providers::Endpoint::at(ProviderId::LlamaCpp, &format!("{}/v1", llama.base)),
            pinloom_providers::Endpoint::at(ProviderId::Ollama, &format!("http://{nobody}")),
        ],
        ..Connections::default()
    };
    let pinloom = Pinloom::open_with(dir.path().to_owned(), connections).await.unwrap();
    pinloom.save_model_profile(local_profile("Local", &local, 8_192, "o200k")).await.unwrap();
    let mut gone = local_profile("Gone", &local, 8_192, "o200k");
    gone.base_url = Some(format!("http://{nobody}/v1"));
    pinloom.save_model_profile(gone).await.unwrap();

    let ready = pinloom.models_ready().await.unwrap();

    assert!(ready.ready.contains(&"Local".to_owned()), "its server answers: {ready:?}");
    let waiting = |name: &str| ready.waiting.iter().find(|model| model.profile == name);
    let gone = waiting("Gone").expect("its server does not answer");
    assert!(
        gone.reason.starts_with(&format!("nothing answers at http://{nobody}/v1")),
        "{}",
        gone.reason
    );
    // The catalog's cloud models answer only with a key: each is ready or says how to get one.
    for profile in pinloom.model_profiles().await.unwrap() {
        if ["Local", "Gone"].contains(&profile.name.as_str()) {
            continue;
        }
        let said = ready.ready.contains(&profile.name)
            || waiting(&profile.name).is_some_and(|model| model.reason.starts_with("no key"));
        assert!(said, "{} is neither ready nor waiting for a key: {ready:?}", profile.name);
    }
    let [found] = &ready.found[..] else { panic!("one model found: {ready:?}") };
    assert_eq!(found.server, format!("llama.cpp server at {}/v1", llama.base));
    assert_eq!(found.profile.name, "qwen2.5-7b-instruct.gguf (llama.cpp server)");
    assert_eq!(found.profile.provider, "llamacpp");
    assert_eq!(found.profile.context_window, 8_192, "the window the server runs with");
    assert_eq!(found.profile.base_url, Some(format!("{}/v1", llama.base)));
    let paths: Vec<String> = llama.seen().iter().map(|seen| seen.path.clone()).collect();
    assert_eq!(paths, ["/v1/models", "/v1/models", "/props"]);

    // Once saved, it is no longer offered, and it can answer.
    pinloom.save_model_profile(found.profile.clone()).await.unwrap();
    let again = pinloom.models_ready().await.unwrap();
    assert!(again.found.is_empty(), "{again:?}");
    assert!(again.ready.contains(&found.profile.name), "{again:?}");
}
