//! A reply streamed from each wire family through `Provider::stream`, from a server replaying the
//! provider's own stream bytes, split into small chunks; and every way a stream can go wrong.

use std::time::Duration;

use pinloom_engine::render::single_turn;
use pinloom_providers::retry::RetryPolicy;
use pinloom_providers::wire::{Endpoint, ProviderId, Sampling, Task, build};
use pinloom_providers::{ProviderError, Timeouts, Usage, catalog};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::{KEY, chat_wire, fixture, key, provider_with, send, texts};
use pinloom_test_server::{Answer, Server, Then};

fn provider() -> pinloom_providers::Provider {
    provider_with(Timeouts::default(), RetryPolicy::never())
}

const OPENAI_TEXT: &str = "I'm unable to provide real-time weather updates. To get the current \
weather in San Francisco, I recommend checking a reliable weather website or a weather app.";

#[tokio::test]
async fn openai_reply_streams_with_usage_and_the_key_as_a_bearer_token() {
    let body = fixture("openai-chat-completions-stream-usage.recorded.sse.txt");
    let server = Server::start(vec![Answer::sse(&body, 7)]).await;
    let wire = chat_wire(&server.base, ProviderId::OpenAi, "gpt-4o");
    let (reply, events) = send(&provider(), &wire, Some(&key())).await;
    let reply = reply.unwrap();
    assert_eq!(reply.text, OPENAI_TEXT);
    assert_eq!(texts(&events).concat(), OPENAI_TEXT, "the deltas reach the channel as they come");
    assert!(texts(&events).len() > 5, "streamed in pieces, not at the end");
    assert_eq!(
        reply.usage,
        Usage {
            input_tokens: Some(14),
            output_tokens: Some(30),
            cached_input_tokens: None,
            cache_write_input_tokens: None
        }
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    assert!(!reply.is_incomplete(), "{:?}", reply.interruption);
    let seen = &server.seen()[0];
    assert_eq!((seen.method.as_str(), seen.path.as_str()), ("POST", "/chat/completions"));
    assert_eq!(seen.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    let body = seen.json();
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true, "usage only comes when asked");
    assert_eq!(body["messages"][0]["role"], "system", "gpt-4o takes the system context natively");
    assert_eq!(body["messages"][0]["content"], "Answer briefly.");
}

#[tokio::test]
async fn o1_mini_gets_its_system_context_injected_into_the_first_user_message() {
    let body = fixture("openai-chat-completions-stream-usage.recorded.sse.txt");
    let server = Server::start(vec![Answer::sse(&body, 0)]).await;
    let wire = chat_wire(&server.base, ProviderId::OpenAi, "o1-mini");
    let (reply, _) = send(&provider(), &wire, Some(&key())).await;
    assert_eq!(reply.unwrap().text, OPENAI_TEXT);
    let body = server.seen()[0].json();
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "no system message: {body}");
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(messages[0]["content"], "Answer briefly.\n\nWhy is the sky blue?");
}

#[tokio::test]
async fn anthropic_reply_streams_past_pings_with_usage_from_start_and_delta() {
    let body = fixture("anthropic-messages-stream.txt");
    let server = Server::start(vec![Answer::sse(&body, 5)]).await;
    let wire = chat_wire(&server.base, ProviderId::Anthropic, "claude-sonnet-4-5");
    let (reply, _) = send(&provider(), &wire, Some(&key())).await;
    let reply = reply.unwrap();
    assert_eq!(reply.text, "Hello!");
    assert_eq!(reply.usage.input_tokens, Some(25));
    assert_eq!(reply.usage.output_tokens, Some(15), "message_delta's count is cumulative");
    assert_eq!(reply.finish_reason.as_deref(), Some("end_turn"));
    assert!(!reply.is_incomplete());
    let seen = &server.seen()[0];
    assert_eq!(seen.path, "/messages");
    assert_eq!(seen.header("x-api-key"), Some(KEY));
    assert_eq!(seen.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(seen.header("authorization"), None);
    let body = seen.json();
    assert_eq!(
        body["system"][0]["text"], "Answer briefly.",
        "Anthropic's system is a top-level field"
    );
    assert_eq!(
        body["system"][0]["cache_control"]["type"], "ephemeral",
        "the system text is the first prompt-cache breakpoint"
    );
    assert_eq!(body["max_tokens"], 8192, "max_tokens is required: the profile's reserve");
    assert_eq!(body["messages"][0]["role"], "user");
}

#[tokio::test]
async fn anthropic_cache_reads_and_writes_count_as_input() {
    // Anthropic's `input_tokens` leaves out what the prompt cache read and wrote; a receipt
    // compares the whole request with the plan, so the three are added up.
    let text = String::from_utf8(fixture("anthropic-messages-stream.txt")).unwrap().replace(
        r#""usage": {"input_tokens": 25, "output_tokens": 1}"#,
        r#""usage": {"input_tokens": 25, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 4000, "output_tokens": 1}"#,
    );
    assert!(text.contains("cache_read_input_tokens"), "the fixture's usage line was found");
    let server = Server::start(vec![Answer::sse(text.as_bytes(), 5)]).await;
    let wire = chat_wire(&server.base, ProviderId::Anthropic, "claude-sonnet-4-5");
    let (reply, _) = send(&provider(), &wire, Some(&key())).await;
    let usage = reply.unwrap().usage;
    assert_eq!(usage.input_tokens, Some(4325));
    assert_eq!(usage.cached_input_tokens, Some(4000));
    assert_eq!(usage.cache_write_input_tokens, Some(300));
}

#[tokio::test]
async fn anthropic_tool_use_stream_keeps_its_text_and_ignores_tool_input_deltas() {
    let mut body = fixture("anthropic-messages-stream-tooluse.txt");
    body.extend_from_slice(b"\n"); // the docs' block omits the stream's final blank line
    let server = Server::start(vec![Answer::sse(&body, 13)]).await;
    let wire = chat_wire(&server.base, ProviderId::Anthropic, "claude-sonnet-4-5");
    let (reply, _) = send(&provider(), &wire, Some(&key())).await;
    let reply = reply.unwrap();
    assert!(reply.text.starts_with("Okay, let's check the weather"), "{}", reply.text);
    assert!(!reply.text.contains("location"), "tool input is not reply text: {}", reply.text);
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_use"));
}

#[tokio::test]
async fn gemini_reply_streams_from_crlf_frames_with_the_key_in_a_header_not_the_url() {
    let body = fixture("gemini-streamGenerateContent-sse-usage.recorded.txt");
    let server = Server::start(vec![Answer::sse(&body, 3)]).await;
    let wire = chat_wire(&server.base, ProviderId::Gemini, "gemini-2.0-flash");
    let (reply, _) = send(&provider(), &wire, Some(&key())).await;
    let reply = reply.unwrap();
    assert_eq!(reply.text, "The capital of Wyoming is **Cheyenne**.\n");
    assert_eq!(reply.usage.input_tokens, Some(7));
    assert_eq!(reply.usage.output_tokens, Some(10));
    assert_eq!(reply.finish_reason.as_deref(), Some("STOP"));
    assert!(!reply.is_incomplete());
    let seen = &server.seen()[0];
    assert_eq!(seen.path, "/models/gemini-2.0-flash:streamGenerateContent?alt=sse");
    assert!(!seen.path.contains(KEY));
    assert_eq!(seen.header("x-goog-api-key"), Some(KEY));
    let body = seen.json();
    assert_eq!(body["systemInstruction"]["parts"][0]["text"], "Answer briefly.");
    assert_eq!(body["contents"][0]["role"], "user");
}

#[tokio::test]
async fn gemini_frames_that_all_carry_a_finish_reason_are_all_read() {
    // Recorded with gemini-pro in 2024: every frame says STOP, and one holds Chinese text that a
    // 4-byte split cuts inside its UTF-8 bytes.
    let body = fixture("gemini-streamGenerateContent-sse.cookbook.txt");
    let server = Server::start(vec![Answer::sse(&body, 4)]).await;
    let wire = chat_wire(&server.base, ProviderId::Gemini, "gemini-2.0-flash");
    let (reply, _) = send(&provider(), &wire, Some(&key())).await;
    let reply = reply.unwrap();
    assert!(reply.text.starts_with("In the quaint, sunlit cottage"));
    assert!(reply.text.contains("\"冒险伙伴\" (Adventure Buddies)"));
    assert!(reply.text.ends_with("stronger than ever."), "all six frames: {}", reply.text);
}

#[tokio::test]
async fn gemma_on_gemini_gets_no_system_instruction() {
    let body = fixture("gemini-streamGenerateContent-sse-usage.recorded.txt");
    let server = Server::start(vec![Answer::sse(&body, 0)]).await;
    let wire = chat_wire(&server.base, ProviderId::Gemini, "gemma-3-27b-it");
    send(&provider(), &wire, Some(&key())).await.0.unwrap();
    let body = server.seen()[0].json();
    assert!(body.get("systemInstruction").is_none(), "{body}");
    assert_eq!(body["contents"][0]["parts"][0]["text"], "Answer briefly.\n\nWhy is the sky blue?");
}

#[tokio::test]
async fn ollama_chat_streams_ndjson_and_always_sends_num_ctx() {
    let body = fixture("ollama-chat-stream.ndjson.reconstructed.txt");
    let server = Server::start(vec![Answer::ndjson(&body, 11)]).await;
    let wire = chat_wire(&server.base, ProviderId::Ollama, "llama3.2");
    let (reply, _) = send(&provider(), &wire, None).await;
    let reply = reply.unwrap();
    assert_eq!(reply.text, "The");
    assert_eq!(reply.usage.input_tokens, Some(26));
    assert_eq!(reply.usage.output_tokens, Some(282));
    assert!(!reply.is_incomplete());
    let seen = &server.seen()[0];
    assert_eq!(seen.path, "/api/chat");
    assert_eq!(seen.header("authorization"), None, "a local server gets no key");
    assert_eq!(seen.json()["options"]["num_ctx"], 100_000, "the profile's window, always sent");
}

#[tokio::test]
async fn buffer_mode_continues_a_document_on_ollama_generate_and_openai_completions() {
    let ollama = Server::start(vec![Answer::ndjson(
        &fixture("ollama-generate-stream.ndjson.reconstructed.txt"),
        9,
    )])
    .await;
    let profile = catalog::profile(ProviderId::Ollama, "llama3.2");
    let endpoint = Endpoint::at(ProviderId::Ollama, &ollama.base);
    let task = Task::Complete { prompt: "Once upon a time" };
    let wire = build(&endpoint, &profile, Sampling::default(), task).unwrap();
    let reply = send(&provider(), &wire, None).await.0.unwrap();
    assert_eq!(reply.text, "The");
    let body = ollama.seen()[0].json();
    assert_eq!(
        (body["prompt"].as_str(), body["raw"].as_bool()),
        (Some("Once upon a time"), Some(true))
    );
    assert_eq!(ollama.seen()[0].path, "/api/generate");

    let stream = b"data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"text\":\" there\",\"index\":0,\"finish_reason\":null}]}\n\n\
data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"text\":\" was\",\"index\":0,\"finish_reason\":\"length\"}]}\n\n\
data: [DONE]\n\n";
    let vllm = Server::start(vec![Answer::sse(stream, 6)]).await;
    let profile = catalog::profile(ProviderId::Vllm, "meta-llama/Llama-3.1-8B");
    let endpoint = Endpoint::at(ProviderId::Vllm, &vllm.base);
    let wire = build(&endpoint, &profile, Sampling::default(), task).unwrap();
    let reply = send(&provider(), &wire, None).await.0.unwrap();
    assert_eq!(reply.text, " there was");
    assert_eq!(reply.finish_reason.as_deref(), Some("length"));
    assert_eq!(vllm.seen()[0].path, "/completions");

    let anthropic = catalog::profile(ProviderId::Anthropic, "claude-sonnet-4");
    let error = build(&Endpoint::new(ProviderId::Anthropic), &anthropic, Sampling::default(), task)
        .unwrap_err();
    assert_eq!(error.code(), "noCompletionEndpoint");
}

#[tokio::test]
async fn openrouter_keep_alive_comments_are_skipped() {
    let mut body = b": OPENROUTER PROCESSING\n\n".to_vec();
    body.extend(fixture("openrouter-stream-keepalive-comment.docs.txt"));
    body.extend_from_slice(b"\n");
    body.extend(fixture("openai-chat-completions-stream-usage.recorded.sse.txt"));
    let server = Server::start(vec![Answer::sse(&body, 17)]).await;
    let wire = chat_wire(&server.base, ProviderId::OpenRouter, "openai/gpt-4o");
    let (reply, _) = send(&provider(), &wire, Some(&key())).await;
    let reply = reply.unwrap();
    assert_eq!(reply.text, OPENAI_TEXT);
    assert!(!reply.is_incomplete());
}

/// The first `n` data frames of the recorded OpenAI stream: "I'm unable to" and so on.
fn openai_frames(n: usize) -> (Vec<u8>, String) {
    let text = String::from_utf8(fixture("openai-chat-completions-stream-usage.recorded.sse.txt"))
        .unwrap();
    let frames: Vec<&str> = text.split("\n\n").take(n).collect();
    let mut expected = String::new();
    for frame in &frames {
        let json: serde_json::Value =
            serde_json::from_str(frame.trim_start_matches("data: ")).unwrap();
        expected.push_str(json["choices"][0]["delta"]["content"].as_str().unwrap_or_default());
    }
    (format!("{}\n\n", frames.join("\n\n")).into_bytes(), expected)
}

#[tokio::test]
async fn an_error_inside_an_openrouter_stream_keeps_the_text_before_it() {
    let (mut body, before) = openai_frames(4);
    body.extend(fixture("openrouter-stream-midstream-error.docs.txt"));
    body.extend_from_slice(b"\n");
    let server = Server::start(vec![Answer::sse(&body, 10)]).await;
    let wire = chat_wire(&server.base, ProviderId::OpenRouter, "openai/gpt-4o");
    let reply = send(&provider(), &wire, Some(&key())).await.0.unwrap();
    assert_eq!(reply.text, before);
    assert!(!before.is_empty());
    let error = reply.interruption.unwrap();
    assert_eq!(error.code(), "errorInStream");
    let message = error.to_string();
    assert!(message.contains("Provider disconnected unexpectedly"), "{message}");
    assert!(message.contains("kept"), "{message}");
    assert!(error.retry().is_some(), "a provider's server error is worth another try");
}

#[tokio::test]
async fn an_anthropic_error_event_after_http_200_is_recognised() {
    let stream = String::from_utf8(fixture("anthropic-messages-stream.txt")).unwrap();
    let cut = stream.find("event: content_block_stop").unwrap();
    let mut body = stream.as_bytes()[..cut].to_vec();
    body.extend(fixture("anthropic-messages-stream-error-event.txt"));
    body.extend_from_slice(b"\n");
    let server = Server::start(vec![Answer::sse(&body, 8)]).await;
    let wire = chat_wire(&server.base, ProviderId::Anthropic, "claude-sonnet-4-5");
    let reply = send(&provider(), &wire, Some(&key())).await.0.unwrap();
    assert_eq!(reply.text, "Hello!");
    let ProviderError::InStream { cause } = reply.interruption.unwrap() else { panic!() };
    assert_eq!(cause.code(), "overloaded");
}

#[tokio::test]
async fn a_stream_cut_off_keeps_the_partial_reply_marked_incomplete() {
    let (body, before) = openai_frames(5);
    let server = Server::start(vec![Answer::sse(&body, 9)]).await;
    let wire = chat_wire(&server.base, ProviderId::OpenAi, "gpt-4o");
    let reply = send(&provider(), &wire, Some(&key())).await.0.unwrap();
    assert_eq!(reply.text, before);
    assert!(reply.is_incomplete());
    assert_eq!(reply.interruption.unwrap().code(), "streamBroken");
}

/// What llama-cpp-python's server answers to a streamed request longer than its context
/// (`n_ctx`), as its own test suite shows (`tests/llama`): 200, an event stream's headers, and
/// then the end, with no event and no error.
#[tokio::test]
async fn a_stream_closed_before_any_of_the_reply_points_at_the_servers_context_size() {
    let server = Server::start(vec![Answer::sse(b"", 1)]).await;
    let wire = chat_wire(&server.base, ProviderId::LlamaCpp, "tiny");
    let reply = send(&provider(), &wire, None).await.0.unwrap();
    assert_eq!(reply.text, "");
    let interruption = reply.interruption.expect("an empty stream is no reply");
    assert_eq!(interruption.code(), "closedWithoutReply");
    let message = interruption.to_string();
    assert!(message.contains("llama.cpp server closed the reply without sending any"), "{message}");
    assert!(message.contains("n_ctx"), "{message}");
}

#[tokio::test]
async fn a_malformed_frame_is_a_clear_error_and_loses_nothing_before_it() {
    let (mut body, before) = openai_frames(3);
    body.extend_from_slice(b"data: {\"choices\": [{\"delta\": {\"content\": \"tru\n\n");
    let server = Server::start(vec![Answer::sse(&body, 4)]).await;
    let wire = chat_wire(&server.base, ProviderId::OpenAi, "gpt-4o");
    let reply = send(&provider(), &wire, Some(&key())).await.0.unwrap();
    assert_eq!(reply.text, before);
    let error = reply.interruption.unwrap();
    assert_eq!(error.code(), "malformedStream");
    assert!(error.to_string().contains("cannot read"), "{error}");
    assert!(error.to_string().contains("kept"), "{error}");

    let ndjson = b"{\"message\":{\"content\":\"Hi\"},\"done\":false}\nnot json\n";
    let server = Server::start(vec![Answer::ndjson(ndjson, 5)]).await;
    let wire = chat_wire(&server.base, ProviderId::Ollama, "llama3.2");
    let reply = send(&provider(), &wire, None).await.0.unwrap();
    assert_eq!(reply.text, "Hi");
    assert_eq!(reply.interruption.unwrap().code(), "malformedStream");
}

#[tokio::test]
async fn cancel_ends_the_http_stream_and_keeps_what_arrived() {
    let (body, before) = openai_frames(3);
    let server = Server::start(vec![Answer::sse(&body, 0).then(Then::Hang)]).await;
    let wire = chat_wire(&server.base, ProviderId::OpenAi, "gpt-4o");
    let provider = provider();
    let cancel = CancellationToken::new();
    let (events, mut received) = mpsc::unbounded_channel();
    let stopper = cancel.clone();
    let watcher = tokio::spawn(async move {
        let mut seen = String::new();
        while let Some(event) = received.recv().await {
            if let pinloom_providers::ReplyEvent::Text(text) = event {
                seen.push_str(&text);
            }
            if seen.ends_with(" unable") {
                stopper.cancel();
            }
        }
    });
    let reply = provider.stream(&wire, Some(&key()), &events, &cancel).await.unwrap();
    drop(events);
    watcher.await.unwrap();
    assert_eq!(reply.text, before);
    assert_eq!(reply.interruption, Some(ProviderError::Cancelled));
    // The server sees its connection closed: the request is not left running.
    for _ in 0..200 {
        if server.closed_by_client() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the HTTP connection was left open after cancel");
}

#[tokio::test]
async fn a_stream_that_goes_silent_times_out_and_keeps_the_partial_reply() {
    let (body, before) = openai_frames(3);
    let server = Server::start(vec![Answer::sse(&body, 0).then(Then::Hang)]).await;
    let wire = chat_wire(&server.base, ProviderId::OpenAi, "gpt-4o");
    let timeouts = Timeouts { idle: Duration::from_millis(300), ..Timeouts::default() };
    let provider = provider_with(timeouts, RetryPolicy::never());
    let reply = send(&provider, &wire, Some(&key())).await.0.unwrap();
    assert_eq!(reply.text, before);
    let error = reply.interruption.unwrap();
    assert_eq!(error.code(), "timedOut");
    assert!(error.to_string().contains("in the middle of the reply"), "{error}");
}

#[tokio::test]
async fn an_unreachable_server_says_where_it_looked() {
    // A port that was just free: nothing listens there.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let wire = chat_wire(&base, ProviderId::Ollama, "llama3.2");
    let error = send(&provider(), &wire, None).await.0.unwrap_err();
    assert_eq!(error.code(), "unreachable");
    let message = error.to_string();
    assert!(message.contains(&base) && message.contains("running"), "{message}");
}

#[tokio::test]
async fn a_hosted_provider_without_a_key_is_not_called() {
    let server = Server::start(vec![]).await;
    let wire = chat_wire(&server.base, ProviderId::Anthropic, "claude-sonnet-4");
    let error = send(&provider(), &wire, None).await.0.unwrap_err();
    assert_eq!(error.code(), "missingKey");
    assert!(error.to_string().contains("ANTHROPIC_API_KEY"), "{error}");
    assert!(server.seen().is_empty());
}

#[tokio::test]
async fn sampling_settings_land_where_each_family_reads_them() {
    let sampling =
        Sampling { temperature: Some(0.5), top_p: Some(0.9), max_output_tokens: Some(300) };
    let cases = [
        (ProviderId::OpenAi, "gpt-4o", "/temperature", "/top_p", "/max_completion_tokens"),
        (ProviderId::Mistral, "mistral-large", "/temperature", "/top_p", "/max_tokens"),
        (ProviderId::Anthropic, "claude-sonnet-4", "/temperature", "/top_p", "/max_tokens"),
        (
            ProviderId::Gemini,
            "gemini-2.0-flash",
            "/generationConfig/temperature",
            "/generationConfig/topP",
            "/generationConfig/maxOutputTokens",
        ),
        (
            ProviderId::Ollama,
            "llama3.2",
            "/options/temperature",
            "/options/top_p",
            "/options/num_predict",
        ),
    ];
    for (provider, model, temperature, top_p, max) in cases {
        let profile = catalog::profile(provider, model);
        let request = single_turn("", "Hi", &profile);
        let wire = build(
            &Endpoint::new(provider),
            &profile,
            sampling,
            Task::Chat { request: &request, tools: &[] },
        )
        .unwrap();
        assert_eq!(wire.body.pointer(temperature), Some(&serde_json::json!(0.5)), "{provider:?}");
        assert!(wire.body.pointer(top_p).is_some(), "{provider:?}: {}", wire.body);
        assert_eq!(wire.body.pointer(max), Some(&serde_json::json!(300)), "{provider:?}");
        assert!(!format!("{wire:?}").contains(KEY));
    }
}

// On tokio's paused clock the runtime jumps to the next timer whenever it would wait, so these
// run in no real time: the only timer pending is the one under test (the connect timeout is set
// far beyond it), and whatever the socket does, that timer is what ends the wait.

fn paused_timeouts() -> Timeouts {
    Timeouts {
        connect: Duration::from_secs(86_400),
        response: Duration::from_secs(300),
        idle: Duration::from_secs(120),
        total: Duration::from_secs(3_600),
    }
}

#[tokio::test(start_paused = true)]
async fn a_server_that_never_answers_times_out_before_answering() {
    let server = Server::start(vec![Answer::silence()]).await;
    let wire = chat_wire(&server.base, ProviderId::Ollama, "llama3.2");
    let provider = provider_with(paused_timeouts(), RetryPolicy::never());
    let start = tokio::time::Instant::now();
    let error = send(&provider, &wire, None).await.0.unwrap_err();
    assert_eq!(
        error,
        ProviderError::TimedOut {
            provider: "Ollama",
            phase: "before answering",
            waited: Duration::from_secs(300)
        }
    );
    assert!(start.elapsed() >= Duration::from_secs(300), "the clock reached the timeout");
    assert!(error.to_string().contains("300 s"), "{error}");
}

#[tokio::test(start_paused = true)]
async fn a_stalled_stream_times_out_after_the_idle_limit() {
    let (body, _) = openai_frames(2);
    let server = Server::start(vec![Answer::sse(&body, 0).then(Then::Hang)]).await;
    let wire = chat_wire(&server.base, ProviderId::OpenAi, "gpt-4o");
    let provider = provider_with(paused_timeouts(), RetryPolicy::never());
    let reply = send(&provider, &wire, Some(&key())).await.0.unwrap();
    assert_eq!(
        reply.interruption,
        Some(ProviderError::TimedOut {
            provider: "OpenAI",
            phase: "in the middle of the reply",
            waited: Duration::from_secs(120)
        })
    );
}

#[test]
fn mistral_is_not_sent_fields_it_refuses_and_gemini_takes_either_model_name() {
    let mistral = chat_wire("http://127.0.0.1:9", ProviderId::Mistral, "mistral-large-latest");
    assert!(mistral.body.get("stream_options").is_none(), "{}", mistral.body);
    assert_eq!(mistral.url, "http://127.0.0.1:9/chat/completions");
    let openrouter = chat_wire("http://127.0.0.1:9", ProviderId::OpenRouter, "openai/gpt-4o");
    assert_eq!(openrouter.body["stream_options"]["include_usage"], true);
    for model in ["gemini-2.0-flash", "models/gemini-2.0-flash"] {
        let gemini = chat_wire("http://127.0.0.1:9", ProviderId::Gemini, model);
        assert_eq!(
            gemini.url,
            "http://127.0.0.1:9/models/gemini-2.0-flash:streamGenerateContent?alt=sse"
        );
    }
}
