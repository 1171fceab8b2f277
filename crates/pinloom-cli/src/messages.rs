//! The message operations of the window from the terminal: marks (exclude, include, keep,
//! release, delete, restore), notes, closing a pin, a thread's summary, a tree's title, search
//! across trees, the log of recent exchanges and the comparison of two branches.

use clap::Subcommand;
use pinloom_app::json::{
    Author, CompareReach, Comparison, FoundMessage, LoggedExchange, NodeAction, SummaryView,
};
use pinloom_app::{ApiError, Pinloom};

/// What `pinloom pin` does besides asking in a new pin.
#[derive(Debug, Subcommand)]
pub(crate) enum PinAction {
    /// Close a pin with its result, which its parent thread's later requests carry in its place.
    Close {
        /// The pin (its number, as `pinloom tree` shows it).
        pin: i64,
        /// The result, in your words; `-` reads it from standard input.
        #[arg(long, conflicts_with = "suggest", required_unless_present = "suggest")]
        result: Option<String>,
        /// Have the model write the result from the pin's conversation.
        #[arg(long)]
        suggest: bool,
        /// The model that writes it (with --suggest); the default when absent.
        #[arg(long)]
        profile: Option<String>,
    },
}

/// What `pinloom summary` does with a thread's summary.
#[derive(Debug, Subcommand)]
pub(crate) enum SummaryAction {
    /// The summaries of the thread: the one in use first, who wrote it and up to where.
    Show {
        #[command(flatten)]
        thread: Thread,
    },
    /// Write the thread's summary yourself: it stands for the thread up to its newest message,
    /// and no summariser writes over it.
    Edit {
        #[command(flatten)]
        thread: Thread,
        /// The summary; `-` reads it from standard input.
        text: String,
    },
    /// Have the summariser write the thread's summary again, now.
    Regenerate {
        #[command(flatten)]
        thread: Thread,
        /// Its budget in tokens; the summary in use's, else 800 (the nearest ancestor's).
        #[arg(long)]
        budget: Option<u32>,
        /// The model that writes it; the tree's summariser, else the thread's last reply's.
        #[arg(long)]
        profile: Option<String>,
    },
}

/// A thread of a tree.
#[derive(Debug, clap::Args)]
pub(crate) struct Thread {
    /// The tree (its number, ThreadMind project id or global id).
    #[arg(long)]
    tree: String,
    /// The thread: `main`, a pin's ThreadMind id, or its number.
    #[arg(long, default_value = "main")]
    thread: String,
}

/// The marks `pinloom exclude|include|keep|release|delete|restore` set.
fn said(action: NodeAction, list: &str) -> String {
    match action {
        NodeAction::Exclude => format!(
            "Excluded {list}: left out of every context from now on (summaries written from them are written again)."
        ),
        NodeAction::Include => format!("Included {list}: back in context."),
        NodeAction::Keep => {
            format!("Kept {list}: in every context the budget allows, whatever truncation cuts.")
        }
        NodeAction::Release => format!("Released {list}: truncation treats them as any other."),
        NodeAction::Delete => format!(
            "Deleted {list} with everything under them; `pinloom restore` brings them back."
        ),
        NodeAction::Restore => format!("Restored {list} with everything under them."),
        NodeAction::Bookmark => format!("Bookmarked {list}."),
        NodeAction::Unbookmark => format!("Took the bookmark off {list}."),
    }
}

/// Marks each of `nodes` with `action`, all of them checked to exist first, so that a wrong
/// number changes nothing; says what was done.
pub(crate) async fn mark(
    pinloom: &Pinloom,
    nodes: &[i64],
    action: NodeAction,
) -> anyhow::Result<String> {
    for node in nodes {
        pinloom.node_tree(*node).await?;
    }
    for node in nodes {
        pinloom.mark_node(*node, action).await?;
    }
    let list = nodes.iter().map(|node| format!("#{node}")).collect::<Vec<_>>().join(", ");
    Ok(said(action, &list))
}

/// `pinloom note`: a note on a message, in context or for the person only.
pub(crate) async fn note(
    pinloom: &Pinloom,
    node: i64,
    text: String,
    in_context: bool,
) -> anyhow::Result<String> {
    let text = crate::sending::words_or_stdin(&text, "the note")?;
    pinloom.node_tree(node).await?;
    let id = pinloom.annotate(node, text, in_context).await?;
    Ok(if in_context {
        format!("Note {id} on #{node}: sent with the message in every context.")
    } else {
        format!("Note {id} on #{node}: yours only, never sent.")
    })
}

/// `pinloom pin close`.
pub(crate) async fn pin(pinloom: &Pinloom, action: PinAction) -> anyhow::Result<String> {
    let PinAction::Close { pin, result, suggest, profile } = action;
    let closed = match (result, suggest) {
        (Some(result), _) => {
            let result = crate::sending::words_or_stdin(&result, "the result")?;
            pinloom.close_pin(pin, result).await?
        }
        (None, _) => {
            let profile = match profile {
                Some(profile) => profile,
                None => pinloom.profile_for_reply(None).await?,
            };
            pinloom.close_pin_summarised(pin, None, profile).await?
        }
    };
    Ok(format!(
        "Pin {pin} closed; its result, carried by its parent thread from now on:\n{}",
        closed.result.unwrap_or_default()
    ))
}

/// `pinloom summary …`.
pub(crate) async fn summary(pinloom: &Pinloom, action: SummaryAction) -> anyhow::Result<String> {
    let thread = match &action {
        SummaryAction::Show { thread }
        | SummaryAction::Edit { thread, .. }
        | SummaryAction::Regenerate { thread, .. } => thread,
    };
    let tree = pinloom.tree_by_reference(thread.tree.clone()).await?;
    let pin = pinloom.thread_pin(tree, thread.thread.clone()).await?;
    let end = pinloom.thread_end(tree, thread.thread.clone()).await?;
    let summaries = pinloom.summaries(tree, pin).await?;
    match action {
        SummaryAction::Show { thread } => Ok(if summaries.is_empty() {
            format!(
                "Thread {} has no summary yet: one is written when a pin below it asks, or with \
                 `pinloom summary regenerate --tree {} --thread {}`.",
                thread.thread, thread.tree, thread.thread
            )
        } else {
            summaries.iter().map(summary_text).collect::<Vec<_>>().join("\n\n")
        }),
        SummaryAction::Edit { text, thread } => {
            let Some(end) = end else {
                anyhow::bail!(ApiError::invalid_input(format!(
                    "thread {} has no messages yet: there is nothing to summarise",
                    thread.thread
                )));
            };
            let text = crate::sending::words_or_stdin(&text, "the summary")?;
            let written = pinloom.write_own_summary(tree, pin, end, text).await?;
            Ok(format!("Your summary stands for the thread now.\n\n{}", summary_text(&written)))
        }
        SummaryAction::Regenerate { budget, profile, thread } => {
            let Some(end) = end else {
                anyhow::bail!(ApiError::invalid_input(format!(
                    "thread {} has no messages yet: there is nothing to summarise",
                    thread.thread
                )));
            };
            let in_use = summaries.iter().find(|summary| summary.chosen);
            let budget = budget.or(in_use.and_then(|summary| summary.budget)).unwrap_or(800);
            let profile = match profile {
                Some(profile) => profile,
                None => match pinloom.tree_settings(tree).await?.summarizer {
                    Some(summarizer) => summarizer,
                    None => pinloom.profile_for_reply(Some(end)).await?,
                },
            };
            let written = pinloom.regenerate_summary(tree, pin, end, budget, profile).await?;
            Ok(summary_text(&written))
        }
    }
}

/// A summary as `summary show` prints it: who wrote it, up to where, and its text.
fn summary_text(summary: &SummaryView) -> String {
    let up_to = summary.up_to.map(|node| format!(" up to #{node}")).unwrap_or_default();
    let state = match (&summary.stale, summary.chosen) {
        (Some(stale), _) => format!(" (no longer holds: {stale})"),
        (None, true) => " (in use)".to_owned(),
        (None, false) => String::new(),
    };
    let by = match summary.written_by {
        pinloom_app::json::SummaryAuthor::Person => "you".to_owned(),
        _ => summary.summarizer.clone(),
    };
    format!("Summary{up_to} by {by}{state}:\n{}", summary.text)
}

/// `pinloom title`.
pub(crate) async fn title(pinloom: &Pinloom, tree: String, text: String) -> anyhow::Result<String> {
    let tree = pinloom.tree_by_reference(tree).await?;
    let renamed = pinloom.rename_tree(tree, text).await?;
    Ok(format!("Tree {} is titled {:?}.", renamed.id, renamed.title))
}

/// `pinloom search`: the best matches across trees (or in one), with their message numbers.
pub(crate) async fn search(
    pinloom: &Pinloom,
    query: String,
    tree: Option<String>,
    limit: u32,
    json: bool,
) -> anyhow::Result<String> {
    let tree = match tree {
        Some(tree) => Some(pinloom.tree_by_reference(tree).await?),
        None => None,
    };
    let found = pinloom.search_everywhere(query, tree, limit).await?;
    if json {
        return Ok(serde_json::to_string_pretty(&found)?);
    }
    if found.is_empty() {
        return Ok("Nothing matches.".to_owned());
    }
    Ok(found.iter().map(found_line).collect::<Vec<_>>().join("\n"))
}

fn found_line(found: &FoundMessage) -> String {
    let who = match found.hit.author {
        Author::Human => "you",
        Author::Model => "model",
        Author::Tool => "tool",
    };
    let thread = found.hit.pin_id.map(|pin| format!(" pin {pin}")).unwrap_or_default();
    format!(
        "#{}\ttree {} ({}){thread}\t{who}\t{}",
        found.hit.node_id,
        found.tree_id,
        found.tree_title,
        one_line(&found.hit.preview, 100)
    )
}

/// `pinloom log`: the newest exchanges, a line each.
pub(crate) async fn log(pinloom: &Pinloom, count: u32, json: bool) -> anyhow::Result<String> {
    let exchanges = pinloom.recent_exchanges(count).await?;
    if json {
        return Ok(serde_json::to_string_pretty(&exchanges)?);
    }
    if exchanges.is_empty() {
        return Ok("No exchange yet: `pinloom ask \"…\"` makes the first.".to_owned());
    }
    Ok(exchanges.iter().map(logged_line).collect::<Vec<_>>().join("\n"))
}

fn logged_line(exchange: &LoggedExchange) -> String {
    let reply = exchange.reply_tokens.map(|tokens| format!(" + {tokens}")).unwrap_or_default();
    let cost = exchange.cost_usd.map(|cost| format!(", ${cost:.4}")).unwrap_or_default();
    let by = exchange.asked_by.as_ref().map(|by| format!("{by}: ")).unwrap_or_default();
    format!(
        "#{}\ttree {} ({})\t{}\t{}{reply} tokens{cost}\t{by}{}",
        exchange.reply_id,
        exchange.tree_id,
        exchange.tree_title,
        exchange.profile,
        exchange.prompt_tokens,
        one_line(&exchange.question, 80)
    )
}

/// `pinloom compare`: two branches side by side, as text.
pub(crate) async fn compare(
    pinloom: &Pinloom,
    left: i64,
    right: i64,
    profile: Option<String>,
    branches: bool,
) -> anyhow::Result<String> {
    let profile = match profile {
        Some(profile) => profile,
        None => pinloom.profile_for_reply(Some(left)).await?,
    };
    let reach = if branches { CompareReach::Branches } else { CompareReach::Picked };
    let comparison = pinloom.compare(left, right, profile, reach).await?;
    Ok(comparison_text(&comparison))
}

fn comparison_text(comparison: &Comparison) -> String {
    let mut lines = Vec::new();
    match &comparison.common_ancestor {
        Some(common) => lines.push(format!(
            "Both paths share {}, up to #{}.",
            if comparison.shared == 1 {
                "1 message".to_owned()
            } else {
                format!("{} messages", comparison.shared)
            },
            common.message.id
        )),
        None => lines.push("The paths share no message.".to_owned()),
    }
    for (side, name) in [(&comparison.left, "left"), (&comparison.right, "right")] {
        let model = side.model.as_deref().unwrap_or("no model");
        let cost = side.cost.map(|cost| format!(", ${cost:.4}")).unwrap_or_default();
        lines.push(format!(
            "{name}: ends at #{} ({model}), {} replies, context {} of {} tokens{cost}",
            side.end, side.replies, side.context_tokens, side.context_available
        ));
    }
    if !comparison.settings_differ.is_empty() {
        lines.push(format!("settings differ: {}", comparison.settings_differ.join(", ")));
    }
    for row in comparison.rows.iter().filter(|row| row.differs) {
        let shown = |side: &Option<pinloom_app::json::NodeView>| {
            side.as_ref().map_or("—".to_owned(), |node| {
                format!("#{} {}", node.message.id, one_line(&node.message.text, 60))
            })
        };
        lines.push(format!("  {}  |  {}", shown(&row.left), shown(&row.right)));
    }
    let context = &comparison.context;
    lines.push(format!(
        "context: {} pieces shared; {} only left, {} only right, {} changed",
        context.shared,
        context.left_only.len(),
        context.right_only.len(),
        context.changed.len()
    ));
    for (entries, side) in [
        (&context.left_only, "left only"),
        (&context.right_only, "right only"),
        (&context.changed, "changed"),
    ] {
        for entry in entries {
            let tokens =
                entry.tokens.map(|tokens| format!(" ({tokens} tokens)")).unwrap_or_default();
            lines.push(format!(
                "  {side}: {}{tokens} {}",
                entry.kind,
                one_line(&entry.preview, 60)
            ));
        }
    }
    lines.join("\n")
}

/// `text` on one line, cut at `chars` characters.
fn one_line(text: &str, chars: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= chars {
        return flat;
    }
    format!("{}…", flat.chars().take(chars).collect::<String>())
}
