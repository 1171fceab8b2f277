//! What reaches the terminal is text, never a command to it. Titles, names, replies and servers'
//! errors come from other people and other programs (an imported file, a team's sync folder, a
//! model, a server), and a terminal obeys what they may hold: an escape sequence can write the
//! clipboard (OSC 52), retitle the window, move the cursor and rewrite what was printed. So every
//! control character and bidirectional override in what `pinloom` prints is written as `\uXXXX`
//! instead (inside a JSON string, the same six characters are that very character, so JSON output
//! stays exact), and a carriage return, whose only effect is to go back over a line, is dropped.
//! Line breaks and tabs stay. `--raw` prints the bytes as they are, for a pipe that wants them.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};

static RAW: AtomicBool = AtomicBool::new(false);

/// Prints data as it is from now on (`--raw`).
pub(crate) fn print_raw() {
    RAW.store(true, Ordering::Relaxed);
}

/// Whether a terminal would take `c` as a command rather than as a character to show.
fn is_command(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` as it may be printed: unchanged under `--raw` or when it holds nothing a terminal
/// would obey.
pub(crate) fn shown(text: &str) -> Cow<'_, str> {
    if RAW.load(Ordering::Relaxed) || !text.chars().any(|c| c == '\r' || is_command(c)) {
        return Cow::Borrowed(text);
    }
    let mut safe = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\r' => {}
            c if is_command(c) => safe.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => safe.push(c),
        }
    }
    Cow::Owned(safe)
}

/// A message on one line, as it may be printed: line breaks inside it become spaces, and what a
/// terminal would obey is shown instead (a server's error body is the server's text).
pub(crate) fn one_line(message: &str) -> String {
    shown(&message.split_whitespace().collect::<Vec<_>>().join(" ")).into_owned()
}

/// How far an import has come, on one line of standard error rewritten in place, when standard
/// error is a terminal (a script reading it gets the report alone).
pub(crate) fn progress_line(progress: pinloom_app::json::TransferProgress) {
    use pinloom_app::json::TransferProgress;
    use std::io::{IsTerminal, Write};
    let mut stderr = std::io::stderr();
    if !stderr.is_terminal() {
        return;
    }
    let megabytes = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    let line = match progress {
        TransferProgress::Reading { bytes, total } => {
            format!("reading the file: {:.0} of {:.0} MB", megabytes(bytes), megabytes(total))
        }
        TransferProgress::Checked { total } => format!("checked {total} messages; writing them"),
        TransferProgress::Writing { messages, total } => {
            format!("writing {messages} of {total} messages")
        }
        _ => return,
    };
    // Our own carriage return and line clearing: the line is ours, never the file's text.
    drop(write!(stderr, "\r\u{1b}[2K{line}").and_then(|()| stderr.flush()));
}

/// Clears the progress line, when there is one, before what comes after it.
pub(crate) fn progress_done() {
    use std::io::{IsTerminal, Write};
    let mut stderr = std::io::stderr();
    if stderr.is_terminal() {
        drop(write!(stderr, "\r\u{1b}[2K").and_then(|()| stderr.flush()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_shown_not_obeyed_and_json_stays_exact() {
        let title = "Rivers\u{1b}]52;c;ZWNobyBvd25lZA==\u{7}\u{1b}[2J\r\u{9b}31m\u{202e}txt.exe";
        let printed = shown(title);
        assert_eq!(
            printed,
            "Rivers\\u001b]52;c;ZWNobyBvd25lZA==\\u0007\\u001b[2J\\u009b31m\\u202etxt.exe"
        );
        assert!(!printed.chars().any(is_command));
        // Kept as they are: text, line breaks, tabs and letters of every script.
        assert_eq!(shown("a\tb\nç 日本 עברית"), "a\tb\nç 日本 עברית");
        // In JSON (which escapes C0 itself), what is written is that very character.
        let json =
            serde_json::to_string(&serde_json::json!({ "title": "x\u{9b}y\u{202e}" })).unwrap();
        let read: serde_json::Value = serde_json::from_str(&shown(&json)).unwrap();
        assert_eq!(read["title"], "x\u{9b}y\u{202e}");
    }
}
