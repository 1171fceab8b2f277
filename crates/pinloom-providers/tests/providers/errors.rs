//! Each provider's documented and observed error bodies, read into errors a person can act on,
//! both from `classify` and through the client from a server that answers with them.

use std::time::Duration;

use pinloom_providers::error::classify;
use pinloom_providers::retry::RetryPolicy;
use pinloom_providers::wire::ProviderId;
use pinloom_providers::{ProviderError, Timeouts};

use crate::{KEY, chat_wire, fixture_text, key, provider_with, send};
use pinloom_test_server::{Answer, Server};

/// The JSON part of the observed OpenAI error, which the report printed as a Python dict.
fn openai_insufficient_quota() -> String {
    let text = fixture_text("openai-error-429-insufficient-quota.observed-python-repr.txt");
    let dict = &text[text.find('{').unwrap()..];
    dict.trim().replace('\'', "\"").replace("None", "null")
}

#[test]
fn an_exhausted_openai_quota_is_no_credit_and_never_retried() {
    let error =
        classify(ProviderId::OpenAi, "gpt-4o", 429, None, &openai_insufficient_quota(), None);
    assert_eq!(error.code(), "noCredit", "{error}");
    assert!(error.to_string().contains("billing page"), "{error}");
    assert_eq!(error.retry(), None);
}

#[test]
fn a_gemini_invalid_key_is_a_wrong_key_though_its_status_is_400() {
    let body = fixture_text("gemini-error-400-invalid-api-key.recorded.json");
    let error = classify(ProviderId::Gemini, "gemini-2.0-flash", 400, None, &body, None);
    assert_eq!(error.code(), "wrongKey", "{error}");
    assert!(error.to_string().contains("GEMINI_API_KEY"), "{error}");
    assert_eq!(error.retry(), None);
}

#[test]
fn a_gemini_per_minute_quota_is_a_rate_limit_worth_retrying() {
    let body = fixture_text("gemini-error-429-resource-exhausted.recorded.json");
    let error = classify(ProviderId::Gemini, "gemini-2.0-flash", 429, None, &body, None);
    assert_eq!(error.code(), "rateLimited", "{error}");
    assert_eq!(error.retry(), Some(None));
}

#[test]
fn a_gemini_daily_quota_is_spent_until_it_resets_and_not_retried() {
    let body = r#"{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"41s"}]}}"#;
    let error = classify(ProviderId::Gemini, "gemini-2.0-flash", 429, None, body, None);
    assert_eq!(error.code(), "noCredit", "{error}");
    assert_eq!(error.retry(), None);
}

#[test]
fn gemini_retry_info_gives_the_wait_when_no_header_does() {
    let body = r#"{"error":{"code":429,"message":"Resource has been exhausted.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}]}}"#;
    let error = classify(ProviderId::Gemini, "gemini-2.0-flash", 429, None, body, None);
    assert_eq!(error.retry(), Some(Some(Duration::from_secs(12))));
    assert!(error.to_string().contains("for the next 12 s"), "{error}");
}

#[test]
fn openrouter_errors_before_the_stream_read_by_their_code() {
    let limited = classify(
        ProviderId::OpenRouter,
        "openai/gpt-4o",
        429,
        Some(Duration::from_secs(3)),
        &fixture_text("openrouter-error-429.docs.json"),
        None,
    );
    assert_eq!(limited.retry(), Some(Some(Duration::from_secs(3))));
    let invalid = classify(
        ProviderId::OpenRouter,
        "nope/nope",
        400,
        None,
        &fixture_text("openrouter-error-prestream.docs.json"),
        None,
    );
    assert_eq!(invalid.code(), "modelNotFound", "{invalid}");
    assert!(invalid.to_string().contains("\"nope/nope\""), "{invalid}");
    let credit = classify(
        ProviderId::OpenRouter,
        "openai/gpt-4o",
        402,
        None,
        r#"{"error":{"code":402,"message":"Insufficient credits"}}"#,
        None,
    );
    assert_eq!(credit.code(), "noCredit");
}

#[test]
fn anthropic_errors_read_by_their_type() {
    let not_found = classify(
        ProviderId::Anthropic,
        "claude-x",
        404,
        None,
        &fixture_text("anthropic-error-body.json"),
        None,
    );
    assert_eq!(not_found.code(), "modelNotFound");
    let cases = [
        (401, "authentication_error", "invalid x-api-key", "wrongKey"),
        (402, "billing_error", "credit balance too low", "noCredit"),
        (
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
            "rateLimited",
        ),
        (529, "overloaded_error", "Overloaded", "overloaded"),
        (500, "api_error", "Internal server error", "providerServerError"),
        (
            413,
            "request_too_large",
            "Request exceeds the maximum allowed number of bytes.",
            "contextTooLong",
        ),
    ];
    for (status, kind, message, code) in cases {
        let body =
            format!(r#"{{"type":"error","error":{{"type":"{kind}","message":"{message}"}}}}"#);
        let error = classify(ProviderId::Anthropic, "claude-sonnet-4", status, None, &body, None);
        assert_eq!(error.code(), code, "{status} {kind}: {error}");
    }
}

#[test]
fn context_overflow_says_the_numbers() {
    let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210266 tokens > 200000 maximum"}}"#;
    let error = classify(ProviderId::Anthropic, "claude-sonnet-4", 400, None, body, None);
    assert_eq!(error.code(), "contextTooLong");
    let message = error.to_string();
    assert!(message.contains("210266 tokens, limit 200000"), "{message}");
    assert!(message.contains("Exclude or prune"), "{message}");
    let body = r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
    let error = classify(ProviderId::OpenAi, "gpt-4o", 400, None, body, None);
    assert!(error.to_string().contains("130412 tokens, limit 128000"), "{error}");
}

#[test]
fn a_model_refusing_system_messages_says_which_profile_switch_to_turn_off() {
    let body = fixture_text("openai-error-400-o1-mini-system-unsupported.observed.json");
    let error = classify(ProviderId::OpenAi, "o1-mini", 400, None, &body, None);
    assert_eq!(error.code(), "systemUnsupported", "{error}");
    assert!(error.to_string().contains("native system prompt"), "{error}");
}

#[test]
fn mistral_and_ollama_error_shapes_are_read() {
    let mistral = r#"{"object":"error","message":"Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant","type":"invalid_request_message_order","param":null,"code":"3230"}"#;
    let error = classify(ProviderId::Mistral, "mistral-large", 400, None, mistral, None);
    assert_eq!(error.code(), "requestRejected");
    assert!(error.to_string().contains("Expected last role User"), "{error}");
    let ollama = r#"{"error":"model 'llama9' not found, try pulling it first"}"#;
    let error = classify(ProviderId::Ollama, "llama9", 404, None, ollama, None);
    assert_eq!(error.code(), "modelNotFound", "{error}");
}

#[tokio::test]
async fn a_key_the_provider_echoes_back_never_reaches_the_message() {
    let body = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {KEY}. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}}}"#
    );
    let server = Server::start(vec![Answer::error(401, &body)]).await;
    let wire = chat_wire(&server.base, ProviderId::OpenAi, "gpt-4o");
    let provider = provider_with(Timeouts::default(), RetryPolicy::default());
    let error = send(&provider, &wire, Some(&key())).await.0.unwrap_err();
    assert_eq!(error.code(), "wrongKey");
    assert_eq!(server.seen().len(), 1, "a refused key is never retried");
    let shown = format!("{error} {error:?}");
    assert!(!shown.contains(KEY) && !shown.contains(&KEY[..12]), "{shown}");
    assert!(shown.contains("[the key]"), "{shown}");
    assert!(!format!("{:?}", key()).contains(KEY));
}

#[tokio::test]
async fn bad_requests_and_spent_credit_are_not_retried() {
    for (status, body) in [
        (400, r#"{"error":{"message":"bad","type":"invalid_request_error"}}"#.to_owned()),
        (402, r#"{"error":{"code":402,"message":"Insufficient credits"}}"#.to_owned()),
        (429, openai_insufficient_quota()),
    ] {
        let server =
            Server::start(vec![Answer::error(status, &body), Answer::error(500, "{}")]).await;
        let wire = chat_wire(&server.base, ProviderId::OpenAi, "gpt-4o");
        let provider = provider_with(Timeouts::default(), RetryPolicy::default());
        let error = send(&provider, &wire, Some(&key())).await.0.unwrap_err();
        assert_ne!(error, ProviderError::Cancelled);
        assert_eq!(server.seen().len(), 1, "{status} was retried: {error}");
    }
}

/// Everything the crate hands back from a run, for each family: the request as it can be shown,
/// the replies, the streamed events and every error, successful and failed; none holds the key
/// (the server does receive it, in its header). The app's store, settings, logs and exports are
/// searched by the conversation loop's tests, where keys reach them.
#[tokio::test]
async fn nothing_a_run_returns_holds_the_key() {
    let in_stream = format!(
        "data: {{\"choices\":[{{\"delta\":{{\"content\":\"Hi\"}}}}]}}\n\ndata: {{\"error\":{{\"code\":401,\"message\":\"key {KEY} revoked\"}}}}\n\n"
    );
    let cases = [
        (ProviderId::OpenAi, "gpt-4o", Answer::sse(in_stream.as_bytes(), 9)),
        (
            ProviderId::Anthropic,
            "claude-sonnet-4",
            Answer::sse(&crate::fixture("anthropic-messages-stream.txt"), 0),
        ),
        (
            ProviderId::Gemini,
            "gemini-2.0-flash",
            Answer::error(
                400,
                &format!(
                    r#"{{"error":{{"code":400,"message":"API key not valid: {KEY}","status":"INVALID_ARGUMENT"}}}}"#
                ),
            ),
        ),
        (
            ProviderId::OpenRouter,
            "openai/gpt-4o",
            Answer::error(
                401,
                &format!(
                    r#"{{"error":{{"code":401,"message":"No auth credentials found for {}","metadata":{{}}}}}}"#,
                    &KEY[..14]
                ),
            ),
        ),
    ];
    let mut everything = String::new();
    let mut sent_keys = 0;
    for (provider_id, model, answer) in cases {
        let server = Server::start(vec![answer]).await;
        let wire = chat_wire(&server.base, provider_id, model);
        everything.push_str(&format!("{wire:?} {}", wire.body));
        let provider = provider_with(Timeouts::default(), RetryPolicy::never());
        let (reply, events) = send(&provider, &wire, Some(&key())).await;
        match reply {
            Ok(reply) => {
                everything.push_str(&format!("{reply:?}"));
                if let Some(error) = &reply.interruption {
                    everything.push_str(&format!("{error} {error:?} {}", error.code()));
                }
            }
            Err(error) => everything.push_str(&format!("{error} {error:?}")),
        }
        everything.push_str(&format!("{events:?}"));
        let seen = server.seen();
        let headers = format!("{:?}", seen[0].headers);
        sent_keys += usize::from(headers.contains(KEY));
    }
    assert_eq!(sent_keys, 4, "the key did reach each server, in a header");
    assert!(
        everything.contains("revoked") && everything.contains("API key not valid"),
        "{everything}"
    );
    assert!(!everything.contains(KEY), "{everything}");
    assert!(!everything.contains(&KEY[..12]), "{everything}");
}
