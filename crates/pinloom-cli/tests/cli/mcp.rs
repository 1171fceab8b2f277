//! `pinloom mcp` driven by a real MCP client (rmcp's) over stdio, as Claude Code or Cursor would
//! drive it, on a real database file that the application layer also writes, as the desktop app
//! does while the server runs.
//!
//! The expected texts of ThreadMind's tools are what ThreadMind v0.4.1 returned for the same
//! calls in a recorded run (its source built and driven over stdio); where ThreadMind answered
//! with Node's ENOENT and a file path, Pinloom names the missing thread instead.

#![allow(deprecated)] // resources/subscribe, which every client of the initialize handshake uses

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pinloom_app::Pinloom;
use pinloom_app::json::{ModelProfile, TreeMode};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, GetPromptRequestParams,
    Implementation, ProtocolVersion, ReadResourceRequestParams, ResourceContents,
    ResourceUpdatedNotificationParam, SubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// A client that records every `notifications/resources/updated` it receives.
#[derive(Clone, Default)]
struct Recorder {
    updated: Arc<Mutex<Vec<String>>>,
    arrived: Arc<Notify>,
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("pinloom-test", "1"))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.updated.lock().unwrap().push(params.uri);
        self.arrived.notify_one();
    }
}

impl Recorder {
    /// Waits for the next notification (they are handled on another task than the response).
    async fn next(&self) -> Vec<String> {
        tokio::time::timeout(Duration::from_secs(10), self.arrived.notified())
            .await
            .expect("a resources/updated notification within 10 s");
        // Both subscribed resources are announced together; give the second a moment.
        tokio::time::sleep(Duration::from_millis(50)).await;
        std::mem::take(&mut *self.updated.lock().unwrap())
    }
}

type Client = RunningService<RoleClient, Recorder>;

async fn start(db: &Path, folder: &Path, recorder: Recorder) -> Client {
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_pinloom")).configure(|cmd| {
        cmd.arg("--db").arg(db).arg("mcp").current_dir(folder).env_remove("PINLOOM_DATA_DIR");
    });
    let transport = TokioChildProcess::new(command).unwrap();
    recorder.serve(transport).await.unwrap()
}

/// Calls a tool; returns its text and whether it is an error.
async fn call(client: &Client, name: &str, arguments: Value) -> (String, Option<bool>) {
    let mut params = CallToolRequestParams::new(name.to_owned());
    if let Value::Object(arguments) = arguments {
        params = params.with_arguments(arguments);
    }
    let result = client.call_tool(params).await.unwrap();
    let text = result.content[0].as_text().unwrap().text.clone();
    (text, result.is_error)
}

async fn ok(client: &Client, name: &str, arguments: Value) -> String {
    let (text, is_error) = call(client, name, arguments).await;
    assert_eq!(is_error, None, "{name} succeeds without an isError member: {text}");
    text
}

async fn refused(client: &Client, name: &str, arguments: Value) -> String {
    let (text, is_error) = call(client, name, arguments).await;
    assert_eq!(is_error, Some(true), "{name} is refused: {text}");
    text
}

async fn read(client: &Client, uri: &str) -> (String, String) {
    let result = client.read_resource(ReadResourceRequestParams::new(uri)).await.unwrap();
    match &result.contents[0] {
        ResourceContents::TextResourceContents { uri: read, mime_type, text, .. } => {
            assert_eq!(read, uri, "the contents name the URI asked for");
            (mime_type.clone().unwrap_or_default(), text.clone())
        }
        other => panic!("not text: {other:?}"),
    }
}

async fn prompt(client: &Client, name: &str, arguments: Value) -> Result<String, ServiceError> {
    let mut params = GetPromptRequestParams::new(name);
    if let Value::Object(arguments) = arguments {
        params = params.with_arguments(arguments);
    }
    let result = client.get_prompt(params).await?;
    Ok(result.messages[0].content.as_text().unwrap().text.clone())
}

const NO_SUMMARY_MAIN: &str = "\n\n⚠️  Parent thread \"main\" has no summary yet.\nRun `tm:summary` on \"main\" before continuing — this ensures the context chain is complete when you call `context_get` from child threads.";
const NO_SUMMARY_AUTH: &str = "\n\n⚠️  Parent thread \"auth-system\" has no summary yet.\nRun `tm:summary` on \"auth-system\" before continuing — this ensures the context chain is complete when you call `context_get` from child threads.";

#[tokio::test]
async fn threadminds_recorded_session_gives_the_same_texts() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pinloom.sqlite3");
    let folder = dir.path().join("project");
    std::fs::create_dir(&folder).unwrap();
    let client = start(&db, &folder, Recorder::default()).await;

    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().map(|server| server.name.as_str()), Some("pinloom"));
    let tools: Vec<String> =
        client.list_all_tools().await.unwrap().into_iter().map(|tool| tool.name.into()).collect();
    assert_eq!(
        tools[..12],
        [
            "project_create",
            "project_list",
            "project_switch",
            "thread_create",
            "thread_switch",
            "thread_list",
            "summary_update",
            "context_get",
            "thread_delete",
            "thread_rebase",
            "threadmind_init",
            "stats_show"
        ],
        "ThreadMind's twelve, in its order, then Pinloom's"
    );
    assert_eq!(
        tools[12..],
        ["thread_messages", "pin_create", "pin_close", "profile_list", "context_assemble"]
    );

    assert_eq!(
        ok(&client, "project_list", json!({})).await,
        "No projects found. Use project_create to create one."
    );
    assert_eq!(
        refused(&client, "thread_list", json!({})).await,
        "Error: No active project. Use project_create first."
    );
    assert_eq!(
        refused(&client, "context_get", json!({})).await,
        "Error: No active project/thread. Use project_create first."
    );
    assert_eq!(
        read(&client, "threadmind://context").await,
        ("text/plain".into(), "No active project or thread. Use project_create first.".into())
    );
    assert_eq!(
        read(&client, "threadmind://tree").await.1,
        "No active project. Use project_create first."
    );

    let tip = "Main thread created and set as active.\n\nTip: Run `threadmind_init` to generate instruction files (CLAUDE.md, .cursorrules) for automatic context integration.";
    assert_eq!(
        ok(&client, "project_create", json!({ "title": "My App", "systemContext": "Be helpful." }))
            .await,
        format!("Project \"My App\" created (id: my-app, mode: solo).\n{tip}")
    );
    assert_eq!(
        ok(&client, "project_create", json!({ "title": "My App", "mode": "team" })).await,
        format!("Project \"My App\" created (id: my-app-2, mode: team).\n{tip}")
    );
    assert_eq!(
        ok(&client, "project_list", json!({})).await,
        "- My App (my-app-2) [team] ← active\n- My App (my-app) [solo]"
    );
    assert_eq!(
        ok(&client, "project_switch", json!({ "projectId": "my-app" })).await,
        "Switched to project \"my-app\". Active thread reset to \"main\"."
    );
    assert_eq!(
        refused(&client, "project_switch", json!({ "projectId": "nope" })).await,
        "Error: Project \"nope\" not found"
    );
    assert_eq!(
        ok(&client, "thread_create", json!({ "title": "Auth System" })).await,
        format!(
            "Thread \"auth-system\" created under \"main\".\n\nmain\nauth-system ← active{NO_SUMMARY_MAIN}"
        )
    );
    assert_eq!(
        ok(&client, "thread_create", json!({ "title": "Auth UI" })).await,
        format!(
            "Thread \"auth-ui\" created under \"auth-system\".\n\nmain\nauth-system\nauth-ui ← active{NO_SUMMARY_AUTH}"
        )
    );
    assert_eq!(
        ok(&client, "thread_switch", json!({ "threadId": "auth-system" })).await,
        "Switched to thread \"auth-system\".\n\nContext preview (~9 tokens):\n## System Context\n\nBe helpful."
    );
    assert_eq!(
        ok(&client, "thread_create", json!({ "title": "Auth API" })).await,
        format!(
            "Thread \"auth-api\" created under \"auth-system\".\n\nmain\nauth-system\nauth-ui\nauth-api ← active{NO_SUMMARY_AUTH}"
        )
    );
    ok(&client, "thread_create", json!({ "title": "Dashboard", "parentId": "main" })).await;
    assert_eq!(
        ok(&client, "thread_create", json!({ "title": "Dashboard", "parentId": "main" })).await,
        format!(
            "Thread \"dashboard-2\" created under \"main\".\n\nmain\nauth-system\nauth-ui\nauth-api\ndashboard\ndashboard-2 ← active{NO_SUMMARY_MAIN}"
        )
    );
    assert_eq!(
        refused(&client, "thread_create", json!({ "title": "x", "parentId": "ghost" })).await,
        "Error: Parent thread \"ghost\" not found"
    );
    assert_eq!(
        ok(
            &client,
            "summary_update",
            json!({ "content": "Root summary about the app.", "threadId": "main" })
        )
        .await,
        "Summary updated for thread \"main\"."
    );
    let long = format!("Auth summary {}", "é".repeat(400));
    ok(&client, "summary_update", json!({ "content": long })).await;
    assert_eq!(
        ok(&client, "summary_update", json!({ "content": "  Auth summary v2  \n\n" })).await,
        "Summary updated for thread \"dashboard-2\"."
    );
    assert_eq!(
        ok(&client, "thread_create", json!({ "title": "Under Main", "parentId": "main" })).await,
        "Thread \"under-main\" created under \"main\".\n\nmain\nauth-system\nauth-ui\nauth-api\ndashboard\ndashboard-2\nunder-main ← active",
        "no warning once the parent has a summary"
    );
    assert_eq!(
        ok(&client, "thread_switch", json!({ "threadId": "auth-ui" })).await,
        "Switched to thread \"auth-ui\".\n\nContext preview (~24 tokens):\n## System Context\n\nBe helpful.\n\n---\n\n## Thread: My App\n\nRoot summary about the app."
    );
    assert_eq!(
        refused(&client, "thread_switch", json!({ "threadId": "ghost" })).await,
        "Error: Thread \"ghost\" not found"
    );
    assert_eq!(
        ok(&client, "context_get", json!({})).await,
        "## System Context\n\nBe helpful.\n\n---\n\n## Thread: My App\n\nRoot summary about the app.\n\n---\n_ThreadMind context: ~24 tokens | depth: 3 threads_\n_Estimated raw history: ~132 tokens (~82% reduction from 3 summary updates)_"
    );
    let stats_head = "ThreadMind Stats: \"My App\"\n\nOverview:\n";
    let stats_tail = "Token Savings (estimated):\n  Estimated raw history: ~132 tokens\n";
    let breakdown = "Per-Thread Breakdown:\n  Thread               Updates   Current    Cumulative     Ratio\n  main                 1         ~8         ~8             0%\n  dashboard-2          2         ~6         ~124           95%\n\nMethod: Cumulative summary input vs current context size.\nToken estimates use ~3.5 chars/token approximation.";
    assert_eq!(
        ok(&client, "stats_show", json!({})).await,
        format!(
            "{stats_head}  Threads: 7 (2 with tracked updates)\n  Summary updates: 3\n  Current context: ~24 tokens (depth: 3)\n\n{stats_tail}  ThreadMind context:    ~24 tokens\n  Reduction:             ~82%\n\n{breakdown}"
        )
    );

    for (arguments, error) in [
        (json!({ "threadId": "main", "newParentId": "auth-ui" }), "Cannot rebase the main thread"),
        (
            json!({ "threadId": "auth-ui", "newParentId": "auth-ui" }),
            "Cannot rebase \"auth-ui\" onto itself",
        ),
        (
            json!({ "threadId": "auth-system", "newParentId": "auth-ui" }),
            "Cannot rebase \"auth-system\" onto \"auth-ui\": \"auth-ui\" is a descendant of \"auth-system\"",
        ),
        (
            json!({ "threadId": "auth-ui", "newParentId": "auth-system" }),
            "Thread \"auth-ui\" is already under \"auth-system\"",
        ),
        (
            json!({ "threadId": "auth-ui", "newParentId": "ghost" }),
            "Target parent thread \"ghost\" not found",
        ),
    ] {
        assert_eq!(refused(&client, "thread_rebase", arguments).await, format!("Error: {error}"));
    }
    assert_eq!(
        ok(&client, "thread_rebase", json!({ "threadId": "auth-ui", "newParentId": "dashboard" }))
            .await,
        "Thread \"auth-ui\" moved under \"dashboard\".\n\nmain\nauth-system\nauth-api\ndashboard\nauth-ui ← active\ndashboard-2\nunder-main"
    );
    assert_eq!(
        refused(&client, "thread_delete", json!({ "threadId": "main" })).await,
        "Error: Cannot delete the main thread"
    );
    assert_eq!(
        ok(&client, "thread_delete", json!({ "threadId": "dashboard" })).await,
        "Thread \"dashboard\" and its descendants deleted.\n\nmain ← active\nauth-system\nauth-api\ndashboard-2\nunder-main"
    );
    assert_eq!(
        ok(&client, "stats_show", json!({})).await,
        format!(
            "{stats_head}  Threads: 5 (2 with tracked updates)\n  Summary updates: 3\n  Current context: ~27 tokens (depth: 1)\n\n{stats_tail}  ThreadMind context:    ~27 tokens\n  Reduction:             ~80%\n\n{breakdown}"
        ),
        "a deleted thread's updates stay counted, as in ThreadMind"
    );
    let context = "## System Context\n\nBe helpful.\n\n---\n\n## Thread: My App (active)\n\nRoot summary about the app.\n\n---\n_~27 tokens | depth: 1_";
    assert_eq!(
        read(&client, "threadmind://context").await,
        ("text/markdown".into(), context.into())
    );
    assert_eq!(read(&client, "pinloom://context").await.1, context, "both schemes answer");
    assert_eq!(
        read(&client, "pinloom://tree").await,
        (
            "text/plain".into(),
            "main ← active\nauth-system\nauth-api\ndashboard-2\nunder-main".into()
        )
    );
    let unknown = client.read_resource(ReadResourceRequestParams::new("threadmind://nope")).await;
    assert!(format!("{unknown:?}").contains("Resource threadmind://nope not found"), "{unknown:?}");

    // Argument checks and unknown names, in the words of the SDK ThreadMind is served with.
    assert_eq!(
        refused(&client, "thread_create", json!({})).await,
        "MCP error -32602: Input validation error: Invalid arguments for tool thread_create: Required at title"
    );
    assert_eq!(
        refused(&client, "threadmind_init", json!({ "clients": ["bogus"] })).await,
        "MCP error -32602: Input validation error: Invalid arguments for tool threadmind_init: Invalid enum value. Expected 'claude' | 'cursor' | 'generic', received 'bogus' at clients[0]"
    );
    assert_eq!(
        refused(&client, "no_such_tool", json!({})).await,
        "MCP error -32602: Tool no_such_tool not found"
    );

    // threadmind_init writes ThreadMind's three files in the server's folder, pointing at Pinloom.
    let init = ok(&client, "threadmind_init", json!({ "clients": ["claude", "claude"] })).await;
    let claude = folder.canonicalize().unwrap().join("CLAUDE.md");
    assert_eq!(
        init,
        format!(
            "Instruction files generated:\n  - claude: {0} (created)\n  - claude: {0} (updated — existing content preserved)\n\nThreadMind section is delimited by <!-- threadmind:start/end --> markers.\nRe-run threadmind_init at any time to update the ThreadMind section without affecting your other content.",
            claude.display()
        )
    );
    std::fs::write(folder.join(".cursorrules"), "user rules\n\n\n").unwrap();
    ok(&client, "threadmind_init", json!({})).await;
    let written = std::fs::read_to_string(&claude).unwrap();
    assert!(
        written.starts_with("<!-- threadmind:start -->\n")
            && written.ends_with("<!-- threadmind:end -->\n")
    );
    assert!(written.contains("Project: \"My App\"") && written.contains("pinloom mcp"));
    let rules = std::fs::read_to_string(folder.join(".cursorrules")).unwrap();
    assert!(rules.starts_with("user rules\n\n<!-- threadmind:start -->"), "{rules}");
    assert!(folder.join(".threadmind/instructions.md").exists());

    // Prompts: ThreadMind's eleven, in its order, with its arguments.
    let prompts = client.list_all_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "start-thread",
            "summarize-thread",
            "tm-help",
            "tm-context",
            "tm-tree",
            "tm-create",
            "tm-switch",
            "tm-summary",
            "tm-rebase",
            "tm-stats",
            "tm-init"
        ]
    );
    let rebase = prompts.iter().find(|p| p.name == "tm-rebase").unwrap();
    let arguments: Vec<(&str, Option<bool>)> = rebase
        .arguments
        .iter()
        .flatten()
        .map(|argument| (argument.name.as_str(), argument.required))
        .collect();
    assert_eq!(arguments, [("threadId", Some(true)), ("newParentId", Some(true))]);
    let start = prompt(&client, "start-thread", json!({})).await.unwrap();
    assert!(start.contains("## Thread: My App (active)\n\nRoot summary about the app."), "{start}");
    let summarize = prompt(&client, "summarize-thread", json!({ "topic": "auth" })).await.unwrap();
    assert!(
        summarize.contains("\"main\"")
            && summarize.contains("auth")
            && summarize.contains("Root summary about the app.")
    );
    assert!(summarize.contains("`summary_update`"));
    let help = prompt(&client, "tm-help", json!({})).await.unwrap();
    assert!(help.contains("Active project: **my-app** | Active thread: **main**"), "{help}");
    assert!(help.contains("`tm:rebase <id> <newParentId>`") && help.contains("`pin_create`"));
    assert!(
        prompt(&client, "tm-create", json!({ "title": "Billing" }))
            .await
            .unwrap()
            .contains("\"Billing\"")
    );
    let missing = prompt(&client, "tm-create", json!({})).await.unwrap_err();
    assert!(
        format!("{missing:?}")
            .contains("Invalid arguments for prompt tm-create: Required at title")
    );
    let unknown = prompt(&client, "nope", json!({})).await.unwrap_err();
    assert!(format!("{unknown:?}").contains("Prompt nope not found"));

    client.cancel().await.unwrap();
}

#[tokio::test]
async fn subscribers_hear_of_every_change_the_apps_included() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pinloom.sqlite3");
    // The desktop app has the database open the whole time.
    let app = Pinloom::open(dir.path().to_owned()).await.unwrap();
    let recorder = Recorder::default();
    let client = start(&db, dir.path(), recorder.clone()).await;
    ok(&client, "project_create", json!({ "title": "Rivers" })).await;
    client.subscribe(SubscribeRequestParams::new("threadmind://context")).await.unwrap();
    client.subscribe(SubscribeRequestParams::new("pinloom://tree")).await.unwrap();

    ok(&client, "thread_create", json!({ "title": "Bends" })).await;
    assert_eq!(recorder.next().await, ["pinloom://tree", "threadmind://context"]);
    ok(&client, "summary_update", json!({ "content": "Bends erode outward." })).await;
    assert_eq!(recorder.next().await.len(), 2);

    // A write by the app, another process's connection, is noticed too.
    let tree = app.list_trees().await.unwrap()[0].id;
    app.append_message(tree, None, "Why do rivers meander?".into()).await.unwrap();
    assert_eq!(recorder.next().await, ["pinloom://tree", "threadmind://context"]);

    // Both write at once, each with the file open, and nothing is lost.
    let first = app.list_trees().await.unwrap()[0].message_count;
    let (written, ()) = tokio::join!(
        async {
            let mut parent = app
                .thread_view(tree, None)
                .await
                .unwrap()
                .messages
                .last()
                .map(|m| m.node.message.id);
            for i in 0..20 {
                parent =
                    Some(app.append_message(tree, parent, format!("step {i}")).await.unwrap().id);
            }
            parent
        },
        async {
            for i in 0..20 {
                ok(&client, "summary_update", json!({ "content": format!("update {i}") })).await;
            }
        }
    );
    assert!(written.is_some());
    assert_eq!(app.list_trees().await.unwrap()[0].message_count, first + 20);
    let stats = ok(&client, "stats_show", json!({})).await;
    assert!(stats.contains("Summary updates: 21"), "{stats}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn pins_threads_and_budgets_through_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pinloom.sqlite3");
    let app = Pinloom::open(dir.path().to_owned()).await.unwrap();
    app.save_model_profile(ModelProfile::new("Small", "openai", "gpt-4o", 300, 100, "o200k"))
        .await
        .unwrap();
    let tree = app.create_tree("Rivers".into(), TreeMode::Dialogue).await.unwrap();
    let question =
        app.append_message(tree.id, None, "Why do rivers meander?".into()).await.unwrap();
    let answer = app
        .append_message(
            tree.id,
            Some(question.id),
            "Because the outer bank erodes, bank by bank.".into(),
        )
        .await
        .unwrap();
    let client = start(&db, dir.path(), Recorder::default()).await;
    ok(&client, "project_switch", json!({ "projectId": tree.slug })).await;

    let messages = ok(&client, "thread_messages", json!({})).await;
    assert_eq!(
        messages,
        format!(
            "Thread \"main\" (2 messages):\n\n#{} user:\nWhy do rivers meander?\n\n#{} user:\nBecause the outer bank erodes, bank by bank.",
            question.id, answer.id
        )
    );
    let twice =
        refused(&client, "pin_create", json!({ "messageId": answer.id, "passage": "bank" })).await;
    assert!(twice.contains("appears 3 times") && twice.contains("start"), "{twice}");
    let absent =
        refused(&client, "pin_create", json!({ "messageId": answer.id, "passage": "delta" })).await;
    assert!(absent.contains("does not contain"), "{absent}");
    let pinned = ok(
        &client,
        "pin_create",
        json!({ "messageId": answer.id, "passage": "outer bank erodes" }),
    )
    .await;
    assert_eq!(
        pinned,
        format!(
            "Pinned \"outer bank erodes\" of message {} as thread \"outer-bank-erodes\" under \"main\".\n\nmain\nouter-bank-erodes ← active",
            answer.id
        )
    );
    // The app sees the pin with its passage, on the message.
    let pins = app.pins_on(answer.id).await.unwrap();
    assert_eq!(pins[0].anchor_text.as_deref(), Some("outer bank erodes"));

    // A question asked in the pin (by the app), then the plan the server shows for it.
    app.ask_in_pin(pins[0].id, "Why the outer one?".into()).await.unwrap();
    let report = ok(&client, "context_assemble", json!({ "profile": "Small" })).await;
    assert!(report.contains("under \"Small\""), "{report}");
    assert!(report.contains("anchor"), "the anchor travels verbatim: {report}");
    // No summary was written (an agent's tool call never starts one): the root thread's last
    // messages stand in, and the report says so.
    assert!(report.contains("What it knows of its ancestry, root first:\n  - "), "{report}");
    assert!(report.contains("(the parent thread, budget 800): summary not available: not written yet; its last messages before the branching point, verbatim"), "{report}");
    assert!(
        report.contains("Cut, by priority (the highest number is cut first; 1 and 2 never are):")
            || report.contains("Nothing was cut."),
        "{report}"
    );
    let request =
        ok(&client, "context_assemble", json!({ "profile": "Small", "format": "request" })).await;
    let body: Value = serde_json::from_str(&request).unwrap();
    assert_eq!(body["model"], "gpt-4o");
    assert!(request.contains("outer bank erodes"));
    let plan =
        ok(&client, "context_assemble", json!({ "format": "plan", "profile": "Small" })).await;
    assert!(serde_json::from_str::<Value>(&plan).unwrap()["slices"].is_array());
    assert!(
        ok(&client, "profile_list", json!({}))
            .await
            .contains("- Small: openai gpt-4o, window 300 tokens, 100 kept for the reply")
    );

    assert_eq!(
        ok(&client, "pin_close", json!({ "result": "The outer bank takes the current." })).await,
        "Thread \"outer-bank-erodes\" closed; its result now shows in \"main\"."
    );
    let closed = app.pins_on(answer.id).await.unwrap();
    assert_eq!(closed[0].result.as_deref(), Some("The outer bank takes the current."));
    let main = refused(&client, "pin_close", json!({ "threadId": "main", "result": "x" })).await;
    assert!(main.contains("not a pin"), "{main}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_line_that_is_not_json_gets_a_parse_error_and_the_server_goes_on() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pinloom.sqlite3");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_pinloom"))
        .arg("--db")
        .arg(&db)
        .arg("mcp")
        .current_dir(dir.path())
        .env_remove("PINLOOM_DATA_DIR")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    // An answer that never comes fails the test instead of hanging it.
    async fn next(lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>) -> String {
        let waited = tokio::time::timeout(std::time::Duration::from_secs(20), lines.next_line());
        waited.await.expect("the server answered").unwrap().unwrap()
    }
    let parse_error = |line: &str| {
        let answer: Value = serde_json::from_str(line).unwrap();
        answer["error"]["code"] == -32700 && answer["id"].is_null()
    };

    stdin.write_all(b"hello, is this MCP?\n").await.unwrap();
    let line = next(&mut stdout).await;
    assert!(parse_error(&line), "{line}");
    // JSON with a lone surrogate in a string is not valid JSON either.
    stdin
        .write_all(
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\\ud800\"}}\n",
        )
        .await
        .unwrap();
    let line = next(&mut stdout).await;
    assert!(parse_error(&line), "{line}");

    // And the session goes on: the handshake is answered.
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 7, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}}
    });
    stdin.write_all(format!("{initialize}\n").as_bytes()).await.unwrap();
    let line = next(&mut stdout).await;
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["id"], 7, "{line}");
    assert!(answer["result"]["serverInfo"].is_object(), "{line}");

    drop(stdin);
    let status = child.wait().await.unwrap();
    assert!(status.success(), "a closed input ends the server cleanly: {status}");
}
