//! What the tests' provider speaks: OpenAI-compatible chat and completion streams as a vLLM or
//! llama.cpp server sends them (the shape of the recorded OpenAI stream in the providers'
//! fixtures), and the profiles that point Pinloom at it.

use pinloom_app::json::{Exchange, Message, ModelProfile, TreeMode};
use pinloom_app::{CancellationToken, Connections, Pinloom, ReplyEvent};
pub(crate) use pinloom_test_server::chat_stream;
use pinloom_test_server::{Answer, Server};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use crate::Sends;

/// A chat answer that says `text` in one piece.
pub(crate) fn says(text: &str) -> Answer {
    Answer::sse(&chat_stream(&[text], 20), 0)
}

/// A completion stream (buffer mode) that continues with `pieces`.
pub(crate) fn completion_stream(pieces: &[&str]) -> Vec<u8> {
    let mut out = String::new();
    for piece in pieces {
        let json = serde_json::json!({
            "id": "cmpl-1", "object": "text_completion", "created": 1, "model": "local",
            "choices": [{"index": 0, "text": piece, "finish_reason": null}]
        });
        out.push_str(&format!("data: {json}\n\n"));
    }
    let last = serde_json::json!({
        "id": "cmpl-1", "object": "text_completion", "created": 1, "model": "local",
        "choices": [{"index": 0, "text": "", "finish_reason": "stop"}]
    });
    out.push_str(&format!("data: {last}\n\ndata: [DONE]\n\n"));
    out.into_bytes()
}

/// A profile for a vLLM server at `server`: o200k counting, a `window`-token window.
pub(crate) fn local_profile(
    name: &str,
    server: &Server,
    window: i64,
    tokenizer: &str,
) -> ModelProfile {
    let mut profile = ModelProfile::new(name, "vllm", "local-model", window, window / 8, tokenizer);
    profile.base_url = Some(format!("{}/v1", server.base));
    profile.completion_endpoint = true;
    profile
}

/// A fresh database with one profile, `Local`, at `server`.
pub(crate) async fn pinloom_with(server: &Server) -> (Pinloom, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let connections = Connections {
        retry: pinloom_providers::retry::RetryPolicy::never(),
        ..Connections::default()
    };
    let pinloom = Pinloom::open_with(dir.path().to_owned(), connections).await.unwrap();
    pinloom.save_model_profile(local_profile("Local", server, 8_192, "o200k")).await.unwrap();
    (pinloom, dir)
}

pub(crate) async fn dialogue(pinloom: &Pinloom) -> i64 {
    pinloom.create_tree("Rivers".into(), TreeMode::Dialogue).await.unwrap().id
}

/// A buffer tree, "Essay", whose document opens with `opening`: the tree and its first message.
pub(crate) async fn essay(pinloom: &Pinloom, opening: &str) -> (i64, Message) {
    let tree = pinloom.create_tree("Essay".into(), TreeMode::Buffer).await.unwrap().id;
    (tree, pinloom.append_message(tree, None, opening.into()).await.unwrap())
}

/// Continues a document from message `node_id` with the `Local` profile, nobody listening.
pub(crate) async fn continue_locally(pinloom: &Pinloom, node_id: i64) -> Exchange {
    let (events, _received, cancel) = listen();
    pinloom.continue_buffer(node_id, "Local".into(), events, cancel).await.unwrap()
}

/// A channel for reply events, and a token that is never cancelled.
pub(crate) fn listen() -> (
    tokio::sync::mpsc::UnboundedSender<ReplyEvent>,
    UnboundedReceiver<ReplyEvent>,
    CancellationToken,
) {
    let (sender, receiver) = unbounded_channel();
    (sender, receiver, CancellationToken::new())
}

/// The texts of the chat messages a request sent, with their roles.
pub(crate) fn messages(body: &serde_json::Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (m["role"].as_str().unwrap().to_owned(), m["content"].as_str().unwrap_or("").to_owned())
        })
        .collect()
}

/// Sends `text` after `parent` to the `Local` profile, nobody listening to the pieces.
pub(crate) async fn ask(
    pinloom: &Pinloom,
    tree: i64,
    parent: Option<i64>,
    text: &str,
) -> pinloom_app::json::Exchange {
    let (events, _received, cancel) = listen();
    pinloom.send(tree, parent, text.into(), "Local".into(), events, cancel).await.unwrap()
}
