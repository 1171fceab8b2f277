//! A PDF's text, read in a process of its own. The extractor can fail in ways no error return
//! catches: a stack overflow on deeply nested objects, an allocation it cannot make, a loop that
//! does not end. Each of those would end or freeze the app with the person's work in it, so the
//! front end's own program is started again as a reader (`--pinloom-read-pdf`, served by
//! [`serve_pdf_reader_if_asked`] before anything else runs): it reads the PDF on its standard
//! input and writes the pages' text as JSON. The reader is stopped after [`READ_TIME_LIMIT`], or
//! once it holds more than [`READ_MEMORY_LIMIT`] (Linux), and its death is a refused file.
//!
//! A program that does not answer as a reader (the test harness, which runs the app's code in a
//! program of its own) is told apart by the reader's first line, and the PDF is then read in
//! this process, as before.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::base::media::{MAX_PDF_BYTES, pdf_pages};
use crate::error::ApiError;

/// The argument that makes a front end's program a PDF reader.
pub const READ_PDF_ARGUMENT: &str = "--pinloom-read-pdf";

/// The first line a reader writes, before it reads anything.
const READER_HELLO: &[u8] = b"pinloom pdf reader 1\n";

/// What a reader writes where a refusal names the file: the reader is given bytes, not a name.
const NAME: &str = "\u{1}pdf\u{1}";

/// How long a PDF may take to read.
pub(crate) const READ_TIME_LIMIT: Duration = Duration::from_secs(60);

/// How much memory the reader may hold (Linux, where it can be watched).
pub(crate) const READ_MEMORY_LIMIT: u64 = 1024 * 1024 * 1024;

/// The most text a reader's answer may hold: more than the 64 MB a PDF may be.
const MAX_ANSWER_BYTES: u64 = 256 * 1024 * 1024;

/// Where PDFs are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PdfReader {
    /// In a process of its own: this program, started as a reader.
    OwnProcess(PathBuf),
    /// In this process (no program to start).
    ThisProcess,
}

impl Default for PdfReader {
    fn default() -> PdfReader {
        std::env::current_exe().map_or(PdfReader::ThisProcess, PdfReader::OwnProcess)
    }
}

/// Serves as a PDF reader when this program was started as one, and exits; returns at once
/// otherwise. A front end calls it first thing in `main`.
pub fn serve_pdf_reader_if_asked() {
    if std::env::args_os().nth(1).is_none_or(|argument| argument != READ_PDF_ARGUMENT) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    // Said before reading: a reader that dies after this is a PDF that killed it.
    if stdout.write_all(READER_HELLO).and_then(|()| stdout.flush()).is_err() {
        std::process::exit(2);
    }
    let mut bytes = Vec::new();
    let read = std::io::stdin().lock().take(MAX_PDF_BYTES + 1).read_to_end(&mut bytes);
    let answer = match read {
        Err(error) => {
            serde_json::json!({ "refused": format!("the PDF could not be read ({error})") })
        }
        Ok(_) => match pdf_pages(&bytes, NAME) {
            Ok(pages) => serde_json::json!({ "pages": pages }),
            Err(refusal) => serde_json::json!({ "refused": refusal.message }),
        },
    };
    let written = serde_json::to_writer(&mut stdout, &answer).is_ok() && stdout.flush().is_ok();
    std::process::exit(if written { 0 } else { 2 });
}

/// The text of each page of the PDF `bytes`, read where `reader` says; `shown` names it in a
/// refusal.
pub(crate) fn read_pdf(
    reader: &PdfReader,
    bytes: &[u8],
    shown: &str,
) -> Result<Vec<String>, ApiError> {
    let PdfReader::OwnProcess(program) = reader else {
        return pdf_pages(bytes, shown);
    };
    match read_apart(program, bytes) {
        Answer::Pages(pages) => Ok(pages),
        Answer::Refused(why) => Err(ApiError::invalid_input(why.replace(NAME, shown))),
        Answer::Failed(why) => Err(ApiError::invalid_input(format!(
            "the text of {shown} cannot be read: {why}; the PDF may be damaged or made to harm \
             a reader: print it to a new PDF and attach that"
        ))),
        Answer::NoReader => pdf_pages(bytes, shown),
    }
}

/// What a reader process answered.
enum Answer {
    Pages(Vec<String>),
    /// The reader's own refusal, in its words (Pinloom's: the reader is this program).
    Refused(String),
    /// The reader died, ran too long or held too much.
    Failed(String),
    /// The program is not a reader.
    NoReader,
}

fn read_apart(program: &std::path::Path, bytes: &[u8]) -> Answer {
    let started = Command::new(program)
        .arg(READ_PDF_ARGUMENT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = started else { return Answer::NoReader };
    let feeding = child.stdin.take().map(|mut input| {
        let bytes = bytes.to_vec();
        // A reader that stops reading (a program that is not one) only ends this write.
        std::thread::spawn(move || drop(input.write_all(&bytes)))
    });
    let answer = child.stdout.take().map(|output| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            drop(output.take(MAX_ANSWER_BYTES).read_to_end(&mut text));
            text
        })
    });
    let began = Instant::now();
    let ended = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {}
            Err(error) => break Err(format!("the reader could not be watched ({error})")),
        }
        if began.elapsed() > READ_TIME_LIMIT {
            break Err(format!("reading took more than {} s", READ_TIME_LIMIT.as_secs()));
        }
        if resident_bytes(child.id()).is_some_and(|held| held > READ_MEMORY_LIMIT) {
            break Err(format!(
                "reading took more than {} MB of memory",
                READ_MEMORY_LIMIT / (1024 * 1024)
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if ended.is_err() {
        drop(child.kill());
        drop(child.wait());
    }
    drop(feeding.map(std::thread::JoinHandle::join));
    let text = answer.and_then(|answer| answer.join().ok()).unwrap_or_default();
    let Some(rest) = text.strip_prefix(READER_HELLO) else { return Answer::NoReader };
    let status = match ended {
        Ok(status) => status,
        Err(why) => return Answer::Failed(why),
    };
    match serde_json::from_slice::<serde_json::Value>(rest) {
        Ok(value) if status.success() => {
            if let Some(why) = value.get("refused").and_then(serde_json::Value::as_str) {
                return Answer::Refused(why.to_owned());
            }
            match serde_json::from_value::<Vec<String>>(value["pages"].clone()) {
                Ok(pages) => Answer::Pages(pages),
                Err(_) => Answer::Failed("the reader's answer could not be read".to_owned()),
            }
        }
        _ => Answer::Failed(format!("the reader stopped ({status})")),
    }
}

/// How much memory process `pid` holds, where the system says (Linux).
fn resident_bytes(pid: u32) -> Option<u64> {
    let statm = std::fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// One fuzz case for reading PDFs: `data` read as an attached file's bytes are, by this program
/// started again as a reader (a fuzz target serves as one). The reader may die; the side that
/// started it may not panic, and answers pages or a refusal in words.
#[cfg(feature = "test-seams")]
pub fn pdf_fuzz_case(data: &[u8]) -> Result<Vec<String>, ApiError> {
    read_pdf(&PdfReader::default(), data, "fuzz.pdf")
}
