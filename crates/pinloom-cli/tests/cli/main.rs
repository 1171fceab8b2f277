//! The `pinloom` binary against a real database written by the application layer, its outputs
//! checked whole (golden tests: `UPDATE_EXPECT=1 cargo test -p pinloom-cli` rewrites them after an
//! intended change).

// A test's unwrap is its assertion.
#![allow(clippy::unwrap_used)]

mod hints;
#[path = "../support/interrupt.rs"]
mod interrupt;
mod mcp;
mod pdfs;
mod sending;
mod sync;
mod terminal;

use std::path::Path;
use std::process::Command;

use expect_test::expect;
use pinloom_app::Pinloom;
use pinloom_app::json::{ModelProfile, TreeMode};

/// A tree with a root thread, a pin with its own question, and a summary of the root thread
/// written by hand; returns (tree, the pin's question).
async fn fixture(dir: &Path) -> (i64, i64) {
    let pinloom = Pinloom::open(dir.to_owned()).await.unwrap();
    pinloom
        .save_model_profile(ModelProfile::new("Golden", "openai", "gpt-4o", 8_192, 1_024, "o200k"))
        .await
        .unwrap();
    let tree = pinloom.create_tree("Rivers".into(), TreeMode::Dialogue).await.unwrap().id;
    pinloom.set_system_context(tree, "Answer like a geographer.".into()).await.unwrap();
    let question =
        pinloom.append_message(tree, None, "Why do rivers meander?".into()).await.unwrap().id;
    let answer = pinloom
        .append_message(tree, Some(question), "Because the outer bank erodes.".into())
        .await
        .unwrap()
        .id;
    let pin =
        pinloom.pin_range(answer, 12, 29, "outer bank erodes".into(), String::new()).await.unwrap();
    let asked = pinloom.ask_in_pin(pin.id, "Why the outer bank?".into()).await.unwrap();
    pinloom
        .write_own_summary(tree, None, answer, "The person asked why rivers meander.".into())
        .await
        .unwrap();
    (tree, asked.message.id)
}

fn pinloom(db: &Path, args: &[&str]) -> (String, String, i32) {
    let output = Command::new(env!("CARGO_BIN_EXE_pinloom"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("PINLOOM_DATA_DIR")
        .output()
        .unwrap();
    (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
        output.status.code().unwrap_or(-1),
    )
}

#[tokio::test]
async fn the_tree_the_context_and_the_stats_read_the_apps_database() {
    let dir = tempfile::tempdir().unwrap();
    let (tree, node) = fixture(dir.path()).await;
    let db = dir.path().join(pinloom_app::DATABASE_FILE_NAME);

    let (trees, _, code) = pinloom(&db, &["tree"]);
    assert_eq!(code, 0);
    // The last column is the tree's global id, a UUIDv7 made when it was created; the same id
    // names the tree too.
    let (listed, global_id) = trees.trim_end().rsplit_once('\t').unwrap();
    assert!(global_id.len() == 36 && global_id.as_bytes()[14] == b'7', "a UUIDv7: {global_id}");
    expect![[r#"1	rivers	Rivers	3 messages"#]].assert_eq(listed);
    let (by_global_id, _, code) = pinloom(&db, &["tree", global_id]);
    assert_eq!(code, 0);
    assert!(by_global_id.starts_with("Rivers (3 messages)"), "{by_global_id}");

    let (text, _, _) = pinloom(&db, &["tree", &tree.to_string()]);
    expect![[r#"
        Rivers (3 messages)
        #1 you: Why do rivers meander?
          #2 you: Because the outer bank erodes.
            #3 you [pin 1]: Why the outer bank?
    "#]]
    .assert_eq(&text);

    let node = node.to_string();
    let (markdown, _, _) = pinloom(&db, &["context", "--node", &node, "--profile", "Golden"]);
    expect![[r#"
        ## System Context

        Answer like a geographer.

        ---

        ## Thread: Rivers

        The person asked why rivers meander.

        ---

        ## Thread: outer bank erodes (active)

        user: Why the outer bank?

        ---
        _ThreadMind context: ~51 tokens | depth: 2 threads_
        _Estimated raw history: ~11 tokens (~-364% reduction from 1 summary updates)_
    "#]]
    .assert_eq(&markdown);

    let (stats, _, _) = pinloom(&db, &["stats", "--node", &node]);
    expect![[r#"
        ThreadMind Stats: "Rivers"

        Overview:
          Threads: 2 (1 with tracked updates)
          Summary updates: 1
          Current context: ~51 tokens (depth: 2)

        Token Savings (estimated):
          Estimated raw history: ~11 tokens
          ThreadMind context:    ~51 tokens
          Reduction:             ~-364%

        Per-Thread Breakdown:
          Thread               Updates   Current    Cumulative     Ratio
          main                 1         ~11        ~11            0%

        Method: Cumulative summary input vs current context size.
        Token estimates use ~3.5 chars/token approximation.
    "#]]
    .assert_eq(&stats);

    let (thread, _, _) = pinloom(&db, &["export", "--node", &node]);
    expect![[r#"
        # Rivers

        > System context: Answer like a geographer.

        ### You

        Why do rivers meander?

        ### You

        Because the outer bank erodes.

        ---

        ## Pin: outer bank erodes

        > outer bank erodes

        ### You

        Why the outer bank?
    "#]]
    .assert_eq(&thread);
    let (whole, _, _) = pinloom(&db, &["export", "--tree", &tree.to_string()]);
    expect![[r##"
        # Rivers

        > System context: Answer like a geographer.

        ## #1 · You

        Why do rivers meander?

        ## #2 · You · after #1

        Because the outer bank erodes.

        ## #3 · You · after #2 · in pin "outer bank erodes"

        Why the outer bank?
    "##]]
    .assert_eq(&whole);
    let (_, refusal, code) = pinloom(&db, &["export"]);
    assert_eq!(code, 2, "clap refuses a missing --tree/--node: {refusal}");

    let (request, _, _) =
        pinloom(&db, &["context", "--node", &node, "--profile", "Golden", "--format", "request"]);
    let body: serde_json::Value = serde_json::from_str(&request).unwrap();
    assert_eq!(body["model"], "gpt-4o");
    let (plan, _, _) =
        pinloom(&db, &["context", "--node", &node, "--profile", "Golden", "--format", "plan"]);
    let plan: serde_json::Value = serde_json::from_str(&plan).unwrap();
    let kinds: Vec<&str> =
        plan["slices"].as_array().unwrap().iter().map(|s| s["kind"].as_str().unwrap()).collect();
    // The root thread's messages before the anchor may be recalled by the search.
    assert_eq!(
        kinds,
        ["system", "ancestorSummary", "anchor", "prompt", "searchResult", "searchResult"]
    );

    // A thread by its ThreadMind id reads as its newest message does.
    let thread = ["--tree", "rivers", "--thread", "outer-bank-erodes"];
    let (by_thread, _, code) = pinloom(&db, &[&["context"][..], &thread].concat());
    assert_eq!((by_thread.as_str(), code), (markdown.as_str(), 0));
    let (report, _, _) = pinloom(
        &db,
        &[&["context"][..], &thread, &["--profile", "Golden", "--format", "report"]].concat(),
    );
    expect![[r#"
        Context for message 3 under "Golden": 118 of 7168 tokens (o200k); 1024 kept free for the reply, which is what the request asks for at most.

        What it knows of its ancestry, root first:
          - “Rivers” (the parent thread, budget 800): your summary; 31 tokens sent

        Included, in the order sent:
          - system (treeSystemContext), 10 tokens, priority 1: Answer like a geographer.
          - ancestorSummary (summary), 31 tokens, priority 5: Summary of the earlier thread “Rivers”, up to where this con
          - anchor (anchor 1), 31 tokens, priority 2: The user highlighted the following text and is asking a foll
          - searchResult (retrieval 2), 19 tokens, priority 8: (Recalled from earlier in this conversation) Because the out
          - searchResult (retrieval 1), 18 tokens, priority 8: (Recalled from earlier in this conversation) Why do rivers m
          - prompt (node 3), 9 tokens, priority 2: Why the outer bank?

        Nothing was cut.

        Request: POST https://api.openai.com/v1/chat/completions
    "#]].assert_eq(&report);
    let (_, refusal, code) = pinloom(&db, &["context", "--tree", "rivers", "--thread", "nope"]);
    assert_eq!(code, 2, "every failure exits 2");
    assert_eq!(refusal.lines().count(), 1, "one line: {refusal}");
    assert!(refusal.contains("tree 1 has no thread \"nope\""), "{refusal}");
}

#[tokio::test]
async fn a_closed_pipe_ends_the_output_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join(pinloom_app::DATABASE_FILE_NAME);
    // Enough output to outgrow the pipe's buffer, read by nobody: `pinloom … | head -c 0`.
    let pinloom_app = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let tree = pinloom_app.create_tree("Long".into(), TreeMode::Dialogue).await.unwrap().id;
    let mut parent = None;
    for turn in 0..400 {
        let text = format!("Message {turn}: {}", "the river carries silt past the bend ".repeat(8));
        parent = Some(pinloom_app.append_message(tree, parent, text).await.unwrap().id);
    }
    drop(pinloom_app);
    let mut child = Command::new(env!("CARGO_BIN_EXE_pinloom"))
        .arg("--db")
        .arg(&db)
        .args(["export", "--tree", &tree.to_string()])
        .env_remove("PINLOOM_DATA_DIR")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away before a byte is read
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr, "", "no panic, no backtrace");
    assert_eq!(output.status.code(), Some(0));
}

#[tokio::test]
async fn a_tree_whose_parent_links_loop_is_refused_in_words_never_listed_empty() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join(pinloom_app::DATABASE_FILE_NAME);
    {
        let pinloom = Pinloom::open(dir.path().to_owned()).await.unwrap();
        let tree = pinloom.create_tree("Looped".into(), TreeMode::Dialogue).await.unwrap().id;
        let first = pinloom.append_message(tree, None, "first".into()).await.unwrap().id;
        pinloom.append_message(tree, Some(first), "second".into()).await.unwrap();
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute("UPDATE nodes SET parent_id = 2 WHERE id = 1", []).unwrap();
    drop(conn);
    let (out, err, code) = pinloom(&db, &["tree", "1"]);
    assert_eq!((out.as_str(), code), ("", 2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("tree 1 is damaged: no first message leads to messages #1, #2"), "{err}");
    for format in ["openloom", "markdown"] {
        let (out, err, code) = pinloom(&db, &["export", "--tree", "1", "--format", format]);
        assert_eq!((out.as_str(), code), ("", 2), "{format}: {err}");
        assert!(err.contains("their parent links loop"), "{err}");
    }
}

#[tokio::test]
async fn a_refused_plan_prints_no_request_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join(pinloom_app::DATABASE_FILE_NAME);
    let prompt = {
        let pinloom = Pinloom::open(dir.path().to_owned()).await.unwrap();
        let mut strict = ModelProfile::new("Strict", "openai", "gpt-4o", 300, 10, "o200k");
        strict.assembly.truncation = Some("stopAtLimit".into());
        pinloom.save_model_profile(strict).await.unwrap();
        let tree = pinloom.create_tree("Long".into(), TreeMode::Dialogue).await.unwrap().id;
        let mut parent = None;
        for turn in 0..8 {
            let text = if turn < 4 {
                format!("Turn {turn}: {}", "the river carries silt past the bend. ".repeat(12))
            } else {
                format!("Turn {turn}.")
            };
            parent = Some(pinloom.append_message(tree, parent, text).await.unwrap().id);
        }
        parent.unwrap().to_string()
    };
    let args = ["context", "--node", &prompt, "--profile", "Strict"];
    let (out, err, code) = pinloom(&db, &[&args[..], &["--format", "request"]].concat());
    assert_eq!((out.as_str(), code), ("", 2), "no body: {out}");
    assert!(err.contains("no request:") && err.contains("stops at the limit"), "{err}");
    let (report, _, code) = pinloom(&db, &[&args[..], &["--format", "report"]].concat());
    assert_eq!(code, 0);
    assert!(report.contains("\nRefused: the context needs"), "{report}");
    assert!(report.contains("Nothing is sent."), "{report}");
    let (plan, _, _) = pinloom(&db, &[&args[..], &["--format", "plan"]].concat());
    let plan: serde_json::Value = serde_json::from_str(&plan).unwrap();
    assert!(plan["refusal"].is_string());
    assert_eq!(plan["body"], "", "the plan carries no body either");
}

/// `pinloom models` and `pinloom keys list` on a database made on first use: every profile with
/// its provider, model and window, ready where its key is set and otherwise saying what it
/// lacks; every key's source, and never a key.
#[test]
fn models_and_keys_are_listed_with_what_each_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("fresh.sqlite3");
    let secret = "sk-test-never-printed-4f1c";
    let run = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_pinloom"))
            .arg("--db")
            .arg(&db)
            .args(args)
            .env_remove("PINLOOM_DATA_DIR")
            .env_remove("ANTHROPIC_API_KEY")
            .env("OPENAI_API_KEY", secret)
            // Nothing listens there: no local server of this machine's is asked.
            .env("PINLOOM_LOCAL_SERVERS", "llamacpp=http://127.0.0.1:9/v1")
            .output()
            .unwrap();
        let out = String::from_utf8(output.stdout).unwrap();
        let err = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(0), "{err}");
        assert!(!out.contains(secret) && !err.contains(secret), "a key was printed");
        out
    };
    let models = run(&["models"]);
    let gpt = models.lines().find(|line| line.starts_with("gpt-4o (OpenAI)\t")).expect(&models);
    assert_eq!(
        gpt.split('\t').collect::<Vec<_>>()[1..],
        ["openai", "gpt-4o", "128000 tokens", "ready"]
    );
    let claude = models.lines().find(|line| line.contains("\tanthropic\t")).expect(&models);
    assert!(claude.contains("ANTHROPIC_API_KEY"), "what it lacks: {claude}");
    let json: serde_json::Value = serde_json::from_str(&run(&["models", "--json"])).unwrap();
    assert!(
        json["ready"]["ready"].as_array().unwrap().iter().any(|name| name == "gpt-4o (OpenAI)")
    );
    let keys = run(&["keys", "list"]);
    assert!(keys.lines().any(|line| line == "OpenAI\tfrom OPENAI_API_KEY"), "{keys}");
    let anthropic = keys.lines().find(|line| line.starts_with("Anthropic\t")).expect(&keys);
    assert!(anthropic.contains("none") && anthropic.contains("ANTHROPIC_API_KEY"), "{anthropic}");
}

#[test]
fn a_database_is_made_on_first_use_by_any_command() {
    let dir = tempfile::tempdir().unwrap();
    // In a folder that does not exist yet either: a person at a terminal may never open the window.
    let missing = dir.path().join("new").join("trees.sqlite3");
    let (out, err, code) = pinloom(&missing, &["tree"]);
    assert_eq!((out.as_str(), code), ("", 0), "{err}");
    assert!(missing.exists(), "the database was made");
    // And it is a database the next command reads, with the catalog's models seeded.
    let (_, err, code) = pinloom(&missing, &["requests"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn import_and_export_open_loom_through_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    // A database that does not exist yet is created by an import.
    let db = dir.path().join("fresh.sqlite3");
    let fixtures = Path::new(
        &std::env::var("CARGO_MANIFEST_DIR").expect("cargo runs tests with CARGO_MANIFEST_DIR set"),
    )
    .join("../pinloom-app/tests/fixtures/interchange");
    let example = fixtures.join("minimal-example.json");
    let (report, _, code) = pinloom(&db, &["import", example.to_str().unwrap()]);
    assert_eq!(code, 0);
    expect![[r#"
        Imported "Hello" as tree 1 (hello): 3 messages, 0 threads.
        Everything in the document was mapped.
    "#]]
    .assert_eq(&report);
    let weavers = fixtures.join("weavers.json");
    let (report, _, _) = pinloom(&db, &["import", weavers.to_str().unwrap()]);
    expect![[r#"
        Imported "weavers" as tree 2 (weavers): 14 messages, 0 threads.
        Not mapped, kept only for export, or repaired:
          - $.trees[0].extensions "socketteer-loom" are kept for export
          - message extensions "socketteer-loom" are kept for export (14 times)
    "#]]
    .assert_eq(&report);

    let out = dir.path().join("hello.openloom");
    let (wrote, _, code) = pinloom(
        &db,
        &["export", "--tree", "hello", "--format", "openloom", "--output", out.to_str().unwrap()],
    );
    assert_eq!((wrote.trim(), code), (format!("Wrote {}", out.display()).as_str(), 0));
    let document: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let tree = &document["trees"][0];
    assert_eq!(tree["rootNodeIds"], serde_json::json!(["n1"]));
    let texts: Vec<&str> = tree["nodes"]
        .as_object()
        .unwrap()
        .values()
        .map(|node| node["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["Once upon a time", " there was a fox.", " there was a loom."]);
    let (all, _, _) = pinloom(&db, &["export", "--all", "--format", "openloom"]);
    let all: serde_json::Value = serde_json::from_str(&all).unwrap();
    assert_eq!(all["trees"].as_array().unwrap().len(), 2);

    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"format\": \"open-loom\", \"version\": \"9.1\", \"trees\": []}")
        .unwrap();
    let (_, refusal, code) = pinloom(&db, &["import", broken.to_str().unwrap()]);
    assert_eq!(code, 2);
    expect![[r#"
        pinloom: $.version: Open Loom "9.1" is not a version Pinloom reads (it reads 2.x); export it as Open Loom 2.0; nothing was imported
    "#]]
    .assert_eq(&refusal);
    let (_, refusal, code) = pinloom(&db, &["export", "--node", "3", "--format", "openloom"]);
    assert_eq!(code, 2, "{refusal}");
}

#[tokio::test]
async fn exclude_from_the_terminal_and_a_summary_written_from_the_message_stops_being_sent() {
    let dir = tempfile::tempdir().unwrap();
    let (_, asked) = fixture(dir.path()).await;
    let db = dir.path().join(pinloom_app::DATABASE_FILE_NAME);
    let asked = asked.to_string();
    let context = |format: &str| {
        let args = ["context", "--node", &asked, "--profile", "Golden", "--format", format];
        let (out, err, code) = pinloom(&db, &args);
        assert_eq!(code, 0, "{err}");
        out
    };
    let summary = "The person asked why rivers meander.";
    assert!(context("markdown").contains(summary));
    assert!(context("report").contains("your summary; 31 tokens sent"));
    // A number no message has changes nothing, and says so.
    let (_, err, code) = pinloom(&db, &["exclude", "1", "999"]);
    assert_eq!(code, 2);
    assert!(err.contains("999"), "{err}");
    assert!(context("markdown").contains(summary), "nothing was excluded");

    let (out, err, code) = pinloom(&db, &["exclude", "1"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Excluded #1"), "{out}");
    // The person's summary of the root thread was written from message 1: it is not sent now.
    assert!(!context("markdown").contains(summary));
    let report = context("report");
    assert!(!report.contains("your summary"), "{report}");
    assert!(
        report.contains("written before message #1 was excluded, so it is not sent"),
        "{report}"
    );
    let (out, _, code) = pinloom(&db, &["include", "1"]);
    assert_eq!((code, out.trim()), (0, "Included #1: back in context."));
}
