//! Sending from the terminal: `ask`, `pin`, `regenerate` and `continue` go through the same
//! conversation loop as the window (`Pinloom::reply_to`: the plan, ancestor summaries, drafts
//! saved every second, the receipt, calibration), and stream the reply to standard output as it
//! arrives, or as JSON lines.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

use pinloom_app::json::{Exchange, SendTarget, TreeMode};
use pinloom_app::{ApiError, CancellationToken, ErrorCode, Pinloom, ReplyEvent};
use serde_json::json;

/// What a send's command asked for.
pub(crate) struct Send {
    /// Where the reply goes, once its question is known.
    pub(crate) place: Place,
    /// The model profile named, if any.
    pub(crate) profile: Option<String>,
    /// JSON lines instead of text.
    pub(crate) json: bool,
}

/// Where a send puts its question, or what it answers again.
pub(crate) enum Place {
    /// A new tree titled after the question.
    NewTree { question: Question },
    /// After a message (in its thread).
    After { node: i64, question: Question },
    /// At the end of a thread of a tree (`main`, a pin's id or number).
    Thread { tree: String, thread: String, question: Question },
    /// At the end of the most recently changed tree's main thread.
    Latest { question: Question },
    /// As the first message of a pin opened on a passage of a message.
    Pin { node: i64, passage: String, question: Question },
    /// The message (or the reply's prompt) answered again.
    Again { node: i64 },
    /// A buffer document continued from a message.
    Continue { node: i64, length: Option<u32> },
}

/// The words of a question as given on the command line.
pub(crate) struct Question {
    /// `-` for standard input.
    pub(crate) words: String,
}

impl Question {
    /// The question's text: `-` reads standard input whole; a question given while standard
    /// input is piped is followed by what was piped (as `cat notes.md | pinloom ask "Sum up:"`).
    fn text(&self) -> anyhow::Result<String> {
        let stdin = std::io::stdin();
        let piped = |stdin: &std::io::Stdin| -> anyhow::Result<String> {
            let mut text = String::new();
            stdin.lock().read_to_string(&mut text).map_err(|error| {
                ApiError::invalid_input(format!("could not read standard input: {error}"))
            })?;
            Ok(text)
        };
        let text = if self.words == "-" {
            piped(&stdin)?
        } else if !stdin.is_terminal() {
            let more = piped(&stdin)?;
            if more.trim().is_empty() {
                self.words.clone()
            } else {
                format!("{}\n\n{}", self.words, more.trim_end())
            }
        } else {
            self.words.clone()
        };
        if text.trim().is_empty() {
            anyhow::bail!(ApiError::invalid_input(
                "the question is empty: give it as an argument, or pipe it in with -"
            ));
        }
        Ok(text)
    }
}

/// Runs a send and says how it ended: 0 answered, 1 the provider failed (or broke off), 2 a
/// usage or data error, 130 stopped with Ctrl+C (what arrived is kept, marked incomplete).
pub(crate) async fn run(pinloom: Pinloom, send: Send) -> ExitCode {
    match send_and_show(&pinloom, send).await {
        Ok(code) => code,
        Err(error) => {
            let error = ApiError::from(error);
            eprintln!("pinloom: {}", crate::terminal::one_line(&error.message));
            ExitCode::from(exit_code(error.code))
        }
    }
}

/// The exit status of a send that failed with `code`.
fn exit_code(code: ErrorCode) -> u8 {
    match code {
        ErrorCode::ProviderKey | ErrorCode::ProviderUnavailable | ErrorCode::ProviderRefused => 1,
        ErrorCode::Cancelled => 130,
        _ => 2,
    }
}

async fn send_and_show(pinloom: &Pinloom, send: Send) -> anyhow::Result<ExitCode> {
    let titled_after_question = matches!(send.place, Place::NewTree { .. });
    let (target, continued) = target(pinloom, send.place).await?;
    let profile = match send.profile.or_else(|| std::env::var("PINLOOM_PROFILE").ok()) {
        Some(profile) => profile,
        None => pinloom.profile_for_reply(continued).await?,
    };
    let (events, mut arriving) = tokio::sync::mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    // Ctrl+C stops the reply; what arrived is written, marked incomplete.
    let interrupt = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stop.cancel();
        }
    });
    let json = send.json;
    let shown = tokio::spawn(async move {
        let mut shown = Shown::default();
        while let Some(event) = arriving.recv().await {
            shown.show(&event, json);
        }
        shown
    });
    let replied = pinloom.reply_to(target, profile, events, cancel).await;
    interrupt.abort();
    let shown = shown.await.unwrap_or_default();
    let exchange = replied?;
    let tree_id = pinloom.node_tree(exchange.reply.message.id).await?;
    if titled_after_question && let Some(prompt) = &exchange.prompt {
        // The title is the question's words: it follows the question if it is excluded.
        pinloom.title_from_message(tree_id, prompt.message.id).await?;
    }
    finish(&exchange, tree_id, &shown, json);
    Ok(match &exchange.interruption {
        None => ExitCode::SUCCESS,
        Some(broke) => {
            eprintln!("pinloom: {}", crate::terminal::one_line(&broke.message));
            ExitCode::from(exit_code(broke.code).max(1))
        }
    })
}

/// Where the send goes, and the message it continues (for choosing a profile).
async fn target(pinloom: &Pinloom, place: Place) -> anyhow::Result<(SendTarget, Option<i64>)> {
    Ok(match place {
        Place::NewTree { question } => {
            let text = question.text()?;
            let tree = pinloom.create_tree(title_of(&text), TreeMode::Dialogue).await?;
            (
                SendTarget::Thread { tree_id: tree.id, parent_id: None, text, images: Vec::new() },
                None,
            )
        }
        Place::After { node, question } => {
            let text = question.text()?;
            let tree_id = pinloom.node_tree(node).await?;
            (
                SendTarget::Thread { tree_id, parent_id: Some(node), text, images: Vec::new() },
                Some(node),
            )
        }
        Place::Thread { tree, thread, question } => {
            let text = question.text()?;
            let tree = pinloom.tree_by_reference(tree).await?;
            let target = pinloom.thread_send_target(tree, thread, text).await?;
            let continued = continued_message(&target);
            (target, continued)
        }
        Place::Latest { question } => {
            let text = question.text()?;
            let latest =
                pinloom.list_trees().await?.into_iter().max_by_key(|tree| tree.updated_at_ms);
            let Some(tree) = latest else {
                anyhow::bail!(ApiError::invalid_input(
                    "there is no conversation to continue yet: ask without --continue-last first"
                ));
            };
            let target = pinloom.thread_send_target(tree.id, "main".to_owned(), text).await?;
            let continued = continued_message(&target);
            (target, continued)
        }
        Place::Pin { node, passage, question } => {
            let text = question.text()?;
            let pin = pinloom.pin_passage(node, passage).await?;
            (
                SendTarget::Pin { pin_id: pin.id, parent_id: None, text, images: Vec::new() },
                Some(node),
            )
        }
        Place::Again { node } => (SendTarget::Regenerate { node_id: node }, Some(node)),
        Place::Continue { node, length } => {
            (SendTarget::Continue { node_id: node, length }, Some(node))
        }
    })
}

/// The message a new message of the person's continues, if it continues one.
fn continued_message(target: &SendTarget) -> Option<i64> {
    match target {
        SendTarget::Thread { parent_id, .. } => *parent_id,
        _ => None,
    }
}

/// A new tree's title: the question's first line, cut at a word near 60 characters.
fn title_of(question: &str) -> String {
    let line = question.lines().find(|line| !line.trim().is_empty()).unwrap_or("").trim();
    if line.chars().count() <= 60 {
        return line.to_owned();
    }
    let cut: String = line.chars().take(60).collect();
    let at_word = cut.rfind(' ').filter(|&at| at > 30).map_or(cut.as_str(), |at| &cut[..at]);
    format!("{at_word}…")
}

/// What has been shown of a streaming reply.
#[derive(Default)]
struct Shown {
    /// Whether the text shown so far ends a line.
    ends_line: bool,
    /// Whether any text was shown.
    any: bool,
}

impl Shown {
    fn show(&mut self, event: &ReplyEvent, json: bool) {
        let mut stdout = std::io::stdout().lock();
        let line = match event {
            ReplyEvent::Text(piece) if json => json!({ "event": "text", "text": piece }),
            ReplyEvent::Text(piece) => {
                // A closed pipe (`| head`) is the reader's choice: the reply is still written.
                let shown = crate::terminal::shown(piece);
                drop(stdout.write_all(shown.as_bytes()).and_then(|()| stdout.flush()));
                self.any |= !piece.is_empty();
                self.ends_line = piece.ends_with('\n') || (piece.is_empty() && self.ends_line);
                return;
            }
            ReplyEvent::Retrying { attempt, wait, reason } => {
                if !json {
                    if self.any && !self.ends_line {
                        drop(writeln!(stdout));
                    }
                    eprintln!(
                        "pinloom: {} — trying again in {} s (try {attempt}); the reply starts over",
                        crate::terminal::one_line(reason),
                        wait.as_secs()
                    );
                    self.any = false;
                    return;
                }
                json!({ "event": "retrying", "attempt": attempt, "waitMs": wait.as_millis() as u64, "reason": reason })
            }
            ReplyEvent::Saved { characters } if json => {
                json!({ "event": "saved", "characters": characters })
            }
            ReplyEvent::Saved { .. } => return,
        };
        let line = line.to_string();
        drop(writeln!(stdout, "{}", crate::terminal::shown(&line)).and_then(|()| stdout.flush()));
    }
}

/// Ends the reply's output: a line break after text, or the reply's record as the last JSON
/// line; and, at a terminal, where to continue.
fn finish(exchange: &Exchange, tree_id: i64, shown: &Shown, json: bool) {
    let reply = &exchange.reply.message;
    let mut stdout = std::io::stdout().lock();
    if json {
        let record = json!({
            "event": "reply",
            "id": reply.id,
            "treeId": tree_id,
            "promptId": exchange.prompt.as_ref().map(|prompt| prompt.message.id),
            "model": exchange.reply.model,
            "incomplete": exchange.reply.incomplete,
            "receipt": exchange.receipt,
        });
        let record = record.to_string();
        drop(writeln!(stdout, "{}", crate::terminal::shown(&record)).and_then(|()| stdout.flush()));
        return;
    }
    if shown.any && !shown.ends_line {
        drop(writeln!(stdout).and_then(|()| stdout.flush()));
    }
    if let Some(due) = exchange.plan.compaction_due.as_ref().filter(|due| !due.automatic) {
        eprintln!(
            "[{}: `pinloom compact --node {}` has a summary stand for the thread's older part \
             instead, keeping the last {} turns (`pinloom settings --tree {tree_id} --compaction \
             auto` does it before such a send)]",
            crate::terminal::shown(&due.reason),
            reply.id,
            due.keep_turns
        );
    }
    if std::io::stderr().is_terminal() {
        eprintln!(
            "[reply {} in tree {}: continue with `pinloom ask --node {} …`]",
            reply.id, tree_id, reply.id
        );
    }
}
