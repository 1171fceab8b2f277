//! Snapshot tests of the renderings (expect-test: `UPDATE_EXPECT=1 cargo test` rewrites them).

use expect_test::expect;
use pinloom_engine::planner::plan;
use pinloom_engine::profile::{ProviderFamily, RoleRules};
use pinloom_engine::render::{buffer_document, request_body};
use pinloom_engine::settings::Settings;
use pinloom_engine::snapshot::{Author, PinId, SummaryUpdate, ThreadRef, TreeMode};
use pinloom_engine::threadmind;

use crate::fixtures::{Tree, profile};

/// Seed 000's example tree: main → auth → auth-ui (active), with auth-api and dashboard as a
/// sibling and another branch that must not appear.
fn threadmind_tree() -> Tree {
    let mut t = Tree::new("My App");
    t.snapshot.tree.system_context =
        "Building a Next.js e-commerce application with Stripe.".into();
    t.snapshot.tree.thread_count = 5;
    let main = t.say(Author::Human, "Let us plan the shop.");
    t.pin(1, "Auth", None, "Auth design");
    let auth = t.say(Author::Model, "JWT it is.");
    t.pin(2, "Auth UI", None, "Login form?");
    let ui = t.snapshot.active;
    t.summary(
        ThreadRef::Root,
        main,
        None,
        "Project overview: Next.js e-commerce with PostgreSQL...",
    );
    t.summary(
        ThreadRef::Pin(PinId(1)),
        auth,
        None,
        "JWT auth with refresh tokens, bcrypt, Passport.js...",
    );
    t.summary(
        ThreadRef::Pin(PinId(2)),
        ui,
        None,
        "Login form with email/password, registration page\nwith validation, forgot password flow...",
    );
    for (label, thread, units) in [
        ("main", ThreadRef::Root, 1_000u64),
        ("auth-system", ThreadRef::Pin(PinId(1)), 800),
        ("main", ThreadRef::Root, 3_000),
        ("auth-ui", ThreadRef::Pin(PinId(2)), 2_500),
    ] {
        t.snapshot.summary_updates.push(SummaryUpdate {
            thread,
            thread_label: label.into(),
            content_units: units,
        });
    }
    t
}

#[test]
fn threadmind_markdown_matches_v0_4_1_seed_000() {
    let t = threadmind_tree();
    let md = threadmind::context_markdown(&t.snapshot, 50).unwrap();
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
    .assert_eq(&md);
}

#[test]
fn threadmind_active_thread_falls_back_to_its_messages_seed_000() {
    let mut t = threadmind_tree();
    t.snapshot.summaries.pop();
    t.snapshot.summary_updates.clear();
    t.say(Author::Model, "Use a form with two fields.");
    let md = threadmind::context_markdown(&t.snapshot, 50).unwrap();
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

        user: Login form?

        assistant: Use a form with two fields.

        ---
        _ThreadMind context: ~93 tokens | depth: 3 threads_"#]]
    .assert_eq(&md);
}

#[test]
fn threadmind_stats_match_v0_4_1_seed_000() {
    let t = threadmind_tree();
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
    .assert_eq(&threadmind::stats(&t.snapshot, 50).unwrap());
    let mut empty = threadmind_tree();
    empty.snapshot.summary_updates.clear();
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
    .assert_eq(&threadmind::stats(&empty.snapshot, 50).unwrap());
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
    expect![[r#"{"max_tokens":0,"messages":[{"content":[{"text":"Hi","type":"text"}],"role":"user"},{"content":[{"text":"Hello!","type":"text"}],"role":"assistant"},{"content":[{"text":"Weather?","type":"text"}],"role":"user"}],"model":"test-model","stream":true,"system":"Be brief."}"#]].assert_eq(&body(ProviderFamily::Anthropic, |_| {}));
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
    let value = pinloom_engine::render::wire_body(&request, &t.snapshot.tools, &prof);
    assert_eq!(written, value.to_string(), "the two renderings of one body differ");
    written
}

#[test]
fn openai_compatible_body_with_tools() {
    expect![[r#"{"messages":[{"content":"Be brief.","role":"system"},{"content":"Hi","role":"user"},{"content":"Hello!","role":"assistant"},{"content":"Weather?","role":"user"},{"content":"Let me check.","role":"assistant","tool_calls":[{"function":{"arguments":"{\"city\":\"Paris\"}","name":"weather"},"id":"call_1","type":"function"}]},{"content":"12 °C, \"rain\"\n","role":"tool","tool_call_id":"call_1"},{"content":"It rains in Paris.","role":"assistant"},{"content":"Thanks","role":"user"}],"model":"test-model","stream":true,"tools":[{"function":{"description":"Today's weather in a city","name":"weather","parameters":{"properties":{"city":{"type":"string"}},"type":"object"}},"type":"function"}]}"#]].assert_eq(&tool_body(ProviderFamily::OpenAiCompatible));
}

#[test]
fn anthropic_body_with_tools() {
    expect![[r#"{"max_tokens":0,"messages":[{"content":[{"text":"Hi","type":"text"}],"role":"user"},{"content":[{"text":"Hello!","type":"text"}],"role":"assistant"},{"content":[{"text":"Weather?","type":"text"}],"role":"user"},{"content":[{"text":"Let me check.","type":"text"},{"id":"call_1","input":{"city":"Paris"},"name":"weather","type":"tool_use"}],"role":"assistant"},{"content":[{"content":"12 °C, \"rain\"\n","tool_use_id":"call_1","type":"tool_result"}],"role":"user"},{"content":[{"text":"It rains in Paris.","type":"text"}],"role":"assistant"},{"content":[{"text":"Thanks","type":"text"}],"role":"user"}],"model":"test-model","stream":true,"system":"Be brief.","tools":[{"description":"Today's weather in a city","input_schema":{"properties":{"city":{"type":"string"}},"type":"object"},"name":"weather"}]}"#]].assert_eq(&tool_body(ProviderFamily::Anthropic));
}

#[test]
fn gemini_body_with_tools() {
    expect![[r#"{"contents":[{"parts":[{"text":"Hi"}],"role":"user"},{"parts":[{"text":"Hello!"}],"role":"model"},{"parts":[{"text":"Weather?"}],"role":"user"},{"parts":[{"text":"Let me check."},{"functionCall":{"args":{"city":"Paris"},"name":"weather"}}],"role":"model"},{"parts":[{"functionResponse":{"name":"weather","response":{"content":"12 °C, \"rain\"\n"}}}],"role":"user"},{"parts":[{"text":"It rains in Paris."}],"role":"model"},{"parts":[{"text":"Thanks"}],"role":"user"}],"systemInstruction":{"parts":[{"text":"Be brief."}]},"tools":[{"functionDeclarations":[{"description":"Today's weather in a city","name":"weather","parameters":{"properties":{"city":{"type":"string"}},"type":"object"}}]}]}"#]].assert_eq(&tool_body(ProviderFamily::Gemini));
}

#[test]
fn ollama_body_with_tools() {
    expect![[r#"{"messages":[{"content":"Be brief.","role":"system"},{"content":"Hi","role":"user"},{"content":"Hello!","role":"assistant"},{"content":"Weather?","role":"user"},{"content":"Let me check.","role":"assistant","tool_calls":[{"function":{"arguments":{"city":"Paris"},"name":"weather"}}]},{"content":"12 °C, \"rain\"\n","role":"tool"},{"content":"It rains in Paris.","role":"assistant"},{"content":"Thanks","role":"user"}],"model":"test-model","options":{"num_ctx":4000},"stream":true,"tools":[{"function":{"description":"Today's weather in a city","name":"weather","parameters":{"properties":{"city":{"type":"string"}},"type":"object"}},"type":"function"}]}"#]].assert_eq(&tool_body(ProviderFamily::Ollama));
}
