//! Ctrl+C in the middle of a reply, for the sending tests against the scripted server and against
//! llama.cpp's: shared by both test binaries through `#[path]`.

use std::io::Read;
use std::process::{Command, Stdio};

/// Starts `command` with its output piped, waits (whatever the machine's speed) until what it
/// has written satisfies `enough`, sends it SIGINT as a terminal's Ctrl+C does, and returns all it
/// wrote to standard output and its exit status.
pub(crate) async fn interrupt_when(
    mut command: Command,
    enough: impl Fn(&str) -> bool + Send + 'static,
) -> (String, i32) {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let pid = child.id().to_string();
    tokio::task::spawn_blocking(move || {
        let mut seen = Vec::new();
        let mut buffer = [0_u8; 4096];
        while !enough(&String::from_utf8_lossy(&seen)) {
            let read = stdout.read(&mut buffer).unwrap();
            assert!(read > 0, "the reply never arrived");
            seen.extend_from_slice(&buffer[..read]);
        }
        assert!(Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
        stdout.read_to_end(&mut seen).unwrap();
        let status = child.wait().unwrap();
        (String::from_utf8(seen).unwrap(), status.code().unwrap_or(-1))
    })
    .await
    .unwrap()
}
