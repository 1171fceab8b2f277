//! Sending from the terminal: `ask`, `pin`, `regenerate` and `continue` go through the same
//! conversation loop as the window (`Pinloom::reply_to`: the plan, ancestor summaries, drafts
//! saved every second, the receipt, calibration), and stream the reply to standard output as it
//! arrives, or as JSON lines.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use pinloom_app::json::{Exchange, PickInput, SamplingSettings, SendTarget, TreeMode};
use pinloom_app::{
    ApiError, CancellationToken, ErrorCode, Pinloom, QuestionMaterial, ReadMaterial, ReplyEvent,
};
use serde_json::json;

/// What a send's command asked for.
pub(crate) struct Send {
    /// Where the reply goes, once its question is known.
    pub(crate) place: Place,
    /// The model profile named, if any.
    pub(crate) profile: Option<String>,
    /// This send's sampling over the profile's (`-o`).
    pub(crate) sampling: SamplingSettings,
    /// What goes with the question (`-a`, `-s`, `--instruction`, `--context`).
    pub(crate) material: QuestionMaterial,
    /// How the reply is shown.
    pub(crate) shown: Showing,
}

/// How a reply is shown.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Showing {
    /// JSON lines instead of text.
    pub(crate) json: bool,
    /// The reply printed whole once it ended, not as it arrives.
    pub(crate) whole: bool,
    /// No line on standard error about what was sent.
    pub(crate) quiet: bool,
}

/// Where a send puts its question, or what it answers again.
pub(crate) enum Place {
    /// A new tree titled after the question.
    NewTree { question: Question },
    /// After a message (in its thread).
    After { node: i64, question: Question },
    /// At the end of a thread of a tree (`main`, a pin's id or number).
    Thread { tree: String, thread: String, question: Question },
    /// Where the person last asked from the terminal: after its reply, or their question
    /// answered when it has none yet (`again`, or the same words asked again).
    Latest { question: Option<Question>, again: bool },
    /// As the first message of a pin opened on a passage of a message.
    Pin { node: i64, passage: String, question: Question },
    /// Over messages picked from several branches and pins of one tree: a thread of its own.
    OverPicked { picks: Vec<PickInput>, question: Question },
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

/// Standard input, read whole.
fn read_stdin() -> anyhow::Result<String> {
    let mut text = String::new();
    std::io::stdin().lock().read_to_string(&mut text).map_err(|error| {
        ApiError::invalid_input(format!("could not read standard input: {error}"))
    })?;
    Ok(text)
}

/// `words`, or standard input read whole when they are `-`; `what` names it in the refusal of
/// an empty one.
pub(crate) fn words_or_stdin(words: &str, what: &str) -> anyhow::Result<String> {
    let text = if words == "-" { read_stdin()? } else { words.to_owned() };
    if text.trim().is_empty() {
        anyhow::bail!(ApiError::invalid_input(format!(
            "{what} is empty: give it as an argument, or pipe it in with -"
        )));
    }
    Ok(text)
}

/// `-o key=value` read into this send's sampling: `temperature`, `top_p` or `max_tokens`.
pub(crate) fn sampling(options: &[String]) -> anyhow::Result<SamplingSettings> {
    let mut sampling = SamplingSettings::default();
    for option in options {
        let refused = || {
            ApiError::invalid_input(format!(
                "-o {option}: give temperature=0.7, top_p=0.9 or max_tokens=500"
            ))
        };
        let (key, value) = option.split_once('=').ok_or_else(refused)?;
        let value = value.trim();
        match key.trim().replace('-', "_").as_str() {
            "temperature" => sampling.temperature = Some(value.parse().map_err(|_| refused())?),
            "top_p" => sampling.top_p = Some(value.parse().map_err(|_| refused())?),
            "max_tokens" => {
                sampling.max_output_tokens = Some(value.parse().map_err(|_| refused())?)
            }
            _ => anyhow::bail!(refused()),
        }
    }
    Ok(sampling)
}

/// The files of `-a`, `--instruction` and `--context`, with `-s`'s text.
pub(crate) fn material(
    files: &[PathBuf],
    instructions: &[PathBuf],
    contexts: &[PathBuf],
    system: Option<&String>,
) -> QuestionMaterial {
    QuestionMaterial {
        files: files.to_vec(),
        instructions: instructions.to_vec(),
        contexts: contexts.to_vec(),
        system: system.cloned(),
    }
}

impl Question {
    /// The question's text: `-` reads standard input whole; a question given while standard
    /// input is piped is followed by what was piped (as `cat notes.md | pinloom ask "Sum up:"`).
    fn text(&self) -> anyhow::Result<String> {
        if self.words == "-" || std::io::stdin().is_terminal() {
            return words_or_stdin(&self.words, "the question");
        }
        let more = read_stdin()?;
        Ok(if more.trim().is_empty() {
            words_or_stdin(&self.words, "the question")?
        } else {
            format!("{}\n\n{}", self.words, more.trim_end())
        })
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
    let Send { place, profile, sampling, material, shown: showing } = send;
    let named = profile.or_else(|| std::env::var("PINLOOM_PROFILE").ok());
    let (asked, profile) = match place {
        Place::Again { node } => (Asked::Again(node), choose(pinloom, named, Some(node)).await?),
        Place::Continue { node, length } => {
            let profile = choose(pinloom, named, Some(node)).await?;
            (Asked::Continue(node, length), profile)
        }
        place => {
            // The question is counted as it is written, with both vocabularies: their loads
            // (the most of a send's start) overlap what comes before.
            pinloom.load_counters_ahead();
            let question = Asking::from(pinloom, place).await?;
            let profile = choose(pinloom, named, question.continued()).await?;
            (question.write(pinloom, material, &profile).await?, profile)
        }
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
    let shown = tokio::spawn(async move {
        let mut shown = Shown::default();
        while let Some(event) = arriving.recv().await {
            shown.show(&event, showing);
        }
        shown
    });
    let replied = match &asked {
        Asked::Continue(node, length) => {
            let target = SendTarget::Continue { node_id: *node, length: *length };
            pinloom.reply_to(target, profile, events, cancel).await
        }
        Asked::Again(node) | Asked::Question { node, .. } => {
            pinloom.answer(*node, profile, sampling, events, cancel).await
        }
    };
    interrupt.abort();
    let mut shown = shown.await.unwrap_or_default();
    let exchange = replied?;
    let reply = exchange.reply.message.id;
    if let Asked::Question { .. } = asked {
        pinloom.remember_asked(reply).await?;
    }
    let tree_id = pinloom.node_tree(reply).await?;
    if let Asked::Question { node, titled: true } = asked {
        // The title is the question's words: it follows the question if it is excluded.
        pinloom.title_from_message(tree_id, node).await?;
    }
    let prompt = match asked {
        Asked::Question { node, .. } => Some(node),
        _ => exchange.prompt.as_ref().map(|prompt| prompt.message.id),
    };
    shown.finish(&exchange, tree_id, prompt, showing);
    Ok(match &exchange.interruption {
        None => ExitCode::SUCCESS,
        Some(broke) => {
            eprintln!("pinloom: {}", crate::terminal::one_line(&broke.message));
            ExitCode::from(exit_code(broke.code).max(1))
        }
    })
}

/// The profile that answers: the one named (`-m`, else `PINLOOM_PROFILE`), else the thread's,
/// the default, or the first that can answer.
async fn choose(
    pinloom: &Pinloom,
    named: Option<String>,
    continued: Option<i64>,
) -> anyhow::Result<String> {
    let Some(named) = named else { return pinloom.profile_for_reply(continued).await };
    // Checked before anything is written: a send to no model must not leave its question.
    match pinloom.model_profiles().await?.into_iter().find(|profile| profile.name == named) {
        Some(profile) if profile.imported_from.is_none() => Ok(named),
        Some(_) => anyhow::bail!(ApiError::invalid_input(format!(
            "{named} came with an imported file and is not enabled: `pinloom models enable \
             {named:?}` makes it yours; nothing was written"
        ))),
        None => anyhow::bail!(ApiError::invalid_input(format!(
            "there is no model profile named {named:?}: `pinloom models` lists them, `pinloom \
             models add` adds one; nothing was written"
        ))),
    }
}

/// What a send answers, once its question is written.
enum Asked {
    /// The person's question, written now or earlier (a failed send's): a new tree's is its title.
    Question { node: i64, titled: bool },
    /// A message answered again.
    Again(i64),
    /// A buffer document continued.
    Continue(i64, Option<u32>),
}

/// Where a question goes, found before anything is written.
enum Asking {
    /// A new tree, made once the material is read.
    NewTree { text: String },
    /// A thread of an existing tree.
    Thread { tree: i64, target: SendTarget },
    /// A pin opened on a passage once the material is read.
    Pin { node: i64, tree: i64, passage: String, text: String },
    /// The person's question that a failed send left unanswered: answered now.
    Unanswered { node: i64 },
}

impl Asking {
    async fn from(pinloom: &Pinloom, place: Place) -> anyhow::Result<Asking> {
        Ok(match place {
            Place::NewTree { question } => Asking::NewTree { text: question.text()? },
            Place::After { node, question } => {
                let text = question.text()?;
                let tree = pinloom.node_tree(node).await?;
                let target = SendTarget::Thread {
                    tree_id: tree,
                    parent_id: Some(node),
                    text,
                    images: Vec::new(),
                };
                Asking::Thread { tree, target }
            }
            Place::Thread { tree, thread, question } => {
                let text = question.text()?;
                let tree = pinloom.tree_by_reference(tree).await?;
                let target = pinloom.thread_send_target(tree, thread, text).await?;
                Asking::Thread { tree, target }
            }
            Place::Latest { question, again } => latest(pinloom, question, again).await?,
            Place::OverPicked { picks, question } => {
                let text = question.text()?;
                let Some(first) = picks.first() else {
                    anyhow::bail!(ApiError::invalid_input(
                        "name the messages to ask over with --with"
                    ));
                };
                let tree = pinloom.node_tree(first.node_id).await?;
                Asking::Thread { tree, target: SendTarget::OverPicked { picks, text } }
            }
            Place::Pin { node, passage, question } => {
                let text = question.text()?;
                let tree = pinloom.node_tree(node).await?;
                Asking::Pin { node, tree, passage, text }
            }
            Place::Again { .. } | Place::Continue { .. } => {
                unreachable!("answered without a question")
            }
        })
    }

    /// The message the question continues, for choosing a profile.
    fn continued(&self) -> Option<i64> {
        match self {
            Asking::NewTree { .. } => None,
            Asking::Thread { target: SendTarget::Thread { parent_id, .. }, .. } => *parent_id,
            Asking::Thread { .. } => None,
            Asking::Pin { node, .. } | Asking::Unanswered { node } => Some(*node),
        }
    }

    /// Reads the material, then writes the question with it (and the tree or pin it opens):
    /// a file that cannot go leaves nothing written.
    async fn write(
        self,
        pinloom: &Pinloom,
        material: QuestionMaterial,
        profile: &str,
    ) -> anyhow::Result<Asked> {
        let tree = match &self {
            Asking::NewTree { .. } => None,
            Asking::Thread { tree, .. } | Asking::Pin { tree, .. } => Some(*tree),
            Asking::Unanswered { node } => {
                if !material.is_empty() {
                    anyhow::bail!(ApiError::invalid_input(
                        "the question is answered as it was asked: files and system text go \
                         with a new question"
                    ));
                }
                return Ok(Asked::Question { node: *node, titled: false });
            }
        };
        let read: ReadMaterial = pinloom.read_material(material, tree, profile.to_owned()).await?;
        let (target, titled) = match self {
            Asking::NewTree { text } => {
                let tree = pinloom.create_tree(title_of(&text), TreeMode::Dialogue).await?;
                let target = SendTarget::Thread {
                    tree_id: tree.id,
                    parent_id: None,
                    text,
                    images: Vec::new(),
                };
                (target, true)
            }
            Asking::Thread { target, .. } => (target, false),
            Asking::Pin { node, passage, text, .. } => {
                let pin = pinloom.pin_passage(node, passage).await?;
                (
                    SendTarget::Pin { pin_id: pin.id, parent_id: None, text, images: Vec::new() },
                    false,
                )
            }
            Asking::Unanswered { .. } => unreachable!("returned above"),
        };
        let node = pinloom.write_question(target, read).await?;
        // Remembered before the send: a send that fails leaves this question for `ask -c`.
        pinloom.remember_asked(node).await?;
        Ok(Asked::Question { node, titled })
    }
}

/// `ask -c`: after the reply the person last got from the terminal; or, when their last
/// question has none (the send failed), that question answered: given `--again`, or asked
/// again in the same words. Another question is refused there, since it would stand beside the
/// unanswered one and the next request would carry both as one turn.
async fn latest(
    pinloom: &Pinloom,
    question: Option<Question>,
    again: bool,
) -> anyhow::Result<Asking> {
    let Some(last) = pinloom.last_asked().await? else {
        anyhow::bail!(ApiError::invalid_input(
            "there is no conversation to continue yet: ask without -c first"
        ));
    };
    let text = question.map(|question| question.text()).transpose()?;
    match (last.unanswered, text) {
        (Some(_), _) if again => Ok(Asking::Unanswered { node: last.node_id }),
        (Some(asked), Some(text)) if asked.trim() == text.trim() => {
            Ok(Asking::Unanswered { node: last.node_id })
        }
        (Some(_), _) => anyhow::bail!(ApiError::invalid_input(format!(
            "your last question (#{}) has no answer yet: `pinloom ask -c --again` answers it; \
             `pinloom ask --node N` asks after another message",
            last.node_id
        ))),
        (None, _) if again => anyhow::bail!(ApiError::invalid_input(format!(
            "your last question was answered (#{}): `pinloom regenerate --node {}` answers it again",
            last.node_id, last.node_id
        ))),
        (None, None) => anyhow::bail!(ApiError::invalid_input(
            "the question is empty: give it as an argument, or pipe it in with -"
        )),
        (None, Some(text)) => {
            let target = SendTarget::Thread {
                tree_id: last.tree_id,
                parent_id: Some(last.node_id),
                text,
                images: Vec::new(),
            };
            Ok(Asking::Thread { tree: last.tree_id, target })
        }
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
    /// The reply kept until it ends (`--no-stream`).
    held: String,
}

impl Shown {
    fn show(&mut self, event: &ReplyEvent, showing: Showing) {
        let json = showing.json;
        let mut stdout = std::io::stdout().lock();
        let line = match event {
            ReplyEvent::Text(piece) if json => json!({ "event": "text", "text": piece }),
            ReplyEvent::Text(piece) if showing.whole => {
                self.held.push_str(piece);
                return;
            }
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
                    self.held.clear();
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

    /// Ends the reply's output: what was held, a line break after text, or the reply's record
    /// as the last JSON line; then, unless quiet, one line on standard error of what was sent.
    fn finish(&mut self, exchange: &Exchange, tree_id: i64, prompt: Option<i64>, showing: Showing) {
        let reply = &exchange.reply.message;
        let mut stdout = std::io::stdout().lock();
        if showing.json {
            let record = json!({
                "event": "reply",
                "id": reply.id,
                "treeId": tree_id,
                "promptId": prompt,
                "model": exchange.reply.model,
                "incomplete": exchange.reply.incomplete,
                "receipt": exchange.receipt,
            });
            let record = record.to_string();
            drop(
                writeln!(stdout, "{}", crate::terminal::shown(&record))
                    .and_then(|()| stdout.flush()),
            );
            return;
        }
        if !self.held.is_empty() {
            let held = std::mem::take(&mut self.held);
            drop(stdout.write_all(crate::terminal::shown(&held).as_bytes()));
            self.any = true;
            self.ends_line = held.ends_with('\n');
        }
        if self.any && !self.ends_line {
            drop(writeln!(stdout));
        }
        drop(stdout.flush());
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
        if !showing.quiet {
            // Profile names can come from a synced or imported file: shown, never obeyed.
            eprintln!("[{}]", crate::terminal::one_line(&crate::report::sent(exchange, tree_id)));
        }
    }
}
