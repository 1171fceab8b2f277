//! Servers that try to take more than an answer: a redirect that would carry the key and the
//! conversation elsewhere, a reply that never ends, an error body without end.

use std::time::Duration;

use pinloom_providers::retry::RetryPolicy;
use pinloom_providers::wire::ProviderId;
use pinloom_providers::{MAX_EVENT_BYTES, MAX_REPLY_BYTES, ProviderError, Timeouts};
use pinloom_test_server::{Answer, Server, Then};

use crate::{KEY, chat_wire, key, provider_with, send};

#[tokio::test]
async fn a_redirect_is_refused_and_neither_key_nor_conversation_follows_it() {
    for (provider, model) in [
        (ProviderId::OpenAi, "gpt-4o"),
        (ProviderId::Anthropic, "claude-sonnet-4-5"),
        (ProviderId::Gemini, "gemini-2.5-flash"),
    ] {
        for status in [302, 307, 308] {
            let elsewhere = Server::start(vec![Answer::error(200, "{}")]).await;
            let server = Server::start(vec![
                Answer::error(status, "")
                    .with_header("location", &format!("{}/v1/steal", elsewhere.base)),
            ])
            .await;
            let wire = chat_wire(&server.base, provider, model);
            let (reply, _) = send(
                &provider_with(Timeouts::default(), RetryPolicy::never()),
                &wire,
                Some(&key()),
            )
            .await;
            let error = reply.unwrap_err();
            assert!(
                matches!(error, ProviderError::Rejected { status: refused, .. } if refused == status),
                "{error:?}"
            );
            let message = error.to_string();
            assert!(message.contains("does not follow redirects"), "{message}");
            assert!(!message.contains(KEY), "{message}");
            assert!(
                elsewhere.seen().is_empty(),
                "{provider:?} {status}: the redirect was followed"
            );
        }
    }
}

#[tokio::test]
async fn a_key_a_server_puts_in_its_redirect_or_a_broken_frame_is_blanked() {
    let provider = provider_with(Timeouts::default(), RetryPolicy::never());
    // A redirect to an address that carries the key.
    let server = Server::start(vec![
        Answer::error(302, "").with_header("location", &format!("https://elsewhere.test/?k={KEY}")),
    ])
    .await;
    let wire = chat_wire(&server.base, ProviderId::OpenAi, "gpt-4o");
    let message = send(&provider, &wire, Some(&key())).await.0.unwrap_err().to_string();
    assert!(message.contains("?k=[the key]"), "{message}");
    assert!(!message.contains(KEY), "{message}");
    // A frame that is not JSON and echoes the key.
    let body = format!("data: {{\"choices\": [{{\"delta\": \"{KEY}\n\n");
    let server = Server::start(vec![Answer::sse(body.as_bytes(), 0)]).await;
    let wire = chat_wire(&server.base, ProviderId::OpenAi, "gpt-4o");
    let (reply, _) = send(&provider, &wire, Some(&key())).await;
    let message = match reply {
        Ok(reply) => reply.interruption.expect("the frame is malformed").to_string(),
        Err(error) => error.to_string(),
    };
    assert!(!message.contains(KEY), "{message}");
    assert!(message.contains("[the key]"), "{message}");
}

#[tokio::test]
async fn a_line_that_never_ends_is_cut_at_its_limit_with_what_arrived_kept() {
    let mut body =
        b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Rivers \"}}]}\n\n".to_vec();
    // One event without end: the decoder would hold it all, and read it again as it grows.
    body.extend_from_slice(b"data: ");
    body.resize(body.len() + MAX_EVENT_BYTES + (1 << 20), b'x');
    let server = Server::start(vec![Answer::sse(&body, 64 << 10)]).await;
    let wire = chat_wire(&server.base, ProviderId::OpenAi, "gpt-4o");
    let (reply, _) =
        send(&provider_with(Timeouts::default(), RetryPolicy::never()), &wire, Some(&key())).await;
    let reply = reply.unwrap();
    assert_eq!(reply.text, "Rivers ");
    let interruption = reply.interruption.unwrap().to_string();
    assert!(interruption.contains("a line of the reply passed 4 MiB"), "{interruption}");
}

#[tokio::test]
async fn a_reply_that_never_ends_is_cut_at_its_limit_with_what_arrived_kept() {
    // Events of 1 MiB each, well formed, past the reply's limit: no real reply is this long.
    let event = format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{}\"}}}}]}}\n\n",
        "r".repeat(1 << 20)
    );
    let body = event.repeat((MAX_REPLY_BYTES >> 20) + 2).into_bytes();
    let server = Server::start(vec![Answer::sse(&body, 1 << 20)]).await;
    let wire = chat_wire(&server.base, ProviderId::OpenAi, "gpt-4o");
    let (reply, _) =
        send(&provider_with(Timeouts::default(), RetryPolicy::never()), &wire, Some(&key())).await;
    let reply = reply.unwrap();
    assert!(reply.text.len() >= MAX_REPLY_BYTES - (2 << 20), "{} bytes kept", reply.text.len());
    let interruption = reply.interruption.unwrap().to_string();
    assert!(interruption.contains("passed 64 MiB"), "{interruption}");
}

#[tokio::test]
async fn an_error_body_is_read_only_as_far_as_an_error_needs() {
    // A 500 whose body goes on (128 KiB, then silence): the start is enough to say what went
    // wrong, without waiting for an end that never comes or holding what follows.
    let body = format!("{{\"error\":{{\"message\":\"{}", "overloaded ".repeat(12 << 10));
    let server = Server::start(vec![Answer::error(500, &body).then(Then::Hang)]).await;
    let wire = chat_wire(&server.base, ProviderId::OpenAi, "gpt-4o");
    let timeouts = Timeouts { idle: Duration::from_secs(30), ..Timeouts::default() };
    let (reply, _) =
        send(&provider_with(timeouts, RetryPolicy::never()), &wire, Some(&key())).await;
    let message = reply.unwrap_err().to_string();
    // Waiting for the body's end would have timed out and said nothing of the error.
    assert!(message.contains("overloaded overloaded"), "{message}");
}

#[tokio::test]
async fn a_reply_that_trickles_forever_ends_at_the_whole_replys_deadline() {
    // A keep-alive every millisecond never trips the idle limit; the deadline ends it, with the
    // text that came first kept.
    let mut body =
        b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Rivers \"}}]}\n\n".to_vec();
    for _ in 0..20_000 {
        body.extend_from_slice(b": ping\n\n");
    }
    let server = Server::start(vec![Answer::sse(&body, 8)]).await;
    let wire = chat_wire(&server.base, ProviderId::OpenAi, "gpt-4o");
    let timeouts = Timeouts {
        idle: Duration::from_secs(1),
        total: Duration::from_millis(500),
        ..Timeouts::default()
    };
    let (reply, _) =
        send(&provider_with(timeouts, RetryPolicy::never()), &wire, Some(&key())).await;
    let reply = reply.unwrap();
    assert_eq!(reply.text, "Rivers ");
    let interruption = reply.interruption.unwrap();
    assert_eq!(interruption.code(), "replyTooLong");
    assert!(interruption.to_string().contains("longer than any reply takes"), "{interruption}");
}
