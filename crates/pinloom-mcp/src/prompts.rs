//! The prompts: ThreadMind v0.4.1's, with its names, descriptions and arguments, so the slash
//! commands a client shows for ThreadMind are there; what each asks of the model is written for
//! Pinloom.

use pinloom_app::PromptState;
use serde_json::{Map, Value};

pub(crate) struct PromptSpec {
    pub(crate) name: &'static str,
    pub(crate) description: &'static str,
    /// `(name, description, required)`.
    pub(crate) arguments: &'static [(&'static str, &'static str, bool)],
}

pub(crate) const PROMPTS: &[PromptSpec] = &[
    PromptSpec {
        name: "start-thread",
        description: "Load the assembled ThreadMind context for the active thread. Use this at the start of every conversation to inject structured context instead of relying on chat history.",
        arguments: &[],
    },
    PromptSpec {
        name: "summarize-thread",
        description: "Generate a structured summary for the current thread. The AI will produce a summary that can be saved with summary_update.",
        arguments: &[(
            "topic",
            "Brief description of what was discussed (helps guide the summary)",
            false,
        )],
    },
    PromptSpec {
        name: "tm-help",
        description: "Show all available ThreadMind commands and tools",
        arguments: &[],
    },
    PromptSpec {
        name: "tm-context",
        description: "Get the assembled context for the active thread (shortcut for context_get)",
        arguments: &[],
    },
    PromptSpec {
        name: "tm-tree",
        description: "Display the thread tree for the active project (shortcut for thread_list)",
        arguments: &[],
    },
    PromptSpec {
        name: "tm-create",
        description: "Create a new child thread (shortcut for thread_create)",
        arguments: &[("title", "Title for the new thread", true)],
    },
    PromptSpec {
        name: "tm-switch",
        description: "Switch to a different thread (shortcut for thread_switch)",
        arguments: &[("threadId", "Thread ID to switch to", true)],
    },
    PromptSpec {
        name: "tm-summary",
        description: "Update the summary for the active thread (shortcut for summary_update)",
        arguments: &[("content", "Summary content. If omitted, AI will generate one.", false)],
    },
    PromptSpec {
        name: "tm-rebase",
        description: "Move a thread to a different parent (shortcut for thread_rebase)",
        arguments: &[
            ("threadId", "Thread ID to move", true),
            ("newParentId", "New parent thread ID", true),
        ],
    },
    PromptSpec {
        name: "tm-stats",
        description: "Show token savings statistics (shortcut for stats_show)",
        arguments: &[],
    },
    PromptSpec {
        name: "tm-init",
        description: "Generate instruction files for AI clients (shortcut for threadmind_init)",
        arguments: &[],
    },
];

/// The missing required arguments in the SDK's words, or `None`.
pub(crate) fn check_arguments(
    prompt: &PromptSpec,
    arguments: &Map<String, Value>,
) -> Option<String> {
    let issues: Vec<String> = prompt
        .arguments
        .iter()
        .filter(|(name, _, required)| {
            *required && !arguments.get(*name).is_some_and(Value::is_string)
        })
        .map(|(name, _, _)| format!("Required at {name}"))
        .collect();
    (!issues.is_empty()).then(|| {
        format!(
            "MCP error -32602: Invalid arguments for prompt {}: {}",
            prompt.name,
            issues.join("; ")
        )
    })
}

/// The one user message a prompt sends.
pub(crate) fn message(name: &str, arguments: &Map<String, Value>, state: &PromptState) -> String {
    let argument =
        |key: &str| arguments.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    let thread = state.thread.clone().unwrap_or_else(|| "main".to_owned());
    match name {
        "start-thread" => match &state.context {
            None => "There is no active project yet. Call `project_create` first to set one up.".to_owned(),
            Some(context) => format!(
                "Below is the context of the active thread, kept by Pinloom. Work from it rather than from earlier chat:\n\n{}\n\n---\n_~{} tokens | depth: {} threads_",
                context.text, context.tokens, context.depth
            ),
        },
        "summarize-thread" => {
            let topic = argument("topic");
            let topic = if topic.is_empty() { String::new() } else { format!("\nIt was about: {topic}") };
            let current = if state.summary.is_empty() {
                String::new()
            } else {
                format!("\n\nThe thread's summary so far, to revise or replace:\n{}", state.summary)
            };
            format!(
                "Write a summary of 5 to 15 lines of the discussion in thread \"{thread}\".{topic}{current}\n\n\
                 Cover:\n\
                 - what was decided, and why\n\
                 - the technical choices and what they traded off\n\
                 - where the work stands\n\
                 - what is still open, if anything\n\n\
                 Use plain Markdown. Keep to the substance, not to who said what: someone reading it \
                 with no other context should understand where things stand.\n\n\
                 Then save it with the `summary_update` tool."
            )
        }
        "tm-help" => help(state),
        "tm-context" => "Run the `context_get` tool now and show the context it returns.".to_owned(),
        "tm-tree" => "Run the `thread_list` tool now and show the threads it lists.".to_owned(),
        "tm-create" => format!("Run the `thread_create` tool now with the title \"{}\".", argument("title")),
        "tm-switch" => format!("Run the `thread_switch` tool now with threadId \"{}\".", argument("threadId")),
        "tm-summary" => {
            let content = argument("content");
            if content.is_empty() {
                format!(
                    "Summarise our discussion so far for thread \"{thread}\" in 5 to 15 lines (decisions, technical choices, where things stand, what is next), then save it with the `summary_update` tool."
                )
            } else {
                format!("Run the `summary_update` tool now with this content:\n\n{content}")
            }
        }
        "tm-rebase" => format!(
            "Run the `thread_rebase` tool now with threadId \"{}\" and newParentId \"{}\".",
            argument("threadId"),
            argument("newParentId")
        ),
        "tm-stats" => "Run the `stats_show` tool now and show the statistics it returns.".to_owned(),
        "tm-init" => "Run the `threadmind_init` tool now to write the instruction files (CLAUDE.md, .cursorrules and .threadmind/instructions.md).".to_owned(),
        _ => String::new(),
    }
}

fn help(state: &PromptState) -> String {
    let status = match &state.project {
        Some(project) => format!(
            "\nActive project: **{project}** | Active thread: **{}**\n",
            state.thread.as_deref().unwrap_or("main")
        ),
        None => String::new(),
    };
    let tools: Vec<String> = crate::tools::TOOLS
        .iter()
        .map(|tool| format!("| `{}` | {} |", tool.name, tool.description))
        .collect();
    format!(
        "Show the person this list of commands:{status}\n\n\
         ## Pinloom's ThreadMind commands\n\n\
         ### Shortcuts to type in the chat\n\
         | Shortcut | What it does |\n\
         |----------|--------------|\n\
         | `tm:help` | This list |\n\
         | `tm:context` | Load the active thread's context |\n\
         | `tm:tree` | Show the threads |\n\
         | `tm:create <title>` | Open a new thread |\n\
         | `tm:switch <id>` | Go to another thread |\n\
         | `tm:rebase <id> <newParentId>` | Move a thread under another |\n\
         | `tm:summary <content>` | Save the thread's summary |\n\
         | `tm:delete <id>` | Delete a thread and the threads below it |\n\
         | `tm:stats` | Show the estimated token savings |\n\
         | `tm:init` | Write the instruction files |\n\
         | `tm:project <title>` | Create a project |\n\
         | `tm:projects` | List the projects |\n\n\
         ### Tools\n\
         | Tool | What it does |\n\
         |------|--------------|\n\
         {}\n\n\
         The prompts are slash commands as well, named `/mcp__<server name>__<prompt>`.",
        tools.join("\n")
    )
}
