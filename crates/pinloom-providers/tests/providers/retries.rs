//! Backoff, jitter and Retry-After on tokio's paused clock (no real waits), and one retry through
//! a real server.

use std::cell::Cell;
use std::time::{Duration, SystemTime};

use pinloom_providers::error::classify;
use pinloom_providers::retry::{RetryPolicy, parse_retry_after, with_retries};
use pinloom_providers::wire::ProviderId;
use pinloom_providers::{ProviderError, ReplyEvent, Timeouts};
use tokio::time::Instant;

use crate::{chat_wire, fixture, key, provider_with, send};
use pinloom_test_server::{Answer, Server};

fn overloaded() -> ProviderError {
    ProviderError::Overloaded { provider: "Anthropic", detail: "Overloaded".into() }
}

fn limited(after: Option<Duration>) -> ProviderError {
    ProviderError::RateLimited {
        provider: "OpenAI",
        retry_after: after,
        detail: "slow down".into(),
    }
}

#[test]
fn backoff_doubles_to_the_cap_with_jitter_between_half_and_all_of_each_step() {
    let policy = RetryPolicy { max_retries: 6, ..RetryPolicy::default() };
    let steps = [1, 2, 4, 8, 16, 20];
    for (retry, step) in (1..).zip(steps) {
        let step = Duration::from_secs(step);
        assert_eq!(policy.wait(retry, &overloaded(), 0.0), Some(step / 2), "retry {retry}");
        let most = policy.wait(retry, &overloaded(), 0.999_999).unwrap();
        assert!(most <= step && most > step.mul_f64(0.99), "retry {retry}: {most:?}");
    }
    assert_eq!(policy.wait(7, &overloaded(), 0.5), None, "tries used up");
}

#[test]
fn retry_after_is_honoured_and_only_lengthened() {
    let policy = RetryPolicy::default();
    let asked = Duration::from_secs(7);
    assert_eq!(policy.wait(1, &limited(Some(asked)), 0.0), Some(asked));
    let longest = policy.wait(1, &limited(Some(asked)), 0.999).unwrap();
    assert!(longest >= asked && longest <= asked.mul_f64(1.1), "{longest:?}");
    let an_hour = limited(Some(Duration::from_secs(3600)));
    assert_eq!(
        policy.wait(1, &an_hour, 0.5),
        None,
        "a wait longer than a minute is the person's call"
    );
}

#[test]
fn refusals_that_a_retry_cannot_fix_get_no_wait() {
    let policy = RetryPolicy::default();
    for (status, body) in [
        (400, r#"{"error":{"message":"bad request"}}"#),
        (401, r#"{"error":{"message":"bad key"}}"#),
        (402, r#"{"error":{"message":"no credit"}}"#),
        (
            429,
            r#"{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}"#,
        ),
    ] {
        let error = classify(ProviderId::OpenAi, "gpt-4o", status, None, body, None);
        assert_eq!(policy.wait(1, &error, 0.5), None, "{status}: {error}");
    }
    for status in [429, 500, 502, 503, 529] {
        let error = classify(ProviderId::Anthropic, "claude-sonnet-4", status, None, "{}", None);
        assert!(policy.wait(1, &error, 0.5).is_some(), "{status}: {error}");
    }
}

#[test]
fn retry_after_reads_seconds_and_http_dates() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_784_000_000);
    assert_eq!(parse_retry_after("30", now), Some(Duration::from_secs(30)));
    assert_eq!(parse_retry_after(" 1.5 ", now), Some(Duration::from_millis(1500)));
    let later = httpdate::fmt_http_date(now + Duration::from_secs(90));
    assert_eq!(parse_retry_after(&later, now), Some(Duration::from_secs(90)));
    let earlier = httpdate::fmt_http_date(now - Duration::from_secs(90));
    assert_eq!(parse_retry_after(&earlier, now), Some(Duration::ZERO));
    assert_eq!(parse_retry_after("soon", now), None);
    assert_eq!(parse_retry_after("-4", now), None);
}

#[tokio::test(start_paused = true)]
async fn retries_wait_on_the_clock_and_stop_at_success() {
    let start = Instant::now();
    let tries = Cell::new(0);
    let mut waits = Vec::new();
    let result = with_retries(
        RetryPolicy::default(),
        |_| {
            tries.set(tries.get() + 1);
            let n = tries.get();
            async move {
                match n {
                    1 => Err(limited(Some(Duration::from_secs(7)))),
                    2 => Err(overloaded()),
                    _ => Ok("answer"),
                }
            }
        },
        |attempt, wait, _| waits.push((attempt, wait)),
    )
    .await;
    assert_eq!(result, Ok("answer"));
    assert_eq!(tries.get(), 3);
    assert_eq!(waits.len(), 2);
    assert_eq!(waits[0].0, 2);
    assert!(waits[0].1 >= Duration::from_secs(7), "Retry-After honoured: {waits:?}");
    let slept = start.elapsed();
    assert!(slept >= waits[0].1 + waits[1].1, "it slept the waits it announced: {slept:?}");
}

#[tokio::test(start_paused = true)]
async fn retries_give_up_with_the_last_error_when_tries_run_out() {
    let tries = Cell::new(0);
    let result: Result<(), _> = with_retries(
        RetryPolicy { max_retries: 2, ..RetryPolicy::default() },
        |_| {
            tries.set(tries.get() + 1);
            async { Err(overloaded()) }
        },
        |_, _, _| {},
    )
    .await;
    assert_eq!(result, Err(overloaded()));
    assert_eq!(tries.get(), 3, "the first try and two retries");
}

#[tokio::test]
async fn a_429_with_retry_after_is_retried_through_the_client_and_the_wait_announced() {
    let stream = fixture("anthropic-messages-stream.txt");
    let body = r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your per-minute rate limit"}}"#;
    let server = Server::start(vec![
        Answer::error(429, body).with_header("retry-after", "1"),
        Answer::sse(&stream, 0),
    ])
    .await;
    let wire = chat_wire(&server.base, ProviderId::Anthropic, "claude-sonnet-4");
    let provider = provider_with(Timeouts::default(), RetryPolicy::default());
    let (reply, events) = send(&provider, &wire, Some(&key())).await;
    let reply = reply.unwrap();
    assert_eq!(reply.text, "Hello!");
    assert_eq!(reply.attempts, 2);
    assert_eq!(server.seen().len(), 2);
    let Some(ReplyEvent::Retrying { attempt, wait, reason }) = events.first() else {
        panic!("no retry announced: {events:?}")
    };
    assert_eq!(*attempt, 2);
    assert!(*wait >= Duration::from_secs(1), "{wait:?}");
    assert!(reason.contains("rate limiting"), "{reason}");
}
