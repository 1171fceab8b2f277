//! What `pinloom ask` adds to a send, beside `curl` sending the same request body to the same
//! server (issue 50): the time from the process starting to its request arriving at a scripted
//! OpenAI-compatible server on 127.0.0.1, and from the server writing each piece of the reply to
//! that piece reaching the program's standard output. The thread is 10,000 messages of ~400
//! bytes (about 900,000 tokens), planned for a 128,000-token window, so the plan truncates it
//! as a long conversation's does. Runs alternate (pinloom, curl, pinloom, …); medians.
//!
//! `cargo bench -p pinloom-cli --bench send` (needs curl). Numbers go to benches/README.md.

#![allow(clippy::unwrap_used)] // a benchmark's setup failing should stop it loudly

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pinloom_engine::tokens::Tokenizer;

// The application benchmarks' messages: the same prose, so figures compare across them.
#[path = "../../pinloom-app/benches/common/mod.rs"]
mod common;
use common::message;
use pinloom_store::{Author, NewNode, Store, TreeMode};

const MESSAGES: usize = 10_000;
const RUNS: usize = 15;
const PIECES: usize = 40;
/// Between two pieces, as a local model writes them.
const GAP: Duration = Duration::from_millis(8);

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let (db, end) = build(dir.path(), &base);
    let pinloom = env!("CARGO_BIN_EXE_pinloom");
    let node = end.to_string();
    let ask = |db: &Path| {
        let mut command = Command::new(pinloom);
        command.arg("--db").arg(db).args(["ask", "-q", "--node", &node, "Why here?"]);
        command.env("PINLOOM_LOCAL_SERVERS", "vllm=http://127.0.0.1:9/v1");
        command
    };
    // The request a send from the thread's end makes (ask's carries the question too: 4 words
    // more of ~900,000 tokens), for curl to send.
    let request = Command::new(pinloom)
        .arg("--db")
        .arg(&db)
        .args(["context", "--node", &node, "--format", "request"])
        .output()
        .unwrap();
    assert!(request.status.success(), "{}", String::from_utf8_lossy(&request.stderr));
    let body = dir.path().join("body.json");
    std::fs::write(&body, request.stdout.trim_ascii_end()).unwrap();
    let curl = || {
        let mut command = Command::new("curl");
        command.args(["-sS", "-N", "-H", "content-type: application/json", "--data-binary"]);
        command.arg(format!("@{}", body.display())).arg(format!("{base}/chat/completions"));
        command
    };
    // Warm the disk cache and the database's counts: not measured.
    for _ in 0..2 {
        measure(&listener, ask(&db));
    }
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        ours.push(measure(&listener, ask(&db)));
        theirs.push(measure(&listener, curl()));
    }
    report(&ours, &theirs);
    // Where the time before the request goes: a command that only opens the database, and one
    // that also plans the request and writes its body (each start to exit).
    let whole = |args: &[&str]| {
        let runs = (0..RUNS)
            .map(|_| {
                let started = Instant::now();
                let done = Command::new(pinloom).arg("--db").arg(&db).args(args).output().unwrap();
                assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
                started.elapsed()
            })
            .collect();
        median(runs).as_secs_f64() * 1_000.0
    };
    let opened = whole(&["log", "-n", "1"]);
    let planned = whole(&["context", "--node", &node, "--format", "request"]);
    println!(
        "of which: open the database and read {opened:.1} ms; and plan the request {planned:.1} ms"
    );
}

/// A database with one 10,000-message thread (counted as o200k counts, as the app stores them)
/// and the profile `Local` at `base`; returns it and the thread's last message.
fn build(dir: &Path, base: &str) -> (std::path::PathBuf, i64) {
    let db = dir.join("pinloom.sqlite3");
    let store = Store::open(&db).unwrap();
    let tree = store.create_tree("Rivers", TreeMode::Dialogue, 0).unwrap().id;
    let mut parent = None;
    for index in 0..MESSAGES {
        let author = if index % 2 == 0 { Author::Human } else { Author::Model };
        let text = message(index);
        let mut node = NewNode::text(tree, parent, author, text.clone(), index as i64);
        node.token_counts = vec![("o200k".into(), Tokenizer::O200k.count(&text))];
        parent = Some(store.append_node(&node).unwrap().id);
    }
    drop(store);
    let added = Command::new(env!("CARGO_BIN_EXE_pinloom"))
        .arg("--db")
        .arg(&db)
        .args(["models", "add", "Local", "--provider", "vllm", "--model", "local-model"])
        .args(["--url", base, "--window", "128000", "--reply", "1024", "--tokenizer", "o200k"])
        .output()
        .unwrap();
    assert!(added.status.success(), "{}", String::from_utf8_lossy(&added.stderr));
    (db, parent.unwrap().0)
}

/// One send: from the start to the request's arrival, and each piece's way from the server to
/// standard output.
struct Measured {
    before_request: Duration,
    per_piece: Vec<Duration>,
}

/// Starts `command`, answers its one request with [`PIECES`] pieces [`GAP`] apart, and times it.
fn measure(listener: &TcpListener, mut command: Command) -> Measured {
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = command.spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (arrived, arrivals) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buffer = [0_u8; 8192];
        loop {
            let read = stdout.read(&mut buffer).unwrap();
            if read == 0 {
                return;
            }
            seen.extend_from_slice(&buffer[..read]);
            arrived.send((Instant::now(), seen.clone())).unwrap();
        }
    });
    let (socket, _) = listener.accept().unwrap();
    let requested = read_request(&socket);
    let written = answer(socket);
    reader.join().unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let arrivals: Vec<(Instant, Vec<u8>)> = arrivals.into_iter().collect();
    let per_piece = written
        .iter()
        .enumerate()
        .map(|(index, at)| {
            let piece = format!("w{index} ");
            let (shown, _) = arrivals
                .iter()
                .find(|(_, seen)| String::from_utf8_lossy(seen).contains(&piece))
                .unwrap_or_else(|| panic!("{piece:?} never reached standard output"));
            shown.duration_since(*at)
        })
        .collect();
    Measured { before_request: requested.duration_since(started), per_piece }
}

/// Reads a request whole (headers and a `content-length` body); when it had arrived.
fn read_request(socket: &TcpStream) -> Instant {
    let mut reader = BufReader::new(socket);
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" || line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    Instant::now()
}

/// Streams the reply as vLLM frames it, a piece every [`GAP`]; when each piece was written.
fn answer(mut socket: TcpStream) -> Vec<Instant> {
    socket.set_nodelay(true).unwrap();
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
    socket.write_all(head.as_bytes()).unwrap();
    let pieces: Vec<String> = (0..PIECES).map(|index| format!("w{index} ")).collect();
    let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let stream = String::from_utf8(pinloom_test_server::chat_stream(&pieces, 31)).unwrap();
    let frames: Vec<&str> = stream.split_inclusive("\n\n").collect();
    // The role's frame first, then one frame a piece, then the end, the usage and [DONE].
    socket.write_all(frames[0].as_bytes()).unwrap();
    let mut written = Vec::with_capacity(PIECES);
    for frame in &frames[1..=PIECES] {
        std::thread::sleep(GAP);
        socket.write_all(frame.as_bytes()).unwrap();
        written.push(Instant::now());
    }
    for frame in &frames[PIECES + 1..] {
        socket.write_all(frame.as_bytes()).unwrap();
    }
    written
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn report(ours: &[Measured], theirs: &[Measured]) {
    let ms = |duration: Duration| duration.as_secs_f64() * 1_000.0;
    let before = |runs: &[Measured]| median(runs.iter().map(|run| run.before_request).collect());
    let piece = |runs: &[Measured]| {
        median(runs.iter().flat_map(|run| run.per_piece.iter().copied()).collect())
    };
    let (our_before, their_before) = (before(ours), before(theirs));
    let (our_piece, their_piece) = (piece(ours), piece(theirs));
    println!(
        "send overhead, {RUNS} runs each, {MESSAGES}-message thread, {PIECES} pieces {GAP:?} apart"
    );
    println!(
        "start to request: pinloom ask {:.1} ms, curl {:.1} ms, added {:.1} ms (goal <= 20 ms)",
        ms(our_before),
        ms(their_before),
        ms(our_before.saturating_sub(their_before))
    );
    println!(
        "piece to stdout: pinloom ask {:.3} ms, curl {:.3} ms, added {:.3} ms (goal <= 2 ms)",
        ms(our_piece),
        ms(their_piece),
        ms(our_piece.saturating_sub(their_piece))
    );
}
