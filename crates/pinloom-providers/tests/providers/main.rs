//! The providers crate against scripted servers on 127.0.0.1 that replay each provider's
//! documented and recorded streams byte for byte (fixtures and their sources in
//! `tests/fixtures/SOURCES.md`).

// Test helpers unwrap too: a panic carrying the error is the failure report.
#![allow(clippy::unwrap_used)]

mod decoding;
mod errors;
mod hostile;
mod keys;
mod models;
mod retries;
mod streams;

use pinloom_engine::profile::ModelProfile;
use pinloom_engine::render::{ChatRequest, single_turn};
use pinloom_providers::retry::RetryPolicy;
use pinloom_providers::wire::{Endpoint, ProviderId, Sampling, Task, WireRequest, build};
use pinloom_providers::{ApiKey, Provider, ProviderError, Reply, ReplyEvent, Timeouts};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// A fixture's bytes, exactly as stored.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/{name}",
        std::env::var("CARGO_MANIFEST_DIR").expect("cargo runs tests with CARGO_MANIFEST_DIR set")
    );
    std::fs::read(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
}

pub fn fixture_text(name: &str) -> String {
    String::from_utf8(fixture(name)).unwrap()
}

pub const KEY: &str = "sk-test-0123456789abcdefghij";

pub fn key() -> ApiKey {
    ApiKey::new(KEY).unwrap()
}

/// A one-turn request for `model` at `provider`, with a system text.
pub fn request_for(provider: ProviderId, model: &str) -> (ModelProfile, ChatRequest) {
    let profile = pinloom_providers::catalog::profile(provider, model);
    let request = single_turn("Answer briefly.", "Why is the sky blue?", &profile);
    (profile, request)
}

/// The wire request for a one-turn chat with `model` at `provider` on `server`.
pub fn chat_wire(base: &str, provider: ProviderId, model: &str) -> WireRequest {
    let (profile, request) = request_for(provider, model);
    let endpoint = Endpoint::at(provider, base);
    build(&endpoint, &profile, Sampling::default(), Task::Chat { request: &request, tools: &[] })
        .unwrap()
}

pub fn provider_with(timeouts: Timeouts, policy: RetryPolicy) -> Provider {
    Provider::new(timeouts, policy).unwrap()
}

/// Sends `wire` and collects the reply and every event.
pub async fn send(
    provider: &Provider,
    wire: &WireRequest,
    key: Option<&ApiKey>,
) -> (Result<Reply, ProviderError>, Vec<ReplyEvent>) {
    let (events, mut received) = mpsc::unbounded_channel();
    let reply = provider.stream(wire, key, &events, &CancellationToken::new()).await;
    drop(events);
    let mut all = Vec::new();
    while let Some(event) = received.recv().await {
        all.push(event);
    }
    (reply, all)
}

pub fn texts(events: &[ReplyEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            ReplyEvent::Text(text) => Some(text.clone()),
            ReplyEvent::Retrying { .. } | ReplyEvent::Saved { .. } => None,
        })
        .collect()
}
