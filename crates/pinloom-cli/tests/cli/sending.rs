//! `pinloom ask`, `pin`, `regenerate` and `continue`: the built binary sending through the
//! conversation loop to a scripted OpenAI-compatible server on 127.0.0.1, the reply streamed to
//! standard output and saved in a real database file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pinloom_app::Pinloom;
use pinloom_app::json::{ModelProfile, TreeMode};
use pinloom_test_server::{Answer, Server, Then, chat_stream};

use crate::interrupt::interrupt_when;

fn says(pieces: &[&str]) -> Answer {
    Answer::sse(&chat_stream(pieces, 31), 0)
}

/// A database with one local profile, `Local`, at `server`.
async fn database(dir: &Path, server: &Server) -> PathBuf {
    let pinloom = Pinloom::open(dir.to_owned()).await.unwrap();
    let mut profile = ModelProfile::new("Local", "vllm", "local-model", 8_192, 1_024, "o200k");
    profile.base_url = Some(format!("{}/v1", server.base));
    profile.completion_endpoint = true;
    pinloom.save_model_profile(profile).await.unwrap();
    dir.join(pinloom_app::DATABASE_FILE_NAME)
}

/// Runs `pinloom --db DB ARGS` with `stdin` as its standard input, off the runtime's threads (the
/// scripted server answers on them): standard output, standard error, exit status. No local
/// server of this machine's is looked for, and no key of the person's is seen.
pub(crate) async fn pinloom(
    db: &Path,
    args: &[&str],
    stdin: Option<&str>,
) -> (String, String, i32) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pinloom"));
    command.arg("--db").arg(db).args(args).env_remove("PINLOOM_PROFILE");
    command.env("PINLOOM_LOCAL_SERVERS", "vllm=http://127.0.0.1:9/v1");
    for variable in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"] {
        command.env_remove(variable);
    }
    command.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let stdin = stdin.map(str::to_owned);
    tokio::task::spawn_blocking(move || {
        let mut child = command.spawn().unwrap();
        if let Some(text) = stdin {
            child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
        }
        let output = child.wait_with_output().unwrap();
        (
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
            output.status.code().unwrap_or(-1),
        )
    })
    .await
    .unwrap()
}

/// The texts of the messages the server was sent in its `request`th request.
fn sent_texts(server: &Server, request: usize) -> Vec<String> {
    let body = server.seen()[request].json();
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn ask_streams_the_reply_and_saves_both_messages_in_a_new_tree() {
    let server = Server::start(vec![says(&["Meanders ", "grow ", "outward."])]).await;
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &server).await;

    let (out, err, code) = pinloom(&db, &["ask", "Why do rivers meander?"], None).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "Meanders grow outward.\n");
    assert_eq!(sent_texts(&server, 0).last().unwrap(), "Why do rivers meander?");

    let pinloom_app = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let trees = pinloom_app.list_trees().await.unwrap();
    assert_eq!(trees.len(), 1);
    assert_eq!(trees[0].title, "Why do rivers meander?");
    let view = pinloom_app.thread_view(trees[0].id, None).await.unwrap();
    let texts: Vec<_> =
        view.messages.iter().map(|message| message.node.message.text.as_str()).collect();
    assert_eq!(texts, ["Why do rivers meander?", "Meanders grow outward."]);
    let reply = &view.messages[1].node;
    assert_eq!(reply.model.as_deref(), Some("Local"));
    let receipt = pinloom_app.receipt(reply.message.id).await.unwrap().unwrap();
    assert_eq!(receipt.counted, Some(31), "the provider's own count is on the receipt");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thread_is_continued_by_message_by_tree_or_as_the_latest_and_questions_come_piped() {
    let server = Server::start(vec![
        says(&["First."]),
        says(&["Second."]),
        says(&["Third."]),
        says(&["Fourth."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &server).await;

    let (_, err, code) = pinloom(&db, &["ask", "One?"], None).await;
    assert_eq!(code, 0, "{err}");
    let (_, err, code) = pinloom(&db, &["ask", "--node", "2", "Two?"], None).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(sent_texts(&server, 1), ["One?", "First.", "Two?"]);

    // The question from standard input, whole.
    let (out, err, code) = pinloom(&db, &["ask", "--tree", "1", "-"], Some("Three?\n")).await;
    assert_eq!((out.as_str(), code), ("Third.\n", 0), "{err}");
    assert_eq!(sent_texts(&server, 2), ["One?", "First.", "Two?", "Second.", "Three?\n"]);

    // A question with a file piped in beside it, continuing the latest conversation.
    let (_, err, code) =
        pinloom(&db, &["ask", "-c", "Sum this up:"], Some("notes\nmore notes\n")).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(sent_texts(&server, 3).last().unwrap(), "Sum this up:\n\nnotes\nmore notes");
    assert_eq!(sent_texts(&server, 3).len(), 7, "the whole thread went with it");
}

#[tokio::test(flavor = "multi_thread")]
async fn json_lines_give_the_pieces_then_the_reply_with_its_receipt() {
    let server = Server::start(vec![says(&["Oxbow ", "lakes."])]).await;
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &server).await;

    let (out, err, code) = pinloom(&db, &["ask", "--json", "And oxbows?"], None).await;
    assert_eq!(code, 0, "{err}");
    let lines: Vec<serde_json::Value> =
        out.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let texts: Vec<&str> = lines
        .iter()
        .filter(|line| line["event"] == "text")
        .map(|line| line["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["Oxbow ", "lakes."]);
    let last = lines.last().unwrap();
    assert_eq!(last["event"], "reply");
    assert_eq!(last["id"], 2);
    assert_eq!(last["promptId"], 1);
    assert_eq!(last["treeId"], 1);
    assert_eq!(last["incomplete"], false);
    assert_eq!(last["receipt"]["counted"], 31);
    assert_eq!(last["receipt"]["profile"], "Local");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pin_on_a_passage_asks_with_the_anchor_and_without_its_siblings() {
    let server = Server::start(vec![
        says(&["Because the outer bank erodes and the inner bank fills."]),
        // The main thread's summary, written before the first send in a pin needs it.
        says(&["Meanders: the outer bank erodes."]),
        says(&["Inner banks collect sand."]),
        says(&["The water is fastest outside."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &server).await;
    let (_, err, code) = pinloom(&db, &["ask", "Why do rivers meander?"], None).await;
    assert_eq!(code, 0, "{err}");

    let sibling = ["pin", "--node", "2", "--passage", "inner bank fills", "What fills it?"];
    let (out, err, code) = pinloom(&db, &sibling, None).await;
    assert_eq!((out.as_str(), code), ("Inner banks collect sand.\n", 0), "{err}");
    let pin = ["pin", "--node", "2", "--passage", "outer bank erodes", "Why the outer bank?"];
    let (_, err, code) = pinloom(&db, &pin, None).await;
    assert_eq!(code, 0, "{err}");
    let request = server.seen()[3].body.clone();
    assert!(request.contains("outer bank erodes"), "the anchor went: {request}");
    assert!(request.contains("Meanders: the outer bank erodes."), "the summary went: {request}");
    assert!(request.contains("Why the outer bank?"));
    assert!(!request.contains("What fills it?"), "a sibling pin stays out: {request}");
    assert!(!request.contains("collect sand"), "a sibling pin's reply stays out: {request}");

    let (_, err, code) =
        pinloom(&db, &["pin", "--node", "2", "--passage", "not in it", "Huh?"], None).await;
    assert_eq!(code, 2);
    assert!(err.contains("does not read \"not in it\""), "{err}");
    assert_eq!(err.lines().count(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn regenerate_answers_again_and_continue_extends_a_document() {
    let completion = "data: {\"choices\":[{\"index\":0,\"text\":\" and on.\",\"finish_reason\":null}]}\n\ndata: {\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    let server = Server::start(vec![
        says(&["One answer."]),
        says(&["Another answer."]),
        Answer::sse(completion.as_bytes(), 0),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &server).await;
    let (_, err, code) = pinloom(&db, &["ask", "Say something."], None).await;
    assert_eq!(code, 0, "{err}");
    let (out, err, code) = pinloom(&db, &["regenerate", "--node", "2"], None).await;
    assert_eq!((out.as_str(), code), ("Another answer.\n", 0), "{err}");
    assert_eq!(sent_texts(&server, 1), ["Say something."], "the same prompt answered again");

    let pinloom_app = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let document = pinloom_app.create_tree("Story".into(), TreeMode::Buffer).await.unwrap();
    let start = pinloom_app.append_message(document.id, None, "It went on".into()).await.unwrap();
    drop(pinloom_app);
    let (out, err, code) = pinloom(&db, &["continue", "--node", &start.id.to_string()], None).await;
    assert_eq!((out.as_str(), code), (" and on.\n", 0), "{err}");
    assert_eq!(server.seen()[2].json()["prompt"], "It went on");

    let (_, err, code) = pinloom(&db, &["continue", "--node", "2"], None).await;
    assert_eq!(code, 2, "a dialogue is not continued as a document");
    assert!(err.contains("send a message instead"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_provider_failure_exits_1_and_a_usage_error_2_each_in_one_line() {
    let refusal =
        r#"{"error":{"message":"This model does not exist.","type":"invalid_request_error"}}"#;
    let server = Server::start(vec![Answer::error(404, refusal)]).await;
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &server).await;

    let (out, err, code) = pinloom(&db, &["ask", "Anyone there?"], None).await;
    assert_eq!(code, 1, "{err}");
    assert_eq!(out, "");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("pinloom: "), "{err}");

    let (_, err, code) = pinloom(&db, &["ask", "--node", "999", "Where?"], None).await;
    assert_eq!(code, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    let (_, err, code) = pinloom(&db, &["ask", "--profile", "Nobody", "Who?"], None).await;
    assert_eq!(code, 2);
    assert!(err.contains("Nobody"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_stops_the_reply_and_keeps_what_arrived_marked_incomplete() {
    // The role frame and the first piece, then nothing more until the client goes.
    let first = chat_stream(&["Half a thought"], 12);
    let text = String::from_utf8(first).unwrap();
    let piece = text.find("Half a thought").unwrap();
    let cut = piece + text[piece..].find("\n\n").unwrap() + 2;
    let first = text.into_bytes();
    let server = Server::start(vec![Answer::sse(&first[..cut], 0).then(Then::Hang)]).await;
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &server).await;

    let mut command = Command::new(env!("CARGO_BIN_EXE_pinloom"));
    command.arg("--db").arg(&db).args(["ask", "Think aloud."]);
    command.env_remove("PINLOOM_PROFILE").stdin(Stdio::null());
    // The first piece on the terminal, whatever the machine's speed, then Ctrl+C.
    let (out, code) = interrupt_when(command, |seen| seen.contains("Half a thought")).await;
    assert_eq!(code, 130);
    assert_eq!(out, "Half a thought\n");

    let pinloom_app = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let tree = pinloom_app.list_trees().await.unwrap()[0].id;
    let view = pinloom_app.thread_view(tree, None).await.unwrap();
    let reply = &view.messages[1].node;
    assert_eq!(reply.message.text, "Half a thought");
    assert!(reply.incomplete, "kept, marked incomplete");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_profile_named_the_first_that_can_be_sent_to_answers() {
    let server = Server::start(vec![says(&["From the local server."])]).await;
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &server).await;
    // First by name, but its key is set nowhere this test can see.
    let pinloom_app = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let cloud =
        ModelProfile::new("A cloud model", "anthropic", "claude-x", 200_000, 8_192, "claude");
    pinloom_app.save_model_profile(cloud).await.unwrap();
    drop(pinloom_app);

    let output = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_pinloom"))
            .arg("--db")
            .arg(&db)
            .args(["ask", "Who answers?"])
            .env_remove("PINLOOM_PROFILE")
            .env_remove("ANTHROPIC_API_KEY")
            .env("PINLOOM_KEYRING", "kernel")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "From the local server.\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_excluded_message_reaches_no_later_request_through_a_summary_or_the_title() {
    let server = Server::start(vec![
        says(&["Noted."]),
        says(&["Rivers meander by erosion."]),
        // The root's summary for the pin, carrying the code as a summariser that echoes would.
        says(&["The code is PURPLE-42; rivers meander by erosion."]),
        says(&["Because the bank erodes."]),
        // Written again once the code's message is excluded.
        says(&["Rivers meander by erosion."]),
        says(&["The outer bank is fastest."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &server).await;
    let secret = "The secret code is PURPLE-42. Remember it.";
    let (_, err, code) = pinloom(&db, &["ask", secret], None).await;
    assert_eq!(code, 0, "{err}");
    let (_, err, code) = pinloom(&db, &["ask", "-c", "Why do rivers meander?"], None).await;
    assert_eq!(code, 0, "{err}");
    let pin = ["pin", "--node", "4", "--passage", "erosion", "Why?"];
    let (_, err, code) = pinloom(&db, &pin, None).await;
    assert_eq!(code, 0, "{err}");
    assert!(server.seen()[3].body.contains("PURPLE-42"), "the summary carried it, as written");

    let (_, err, code) = pinloom(&db, &["exclude", "1"], None).await;
    assert_eq!(code, 0, "{err}");
    let (_, err, code) = pinloom(&db, &["ask", "--node", "6", "Which bank?"], None).await;
    assert_eq!(code, 0, "{err}");
    let seen = server.seen();
    assert_eq!(seen.len(), 6, "the summary was written again, then the question sent");
    for request in &seen[4..] {
        assert!(!request.body.contains("PURPLE"), "{}", request.body);
        assert!(!request.body.contains("secret code"), "not even in the title: {}", request.body);
    }
    assert!(seen[5].body.contains("Which bank?"));
    assert!(seen[5].body.contains("the main thread"), "the tree named otherwise: {}", seen[5].body);

    // Both summary requests were made on Pinloom's own: each is listed, with what it was for.
    let (list, err, code) = pinloom(&db, &["requests"], None).await;
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 2, "{list}");
    for line in &lines {
        assert!(line.contains("summary of the main thread up to #4 by Local"), "{list}");
        assert!(line.contains("tokens planned"), "{list}");
    }
    let (json, _, _) = pinloom(&db, &["requests", "--tree", "1", "--json"], None).await;
    let listed: serde_json::Value = serde_json::from_str(&json).unwrap();
    let body = |at: usize| listed[at]["body"].as_str().unwrap().to_owned();
    assert!(body(1).contains("PURPLE-42"), "the first read the message, as it was sent then");
    assert!(!body(0).contains("PURPLE"), "the one written again did not");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_trees_summaries_and_truncation_step_are_set_from_the_terminal() {
    let server = Server::start(vec![
        says(&["Rivers meander by erosion."]),
        // The pin's question: no summary is asked for first, summaries being off.
        says(&["Because the bank erodes."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &server).await;
    let (_, err, code) = pinloom(&db, &["ask", "Why do rivers meander?"], None).await;
    assert_eq!(code, 0, "{err}");

    let (shown, err, code) = pinloom(&db, &["settings", "--tree", "1"], None).await;
    assert_eq!(code, 0, "{err}");
    assert!(shown.contains("summaries: written as a pin opens (when-pinned)"), "{shown}");
    assert!(shown.contains("cut in steps of: the model's"), "{shown}");

    let set = ["settings", "--tree", "1", "--summaries", "never", "--step", "0"];
    let (shown, err, code) = pinloom(&db, &set, None).await;
    assert_eq!(code, 0, "{err}");
    assert!(shown.contains("summaries: never written"), "{shown}");
    assert!(shown.contains("cut in steps of: 0 % of the history's room"), "{shown}");

    let pin = ["pin", "--node", "2", "--passage", "erosion", "Why?"];
    let (_, err, code) = pinloom(&db, &pin, None).await;
    assert_eq!(code, 0, "{err}");
    let seen = server.seen();
    assert_eq!(seen.len(), 2, "no summary was asked for");
    assert!(seen[1].body.contains("summaries are turned off"), "{}", seen[1].body);
    let (list, _, _) = pinloom(&db, &["requests"], None).await;
    assert_eq!(list.trim(), "Pinloom has made no request on its own here yet.");

    // Bad input says what to give, and changes nothing.
    for bad in [["--step", "250"], ["--step", "lots"]] {
        let args = ["settings", "--tree", "1", bad[0], bad[1]];
        let (_, err, code) = pinloom(&db, &args, None).await;
        assert_ne!(code, 0);
        assert!(err.contains("0") && err.contains("100"), "{err}");
    }
    let (shown, _, _) = pinloom(&db, &["settings", "--tree", "1", "--step", "model"], None).await;
    assert!(shown.contains("summaries: never written"), "unchanged by the refusals: {shown}");
    assert!(shown.contains("cut in steps of: the model's"), "{shown}");

    // Seed 001's task frames and its "excluding ids", shown in the report.
    let frames = ["settings", "--tree", "1", "--task-frames", "on", "--never-recall", "1,#2"];
    let (shown, err, code) = pinloom(&db, &frames, None).await;
    assert_eq!(code, 0, "{err}");
    assert!(shown.contains("task frames: on: goal 5 %, path summaries 15 %"), "{shown}");
    assert!(shown.contains("never recalled by search: #1, #2"), "{shown}");
    let report = ["context", "--node", "4", "--format", "report"];
    let (text, err, code) = pinloom(&db, &report, None).await;
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("Assembled as task frames (the tree's settings)"), "{text}");
    assert!(text.contains("its first message, the goal"), "the root stands as its goal: {text}");
    let (_, err, code) =
        pinloom(&db, &["settings", "--tree", "1", "--never-recall", "twelve"], None).await;
    assert_ne!(code, 0);
    assert!(err.contains("message numbers"), "{err}");
    let off = ["settings", "--tree", "1", "--task-frames", "off", "--never-recall", "none"];
    let (shown, _, _) = pinloom(&db, &off, None).await;
    assert!(shown.contains("task frames: off") && shown.contains("search: none"), "{shown}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thread_is_compacted_and_uncompacted_from_the_terminal() {
    let server = Server::start(vec![
        says(&["Erosion."]),
        says(&["Deposition."]),
        says(&["Oxbows."]),
        says(&["They asked about erosion and deposition in meanders."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &server).await;
    for question in ["Why do rivers meander?", "What happens inside the bend?", "And later?"] {
        let continued = if question.starts_with("Why") { vec!["ask"] } else { vec!["ask", "-c"] };
        let args: Vec<&str> = continued.into_iter().chain([question]).collect();
        let (_, err, code) = pinloom(&db, &args, None).await;
        assert_eq!(code, 0, "{err}");
    }
    let too_many = ["compact", "--tree", "1", "--thread", "main", "--keep", "3"];
    let (_, err, code) = pinloom(&db, &too_many, None).await;
    assert_ne!(code, 0);
    assert!(err.contains("a compaction needs at least 2"), "{err}");

    let compact = ["compact", "--tree", "1", "--thread", "main", "--keep", "1"];
    let (said, err, code) = pinloom(&db, &compact, None).await;
    assert_eq!(code, 0, "{err}");
    assert!(said.starts_with("Compaction 1: messages #1–#4 (4) compacted into"), "{said}");
    assert!(said.contains("`pinloom uncompact 1` undoes it"), "{said}");
    let report = ["context", "--node", "6", "--format", "report"];
    let (text, _, _) = pinloom(&db, &report, None).await;
    assert!(text.contains("Messages #1–#4 (4) are compacted into"), "{text}");
    let (request, _, _) =
        pinloom(&db, &["context", "--node", "6", "--format", "request"], None).await;
    assert!(request.contains("erosion and deposition in meanders"), "{request}");
    assert!(!request.contains("What happens inside the bend?"), "{request}");

    let (said, err, code) = pinloom(&db, &["uncompact", "1"], None).await;
    assert_eq!(code, 0, "{err}");
    assert!(said.contains("Compaction 1 undone"), "{said}");
    let (_, err, code) = pinloom(&db, &["uncompact", "1"], None).await;
    assert_ne!(code, 0);
    assert!(err.contains("is not in effect"), "{err}");
    let (request, _, _) =
        pinloom(&db, &["context", "--node", "6", "--format", "request"], None).await;
    assert!(request.contains("What happens inside the bend?"), "{request}");
}

/// A first question of about 100 tokens (past 1 % of the model's budget), then a second, both
/// answered: the start of a thread worth compacting. What each ask printed.
async fn two_turns(db: &Path) -> Vec<String> {
    let first =
        format!("Why do rivers meander? {}", "Say what the banks and bends do. ".repeat(12));
    let mut said = Vec::new();
    for args in [vec!["ask", first.as_str()], vec!["ask", "-c", "What happens inside the bend?"]] {
        let (shown, err, code) = pinloom(db, &args, None).await;
        assert_eq!(code, 0, "{err}");
        said.push(shown);
    }
    said
}

/// Tree 1 set to compact on its own whenever its history fills 1 % of the budget (any history
/// does), keeping the last turn: what `pinloom settings` then shows.
async fn compacting_on_its_own(db: &Path) -> String {
    let auto = [
        "settings",
        "--tree",
        "1",
        "--compaction",
        "auto",
        "--compact-at",
        "1",
        "--compact-keep",
        "1",
    ];
    let (shown, err, code) = pinloom(db, &auto, None).await;
    assert_eq!(code, 0, "{err}");
    shown
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tree_set_to_compact_on_its_own_compacts_before_the_send_and_lists_the_request() {
    let server = Server::start(vec![
        says(&["Erosion."]),
        says(&["Deposition."]),
        says(&["They asked about erosion and deposition; the code is OXBOW-9."]),
        says(&["Oxbow lakes."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &server).await;
    let said = two_turns(&db).await;
    assert!(said[0].contains("Erosion."), "{said:?}");
    let (shown, _, _) = pinloom(&db, &["settings", "--tree", "1"], None).await;
    assert!(shown.contains("compaction: ask: a send whose history is cut offers it"), "{shown}");

    let shown = compacting_on_its_own(&db).await;
    assert!(
        shown.contains("compaction: auto: before a send whose history is cut or fills 1 % of the budget, keeping the last turn"),
        "{shown}"
    );
    let (said, err, code) = pinloom(&db, &["ask", "-c", "And later?"], None).await;
    assert_eq!(code, 0, "{err}");
    assert!(said.contains("Oxbow lakes."), "{said}");
    let seen = server.seen();
    assert!(seen[2].body.contains("Why do rivers meander?"), "the summariser read the start");
    assert!(seen[3].body.contains("OXBOW-9"), "the reply's request carries the summary");
    // Not as a message of the history (the search may still recall a detail of it).
    assert!(!seen[3].body.contains(r#""content":"Why do rivers"#), "{}", seen[3].body);
    assert!(seen[3].body.contains("What happens inside the bend?"), "the last turn is kept");
    assert!(seen[3].body.contains("Deposition."), "{}", seen[3].body);
    let (listed, _, _) = pinloom(&db, &["requests", "--tree", "1"], None).await;
    assert!(listed.contains("compaction of the main thread up to #2"), "{listed}");
    // And what the tree cost in all: no model here has a price.
    assert!(
        listed.trim_end().ends_with(
            "This tree cost $0.0000 in all: 3 replies (no price set), 1 request (no price set) \
             made on their own."
        ),
        "{listed}"
    );

    let daily = ["settings", "--tree", "1", "--daily-tokens", "5000"];
    let (shown, err, code) = pinloom(&db, &daily, None).await;
    assert_eq!(code, 0, "{err}");
    assert!(shown.contains("limit on requests made on their own: 5000 tokens a day"), "{shown}");
    let (shown, _, _) =
        pinloom(&db, &["settings", "--tree", "1", "--daily-tokens", "none"], None).await;
    assert!(shown.contains("limit on requests made on their own: none"), "{shown}");
    for bad in [
        ["--compact-at", "0"],
        ["--compact-at", "most"],
        ["--compact-keep", "0"],
        ["--daily-tokens", "0"],
        ["--daily-tokens", "lots"],
    ] {
        let args = ["settings", "--tree", "1", bad[0], bad[1]];
        let (_, err, code) = pinloom(&db, &args, None).await;
        assert_ne!(code, 0, "{bad:?}");
        assert!(
            err.contains(bad[0]) || err.contains("1 to") || err.contains("writes nothing"),
            "{err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_summarisers_words_reach_the_terminal_without_its_control_characters() {
    // A hostile or broken server's error, with a clear-screen and a title-setting sequence.
    let hostile = r#"{"error":{"message":"\u001b[2J\u001b]0;owned\u0007the summariser is down"}}"#;
    let server = Server::start(vec![
        says(&["Erosion."]),
        says(&["Deposition."]),
        // A 400 is not tried again (a 500 would be, and take the reply's answer).
        Answer::error(400, hostile),
        says(&["Oxbows."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &server).await;
    two_turns(&db).await;
    compacting_on_its_own(&db).await;
    let (said, err, code) = pinloom(&db, &["ask", "-c", "And then?"], None).await;
    assert_eq!(code, 0, "the send goes on without the compaction: {err}");
    assert!(said.contains("Oxbows."), "{said}");
    let (listed, err, _) = pinloom(&db, &["requests", "--tree", "1"], None).await;
    assert!(listed.contains("the summariser is down"), "{listed}");
    for output in [&listed, &err, &said] {
        assert!(!output.contains('\u{1b}') && !output.contains('\u{7}'), "{output:?}");
    }
}
