//! Snapshot tests of the renderings (expect-test: `UPDATE_EXPECT=1 cargo test` rewrites them).

use expect_test::expect;
use pinloom_engine::family::request_body;
use pinloom_engine::planner::plan;
use pinloom_engine::profile::{ProviderFamily, RoleRules};
use pinloom_engine::render::buffer_document;
use pinloom_engine::settings::Settings;
use pinloom_engine::snapshot::{Author, TreeMode};
use pinloom_engine::threadmind::{self, SummaryWrite, ThreadEntry, ThreadSection};

use crate::fixtures::{Tree, profile};

/// Seed 000's example chain: main → auth → auth-ui (active); its siblings never reach a chain.
fn seed_chain() -> Vec<ThreadSection> {
    let section =
        |title: &str, content: &str| ThreadSection { title: title.into(), content: content.into() };
    vec![
        section("My App", "Project overview: Next.js e-commerce with PostgreSQL..."),
        section("Auth", "JWT auth with refresh tokens, bcrypt, Passport.js..."),
        section(
            "Auth UI",
            "Login form with email/password, registration page\nwith validation, forgot password flow...",
        ),
    ]
}

fn writes(log: &[(&str, u64)]) -> Vec<SummaryWrite> {
    log.iter()
        .map(|(thread, units)| SummaryWrite { thread: (*thread).into(), units: *units })
        .collect()
}

const SEED_SYSTEM: &str = "Building a Next.js e-commerce application with Stripe.";

#[test]
fn threadmind_markdown_matches_v0_4_1_seed_000() {
    let context = threadmind::assemble(SEED_SYSTEM, &seed_chain());
    let stats = threadmind::stats_by_thread(&writes(&[
        ("main", 1_000),
        ("auth-system", 800),
        ("main", 3_000),
        ("auth-ui", 2_500),
    ]));
    expect![[r#"
        ## System Context

        Building a Next.js e-commerce application with Stripe.

        ---

        ## Thread: My App

        Project overview: Next.js e-commerce with PostgreSQL...

        ---

        ## Thread: Auth

        JWT auth with refresh tokens, bcrypt, Passport.js...

        ---

        ## Thread: Auth UI (active)

        Login form with email/password, registration page
        with validation, forgot password flow...

        ---
        _ThreadMind context: ~102 tokens | depth: 3 threads_
        _Estimated raw history: ~2,086 tokens (~95% reduction from 4 summary updates)_"#]]
    .assert_eq(&threadmind::context_text(&context, &stats));
    expect![[r#"
        ThreadMind Stats: "My App"

        Overview:
          Threads: 5 (3 with tracked updates)
          Summary updates: 4
          Current context: ~102 tokens (depth: 3)

        Token Savings (estimated):
          Estimated raw history: ~2,086 tokens
          ThreadMind context:    ~102 tokens
          Reduction:             ~95%

        Per-Thread Breakdown:
          Thread               Updates   Current    Cumulative     Ratio
          main                 2         ~858       ~1143          25%
          auth-system          1         ~229       ~229           0%
          auth-ui              1         ~715       ~715           0%

        Method: Cumulative summary input vs current context size.
        Token estimates use ~3.5 chars/token approximation."#]]
    .assert_eq(&threadmind::stats_text("My App", 5, &context, &stats));
    expect![[r#"
        ThreadMind Stats: "My App"

        Overview:
          Threads: 5 (0 with tracked updates)
          Summary updates: 0
          Current context: ~102 tokens (depth: 3)

        Token Savings:
          No summary updates tracked yet. Use summary_update to start tracking.

        Method: Cumulative summary input vs current context size.
        Token estimates use ~3.5 chars/token approximation."#]]
    .assert_eq(&threadmind::stats_text("My App", 5, &context, &[]));
}

#[test]
fn threadmind_skips_empty_sections_but_counts_their_depth_seed_000() {
    let mut chain = seed_chain();
    chain[1].content.clear();
    chain[2].content =
        threadmind::transcript([(Author::Human, "Login form?"), (Author::Model, "Two fields.")]);
    let context = threadmind::assemble("", &chain);
    expect![[r#"
        ## Thread: My App

        Project overview: Next.js e-commerce with PostgreSQL...

        ---

        ## Thread: Auth UI (active)

        user: Login form?

        assistant: Two fields.

        ---
        _~44 tokens | depth: 3_"#]]
    .assert_eq(&threadmind::context_resource(&context));
    // An empty chain still has a footer (ThreadMind's output for a thread with nothing yet).
    let empty =
        threadmind::assemble("", &[ThreadSection { title: "x".into(), content: String::new() }]);
    assert_eq!(
        threadmind::context_text(&empty, &[]),
        "\n\n---\n_ThreadMind context: ~0 tokens | depth: 1 threads_"
    );
}

/// What ThreadMind v0.4.1 printed in a recorded run (project "My App", system context
/// "Be helpful.", summaries on main and on dashboard-2 written twice, auth-ui active).
#[test]
fn threadmind_outputs_equal_a_recorded_v0_4_1_run_seed_000() {
    let chain = [
        ThreadSection { title: "My App".into(), content: "Root summary about the app.".into() },
        ThreadSection { title: "Auth System".into(), content: String::new() },
        ThreadSection { title: "Auth UI".into(), content: String::new() },
    ];
    let context = threadmind::assemble("Be helpful.", &chain);
    let long = format!("Auth summary {}", "é".repeat(400));
    let stats = threadmind::stats_by_thread(&[
        SummaryWrite { thread: "main".into(), units: 27 },
        SummaryWrite { thread: "dashboard-2".into(), units: long.encode_utf16().count() as u64 },
        SummaryWrite { thread: "dashboard-2".into(), units: 21 },
    ]);
    assert_eq!(
        threadmind::context_text(&context, &stats),
        "## System Context\n\nBe helpful.\n\n---\n\n## Thread: My App\n\nRoot summary about the app.\n\n---\n_ThreadMind context: ~24 tokens | depth: 3 threads_\n_Estimated raw history: ~132 tokens (~82% reduction from 3 summary updates)_"
    );
    assert_eq!(
        threadmind::stats_text("My App", 7, &context, &stats),
        "ThreadMind Stats: \"My App\"\n\nOverview:\n  Threads: 7 (2 with tracked updates)\n  Summary updates: 3\n  Current context: ~24 tokens (depth: 3)\n\nToken Savings (estimated):\n  Estimated raw history: ~132 tokens\n  ThreadMind context:    ~24 tokens\n  Reduction:             ~82%\n\nPer-Thread Breakdown:\n  Thread               Updates   Current    Cumulative     Ratio\n  main                 1         ~8         ~8             0%\n  dashboard-2          2         ~6         ~124           95%\n\nMethod: Cumulative summary input vs current context size.\nToken estimates use ~3.5 chars/token approximation."
    );
    let threads = [
        ("main", None),
        ("auth-system", Some(0)),
        ("auth-api", Some(1)),
        ("dashboard", Some(0)),
        ("auth-ui", Some(3)),
        ("dashboard-2", Some(0)),
        ("under-main", Some(0)),
    ]
    .map(|(id, parent)| ThreadEntry { id: id.into(), parent });
    assert_eq!(
        threadmind::thread_list(&threads, Some(4)),
        "main\nauth-system\nauth-api\ndashboard\nauth-ui ← active\ndashboard-2\nunder-main"
    );
    let preview = threadmind::preview(&context.text, threadmind::PREVIEW_UNITS);
    assert_eq!(preview, context.text, "under 300 units the preview is the whole context");
}

fn small_chat() -> Tree {
    let mut t = Tree::new("t");
    t.snapshot.tree.system_context = "Be brief.".into();
    t.say(Author::Human, "Hi");
    t.say(Author::Model, "Hello!");
    t.say(Author::Human, "Weather?");
    t
}

fn body(
    family: ProviderFamily,
    tune: impl Fn(&mut pinloom_engine::profile::ModelProfile),
) -> String {
    let t = small_chat();
    let mut prof = profile(family, 1000);
    tune(&mut prof);
    let p = plan(&t.snapshot, &prof, &Settings::default()).unwrap();
    request_body(&p, &t.snapshot, &prof)
}

#[test]
fn openai_compatible_body() {
    expect![[r#"{"messages":[{"content":"Be brief.","role":"system"},{"content":"Hi","role":"user"},{"content":"Hello!","role":"assistant"},{"content":"Weather?","role":"user"}],"model":"test-model","stream":true}"#]].assert_eq(&body(ProviderFamily::OpenAiCompatible, |_| {}));
}

#[test]
fn mistral_body_without_native_system() {
    expect![[r#"{"messages":[{"content":"Be brief.\n\nHi","role":"user"},{"content":"Hello!","role":"assistant"},{"content":"Weather?","role":"user"}],"model":"test-model","stream":true}"#]].assert_eq(&body(ProviderFamily::OpenAiCompatible, |p| {
        p.role_rules = RoleRules::mistral();
        p.native_system = false;
    }));
}

#[test]
fn anthropic_body() {
    expect![[r#"{"max_tokens":0,"messages":[{"content":[{"text":"Hi","type":"text"}],"role":"user"},{"content":[{"cache_control":{"type":"ephemeral"},"text":"Hello!","type":"text"}],"role":"assistant"},{"content":[{"text":"Weather?","type":"text"}],"role":"user"}],"model":"test-model","stream":true,"system":[{"cache_control":{"type":"ephemeral"},"text":"Be brief.","type":"text"}]}"#]].assert_eq(&body(ProviderFamily::Anthropic, |_| {}));
}

#[test]
fn gemini_body() {
    expect![[r#"{"contents":[{"parts":[{"text":"Hi"}],"role":"user"},{"parts":[{"text":"Hello!"}],"role":"model"},{"parts":[{"text":"Weather?"}],"role":"user"}],"systemInstruction":{"parts":[{"text":"Be brief."}]}}"#]].assert_eq(&body(ProviderFamily::Gemini, |_| {}));
}

#[test]
fn ollama_body() {
    expect![[r#"{"messages":[{"content":"Be brief.","role":"system"},{"content":"Hi","role":"user"},{"content":"Hello!","role":"assistant"},{"content":"Weather?","role":"user"}],"model":"test-model","options":{"num_ctx":1000},"stream":true}"#]].assert_eq(&body(ProviderFamily::Ollama, |_| {}));
}

#[test]
fn buffer_document_with_marker_seed_002() {
    let mut t = Tree::new("t");
    t.snapshot.tree.mode = TreeMode::Buffer;
    for i in 0..8 {
        t.say(Author::Human, &format!("[part {i}] "));
    }
    t.snapshot.working_buffer = "and then".into();
    let p = plan(&t.snapshot, &profile(ProviderFamily::OpenAiCompatible, 40), &Settings::default())
        .unwrap();
    expect!["[part 0] [part 1] [part 2] [part 3] [part 4] [part 5] [part 6] [part 7] and then"]
        .assert_eq(&buffer_document(&p, &t.snapshot));
}

/// A thread with a tool call, its result (text that needs escaping) and a tool definition.
fn tool_chat() -> Tree {
    use pinloom_engine::snapshot::{Part, ToolDefinition};
    let mut t = small_chat();
    t.say(Author::Model, "Let me check.");
    t.snapshot.nodes.last_mut().unwrap().parts.push(Part::ToolCall {
        id: "call_1".into(),
        name: "weather".into(),
        arguments: r#"{"city":"Paris"}"#.into(),
    });
    t.say(Author::Tool, "");
    t.snapshot.nodes.last_mut().unwrap().parts =
        vec![Part::ToolResult { call_id: "call_1".into(), content: "12 °C, \"rain\"\n".into() }];
    t.say(Author::Model, "It rains in Paris.");
    t.say(Author::Human, "Thanks");
    t.snapshot.tools.push(ToolDefinition {
        name: "weather".into(),
        description: "Today's weather in a city".into(),
        parameters: r#"{"type":"object","properties":{"city":{"type":"string"}}}"#.into(),
    });
    t
}

/// The body as `request_body` writes it, checked to be the JSON `wire_body` gives the providers.
fn tool_body(family: ProviderFamily) -> String {
    let t = tool_chat();
    let prof = profile(family, 4000);
    let p = plan(&t.snapshot, &prof, &Settings::default()).unwrap();
    let written = request_body(&p, &t.snapshot, &prof);
    let request = pinloom_engine::render::chat_request(&p, &t.snapshot, &prof);
    let value = pinloom_engine::family::wire_body(&request, &t.snapshot.tools, &prof);
    assert_eq!(written, value.to_string(), "the two renderings of one body differ");
    written
}

#[test]
fn openai_compatible_body_with_tools() {
    expect![[r#"{"messages":[{"content":"Be brief.","role":"system"},{"content":"Hi","role":"user"},{"content":"Hello!","role":"assistant"},{"content":"Weather?","role":"user"},{"content":"Let me check.","role":"assistant","tool_calls":[{"function":{"arguments":"{\"city\":\"Paris\"}","name":"weather"},"id":"call_1","type":"function"}]},{"content":"12 °C, \"rain\"\n","role":"tool","tool_call_id":"call_1"},{"content":"It rains in Paris.","role":"assistant"},{"content":"Thanks","role":"user"}],"model":"test-model","stream":true,"tools":[{"function":{"description":"Today's weather in a city","name":"weather","parameters":{"properties":{"city":{"type":"string"}},"type":"object"}},"type":"function"}]}"#]].assert_eq(&tool_body(ProviderFamily::OpenAiCompatible));
}

#[test]
fn anthropic_body_with_tools() {
    expect![[r#"{"max_tokens":0,"messages":[{"content":[{"text":"Hi","type":"text"}],"role":"user"},{"content":[{"text":"Hello!","type":"text"}],"role":"assistant"},{"content":[{"text":"Weather?","type":"text"}],"role":"user"},{"content":[{"text":"Let me check.","type":"text"},{"id":"call_1","input":{"city":"Paris"},"name":"weather","type":"tool_use"}],"role":"assistant"},{"content":[{"content":"12 °C, \"rain\"\n","tool_use_id":"call_1","type":"tool_result"}],"role":"user"},{"content":[{"cache_control":{"type":"ephemeral"},"text":"It rains in Paris.","type":"text"}],"role":"assistant"},{"content":[{"text":"Thanks","type":"text"}],"role":"user"}],"model":"test-model","stream":true,"system":[{"cache_control":{"type":"ephemeral"},"text":"Be brief.","type":"text"}],"tools":[{"description":"Today's weather in a city","input_schema":{"properties":{"city":{"type":"string"}},"type":"object"},"name":"weather"}]}"#]].assert_eq(&tool_body(ProviderFamily::Anthropic));
}

#[test]
fn gemini_body_with_tools() {
    expect![[r#"{"contents":[{"parts":[{"text":"Hi"}],"role":"user"},{"parts":[{"text":"Hello!"}],"role":"model"},{"parts":[{"text":"Weather?"}],"role":"user"},{"parts":[{"text":"Let me check."},{"functionCall":{"args":{"city":"Paris"},"name":"weather"}}],"role":"model"},{"parts":[{"functionResponse":{"name":"weather","response":{"content":"12 °C, \"rain\"\n"}}}],"role":"user"},{"parts":[{"text":"It rains in Paris."}],"role":"model"},{"parts":[{"text":"Thanks"}],"role":"user"}],"systemInstruction":{"parts":[{"text":"Be brief."}]},"tools":[{"functionDeclarations":[{"description":"Today's weather in a city","name":"weather","parameters":{"properties":{"city":{"type":"string"}},"type":"object"}}]}]}"#]].assert_eq(&tool_body(ProviderFamily::Gemini));
}

#[test]
fn ollama_body_with_tools() {
    expect![[r#"{"messages":[{"content":"Be brief.","role":"system"},{"content":"Hi","role":"user"},{"content":"Hello!","role":"assistant"},{"content":"Weather?","role":"user"},{"content":"Let me check.","role":"assistant","tool_calls":[{"function":{"arguments":{"city":"Paris"},"name":"weather"}}]},{"content":"12 °C, \"rain\"\n","role":"tool"},{"content":"It rains in Paris.","role":"assistant"},{"content":"Thanks","role":"user"}],"model":"test-model","options":{"num_ctx":4000},"stream":true,"tools":[{"function":{"description":"Today's weather in a city","name":"weather","parameters":{"properties":{"city":{"type":"string"}},"type":"object"}},"type":"function"}]}"#]].assert_eq(&tool_body(ProviderFamily::Ollama));
}
