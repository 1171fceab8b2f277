//! The terminal on its own (issue 50): models and keys from the command line, asking as `llm`
//! does (-m, -s, -o, -a, --instruction, --context, -c), every message operation, and bad input
//! refused before anything is written. The built binary against a scripted OpenAI-compatible
//! server on 127.0.0.1 and a real database file made by the binary itself.

use std::path::{Path, PathBuf};
use std::process::Command;

use pinloom_app::Pinloom;
use pinloom_test_server::{Answer, Server, chat_stream};

use crate::sending::pinloom;

fn says(pieces: &[&str]) -> Answer {
    Answer::sse(&chat_stream(pieces, 31), 0)
}

/// A database the binary makes, with the model `Local` at `server` added by `models add`.
async fn added(dir: &Path, server: &Server, extra: &[&str]) -> PathBuf {
    let db = dir.join("fresh").join("pinloom.sqlite3");
    let url = format!("{}/v1", server.base);
    let mut args = vec!["models", "add", "Local", "--provider", "vllm", "--model", "local-model"];
    args.extend(["--url", &url, "--window", "8192", "--reply", "512", "--tokenizer", "o200k"]);
    args.extend(extra);
    let (out, err, code) = pinloom(&db, &args, None).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Added Local."), "{out}");
    db
}

/// How many trees and messages the database holds.
async fn written(db: &Path) -> (usize, usize) {
    let pinloom =
        Pinloom::open_database(db.to_owned(), pinloom_app::Connections::default()).await.unwrap();
    let trees = pinloom.list_trees().await.unwrap();
    let messages = trees.iter().map(|tree| tree.message_count as usize).sum();
    (trees.len(), messages)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_added_from_the_terminal_answers_and_is_the_default_for_ask_and_context() {
    let server = Server::start(vec![says(&["Meanders ", "grow."])]).await;
    let dir = tempfile::tempdir().unwrap();
    let db = added(dir.path(), &server, &[]).await;

    let (out, err, code) = pinloom(&db, &["models", "default", "Local"], None).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Local answers from now on"), "{out}");

    let (out, err, code) = pinloom(&db, &["ask", "Why do rivers meander?"], None).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "Meanders grow.\n");
    // One line of what was sent, on standard error.
    let report = err.lines().last().unwrap();
    assert!(report.starts_with("[sent ") && report.contains(" tokens to Local"), "{err}");
    assert!(report.contains("reply #2 in tree 1"), "{err}");
    assert_eq!(server.seen()[0].json()["model"], "local-model");

    // `context` plans for the same model `ask` used, not the first by name.
    let (out, err, code) =
        pinloom(&db, &["context", "--node", "2", "--format", "request"], None).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("\"model\":\"local-model\"") || out.contains("\"model\": \"local-model\""),
        "{out}"
    );

    // Listed as the default (`models` asks the server whether it answers; this one, out of
    // answers, does not).
    let (out, err, code) = pinloom(&db, &["models"], None).await;
    assert_eq!(code, 0, "{err}");
    let listed = "Local (default)\tvllm\tlocal-model\t8192 tokens\t";
    assert!(out.lines().any(|line| line.starts_with(listed)), "{out}");

    // `-q` says nothing on standard error.
    let server_again = Server::start(vec![says(&["Quietly."])]).await;
    let url = format!("{}/v1", server_again.base);
    let (_, err, code) = pinloom(&db, &["models", "edit", "Local", "--url", &url], None).await;
    assert_eq!(code, 0, "{err}");
    let (out, err, code) = pinloom(&db, &["ask", "-c", "-q", "And then?"], None).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!((out.as_str(), err.as_str()), ("Quietly.\n", ""));
}

#[tokio::test(flavor = "multi_thread")]
async fn system_text_and_options_reach_the_request_and_the_reply_keeps_them() {
    let server = Server::start(vec![says(&["Short."])]).await;
    let dir = tempfile::tempdir().unwrap();
    let db = added(dir.path(), &server, &[]).await;
    let args = ["ask", "-m", "Local", "-s", "Answer in five words.", "-o", "temperature=0.2"];
    let (out, err, code) =
        pinloom(&db, &[&args[..], &["-o", "max_tokens=300", "Why rivers?"]].concat(), None).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "Short.\n");
    let body = server.seen()[0].json();
    // Sampling is kept as a 32-bit float: 0.2 reads back as the nearest one.
    assert!((body["temperature"].as_f64().unwrap() - 0.2).abs() < 1e-6, "{body}");
    assert_eq!(body["max_tokens"], 300);
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["messages"][0]["content"], "Answer in five words.");

    // Recorded with the reply: its settings, exported as the generation's parameters.
    let (out, err, code) =
        pinloom(&db, &["export", "--tree", "1", "--format", "openloom"], None).await;
    assert_eq!(code, 0, "{err}");
    let document: serde_json::Value = serde_json::from_str(&out).unwrap();
    let text = document.to_string();
    assert!(text.contains("\"temperature\":0.2"), "{text}");
    assert!(text.contains("\"maxTokens\":300"), "{text}");
    assert!(text.contains("Answer in five words."), "the system text is kept: {text}");

    // An option Pinloom does not know is refused before anything is sent or written.
    let (_, err, code) = pinloom(&db, &["ask", "-o", "warmth=3", "Again?"], None).await;
    assert_eq!(code, 2);
    assert!(
        err.contains("-o warmth=3: give temperature=0.7, top_p=0.9 or max_tokens=500"),
        "{err}"
    );
    let (_, err, code) = pinloom(&db, &["ask", "-o", "max_tokens=9000", "Again?"], None).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("less than Local's window of 8192 tokens"), "{err}");
    assert_eq!(server.seen().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_image_goes_to_a_model_that_sees_and_is_refused_before_anything_is_written_for_one_that_does_not()
 {
    let server = Server::start(vec![says(&["A red square."])]).await;
    let dir = tempfile::tempdir().unwrap();
    let db = added(dir.path(), &server, &["--sees-images", "no"]).await;
    let image = dir.path().join("square.png");
    std::fs::write(&image, PNG).unwrap();
    let image = image.to_str().unwrap();

    let (_, err, code) = pinloom(&db, &["ask", "-a", image, "What is this?"], None).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("does not see images"), "{err}");
    assert_eq!(written(&db).await, (0, 0), "no tree, no question");
    assert!(server.seen().is_empty());

    let (_, err, code) =
        pinloom(&db, &["models", "edit", "Local", "--sees-images", "yes"], None).await;
    assert_eq!(code, 0, "{err}");
    let (out, err, code) = pinloom(&db, &["ask", "-a", image, "What is this?"], None).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "A red square.\n");
    let body = server.seen()[0].json().to_string();
    assert!(body.contains("data:image/png;base64,"), "{body}");
}

/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x08, 0xd7, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xdd, 0x8d, 0xb0, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

#[tokio::test(flavor = "multi_thread")]
async fn files_instructions_and_contexts_go_in_their_roles() {
    let server = Server::start(vec![says(&["Read."])]).await;
    let dir = tempfile::tempdir().unwrap();
    let db = added(dir.path(), &server, &[]).await;
    let notes = dir.path().join("notes.md");
    std::fs::write(&notes, "Oxbow lakes form when a meander is cut off.").unwrap();
    let rules = dir.path().join("rules.txt");
    std::fs::write(&rules, "Cite the notes.").unwrap();
    let background = dir.path().join("background.txt");
    std::fs::write(&background, "The river is the Mississippi.").unwrap();
    let pdf = dir.path().join("paper.pdf");
    std::fs::write(
        &pdf,
        crate::pdfs::pdf_with_pages(&["Page one on erosion.", "Page two on deposition."]),
    )
    .unwrap();
    let path = |file: &PathBuf| file.to_str().unwrap().to_owned();
    let args = [
        "ask",
        "-a",
        &path(&notes),
        "-a",
        &path(&pdf),
        "--instruction",
        &path(&rules),
        "--context",
        &path(&background),
        "What forms oxbow lakes?",
    ];
    let (out, err, code) = pinloom(&db, &args, None).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "Read.\n");
    let body = server.seen()[0].json();
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("Cite the notes."),
        "the instruction joins the system context: {system}"
    );
    let sent = body.to_string();
    for text in [
        "Oxbow lakes form when a meander is cut off.",
        "Page one on erosion.",
        "Page two on deposition.",
        "The river is the Mississippi.",
    ] {
        assert!(sent.contains(text), "{text} missing from {sent}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ask_c_after_a_failed_send_answers_the_saved_question_instead_of_stacking_another() {
    let server = Server::start(vec![
        says(&["First answer."]),
        Answer::error(400, r#"{"error":{"message":"the model is busy elsewhere"}}"#),
        says(&["Second answer."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db = added(dir.path(), &server, &[]).await;
    let (_, err, code) = pinloom(&db, &["ask", "Why do rivers meander?"], None).await;
    assert_eq!(code, 0, "{err}");
    let (_, err, code) = pinloom(&db, &["ask", "-c", "And oxbow lakes?"], None).await;
    assert_eq!(code, 1, "the provider refused: {err}");
    assert_eq!(written(&db).await, (1, 3), "the question is saved once");

    // Another question is refused there: it would stand beside the unanswered one.
    let (_, err, code) = pinloom(&db, &["ask", "-c", "Something else?"], None).await;
    assert_eq!(code, 2);
    assert!(err.contains("your last question (#3) has no answer yet"), "{err}");
    assert_eq!(written(&db).await, (1, 3));

    // The same words answer it, and the request carries it once.
    let (out, err, code) = pinloom(&db, &["ask", "-c", "And oxbow lakes?"], None).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "Second answer.\n");
    assert_eq!(written(&db).await, (1, 4));
    let body = server.seen()[2].json();
    let turns: Vec<_> =
        body["messages"].as_array().unwrap().iter().map(|m| m["content"].clone()).collect();
    assert_eq!(turns, ["Why do rivers meander?", "First answer.", "And oxbow lakes?"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_is_one_line_exit_2_and_nothing_written() {
    let server = Server::start(Vec::new()).await;
    let dir = tempfile::tempdir().unwrap();
    let db = added(dir.path(), &server, &[]).await;
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "not for the model").unwrap();
    let inside = dir.path().join("inside");
    std::fs::create_dir(&inside).unwrap();
    std::os::unix::fs::symlink(&secret, inside.join("link.txt")).unwrap();
    let fifo = dir.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let big = dir.path().join("big.txt");
    std::fs::write(&big, "x".repeat(200 * 1024)).unwrap();

    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["ask".into(), "-a".into(), folder.display().to_string(), "Q?".into()], "is a folder"),
        (
            vec!["ask".into(), "-a".into(), fifo.display().to_string(), "Q?".into()],
            "it is not a file",
        ),
        (
            vec![
                "ask".into(),
                "-a".into(),
                inside.join("link.txt").display().to_string(),
                "Q?".into(),
            ],
            "it leads outside",
        ),
        (
            vec!["ask".into(), "-a".into(), big.display().to_string(), "Q?".into()],
            "over the 100 KB limit",
        ),
        (
            vec!["ask".into(), "-m".into(), "Nobody".into(), "Q?".into()],
            "no model profile named \"Nobody\"",
        ),
        (
            vec![
                "models".into(),
                "add".into(),
                "X".into(),
                "--provider".into(),
                "acme".into(),
                "--model".into(),
                "m".into(),
            ],
            "unknown provider \"acme\"",
        ),
        (
            [
                "models",
                "add",
                "Y",
                "--provider",
                "openai",
                "--model",
                "gpt-4o",
                "--window",
                "1000",
                "--reply",
                "2000",
            ]
            .map(String::from)
            .to_vec(),
            "must be smaller than the context window",
        ),
        (
            ["keys", "set", "openai", "sk-in-the-history"].map(String::from).to_vec(),
            "stays in the shell's history",
        ),
    ];
    for (args, said) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (out, err, code) = pinloom(&db, &args, None).await;
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(out, "", "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(said), "{args:?}: {err}");
    }
    assert_eq!(written(&db).await, (0, 0));
    assert!(server.seen().is_empty());
    let (out, _, _) = pinloom(&db, &["models"], None).await;
    assert!(!out.contains("\nX\t") && !out.contains("\nY\t"), "{out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_message_operation_works_from_the_terminal() {
    let server = Server::start(vec![
        says(&["Rivers erode their outer banks."]),
        says(&["Deposition."]),
        says(&["Rivers wander."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db = added(dir.path(), &server, &[]).await;
    let (_, err, code) = pinloom(&db, &["ask", "Why do rivers meander?"], None).await;
    assert_eq!(code, 0, "{err}");

    // Excluded, the question is left out of the next plan, and the report says so.
    let (out, err, code) = pinloom(&db, &["exclude", "1"], None).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Excluded #1"), "{out}");
    let (out, err, code) =
        pinloom(&db, &["context", "--node", "2", "--format", "report"], None).await;
    assert_eq!(code, 0, "{err}");
    let cut = "(node 1), 10 tokens, priority 9: Why do rivers meander? — excluded";
    assert!(out.contains(cut), "{out}");
    let (_, err, code) = pinloom(&db, &["include", "1"], None).await;
    assert_eq!(code, 0, "{err}");

    for (args, said) in [
        (vec!["keep", "2"], "Kept #2"),
        (vec!["release", "2"], "Released #2"),
        (vec!["note", "2", "Check the delta.", "--in-context"], "sent with the message"),
        (vec!["title", "1", "Meanders"], "titled \"Meanders\""),
        (
            vec!["summary", "edit", "--tree", "1", "--thread", "main", "Rivers erode."],
            "Your summary stands",
        ),
        (vec!["summary", "show", "--tree", "1"], "by you (in use):\nRivers erode."),
        (
            vec!["search", "outer banks"],
            "#2\ttree 1 (Meanders)\tmodel\tRivers erode their outer banks.",
        ),
        (vec!["log"], "#2\ttree 1 (Meanders)\tLocal\t"),
    ] {
        let (out, err, code) = pinloom(&db, &args, None).await;
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(out.contains(said), "{args:?}: {out}");
    }

    // A pin asked in, then closed with its result.
    let (_, err, code) =
        pinloom(&db, &["pin", "--node", "2", "--passage", "outer banks", "What deposits?"], None)
            .await;
    assert_eq!(code, 0, "{err}");
    let (out, err, code) =
        pinloom(&db, &["pin", "close", "1", "--result", "Point bars."], None).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Pin 1 closed") && out.contains("Point bars."), "{out}");

    let (out, err, code) = pinloom(&db, &["delete", "4"], None).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Deleted #4"), "{out}");
    let (out, err, code) = pinloom(&db, &["restore", "4"], None).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Restored #4"), "{out}");

    // A second answer to the first question, beside the first, compared with it.
    let (out, err, code) =
        pinloom(&db, &["regenerate", "--node", "2", "-o", "temperature=1.5"], None).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "Rivers wander.\n");
    let (out, err, code) = pinloom(&db, &["compare", "2", "5"], None).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Both paths share 1 message, up to #1."), "{out}");
    assert!(out.contains("left: ends at #2") && out.contains("right: ends at #5"), "{out}");
    assert!(out.contains("settings differ: temperature"), "{out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_machine_where_nothing_ran_starts_with_doctor_completions_and_a_manual() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("new").join("pinloom.sqlite3");
    let (out, err, code) = pinloom(&db, &["doctor"], None).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with(&format!("database: {}", db.display())), "{out}");
    assert!(out.contains("\ngit: "), "{out}");
    assert!(db.exists(), "made on first use");
    for shell in ["bash", "zsh", "fish"] {
        let (out, err, code) = pinloom(&db, &["completions", shell], None).await;
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("models") && out.contains("summary"), "{shell}: {out}");
    }
    let (out, err, code) = pinloom(&db, &["man-page"], None).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(".TH pinloom 1") && out.contains("models"), "{out}");
    let (out, _, code) = pinloom(&db, &["--help"], None).await;
    assert_eq!(code, 0);
    assert!(out.contains("Exit status: 0 done; 1 the provider failed"), "{out}");
}

/// `keys set` in a fresh kernel session keyring (`keyctl session -`), so no key of the machine's
/// is touched: stored from standard input, then listed as in the keyring.
#[tokio::test(flavor = "multi_thread")]
async fn a_key_set_from_standard_input_is_in_the_keyring() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pinloom.sqlite3");
    let script = format!(
        "printf 'sk-ant-test-0123456789\\n' | {exe} --db {db} keys set anthropic && {exe} --db {db} keys list",
        exe = env!("CARGO_BIN_EXE_pinloom"),
        db = db.display()
    );
    let output = tokio::task::spawn_blocking(move || {
        Command::new("keyctl")
            .args(["session", "-", "sh", "-c", &script])
            .env("PINLOOM_KEYRING", "kernel")
            .env_remove("ANTHROPIC_API_KEY")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let out = String::from_utf8_lossy(&output.stdout);
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{out}\n{err}");
    assert!(out.contains("The anthropic key is in the OS keyring."), "{out}");
    assert!(out.contains("Anthropic\tin the OS keyring"), "{out}");
    assert!(!out.contains("sk-ant-test"), "the key itself is never printed: {out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_over_two_branches_sends_the_two_picked_messages_and_nothing_else() {
    let server = Server::start(vec![
        says(&["Erosion of the outer bank."]),
        says(&["Uplift of the land."]),
        says(&["Both: the bank erodes while the land rises."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db = added(dir.path(), &server, &[]).await;
    let (_, err, code) = pinloom(&db, &["ask", "Why do rivers meander?"], None).await;
    assert_eq!(code, 0, "{err}");
    let (_, err, code) = pinloom(&db, &["regenerate", "--node", "2"], None).await;
    assert_eq!(code, 0, "{err}");

    let ask = ["ask", "--with", "2", "--with", "3", "What do the two answers share?"];
    let (out, err, code) = pinloom(&db, &ask, None).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "Both: the bank erodes while the land rises.\n");
    let request = server.seen()[2].json();
    let sent = request["messages"].to_string();
    assert!(sent.contains("Added by you, from the main thread, an answer by Local:\\nErosion"));
    assert!(sent.contains("Added by you, from the main thread, an answer by Local:\\nUplift"));
    assert!(!sent.contains("Why do rivers meander?"), "their branches' question stays out: {sent}");
    assert!(err.contains("2 picked messages added by you"), "{err}");
    assert_eq!(written(&db).await, (1, 5), "the question and its answer, in the same tree");

    // A message of nowhere is one line, exit 2, nothing written.
    let (_, err, code) = pinloom(&db, &["ask", "--with", "99", "Over what?"], None).await;
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let (_, err, code) = pinloom(&db, &["ask", "--with", "2", "--node", "2", "Both?"], None).await;
    assert_eq!(code, 2, "{err}");
    assert_eq!(written(&db).await, (1, 5));
}
