//! `pinloom`: Pinloom without a window. It opens the desktop app's database (or the one `--db`
//! names) and calls the same application layer, so a context assembled here is the one the app
//! would send.

mod messages;
mod models;
mod report;
mod sending;
mod teams;
mod terminal;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};
use pinloom_app::json::{
    CompactionWhen, DEFAULT_COMPACT_AT_PERCENT, DEFAULT_COMPACTION_KEEP_TURNS, NodeAction,
    PickInput, RetrievalChoice, SummaryWriting, TreeSettings,
};
use pinloom_app::{
    APP_IDENTIFIER, ApiError, Connections, DATA_DIR_ENV, DATABASE_FILE_NAME, Pinloom, PlanFormat,
    ThreadMindReport,
};

#[derive(Debug, Parser)]
#[command(
    name = "pinloom",
    version,
    about = "Pinloom from the command line: the app's trees and contexts, without the window.",
    after_help = "Exit status: 0 done; 1 the provider failed or broke off (what arrived is kept); \
                  2 bad input or data (nothing written); 130 stopped with Ctrl+C (what arrived is \
                  kept, marked incomplete)."
)]
struct Cli {
    /// The database file; the desktop app's by default (PINLOOM_DATA_DIR moves it, as for the app).
    #[arg(long, global = true, value_name = "FILE")]
    db: Option<PathBuf>,
    /// Print titles, replies and messages byte for byte, control characters and escape
    /// sequences included (for a pipe that wants them); by default they are shown as `\uXXXX`.
    #[arg(long, global = true)]
    raw: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Ask a model, streaming its reply: in a new tree, after a message, at the end of a thread,
    /// or where you last asked (-c); with files (-a), system text (-s) and sampling (-o). Saved
    /// as the window saves it (drafts every second, the receipt); one line on standard error
    /// says what was sent, cut and summarised, and what it cost.
    Ask {
        /// The question; `-` reads it from standard input. Text piped in beside a question
        /// follows it.
        #[arg(required_unless_present = "again")]
        question: Option<String>,
        /// Continue after this message, in its thread.
        #[arg(long, conflicts_with_all = ["tree", "continue_last"])]
        node: Option<i64>,
        /// Ask over this message, picked from any branch or pin of its tree (repeat it): the
        /// question starts a thread of its own that carries each picked message, labelled as
        /// yours, and nothing else of their branches.
        #[arg(long = "with", value_name = "NODE", conflicts_with_all = ["node", "tree", "continue_last"])]
        picked: Vec<i64>,
        /// As --with, and the summary of the message's branch up to it goes too.
        #[arg(long = "with-summary", value_name = "NODE", conflicts_with_all = ["node", "tree", "continue_last"])]
        picked_with_summary: Vec<i64>,
        /// Continue this tree (its number or ThreadMind project id), at the end of --thread.
        #[arg(long, conflicts_with = "continue_last")]
        tree: Option<String>,
        /// The thread to continue (`main`, a pin's ThreadMind id, or its number).
        #[arg(long, requires = "tree", default_value = "main")]
        thread: String,
        /// Continue the conversation you last asked in from here, after its reply. When that
        /// question has no reply yet (its send failed), asking it again in the same words, or
        /// --again, answers it.
        #[arg(short = 'c', long)]
        continue_last: bool,
        /// With -c: answer your last question again, as it was asked.
        #[arg(long, requires = "continue_last")]
        again: bool,
        #[command(flatten)]
        with: QuestionOptions,
        #[command(flatten)]
        reply: ReplyOptions,
    },
    /// Pin a passage of a message and ask in the sub-thread it opens, which sees the message's
    /// ancestry and none of its other branches; or close a pin (`pinloom pin close`).
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Pin {
        #[command(subcommand)]
        action: Option<messages::PinAction>,
        /// The message holding the passage.
        #[arg(long, required = true)]
        node: Option<i64>,
        /// The passage, word for word as the message reads it.
        #[arg(long, required = true)]
        passage: Option<String>,
        /// The question; `-` reads it from standard input.
        #[arg(required = true)]
        question: Option<String>,
        #[command(flatten)]
        with: QuestionOptions,
        #[command(flatten)]
        reply: ReplyOptions,
    },
    /// Answer a message again (a reply's prompt, given a reply): a new reply beside the others.
    Regenerate {
        /// The message.
        #[arg(long)]
        node: i64,
        #[command(flatten)]
        reply: ReplyOptions,
    },
    /// Continue a buffer tree's document from a message through the completion endpoint.
    Continue {
        /// The end of the text to continue.
        #[arg(long)]
        node: i64,
        /// The most tokens the continuation may have; the tree's token buffer, else the model's
        /// reserve, when absent.
        #[arg(long)]
        length: Option<u32>,
        #[command(flatten)]
        reply: ReplyOptions,
    },
    /// The model profiles, one a line: name, provider, model, window, and whether it can answer
    /// now or what it lacks; `models add|edit|remove|default|found|enable` change them.
    Models {
        #[command(subcommand)]
        action: Option<models::ModelsAction>,
        /// As JSON: the profiles, which are ready and why the others are not, the default.
        #[arg(long)]
        json: bool,
    },
    /// Provider keys: which providers have one and where it comes from (never the key itself);
    /// `keys set PROVIDER` stores one from standard input.
    Keys {
        #[command(subcommand)]
        action: models::KeysAction,
    },
    /// Whether this machine is ready: the database, the keyring, the models that can answer and
    /// why the others cannot, local servers, git for sync.
    Doctor,
    /// The newest exchanges across trees: the reply's number, its tree, the model, the tokens
    /// sent and replied, the cost and the question.
    Log {
        /// How many.
        #[arg(short = 'n', long, default_value_t = 10)]
        count: u32,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Search every tree's messages (or one tree's) with the full-text index, best first.
    Search {
        /// The words to look for.
        query: String,
        /// Only this tree.
        #[arg(long)]
        tree: Option<String>,
        /// How many.
        #[arg(short = 'n', long, default_value_t = 20)]
        limit: u32,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// A tree as indented text; the list of trees when no tree is given (number, ThreadMind
    /// project id, title, size, and the global id every synced machine shares).
    Tree {
        /// The tree's number, ThreadMind project id or global id.
        id: Option<String>,
    },
    /// The context a send would carry: from a message, or from the newest message of a thread.
    Context {
        #[command(flatten)]
        target: Target,
        /// The model profile (plan, report and request); when absent, the one `ask` would use.
        #[arg(long, short = 'm', alias = "model")]
        profile: Option<String>,
        /// How to show it.
        #[arg(long, value_enum, default_value_t = ContextFormat::Markdown)]
        format: ContextFormat,
    },
    /// ThreadMind's statistics for the chain of a message or a thread.
    Stats {
        #[command(flatten)]
        target: Target,
    },
    /// Keep messages out of every context from now on (the window's Exclude). A summary written
    /// from one of them no longer holds: it is not sent, and is written again.
    Exclude {
        /// The messages, by the numbers `pinloom tree` shows.
        #[arg(required = true)]
        nodes: Vec<i64>,
    },
    /// Let excluded messages back into context (the window's Include).
    Include {
        /// The messages, by the numbers `pinloom tree` shows.
        #[arg(required = true)]
        nodes: Vec<i64>,
    },
    /// Keep messages in every context the budget allows, whatever truncation cuts.
    Keep {
        /// The messages, by the numbers `pinloom tree` shows.
        #[arg(required = true)]
        nodes: Vec<i64>,
    },
    /// Let truncation treat kept messages as any other again.
    Release {
        /// The messages, by the numbers `pinloom tree` shows.
        #[arg(required = true)]
        nodes: Vec<i64>,
    },
    /// Delete messages with everything under them (restorable: `pinloom restore`).
    Delete {
        /// The messages, by the numbers `pinloom tree` shows.
        #[arg(required = true)]
        nodes: Vec<i64>,
    },
    /// Bring deleted messages back, with everything under them.
    Restore {
        /// The messages, by the numbers `pinloom tree` shows.
        #[arg(required = true)]
        nodes: Vec<i64>,
    },
    /// A note on a message: yours only, or sent with it in every context (--in-context).
    Note {
        /// The message.
        node: i64,
        /// The note; `-` reads it from standard input.
        text: String,
        /// Send it with the message in every context.
        #[arg(long)]
        in_context: bool,
    },
    /// A thread's summary: show it, write it yourself, or have it written again.
    Summary {
        #[command(subcommand)]
        action: messages::SummaryAction,
    },
    /// Retitle a tree.
    Title {
        /// The tree (its number, ThreadMind project id or global id).
        tree: String,
        /// The new title.
        text: String,
    },
    /// Compare two messages' branches: where they part, what each said, what each request
    /// sent, what each cost, and which settings differ.
    Compare {
        /// The left message.
        left: i64,
        /// The right message.
        right: i64,
        /// Each side goes on down its newest continuation: two siblings of a fork compared as
        /// the whole branches they start.
        #[arg(long)]
        branches: bool,
        /// The profile a side without a receipt is planned for; the one `ask` would use.
        #[arg(long, short = 'm', alias = "model")]
        profile: Option<String>,
    },
    /// Compact a thread: its messages but the last turns are replaced in every request by a
    /// summary the summariser writes (the messages stay; `uncompact` sends them again).
    Compact {
        #[command(flatten)]
        target: Target,
        /// The last turns (a message and its reply each) kept verbatim; the tree's (4 unless
        /// `pinloom settings --compact-keep` changed it) when not given.
        #[arg(long)]
        keep: Option<u32>,
        /// The model the thread is planned for (its window sets the summary's budget); the
        /// tree's summariser writes the summary, this model when the tree names none.
        #[arg(long)]
        profile: Option<String>,
    },
    /// Undo a compaction (its number, as `compact` and `context --format report` show it).
    Uncompact {
        /// The compaction's number.
        id: i64,
    },
    /// A tree's settings that decide what Pinloom asks of models on its own and how much of the
    /// budget a request fills; each option given changes one, and the settings are shown.
    Settings {
        /// The tree (its number, global id or ThreadMind project id).
        #[arg(long)]
        tree: String,
        /// When the summariser writes the summaries a pin's ancestors need.
        #[arg(long, value_enum)]
        summaries: Option<SummariesWhen>,
        /// truncateMiddle cuts in steps of this share of the history's room, in percent (0 to
        /// 100): a larger step keeps the start of requests the same for the provider's prompt
        /// cache, 0 fills the budget. `model` uses the model's own.
        #[arg(long, value_name = "PERCENT|model")]
        step: Option<String>,
        /// Seed 001's task frames: the main thread stands as its goal, and the goal, the
        /// summaries above and closed siblings' results each take at most a share of the budget
        /// (5, 15 and 10 %).
        #[arg(long, value_name = "on|off")]
        task_frames: Option<Toggle>,
        /// Messages the search never recalls, by number, comma-separated; `none` clears them.
        #[arg(long, value_name = "NUMBERS|none")]
        never_recall: Option<String>,
        /// When a thread's older part is compacted into a summary: `off`, `ask` (a send whose
        /// history is cut says so and offers `pinloom compact`) or `auto` (compacted before such
        /// a send, or when the history fills the share --compact-at gives).
        #[arg(long, value_enum)]
        compaction: Option<CompactionWhenArg>,
        /// Automatic compaction when the thread's history fills this share of the budget, in
        /// percent (1 to 100); `default` is 80.
        #[arg(long, value_name = "PERCENT|default")]
        compact_at: Option<String>,
        /// The last turns a compaction keeps verbatim; `default` is 4.
        #[arg(long, value_name = "TURNS|default")]
        compact_keep: Option<String>,
        /// The most tokens the tree's requests made on their own (summaries, automatic
        /// compactions) may take in 24 hours; `none` lifts the limit.
        #[arg(long, value_name = "TOKENS|none")]
        daily_tokens: Option<String>,
    },
    /// The requests Pinloom made on its own (summaries, condensations, compactions), newest first: what each
    /// was for, the model, tokens planned and counted, cost, time, and how it ended. Replies keep
    /// theirs in their receipts.
    Requests {
        /// Only this tree's (its number, global id or ThreadMind project id).
        #[arg(long)]
        tree: Option<String>,
        /// How many.
        #[arg(long, default_value_t = pinloom_app::REQUESTS_SHOWN)]
        limit: usize,
        /// As JSON, each with its request body.
        #[arg(long)]
        json: bool,
    },
    /// A tree (or every tree) as Open Loom v2 or Markdown, or the thread ending at a message as
    /// Markdown.
    Export {
        /// The tree to export whole (its number or project id).
        #[arg(long, conflicts_with_all = ["node", "all"], required_unless_present_any = ["node", "all"])]
        tree: Option<String>,
        /// Every tree, as one Open Loom document.
        #[arg(long, conflicts_with = "node")]
        all: bool,
        /// The message whose thread to export (Markdown).
        #[arg(long)]
        node: Option<i64>,
        /// Open Loom v2 (JSON, lossless) or Markdown (to read).
        #[arg(long, value_enum, default_value_t = ExportFormat::Markdown)]
        format: ExportFormat,
        /// Write here instead of to standard output.
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Leave out system contexts and system prompts.
        #[arg(long)]
        without_system_prompts: bool,
        /// Leave out raw provider responses kept from imports.
        #[arg(long)]
        without_raw_responses: bool,
    },
    /// Import an Open Loom v2 document, a socketteer/loom tree, ChatGPT's, Claude's or Open
    /// WebUI's export (a zip as downloaded, or its JSON), or llm's logs.db: every conversation a
    /// tree, with its branches.
    /// A document is written whole or not at all; an export a batch at a time, a second import
    /// adding only what is new. The report says what could not be mapped.
    Import {
        /// The file to read.
        file: PathBuf,
    },
    /// Sync every tree with a git remote your other machines sync with too: what is new here goes
    /// there, what is new there comes here. Git does the transport, with your credentials.
    /// Every team this database has joined is synced too (only the trees shared with it).
    Sync {
        /// The git remote (a URL such as git@host:you/pinloom-trees.git, or a path to a bare
        /// repository) the first time; remembered for this database after.
        #[arg(long, value_name = "URL_OR_PATH")]
        remote: Option<String>,
        /// Create this team at --remote (an empty repository; you are its owner, and invite
        /// members with `pinloom team invite`), or join one made before teams had rosters.
        #[arg(long, requires = "remote")]
        team: Option<String>,
        /// With --team: your name, as the team's members see it (git's user.name by default).
        #[arg(long = "as", value_name = "NAME", requires = "team")]
        your_name: Option<String>,
        /// Also sync your model profiles and prices to your own remote from now on (never keys;
        /// never to a team's).
        #[arg(long, conflicts_with_all = ["without_profiles", "team"])]
        with_profiles: bool,
        /// Stop syncing model profiles and prices.
        #[arg(long)]
        without_profiles: bool,
        /// Encrypt your own remote with a passphrase (asked for, or read from standard input or
        /// PINLOOM_SYNC_PASSPHRASE): a new remote is encrypted with it; a machine joining an
        /// encrypted remote gives it once, and keeps the remote's key in the OS keyring.
        #[arg(long, conflicts_with = "team")]
        passphrase: bool,
        /// The report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Share a tree with a team through the team's git remote: only shared trees are written
    /// there, each marked with who shared it; members answer and pin in it, and their additions
    /// come back on the next sync.
    Share {
        /// The tree (its number, ThreadMind project id or global id).
        tree: String,
        /// The team's name here (letters, digits, '-', '_').
        #[arg(long)]
        team: String,
        /// The team's git remote, the first time.
        #[arg(long, value_name = "URL_OR_PATH")]
        remote: Option<String>,
        /// Who shared it, as members see it; git's user.name by default.
        #[arg(long = "as", value_name = "NAME")]
        shared_by: Option<String>,
    },
    /// Teams: list those joined, print an invitation to one, join by an invitation, leave one.
    Team {
        #[command(subcommand)]
        action: teams::TeamAction,
    },
    /// Serve MCP on standard input and output: ThreadMind's tools, prompts and resources on this
    /// database, plus pins. The active project and thread belong to the working folder.
    Mcp,
    /// A completion script for your shell: `pinloom completions bash > ~/.local/share/bash-completion/completions/pinloom`.
    Completions {
        /// bash, zsh or fish.
        shell: clap_complete::Shell,
    },
    /// The manual page, in roff: written when an installer is built (`man pinloom` after).
    #[command(hide = true)]
    ManPage,
}

/// How a reply is asked for and shown.
#[derive(Debug, Args)]
struct ReplyOptions {
    /// The model profile; else PINLOOM_PROFILE, else the one that wrote the thread's last reply,
    /// else the default (`pinloom models default`), else the first by name that can answer.
    #[arg(short = 'm', long = "model", alias = "profile", value_name = "PROFILE")]
    profile: Option<String>,
    /// This send's sampling over the profile's, recorded with the reply: temperature=0.7,
    /// top_p=0.9, max_tokens=500 (the reply limit). Repeat for more than one.
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// JSON lines: each piece of the reply as it arrives, then the reply with its receipt.
    #[arg(long)]
    json: bool,
    /// Print the reply once it has ended rather than as it arrives.
    #[arg(long)]
    no_stream: bool,
    /// No line on standard error of what was sent, cut, summarised and what it cost.
    #[arg(short = 'q', long)]
    quiet: bool,
}

/// What goes with a question.
#[derive(Debug, Args)]
struct QuestionOptions {
    /// A file for the model to read with the question: text, a PDF (its pages' text), or an
    /// image for a model that sees. Repeat for more. It stays with the conversation below.
    #[arg(short = 'a', long = "attach", value_name = "FILE")]
    files: Vec<PathBuf>,
    /// System text for this question and the conversation that continues from it, recorded
    /// with it.
    #[arg(short = 's', long, value_name = "TEXT")]
    system: Option<String>,
    /// A file whose text joins the system context (seed 002's Instruction role).
    #[arg(long = "instruction", value_name = "FILE")]
    instructions: Vec<PathBuf>,
    /// A file whose text is reference material placed before the conversation (the Context role).
    #[arg(long = "context", value_name = "FILE")]
    contexts: Vec<PathBuf>,
}

/// A message, or a thread of a tree.
#[derive(Debug, Args)]
#[group(required = true, multiple = true)]
struct Target {
    /// The message (its id, as `pinloom tree` lists it).
    #[arg(long, conflicts_with_all = ["tree", "thread"])]
    node: Option<i64>,
    /// The tree (its number or ThreadMind project id), with --thread.
    #[arg(long, requires = "thread")]
    tree: Option<String>,
    /// The thread: `main`, a pin's ThreadMind id, or its number.
    #[arg(long, requires = "tree")]
    thread: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ExportFormat {
    /// Markdown, to read and share.
    Markdown,
    /// Open Loom v2, the interchange format: everything Pinloom knows of the tree.
    Openloom,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Toggle {
    On,
    Off,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CompactionWhenArg {
    /// Never on its own: truncation cuts the history.
    Off,
    /// A send whose history is cut says so and offers `pinloom compact`.
    Ask,
    /// Compacted before a send whose history is cut or fills the --compact-at share.
    Auto,
}

impl From<CompactionWhenArg> for CompactionWhen {
    fn from(when: CompactionWhenArg) -> CompactionWhen {
        match when {
            CompactionWhenArg::Off => CompactionWhen::Off,
            CompactionWhenArg::Ask => CompactionWhen::Ask,
            CompactionWhenArg::Auto => CompactionWhen::Automatic,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SummariesWhen {
    /// In the background as a pin opens, so its first question waits for none.
    WhenPinned,
    /// Only when a question is asked in a pin: a pin never asked in costs nothing.
    WhenAsked,
    /// Never: a pin gets its ancestor threads' last messages instead, and says why.
    Never,
}

impl From<SummariesWhen> for SummaryWriting {
    fn from(when: SummariesWhen) -> SummaryWriting {
        match when {
            SummariesWhen::WhenPinned => SummaryWriting::WhenPinned,
            SummariesWhen::WhenAsked => SummaryWriting::WhenAsked,
            SummariesWhen::Never => SummaryWriting::Never,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ContextFormat {
    /// ThreadMind's markdown: the system context, ancestor summaries and the active thread.
    Markdown,
    /// What the plan includes and what it cut, with the reasons, to read.
    Report,
    /// The plan as JSON: every slice, included or cut with the reason, and the request.
    Plan,
    /// The request body exactly as the provider would receive it.
    Request,
}

fn database(cli_db: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(db) = cli_db {
        return Ok(db);
    }
    let folder =
        pinloom_app::resolve_data_dir(std::iter::empty(), std::env::var_os(DATA_DIR_ENV), || {
            dirs::data_dir().map(|data| data.join(APP_IDENTIFIER))
        })?;
    Ok(folder.join(DATABASE_FILE_NAME))
}

/// Opens the database; a missing one is created only for the MCP server (which a client may
/// start before the app ever ran), an import and the sending commands.
async fn open(path: PathBuf) -> anyhow::Result<Pinloom> {
    // Made on first use, by whichever command comes first: a person at a terminal may never open
    // the window.
    if !path.exists()
        && let Some(folder) = path.parent().filter(|folder| !folder.as_os_str().is_empty())
    {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("could not create the folder {}", folder.display()))?;
    }
    Pinloom::open_database(path, Connections::default()).await
}

/// A remote as git will read it from the sync folder, where it runs: a path that names a folder
/// from where the person stands made whole; a URL, or anything not found here, as it was given.
fn remote_from_here(remote: String) -> anyhow::Result<String> {
    let given = Path::new(&remote);
    if given.is_absolute() || !given.exists() {
        return Ok(remote);
    }
    let whole = given
        .canonicalize()
        .with_context(|| format!("could not read the remote folder {remote}"))?;
    Ok(whole.to_string_lossy().into_owned())
}

/// The plan of a send from the target: the message named, or the newest of the thread.
async fn plan(
    pinloom: &Pinloom,
    target: &Target,
    profile: Option<String>,
    format: PlanFormat,
) -> anyhow::Result<String> {
    let node = target_node(
        pinloom,
        target,
        "a plan is made for a message; --format markdown shows its summaries",
    )
    .await?;
    // The profile `ask` would answer with, so a report shows the request a send would make.
    let profile = match profile.or_else(|| std::env::var("PINLOOM_PROFILE").ok()) {
        Some(profile) => profile,
        None => pinloom.profile_for_reply(Some(node)).await?,
    };
    pinloom.plan_text(node, Some(profile), format).await
}

/// The message `target` names: the one given, or the newest of the thread given; a thread with
/// no message yet is refused, saying `empty_because`.
async fn target_node(
    pinloom: &Pinloom,
    target: &Target,
    empty_because: &str,
) -> anyhow::Result<i64> {
    if let Some(node) = target.node {
        return Ok(node);
    }
    let (tree, thread) = tree_and_thread(pinloom, target).await?;
    Ok(pinloom.thread_end(tree, thread.clone()).await?.ok_or_else(|| {
        ApiError::invalid_input(format!("thread {thread} has no messages yet: {empty_because}"))
    })?)
}

async fn tree_and_thread(pinloom: &Pinloom, target: &Target) -> anyhow::Result<(i64, String)> {
    let (Some(tree), Some(thread)) = (&target.tree, &target.thread) else {
        anyhow::bail!(ApiError::invalid_input(
            "give --node ID, or --tree TREE with --thread THREAD"
        ));
    };
    Ok((pinloom.tree_by_reference(tree.clone()).await?, thread.clone()))
}

async fn threadmind_text(
    pinloom: &Pinloom,
    target: &Target,
    report: ThreadMindReport,
) -> anyhow::Result<String> {
    match (target.node, report) {
        (Some(node), ThreadMindReport::Stats) => pinloom.threadmind_stats(node).await,
        (Some(node), ThreadMindReport::Context) => pinloom.threadmind_markdown(node).await,
        (None, report) => {
            let (tree, thread) = tree_and_thread(pinloom, target).await?;
            pinloom.threadmind_thread_text(tree, thread, report).await
        }
    }
}

/// `pinloom requests`: the tree's (or every tree's) background requests, and for one tree what it
/// cost in all.
async fn requests(
    pinloom: &Pinloom,
    tree: Option<String>,
    limit: usize,
    json: bool,
) -> anyhow::Result<String> {
    let tree = match tree {
        Some(tree) => Some(pinloom.tree_by_reference(tree).await?),
        None => None,
    };
    let requests = pinloom.background_requests(tree, limit, json).await?;
    if json {
        return Ok(serde_json::to_string_pretty(&requests)?);
    }
    let mut text = requests_text(&requests);
    // For one tree, what it cost in all, its replies included.
    if let Some(tree) = tree {
        text.push_str(&format!("\n{}", spending_text(&pinloom.tree_spending(tree).await?)));
    }
    Ok(text)
}

/// `pinloom settings`: the tree's settings after `changes`, saved when they changed anything.
async fn settings(
    pinloom: &Pinloom,
    tree: String,
    changes: SettingsChanges,
) -> anyhow::Result<String> {
    let tree = pinloom.tree_by_reference(tree).await?;
    let mut settings = pinloom.tree_settings(tree).await?;
    if changes.apply(&mut settings)? {
        pinloom.set_tree_settings(tree, settings.clone()).await?;
    }
    Ok(settings_text(&settings))
}

/// `pinloom compact`: the thread up to `target` compacted by `profile` (`PINLOOM_PROFILE`, or
/// the model that would answer), keeping the tree's turns unless `keep` says otherwise.
async fn compact(
    pinloom: &Pinloom,
    target: &Target,
    keep: Option<u32>,
    profile: Option<String>,
) -> anyhow::Result<String> {
    let node = target_node(pinloom, target, "there is nothing to compact").await?;
    let profile = match profile.or_else(|| std::env::var("PINLOOM_PROFILE").ok()) {
        Some(profile) => profile,
        None => pinloom.profile_for_reply(Some(node)).await?,
    };
    let done = pinloom.compact(node, keep, profile).await?;
    Ok(format!(
        "Compaction {}: messages #{}–#{} ({}) compacted into {} tokens by {}; the last \
         {} turns stay verbatim. `pinloom uncompact {}` undoes it.",
        done.id,
        done.first,
        done.up_to,
        done.messages,
        done.tokens,
        done.written_by,
        done.keep_turns,
        done.id
    ))
}

/// `pinloom tree`: every tree, a line each.
async fn tree_list(pinloom: &Pinloom) -> anyhow::Result<String> {
    let trees = pinloom.list_trees().await?;
    Ok(trees
        .iter()
        .map(|tree| {
            let shared =
                tree.shared_by.as_ref().map(|by| format!("\tshared by {by}")).unwrap_or_default();
            format!(
                "{}\t{}\t{}\t{} messages\t{}{shared}",
                tree.id, tree.slug, tree.title, tree.message_count, tree.global_id
            )
        })
        .collect::<Vec<_>>()
        .join("\n"))
}

/// `pinloom export`'s text: a thread or a tree as Markdown, or trees as Open Loom.
async fn export(
    pinloom: &Pinloom,
    tree: Option<String>,
    all: bool,
    node: Option<i64>,
    format: ExportFormat,
    options: pinloom_app::ExportOptions,
) -> anyhow::Result<String> {
    Ok(match (node, format) {
        (Some(_), ExportFormat::Openloom) => anyhow::bail!(ApiError::invalid_input(
            "Open Loom holds whole trees: export --tree ID --format openloom"
        )),
        (Some(node), ExportFormat::Markdown) => pinloom.thread_markdown(node).await?,
        (None, ExportFormat::Markdown) => match tree {
            Some(tree) => {
                let tree = pinloom.tree_by_reference(tree).await?;
                pinloom.tree_markdown(tree).await?
            }
            None => anyhow::bail!(ApiError::invalid_input(
                "Markdown is one tree at a time: export --tree ID"
            )),
        },
        (None, ExportFormat::Openloom) => {
            let trees = match tree {
                Some(tree) => vec![pinloom.tree_by_reference(tree).await?],
                None if all => {
                    pinloom.list_trees().await?.into_iter().map(|tree| tree.id).collect()
                }
                None => {
                    anyhow::bail!(ApiError::invalid_input(
                        "export needs --tree ID, --all or --node ID"
                    ))
                }
            };
            pinloom.export_open_loom(trees, options).await?
        }
    })
}

/// Runs the commands that open the database their own way (making it when it is missing, or
/// serving MCP); any other command is given back to be run on an existing one.
async fn run_opening_its_own(
    command: Command,
    path: &Path,
) -> anyhow::Result<Result<String, Command>> {
    let path = path.to_path_buf();
    Ok(Ok(match command {
        Command::Import { file } => {
            let pinloom = open(path).await?;
            let imported = pinloom.import_file(file, terminal::progress_line).await;
            terminal::progress_done();
            imported?.text()
        }
        Command::Sync {
            remote,
            team,
            your_name,
            with_profiles,
            without_profiles,
            passphrase,
            json,
        } => {
            let remote = remote.map(remote_from_here).transpose()?;
            let passphrase = if passphrase { Some(models::read_passphrase()?) } else { None };
            // A new machine's first sync makes the database the trees arrive in.
            let pinloom = open(path).await?;
            if with_profiles || without_profiles {
                pinloom.set_sync_profiles(with_profiles).await?;
            }
            let report = match (team, remote) {
                (Some(team), Some(remote)) => pinloom.join_team(team, remote, your_name).await?,
                (_, remote) => pinloom.sync_unlocking(remote, passphrase).await?,
            };
            if json { serde_json::to_string(&report)? } else { report.text }
        }
        Command::Team { action } => {
            // Joining on a new machine makes the database the trees arrive in.
            let pinloom = open(path).await?;
            teams::team(&pinloom, action).await?
        }
        Command::Share { tree, team, remote, shared_by } => {
            let remote = remote.map(remote_from_here).transpose()?;
            let pinloom = open(path).await?;
            let tree = pinloom.tree_by_reference(tree).await?;
            pinloom.share_tree(tree, team, remote, shared_by).await?.text
        }
        Command::Mcp => {
            let pinloom = open(path).await?;
            let folder = std::env::current_dir().context("could not read the working folder")?;
            let folder = folder.canonicalize().unwrap_or(folder);
            pinloom_mcp::serve_stdio(pinloom, folder.to_string_lossy().into_owned()).await?;
            String::new()
        }
        other => return Ok(Err(other)),
    }))
}

async fn run(cli: Cli) -> anyhow::Result<String> {
    let path = database(cli.db)?;
    let command = match run_opening_its_own(cli.command, &path).await? {
        Ok(said) => return Ok(said),
        Err(command) => command,
    };
    let pinloom = open(path).await?;
    let command = match run_on_messages(&pinloom, command).await? {
        Ok(said) => return Ok(said),
        Err(command) => command,
    };
    match command {
        Command::Context { target, profile, format } => match format {
            ContextFormat::Markdown => {
                threadmind_text(&pinloom, &target, ThreadMindReport::Context).await
            }
            ContextFormat::Report => plan(&pinloom, &target, profile, PlanFormat::Report).await,
            ContextFormat::Plan => plan(&pinloom, &target, profile, PlanFormat::Plan).await,
            ContextFormat::Request => plan(&pinloom, &target, profile, PlanFormat::Request).await,
        },
        Command::Stats { target } => {
            threadmind_text(&pinloom, &target, ThreadMindReport::Stats).await
        }
        Command::Tree { id: Some(id) } => {
            let tree = pinloom.tree_by_reference(id).await?;
            pinloom.tree_text(tree).await
        }
        Command::Requests { tree, limit, json } => requests(&pinloom, tree, limit, json).await,
        Command::Models { action, json } => models::models(&pinloom, action, json).await,
        Command::Keys { action } => models::keys(&pinloom, action).await,
        Command::Doctor => models::doctor(&pinloom).await,
        Command::Settings {
            tree,
            summaries,
            step,
            task_frames,
            never_recall,
            compaction,
            compact_at,
            compact_keep,
            daily_tokens,
        } => {
            let changes = SettingsChanges {
                summaries,
                step,
                task_frames,
                never_recall,
                compaction,
                compact_at,
                compact_keep,
                daily_tokens,
            };
            settings(&pinloom, tree, changes).await
        }
        Command::Compact { target, keep, profile } => {
            compact(&pinloom, &target, keep, profile).await
        }
        Command::Uncompact { id } => {
            pinloom.undo_compaction(id).await?;
            Ok(format!("Compaction {id} undone: its messages are sent as they are again."))
        }
        Command::Tree { id: None } => tree_list(&pinloom).await,
        Command::Export {
            tree,
            all,
            node,
            format,
            output,
            without_system_prompts,
            without_raw_responses,
        } => {
            let options = pinloom_app::ExportOptions {
                system_prompts: !without_system_prompts,
                raw_responses: !without_raw_responses,
            };
            let text = export(&pinloom, tree, all, node, format, options).await?;
            match output {
                None => Ok(text),
                Some(file) => {
                    std::fs::write(&file, &text)
                        .with_context(|| format!("could not write {}", file.display()))?;
                    Ok(format!("Wrote {}", file.display()))
                }
            }
        }
        Command::Import { .. }
        | Command::Mcp
        | Command::Sync { .. }
        | Command::Share { .. }
        | Command::Team { .. } => Ok(String::new()),
        // Run before: these never reach here.
        _ => Ok(String::new()),
    }
}

/// Runs the commands that change or read messages one by one (marks, notes, pins, summaries,
/// titles, search, the log, comparison); any other is given back.
async fn run_on_messages(
    pinloom: &Pinloom,
    command: Command,
) -> anyhow::Result<Result<String, Command>> {
    let marked = |nodes: Vec<i64>, action: NodeAction| async move {
        messages::mark(pinloom, &nodes, action).await
    };
    Ok(Ok(match command {
        Command::Exclude { nodes } => marked(nodes, NodeAction::Exclude).await?,
        Command::Include { nodes } => marked(nodes, NodeAction::Include).await?,
        Command::Keep { nodes } => marked(nodes, NodeAction::Keep).await?,
        Command::Release { nodes } => marked(nodes, NodeAction::Release).await?,
        Command::Delete { nodes } => marked(nodes, NodeAction::Delete).await?,
        Command::Restore { nodes } => marked(nodes, NodeAction::Restore).await?,
        Command::Note { node, text, in_context } => {
            messages::note(pinloom, node, text, in_context).await?
        }
        Command::Pin { action: Some(action), .. } => messages::pin(pinloom, action).await?,
        Command::Summary { action } => messages::summary(pinloom, action).await?,
        Command::Title { tree, text } => messages::title(pinloom, tree, text).await?,
        Command::Search { query, tree, limit, json } => {
            messages::search(pinloom, query, tree, limit, json).await?
        }
        Command::Log { count, json } => messages::log(pinloom, count, json).await?,
        Command::Compare { left, right, branches, profile } => {
            messages::compare(pinloom, left, right, profile, branches).await?
        }
        other => return Ok(Err(other)),
    }))
}

#[tokio::main]
async fn main() -> ExitCode {
    // Started again by itself to read a PDF apart (the extractor may crash on a hostile one).
    pinloom_app::serve_pdf_reader_if_asked();
    // A bug is still one line and exit code 2, as every other failure: no backtrace for a
    // person reading a terminal or a script reading stderr.
    std::panic::set_hook(Box::new(|info| {
        let message = terminal::one_line(&info.to_string());
        eprintln!("pinloom: internal error, please report it: {message}");
        std::process::exit(2);
    }));
    let cli = Cli::parse();
    if cli.raw {
        terminal::print_raw();
    }
    if let Command::Completions { shell } = cli.command {
        let mut command = <Cli as clap::CommandFactory>::command();
        clap_complete::generate(shell, &mut command, "pinloom", &mut std::io::stdout());
        return ExitCode::SUCCESS;
    }
    if let Command::ManPage = cli.command {
        let page = clap_mangen::Man::new(<Cli as clap::CommandFactory>::command());
        return match page.render(&mut std::io::stdout()) {
            Ok(()) => ExitCode::SUCCESS,
            // A reader that stops early (the page piped to head) is the reader's choice.
            Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("pinloom: could not write the manual page: {error}");
                ExitCode::from(2)
            }
        };
    }
    if let Some(send) = sending_command(&cli.command) {
        // A person who lives in the terminal may never start the app: the first ask makes the
        // database, with the app's starting profiles.
        let pinloom = match (send, database(cli.db.clone())) {
            (Ok(send), Ok(path)) => open(path).await.map(|pinloom| (pinloom, send)),
            (Err(error), _) | (_, Err(error)) => Err(error),
        };
        return match pinloom {
            Ok((pinloom, send)) => sending::run(pinloom, send).await,
            Err(error) => {
                eprintln!("pinloom: {}", terminal::one_line(&ApiError::from(error).message));
                ExitCode::from(2)
            }
        };
    }
    match run(cli).await {
        Ok(output) => {
            if !output.is_empty() {
                let mut text = output.trim_end().to_owned();
                text.push('\n');
                // `pinloom … | head` closes the pipe early: that is the reader's choice, not an
                // error, so the rest is dropped quietly.
                let text = terminal::shown(&text);
                let mut stdout = std::io::stdout().lock();
                if let Err(error) = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush())
                    && error.kind() != std::io::ErrorKind::BrokenPipe
                {
                    eprintln!(
                        "pinloom: could not write the output: {}",
                        terminal::one_line(&error.to_string())
                    );
                    return ExitCode::from(2);
                }
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            // The same `{ code, message }` the app's window gets, in words on stderr, on one line;
            // the code stays in the message's words, the exit status is 2 for every failure.
            let error = ApiError::from(error);
            eprintln!("pinloom: {}", terminal::one_line(&error.message));
            ExitCode::from(2)
        }
    }
}

/// The background requests, one line each.
/// The message numbers of `--never-recall` ("12, 40", or `none`).
fn message_numbers(text: &str) -> anyhow::Result<Vec<i64>> {
    if text.trim() == "none" {
        return Ok(Vec::new());
    }
    text.split([',', ' '])
        .map(|word| word.trim().trim_start_matches('#'))
        .filter(|word| !word.is_empty())
        .map(|word| {
            word.parse::<i64>().ok().filter(|n| *n > 0).ok_or_else(|| {
                anyhow::Error::new(ApiError::invalid_input(format!(
                    "--never-recall takes message numbers as `pinloom tree` shows them, \
                     comma-separated (12,40), or `none`; not {word:?}"
                )))
            })
        })
        .collect()
}

/// What `pinloom settings` was asked to change.
struct SettingsChanges {
    summaries: Option<SummariesWhen>,
    step: Option<String>,
    task_frames: Option<Toggle>,
    never_recall: Option<String>,
    compaction: Option<CompactionWhenArg>,
    compact_at: Option<String>,
    compact_keep: Option<String>,
    daily_tokens: Option<String>,
}

impl SettingsChanges {
    /// Makes the changes in `settings`; whether they changed anything.
    fn apply(self, settings: &mut TreeSettings) -> anyhow::Result<bool> {
        let before = settings.clone();
        if let Some(when) = self.summaries {
            settings.summary_writing = when.into();
        }
        if let Some(step) = self.step {
            settings.truncation_step_percent =
                number_or(&step, "model", "--step", "a percentage from 0 to 100")?;
        }
        if let Some(toggle) = self.task_frames {
            settings.task_frames =
                (toggle == Toggle::On).then(|| settings.task_frames.unwrap_or_default());
        }
        if let Some(numbers) = self.never_recall {
            let exclude = message_numbers(&numbers)?;
            let retrieval = settings.retrieval.get_or_insert_with(RetrievalChoice::default);
            retrieval.exclude = exclude;
        }
        if let Some(when) = self.compaction {
            settings.compaction = when.into();
        }
        if let Some(percent) = self.compact_at {
            settings.compact_at_percent =
                number_or(&percent, "default", "--compact-at", "a percentage from 1 to 100")?;
        }
        if let Some(turns) = self.compact_keep {
            settings.compaction_keep_turns =
                number_or(&turns, "default", "--compact-keep", "a number of turns")?;
        }
        if let Some(tokens) = self.daily_tokens {
            settings.daily_token_limit =
                number_or(&tokens, "none", "--daily-tokens", "a number of tokens")?.map(u64::from);
        }
        Ok(*settings != before)
    }
}

/// `word` as a number, or `None` when it is `unset` (the word that leaves a setting to its
/// default); anything else is refused, naming `option` and what it takes.
fn number_or(word: &str, unset: &str, option: &str, takes: &str) -> anyhow::Result<Option<u32>> {
    if word == unset {
        return Ok(None);
    }
    word.parse().map(Some).map_err(|_| {
        ApiError::invalid_input(format!("{option} takes {takes}, or `{unset}`; not {word:?}"))
            .into()
    })
}

/// The settings `pinloom settings` shows, one a line.
fn settings_text(settings: &TreeSettings) -> String {
    let summaries = match settings.summary_writing {
        SummaryWriting::WhenPinned => "written as a pin opens (when-pinned)",
        SummaryWriting::WhenAsked => "written when a question is asked in a pin (when-asked)",
        SummaryWriting::Never => "never written; pins get their threads' last messages (never)",
    };
    let summarizer = settings.summarizer.as_deref().unwrap_or("the model being sent to");
    let step = match settings.truncation_step_percent {
        Some(percent) => format!("{percent} % of the history's room"),
        None => "the model's (its Budget → Cut in steps of)".to_owned(),
    };
    let frames = match settings.task_frames {
        Some(frames) => format!(
            "on: goal {} %, path summaries {} %, closed siblings' results {} %",
            frames.root_goal_percent, frames.path_summaries_percent, frames.sibling_results_percent
        ),
        None => "off".to_owned(),
    };
    let never = settings
        .retrieval
        .as_ref()
        .filter(|retrieval| !retrieval.exclude.is_empty())
        .map_or("none".to_owned(), |retrieval| {
            retrieval.exclude.iter().map(|id| format!("#{id}")).collect::<Vec<_>>().join(", ")
        });
    let keep = match settings.compaction_keep_turns.unwrap_or(DEFAULT_COMPACTION_KEEP_TURNS) {
        1 => "the last turn".to_owned(),
        turns => format!("the last {turns} turns"),
    };
    let compaction = match settings.compaction {
        CompactionWhen::Off => "off".to_owned(),
        CompactionWhen::Ask => {
            format!("ask: a send whose history is cut offers it (keeping {keep})")
        }
        CompactionWhen::Automatic => format!(
            "auto: before a send whose history is cut or fills {} % of the budget, keeping {keep}",
            settings.compact_at_percent.unwrap_or(DEFAULT_COMPACT_AT_PERCENT)
        ),
    };
    let daily = settings
        .daily_token_limit
        .map_or("none".to_owned(), |tokens| format!("{tokens} tokens a day"));
    format!(
        "summaries: {summaries}\nsummariser: {summarizer}\ncut in steps of: {step}\n\
         task frames: {frames}\nnever recalled by search: {never}\ncompaction: {compaction}\n\
         limit on requests made on their own: {daily}"
    )
}

fn requests_text(requests: &[pinloom_app::json::BackgroundRequestView]) -> String {
    if requests.is_empty() {
        return "Pinloom has made no request on its own here yet.".to_owned();
    }
    requests
        .iter()
        .map(|request| {
            let thread = request.pin_id.map_or("the main thread".to_owned(), |pin| format!("pin {pin}"));
            let up_to = request.up_to.map(|node| format!(" up to #{node}")).unwrap_or_default();
            let counted = match (request.prompt_tokens, request.reply_tokens) {
                (Some(prompt), Some(reply)) => format!(", counted {prompt} + {reply} reply"),
                (Some(prompt), None) => format!(", counted {prompt}"),
                _ => String::new(),
            };
            let cost = request.cost_usd.map(|cost| format!(", ${cost:.4}")).unwrap_or_default();
            let ended = match &request.failure {
                Some(failure) => format!("; failed: {failure}"),
                None => String::new(),
            };
            format!(
                "#{} tree {}: {} of {thread}{up_to} by {}, {} tokens planned{counted}{cost}, {:.1} s{ended}",
                request.id,
                request.tree_id,
                if request.kind == "pinResult" { "suggested result" } else { request.kind.as_str() },
                request.model,
                request.planned_tokens,
                request.duration_ms as f64 / 1000.0,
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a tree cost in all, in one line.
fn spending_text(spending: &pinloom_app::json::TreeSpending) -> String {
    let priced = |count: u32, with_price: u32, usd: f64, (one, many): (&str, &str)| {
        let many = if count == 1 { one } else { many };
        match with_price {
            0 => format!("{count} {many} (no price set)"),
            all if all == count => format!("{count} {many} ${usd:.4}"),
            some => format!("{count} {many} ${usd:.4} (the {some} with a price)"),
        }
    };
    format!(
        "This tree cost ${:.4} in all: {}, {} made on their own.",
        spending.total_usd,
        priced(
            spending.replies,
            spending.replies_priced,
            spending.replies_usd,
            ("reply", "replies")
        ),
        priced(
            spending.background,
            spending.background_priced,
            spending.background_usd,
            ("request", "requests")
        ),
    )
}

/// The send a command asks for, if it is one of the sending commands (or why its options are
/// refused).
fn sending_command(command: &Command) -> Option<anyhow::Result<sending::Send>> {
    use sending::{Place, Question};
    let question = |words: &Option<String>| Question { words: words.clone().unwrap_or_default() };
    let no_material = QuestionOptions {
        files: Vec::new(),
        system: None,
        instructions: Vec::new(),
        contexts: Vec::new(),
    };
    let (place, with, reply) = match command {
        Command::Ask {
            question: words,
            node,
            picked,
            picked_with_summary,
            tree,
            thread,
            continue_last,
            again,
            with,
            reply,
        } => {
            let picks: Vec<PickInput> = picked
                .iter()
                .map(|&node_id| PickInput { node_id, with_summary: false })
                .chain(
                    picked_with_summary
                        .iter()
                        .map(|&node_id| PickInput { node_id, with_summary: true }),
                )
                .collect();
            let place = match (node, tree, continue_last) {
                _ if !picks.is_empty() => Place::OverPicked { picks, question: question(words) },
                (Some(node), _, _) => Place::After { node: *node, question: question(words) },
                (None, Some(tree), _) => Place::Thread {
                    tree: tree.clone(),
                    thread: thread.clone(),
                    question: question(words),
                },
                (None, None, true) => Place::Latest {
                    question: words.as_ref().map(|words| Question { words: words.clone() }),
                    again: *again,
                },
                (None, None, false) => Place::NewTree { question: question(words) },
            };
            (place, with, reply)
        }
        Command::Pin {
            action: None,
            node: Some(node),
            passage: Some(passage),
            question: words,
            with,
            reply,
        } => {
            let place =
                Place::Pin { node: *node, passage: passage.clone(), question: question(words) };
            (place, with, reply)
        }
        Command::Regenerate { node, reply } => (Place::Again { node: *node }, &no_material, reply),
        Command::Continue { node, length, reply } => {
            (Place::Continue { node: *node, length: *length }, &no_material, reply)
        }
        _ => return None,
    };
    let material =
        sending::material(&with.files, &with.instructions, &with.contexts, with.system.as_ref());
    let shown = sending::Showing { json: reply.json, whole: reply.no_stream, quiet: reply.quiet };
    Some(sending::sampling(&reply.options).map(|sampling| sending::Send {
        place,
        profile: reply.profile.clone(),
        sampling,
        material,
        shown,
    }))
}
