//! A scripted HTTP/1.1 server on 127.0.0.1 for tests: it records each request and answers with
//! the next scripted answer, writing the body's bytes exactly as given, chunk by chunk, so a
//! provider's stream reaches the client byte for byte and split where the test says. The
//! providers' tests and the application layer's tests both talk to it over real TCP.

#![allow(missing_docs, clippy::unwrap_used)] // test support: a panic is the failure report

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap()
    }
}

/// An OpenAI-compatible chat completion stream that says `pieces` and reports `prompt_tokens`,
/// framed as vLLM and llama.cpp's servers frame it (a role delta first, the usage last).
pub fn chat_stream(pieces: &[&str], prompt_tokens: u64) -> Vec<u8> {
    let mut out = String::new();
    let frame = |json: serde_json::Value| format!("data: {json}\n\n");
    out.push_str(&frame(serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "local",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]
    })));
    for piece in pieces {
        out.push_str(&frame(serde_json::json!({
            "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "local",
            "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": null}]
        })));
    }
    out.push_str(&frame(serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "local",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]
    })));
    out.push_str(&frame(serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "local",
        "choices": [],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": pieces.len(), "total_tokens": prompt_tokens + pieces.len() as u64}
    })));
    out.push_str("data: [DONE]\n\n");
    out.into_bytes()
}

/// What to do after the body's chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    /// Close the connection.
    Close,
    /// Keep it open, sending nothing, until the client closes it.
    Hang,
}

/// Marks an answer that sends nothing at all, not even its status line.
const SILENT: u16 = 0;

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub chunks: Vec<Vec<u8>>,
    pub then: Then,
}

impl Answer {
    /// A 200 streaming `body` in `chunk`-byte pieces (the whole at once when 0).
    pub fn stream(content_type: &str, body: &[u8], chunk: usize) -> Answer {
        let chunks = if chunk == 0 {
            vec![body.to_vec()]
        } else {
            body.chunks(chunk).map(<[u8]>::to_vec).collect()
        };
        Answer {
            status: 200,
            headers: vec![("content-type".into(), content_type.into())],
            chunks,
            then: Then::Close,
        }
    }

    pub fn sse(body: &[u8], chunk: usize) -> Answer {
        Answer::stream("text/event-stream", body, chunk)
    }

    pub fn ndjson(body: &[u8], chunk: usize) -> Answer {
        Answer::stream("application/x-ndjson", body, chunk)
    }

    /// An error status with a JSON body.
    pub fn error(status: u16, body: &str) -> Answer {
        Answer {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            chunks: vec![body.as_bytes().to_vec()],
            then: Then::Close,
        }
    }

    /// No answer at all: the request is read and the connection held open in silence.
    pub fn silence() -> Answer {
        Answer { status: SILENT, headers: Vec::new(), chunks: Vec::new(), then: Then::Hang }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Answer {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn then(mut self, then: Then) -> Answer {
        self.then = then;
        self
    }
}

#[derive(Default)]
struct Shared {
    answers: Vec<Answer>,
    /// Once the scripted answers run out, answer each chat request with the text it carried.
    echo: bool,
    seen: Vec<Seen>,
    /// Set when a hanging connection was closed by the client.
    closed_by_client: bool,
}

/// A running server; it stops when dropped with the test's runtime.
#[derive(Clone)]
pub struct Server {
    pub base: String,
    shared: Arc<Mutex<Shared>>,
}

impl Server {
    /// Starts a server that gives `answers` in order, one per request.
    pub async fn start(answers: Vec<Answer>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let shared = Arc::new(Mutex::new(Shared { answers, ..Shared::default() }));
        let server = Server { base, shared: shared.clone() };
        tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else { return };
                let shared = shared.clone();
                tokio::spawn(async move { serve(socket, shared).await });
            }
        });
        server
    }

    /// Starts a server that answers every chat request with the texts of its messages but the
    /// system prompt (the instructions), joined by blank lines: a summariser that echoes what it
    /// is sent, so that whatever a request
    /// carried reaches what is written from its reply.
    pub async fn echoing() -> Server {
        let server = Server::start(Vec::new()).await;
        server.shared.lock().unwrap().echo = true;
        server
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.shared.lock().unwrap().seen.clone()
    }

    pub fn closed_by_client(&self) -> bool {
        self.shared.lock().unwrap().closed_by_client
    }
}

async fn serve(mut socket: TcpStream, shared: Arc<Mutex<Shared>>) {
    socket.set_nodelay(true).unwrap();
    let Some(seen) = read_request(&mut socket).await else { return };
    let answer = {
        let mut shared = shared.lock().unwrap();
        let echoed = (shared.answers.is_empty() && shared.echo).then(|| echo(&seen));
        shared.seen.push(seen);
        if let Some(answer) = echoed {
            answer
        } else if shared.answers.is_empty() {
            Answer::error(500, r#"{"error":{"message":"the test server ran out of answers"}}"#)
        } else {
            shared.answers.remove(0)
        }
    };
    if answer.status == SILENT {
        hang(&mut socket, &shared).await;
        return;
    }
    let mut head = format!("HTTP/1.1 {} Scripted\r\n", answer.status);
    for (name, value) in &answer.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    // No content length: the body ends when the connection closes, as a stream may.
    head.push_str("connection: close\r\n\r\n");
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    for chunk in &answer.chunks {
        if socket.write_all(chunk).await.is_err() || socket.flush().await.is_err() {
            return;
        }
        // Separate writes so the client reads them as separate chunks.
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    if answer.then == Then::Hang {
        hang(&mut socket, &shared).await;
    }
}

/// The chat stream that says back the texts of `seen`'s messages but its system prompt (a
/// prompt's, for the completion endpoint).
fn echo(seen: &Seen) -> Answer {
    let body: serde_json::Value = serde_json::from_str(&seen.body).unwrap_or_default();
    let text = match body["messages"].as_array() {
        Some(messages) => messages
            .iter()
            .filter(|message| message["role"] != "system")
            .map(|message| match &message["content"] {
                serde_json::Value::String(text) => text.clone(),
                parts => parts
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|part| part["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
            })
            .collect::<Vec<_>>()
            .join("\n\n"),
        None => body["prompt"].as_str().unwrap_or_default().to_owned(),
    };
    Answer::sse(&chat_stream(&[&text], 10), 0)
}

async fn hang(socket: &mut TcpStream, shared: &Mutex<Shared>) {
    let mut buffer = [0_u8; 64];
    // Returns 0 (or an error) once the client has closed its end.
    while let Ok(n) = socket.read(&mut buffer).await {
        if n == 0 {
            break;
        }
    }
    shared.lock().unwrap().closed_by_client = true;
}

async fn read_request(socket: &mut TcpStream) -> Option<Seen> {
    let mut data = Vec::new();
    let mut buffer = [0_u8; 8192];
    let head_end = loop {
        let n = socket.read(&mut buffer).await.ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buffer[..n]);
        if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = data[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut buffer).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buffer[..n]);
    }
    Some(Seen { method, path, headers, body: String::from_utf8_lossy(&body).into_owned() })
}
pub mod llama;
