//! The `pinloom` binary against llama.cpp's own server (llama-cpp-python's), started on 127.0.0.1
//! with a tiny random-weight model written at test time: chat through the OpenAI-compatible
//! adapter, a document continued through the completion endpoint, Ctrl+C mid-reply, a request
//! longer than the server's context, and what the server reports (and does not) about a request.
//!
//! Ignored in a plain `cargo test`: the server is built by `./dev setup` (it compiles llama.cpp),
//! and `./dev test llama` runs these with `--ignored`.

#![allow(clippy::unwrap_used)]

#[path = "support/interrupt.rs"]
mod interrupt;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use pinloom_app::Pinloom;
use pinloom_app::json::{ModelProfile, TreeMode};
use pinloom_test_server::llama::{LlamaServer, Vocabulary, write_model};

use interrupt::interrupt_when;

/// The tiny model with the small vocabulary, written once for all the tests of this binary.
fn model() -> &'static Path {
    static MODEL: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = MODEL.get_or_init(|| {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("tiny.gguf");
        write_model(&path, Vocabulary::Small, None);
        (folder, path)
    });
    path
}

/// A database whose only local profile, `Llama`, is the server's model with a window of `window`
/// tokens and `reply` of them kept for the reply (the request's `max_tokens`).
async fn database(dir: &Path, server: &LlamaServer, window: i64, reply: i64) -> PathBuf {
    let pinloom = Pinloom::open(dir.to_owned()).await.unwrap();
    let mut profile = ModelProfile::new("Llama", "llamacpp", "tiny", window, reply, "other");
    profile.base_url = Some(format!("{}/v1", server.base));
    profile.completion_endpoint = true;
    pinloom.save_model_profile(profile).await.unwrap();
    dir.join(pinloom_app::DATABASE_FILE_NAME)
}

fn pinloom_command(db: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pinloom"));
    command.arg("--db").arg(db).args(args);
    command.env_remove("PINLOOM_PROFILE").stdin(Stdio::null());
    command
}

/// Runs `pinloom --db DB ARGS` to its end, off the runtime's threads: standard output, standard
/// error, exit status.
async fn pinloom(db: &Path, args: &[&str]) -> (String, String, i32) {
    finished(pinloom_command(db, args)).await
}

/// Runs `command` to its end, off the runtime's threads.
async fn finished(mut command: Command) -> (String, String, i32) {
    tokio::task::spawn_blocking(move || {
        let output = command.output().unwrap();
        (
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
            output.status.code().unwrap_or(-1),
        )
    })
    .await
    .unwrap()
}

fn json_lines(out: &str) -> Vec<serde_json::Value> {
    out.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs llama.cpp's server: ./dev test llama"]
async fn ask_streams_a_reply_from_the_server_and_saves_it_with_its_receipt() {
    let server = LlamaServer::start(model(), 2048);
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &server, 2048, 24).await;

    let (out, err, code) = pinloom(&db, &["ask", "--json", "Why do rivers meander?"]).await;
    assert_eq!(code, 0, "{err}\n{}", server.log());
    let lines = json_lines(&out);
    let pieces: Vec<&str> = lines
        .iter()
        .filter(|line| line["event"] == "text")
        .map(|line| line["text"].as_str().unwrap())
        .collect();
    // The server sends a frame a token (some empty, where a token is part of a character), and
    // the reply is as long as the request allows.
    assert!(pieces.len() > 5, "streamed in pieces: {pieces:?}");
    let reply = lines.last().unwrap();
    assert_eq!(reply["event"], "reply");
    assert_eq!(reply["incomplete"], false, "finished by its length limit: {reply}");
    let receipt = &reply["receipt"];
    assert_eq!(receipt["provider"], "llamacpp");
    assert_eq!(receipt["output"], serde_json::Value::Null);

    let pinloom_app = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let tree = pinloom_app.list_trees().await.unwrap()[0].id;
    let view = pinloom_app.thread_view(tree, None).await.unwrap();
    let saved = &view.messages[1].node;
    assert_eq!(saved.message.text, pieces.concat(), "what streamed is what was saved");
    assert_eq!(saved.model.as_deref(), Some("Llama"));
}

/// llama-cpp-python's server reports usage only in a reply that is not streamed: its streams
/// carry none, with or without `stream_options.include_usage`, and no response of it says how
/// much of the prompt came from its cache. Pinloom streams, so its receipt says the count was not
/// reported rather than showing a number the server never gave; the same request, not streamed,
/// is counted by the server.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs llama.cpp's server: ./dev test llama"]
async fn the_receipt_holds_what_the_server_reports_for_the_request_and_nothing_it_does_not() {
    let server = LlamaServer::start(model(), 2048);
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &server, 2048, 16).await;

    let (out, err, code) = pinloom(&db, &["ask", "--json", "Why do rivers meander?"]).await;
    assert_eq!(code, 0, "{err}");
    let first = json_lines(&out).pop().unwrap();
    // The same prefix again, a turn later: the server reuses what it evaluated (its log says so)
    // but its response does not.
    let (out, err, code) = pinloom(&db, &["ask", "--json", "--node", "2", "And oxbows?"]).await;
    assert_eq!(code, 0, "{err}");
    let second = json_lines(&out).pop().unwrap();
    for reply in [&first, &second] {
        let receipt = &reply["receipt"];
        assert_eq!(receipt["verdict"], "notReported", "{receipt}");
        assert_eq!(receipt["counted"], serde_json::Value::Null, "{receipt}");
        assert_eq!(receipt["cacheRead"], serde_json::Value::Null, "{receipt}");
        assert!(receipt["planned"].as_u64().unwrap() > 0, "Pinloom's own count: {receipt}");
    }

    // The request exactly as Pinloom sent it, sent again without streaming: now the server
    // counts it.
    let (request, err, code) =
        pinloom(&db, &["context", "--node", "3", "--profile", "Llama", "--format", "request"])
            .await;
    assert_eq!(code, 0, "{err}");
    let mut body: serde_json::Value = serde_json::from_str(&request).unwrap();
    assert_eq!(body["stream"], true, "Pinloom streams: {body}");
    body["stream"] = false.into();
    let (status, answer) = server.post("/v1/chat/completions", &body);
    assert_eq!(status, 200, "{answer}");
    let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
    let counted = answer["usage"]["prompt_tokens"].as_u64().unwrap();
    // The small vocabulary is about a token a byte, and the template adds its markers.
    let sent: usize = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["content"].as_str().unwrap().len())
        .sum();
    assert!(counted as usize > sent / 2, "{counted} tokens for {sent} bytes: {answer}");
    assert!(answer["usage"].get("prompt_tokens_details").is_none(), "{answer}");
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs llama.cpp's server: ./dev test llama"]
async fn ctrl_c_stops_the_reply_mid_stream_and_keeps_what_arrived_marked_incomplete() {
    // Room for a reply far longer than the test waits for.
    let server = LlamaServer::start(model(), 65_536);
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &server, 65_536, 60_000).await;

    // A few pieces, whatever the machine's speed, then Ctrl+C.
    let (out, code) =
        interrupt_when(pinloom_command(&db, &["ask", "--json", "Think aloud."]), |seen| {
            seen.matches("\"event\":\"text\"").count() >= 5
        })
        .await;
    assert_eq!(code, 130, "{out}");
    let lines = json_lines(&out);
    let streamed: String = lines
        .iter()
        .filter(|line| line["event"] == "text")
        .map(|line| line["text"].as_str().unwrap())
        .collect();
    let reply = lines.last().unwrap();
    assert_eq!(reply["event"], "reply", "{out}");
    assert_eq!(reply["incomplete"], true);

    let pinloom_app = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let tree = pinloom_app.list_trees().await.unwrap()[0].id;
    let view = pinloom_app.thread_view(tree, None).await.unwrap();
    let saved = &view.messages[1].node;
    assert!(saved.incomplete, "kept, marked incomplete");
    assert_eq!(saved.message.text, streamed, "everything that arrived is kept");
    // Stopped long before the 60,000 tokens the request allowed.
    assert!(saved.message.text.chars().count() < 20_000);
    // The server is free again for the next request.
    let (status, _) = server.post(
        "/v1/completions",
        &serde_json::json!({ "prompt": "Once", "max_tokens": 2, "stream": false }),
    );
    assert_eq!(status, 200);
}

/// A request longer than the server's context: llama-cpp-python answers a streamed one with 200
/// and an empty stream (and a not-streamed one with 400 `context_length_exceeded`). Pinloom says
/// what that means and what to change, exits 1, and saves no empty reply.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs llama.cpp's server: ./dev test llama"]
async fn a_request_longer_than_the_servers_context_is_a_clear_error() {
    let server = LlamaServer::start(model(), 512);
    let dir = tempfile::tempdir().unwrap();
    // The profile claims a far larger window than the server was started with.
    let db = database(dir.path(), &server, 100_000, 64).await;
    let question = "Why do rivers meander across their floodplains? ".repeat(60);

    let (out, err, code) = pinloom(&db, &["ask", &question]).await;
    assert_eq!(code, 1, "{out}\n{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("closed the reply without sending any of it"), "{err}");
    assert!(err.contains("n_ctx"), "{err}");
    assert!(server.logs("exceed context window of 512"), "{}", server.log());

    let pinloom_app = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let tree = pinloom_app.list_trees().await.unwrap()[0].id;
    let view = pinloom_app.thread_view(tree, None).await.unwrap();
    assert_eq!(view.messages.len(), 1, "the question is kept, no empty reply is saved");
    assert_eq!(view.messages[0].node.message.text, question);

    // With the profile's window lowered to the server's context, as the message says, Pinloom
    // refuses the question itself before sending, and a question that fits is answered.
    let mut profile = pinloom_app
        .model_profiles()
        .await
        .unwrap()
        .into_iter()
        .find(|profile| profile.name == "Llama")
        .unwrap();
    profile.context_window = 512;
    pinloom_app.save_model_profile(profile).await.unwrap();
    drop(pinloom_app);
    let (_, err, code) = pinloom(&db, &["ask", &question]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("available"), "{err}");
    let (_, err, code) = pinloom(&db, &["ask", "Shorter, then?"]).await;
    assert_eq!(code, 0, "{err}");
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs llama.cpp's server: ./dev test llama"]
async fn a_document_is_continued_through_the_completion_endpoint() {
    let server = LlamaServer::start(model(), 2048);
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &server, 2048, 12).await;
    let pinloom_app = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let document = pinloom_app.create_tree("Story".into(), TreeMode::Buffer).await.unwrap();
    let start = pinloom_app.append_message(document.id, None, "It went on".into()).await.unwrap();
    drop(pinloom_app);

    let (out, err, code) =
        pinloom(&db, &["continue", "--json", "--node", &start.id.to_string()]).await;
    assert_eq!(code, 0, "{err}\n{}", server.log());
    let lines = json_lines(&out);
    let pieces: String = lines
        .iter()
        .filter(|line| line["event"] == "text")
        .map(|line| line["text"].as_str().unwrap())
        .collect();
    assert!(lines.iter().filter(|line| line["event"] == "text").count() > 3, "{out}");
    let reply = lines.last().unwrap();
    assert_eq!(reply["event"], "reply");
    assert_eq!(reply["promptId"], serde_json::Value::Null, "a document gets no new prompt");

    let pinloom_app = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let view = pinloom_app.thread_view(document.id, None).await.unwrap();
    assert_eq!(view.messages.len(), 2);
    assert_eq!(view.messages[1].node.message.id, reply["id"].as_i64().unwrap());
    assert_eq!(view.messages[1].node.message.text, pieces);

    // The server was asked for each token's probability and the likeliest others (the loom's
    // hover), and they were kept with the continuation: they spell its text, the chosen token's
    // probability is among its place's alternatives, and choosing one branches the document.
    let continuation = view.messages[1].node.message.id;
    let pinloom_app::json::ReplyTokens::Shown { tokens } =
        pinloom_app.reply_tokens(continuation).await.unwrap()
    else {
        panic!("tokens were kept, and spell the text");
    };
    let spelled: String = tokens.iter().map(|token| token.text.as_str()).collect();
    assert_eq!(spelled, pieces);
    for token in &tokens {
        assert!(token.probability > 0.0 && token.probability <= 1.0, "{token:?}");
        // The five likeliest, and the token written when it was not among them.
        assert!((1..=6).contains(&token.alternatives.len()), "{token:?}");
        assert!(token.alternatives.iter().any(|a| a.text == token.text), "{token:?}");
        assert!(
            token.alternatives.windows(2).all(|pair| pair[0].probability >= pair[1].probability)
        );
    }
    let other = tokens[1].alternatives.iter().find(|a| a.text != tokens[1].text).unwrap();
    let branch = pinloom_app.branch_at_token(continuation, 1, other.text.clone()).await.unwrap();
    assert_eq!(branch.message.text, format!("{}{}", tokens[0].text, other.text));
    assert_eq!(branch.message.parent_id, Some(start.id));
}

/// A first use from nothing (issue 50): the server's model found on the address
/// PINLOOM_LOCAL_SERVERS gives, added with `models add`, made the default, asked with a system text and options, then `ask -c` and `log`, all by the binary on a
/// database it made itself.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs llama.cpp's server: ./dev test llama"]
async fn a_model_found_and_added_from_the_terminal_answers_with_its_options() {
    let server = LlamaServer::start(model(), 2048);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("new").join("pinloom.sqlite3");
    let url = format!("{}/v1", server.base);
    let places = format!("llamacpp={url}");
    let run = |args: Vec<String>| {
        let mut command = pinloom_command(&db, &[]);
        command.args(args).env("PINLOOM_LOCAL_SERVERS", &places);
        finished(command)
    };
    let words = |line: &str| line.split_whitespace().map(str::to_owned).collect::<Vec<_>>();

    let (out, err, code) = run(words("models found")).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("--url {url}")), "the server is found: {out}");
    // The window the server was started with (its /v1/models does not say it).
    let add = format!("models add Tiny --provider llamacpp --model tiny --url {url} --window 2048");
    let (out, err, code) = run(words(&format!("{add} --reply 24"))).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2048 tokens of window, replies up to 24"), "{out}");
    let (_, err, code) = run(words("models default Tiny")).await;
    assert_eq!(code, 0, "{err}");

    let mut args = words("ask --json -o temperature=0.3 -o max_tokens=12");
    args.extend(["-s".into(), "Answer briefly.".into(), "Why do rivers meander?".into()]);
    let (out, err, code) = run(args).await;
    assert_eq!(code, 0, "{err}\n{}", server.log());
    let reply = json_lines(&out).pop().unwrap();
    assert_eq!(reply["model"], "Tiny");
    let receipt = &reply["receipt"];
    assert_eq!(receipt["provider"], "llamacpp");
    let sent = receipt["sent"].to_string();
    assert!(sent.contains("system"), "the system text was sent: {receipt}");

    let (out, err, code) =
        run(vec!["ask".into(), "-c".into(), "-q".into(), "And oxbows?".into()]).await;
    assert_eq!(code, 0, "{err}");
    assert!(!out.is_empty() && err.is_empty(), "{out}\n{err}");
    let (out, err, code) = run(words("log")).await;
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("#4\ttree 1") && lines[0].ends_with("And oxbows?"), "{out}");
    assert!(lines[1].starts_with("#2\ttree 1") && lines[1].contains("\tTiny\t"), "{out}");
}
