//! llama.cpp's own server for tests: the `llama-cpp-python[server]` package that `./dev setup`
//! builds into a virtual environment in the cache folder, started on 127.0.0.1 with a tiny
//! random-weight model that `tests/llama/tiny_model.py` writes at test time. Where the scripted
//! [`crate::Server`] speaks the wire formats as documented, this one is the real thing, quirks
//! included.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

// Where `./dev setup` put the server: the cache folder by the one rule the token counter's
// crate keeps (and `dev` says in shell), read from its file rather than written again here.
#[path = "../../pinloom-tokenizers/src/cache_folder.rs"]
mod cache_folder;

/// The Python of the virtual environment that holds the server: `PINLOOM_LLAMA_PYTHON`, or the
/// one `./dev setup` makes in the cache folder.
pub fn python() -> PathBuf {
    if let Some(chosen) = std::env::var_os("PINLOOM_LLAMA_PYTHON") {
        return PathBuf::from(chosen);
    }
    let cache = cache_folder::user_cache_folder().expect("HOME is set");
    let python = cache.join("pinloom/llama-server/venv/bin/python");
    assert!(
        python.is_file(),
        "llama.cpp's server is not installed ({} is missing): run `./dev setup`, or set \
         PINLOOM_LLAMA_PYTHON to a Python that has llama-cpp-python[server] and gguf",
        python.display()
    );
    python
}

/// Which vocabulary the tiny model carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vocabulary {
    /// The 256 bytes, a few merges and the ChatML control tokens.
    Small,
    /// Llama 3's, from the token counter's files.
    Llama3,
    /// Qwen's (2, 2.5, 3), from the token counter's files.
    Qwen,
}

/// Writes the tiny model to `out`; `quicktok_data` is the token counter's data folder, which the
/// Llama 3 and Qwen vocabularies are read from.
pub fn write_model(out: &Path, vocabulary: Vocabulary, quicktok_data: Option<&Path>) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/llama/tiny_model.py");
    let mut command = Command::new(python());
    command.arg(script).arg(out).arg("--vocabulary").arg(match vocabulary {
        Vocabulary::Small => "small",
        Vocabulary::Llama3 => "llama3",
        Vocabulary::Qwen => "qwen",
    });
    if let Some(data) = quicktok_data {
        command.arg("--quicktok-data").arg(data);
    }
    let output = command.output().expect("the model writer starts");
    assert!(
        output.status.success(),
        "tiny_model.py failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A running server; stopped when dropped.
pub struct LlamaServer {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    child: Child,
    log: PathBuf,
}

impl LlamaServer {
    /// Starts the server on a free port of 127.0.0.1 with `model` and a context of `n_ctx`
    /// tokens, and waits until it answers (up to two minutes: the machine may be busy).
    pub fn start(model: &Path, n_ctx: u32) -> LlamaServer {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let log = model.with_extension(format!("server-{port}.log"));
        let child = Command::new(python())
            .args(["-m", "llama_cpp.server", "--host", "127.0.0.1"])
            .arg("--port")
            .arg(port.to_string())
            .arg("--model")
            .arg(model)
            .arg("--n_ctx")
            .arg(n_ctx.to_string())
            // One thread: the tests run beside each other on a small machine.
            .args(["--n_threads", "1", "--n_threads_batch", "1"])
            // A fixed name, so requests name the model as a profile would.
            .args(["--model_alias", "tiny"])
            .stdin(Stdio::null())
            .stdout(Stdio::from(std::fs::File::create(&log).unwrap()))
            .stderr(Stdio::from(std::fs::File::create(log.with_extension("err.log")).unwrap()))
            .spawn()
            .expect("the server starts");
        let mut server = LlamaServer { base: format!("http://127.0.0.1:{port}"), child, log };
        let started = Instant::now();
        loop {
            if let Some(status) = server.child.try_wait().unwrap() {
                panic!("llama.cpp's server ended ({status}) before answering: {}", server.log());
            }
            if server.get("/v1/models").is_some_and(|(status, _)| status == 200) {
                return server;
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "llama.cpp's server did not answer within two minutes: {}",
                server.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// What the server wrote so far (its own log, then its standard error: llama.cpp's loader
    /// and the Python tracebacks of failed requests).
    pub fn log(&self) -> String {
        let read = |path: &Path| std::fs::read_to_string(path).unwrap_or_default();
        read(&self.log) + &read(&self.log.with_extension("err.log"))
    }

    /// Whether the server's log comes to hold `text` within a minute (it writes a failed
    /// request's traceback after the response has ended).
    pub fn logs(&self, text: &str) -> bool {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(60) {
            if self.log().contains(text) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }

    /// A GET on the server, as a status and a body.
    pub fn get(&self, path: &str) -> Option<(u16, String)> {
        self.request("GET", path, None)
    }

    /// A POST of JSON to the server, as a status and a body.
    pub fn post(&self, path: &str, body: &serde_json::Value) -> (u16, String) {
        self.request("POST", path, Some(&body.to_string())).expect("the server answers")
    }

    /// One HTTP/1.1 request on a connection of its own, read to its end.
    fn request(&self, method: &str, path: &str, body: Option<&str>) -> Option<(u16, String)> {
        let address = self.base.trim_start_matches("http://");
        let mut stream = TcpStream::connect(address).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(120))).ok()?;
        let body = body.unwrap_or_default();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .ok()?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).ok()?;
        let answer = String::from_utf8_lossy(&answer).into_owned();
        let (head, rest) = answer.split_once("\r\n\r\n")?;
        let status = head.split_whitespace().nth(1)?.parse().ok()?;
        let chunked = head.to_ascii_lowercase().contains("transfer-encoding: chunked");
        Some((status, if chunked { unchunk(rest) } else { rest.to_owned() }))
    }
}

/// The body of a chunked answer.
fn unchunk(mut rest: &str) -> String {
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 || after.len() < size {
            break;
        }
        body.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    body
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
