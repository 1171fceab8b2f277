//! The tools: ThreadMind v0.4.1's twelve, with its names, descriptions and input schemas as its
//! `tools/list` gives them, then Pinloom's own. Arguments are checked against the schema before a
//! tool runs, and a refusal reads as the MCP TypeScript SDK's that ThreadMind is served with.

use pinloom_app::{PlanFormat, ThreadMindSession};
use serde_json::{Map, Value, json};

/// One tool as the server lists it.
pub(crate) struct ToolSpec {
    pub(crate) name: &'static str,
    pub(crate) description: &'static str,
    /// `(name, description, kind, required)` of each argument.
    pub(crate) arguments: &'static [Argument],
    /// Whether a call changes the database (and so the resources).
    pub(crate) writes: bool,
}

pub(crate) struct Argument {
    pub(crate) name: &'static str,
    pub(crate) description: &'static str,
    pub(crate) kind: Kind,
    pub(crate) required: bool,
}

#[derive(Clone, Copy)]
pub(crate) enum Kind {
    String,
    /// One of these strings.
    Choice(&'static [&'static str]),
    /// A list of these strings.
    Choices(&'static [&'static str]),
    Integer,
}

const fn arg(
    name: &'static str,
    description: &'static str,
    kind: Kind,
    required: bool,
) -> Argument {
    Argument { name, description, kind, required }
}

const CLIENTS: &[&str] = &["claude", "cursor", "generic"];

pub(crate) const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "project_create",
        description: "Create a new ThreadMind project with a main thread",
        arguments: &[
            arg("title", "Project title", Kind::String, true),
            arg(
                "systemContext",
                "System context or instructions for this project",
                Kind::String,
                false,
            ),
            arg(
                "mode",
                "Project mode: solo (default) or team",
                Kind::Choice(&["solo", "team"]),
                false,
            ),
        ],
        writes: true,
    },
    ToolSpec {
        name: "project_list",
        description: "List all ThreadMind projects",
        arguments: &[],
        writes: false,
    },
    ToolSpec {
        name: "project_switch",
        description: "Switch to a different project",
        arguments: &[arg("projectId", "Project ID to switch to", Kind::String, true)],
        writes: true,
    },
    ToolSpec {
        name: "thread_create",
        description: "Create a new child thread branching from a parent thread",
        arguments: &[
            arg("title", "Thread title", Kind::String, true),
            arg(
                "parentId",
                "Parent thread ID (defaults to current active thread)",
                Kind::String,
                false,
            ),
        ],
        writes: true,
    },
    ToolSpec {
        name: "thread_switch",
        description: "Switch to a different thread",
        arguments: &[arg("threadId", "Thread ID to switch to", Kind::String, true)],
        writes: true,
    },
    ToolSpec {
        name: "thread_list",
        description: "Display the thread tree for the active project",
        arguments: &[],
        writes: false,
    },
    ToolSpec {
        name: "summary_update",
        description: "Update the summary/content of a thread",
        arguments: &[
            arg("content", "The new summary content (markdown)", Kind::String, true),
            arg("threadId", "Thread ID to update (defaults to active thread)", Kind::String, false),
        ],
        writes: true,
    },
    ToolSpec {
        name: "context_get",
        description: "Get the assembled context for the active thread (walks up the parent chain). Call this at the start of every session.",
        arguments: &[],
        writes: false,
    },
    ToolSpec {
        name: "thread_delete",
        description: "Delete a thread and all its descendants",
        arguments: &[arg("threadId", "Thread ID to delete", Kind::String, true)],
        writes: true,
    },
    ToolSpec {
        name: "thread_rebase",
        description: "Move a thread to a different parent. All descendants move with it. Similar to git rebase.",
        arguments: &[
            arg("threadId", "ID of the thread to move", Kind::String, true),
            arg("newParentId", "ID of the new parent thread", Kind::String, true),
        ],
        writes: true,
    },
    ToolSpec {
        name: "threadmind_init",
        description: "Generate instruction files (CLAUDE.md, .cursorrules, etc.) to enable automatic ThreadMind integration with AI clients",
        arguments: &[arg(
            "clients",
            "AI clients to generate instructions for (default: all). Options: \"claude\", \"cursor\", \"generic\"",
            Kind::Choices(CLIENTS),
            false,
        )],
        writes: false,
    },
    ToolSpec {
        name: "stats_show",
        description: "Show token savings statistics for the active ThreadMind project",
        arguments: &[],
        writes: false,
    },
    // Pinloom's own.
    ToolSpec {
        name: "thread_messages",
        description: "Show the messages of a thread (its newest branch) with their numbers, authors and the pins opened on them",
        arguments: &[arg(
            "threadId",
            "Thread ID (defaults to the active thread)",
            Kind::String,
            false,
        )],
        writes: false,
    },
    ToolSpec {
        name: "pin_create",
        description: "Pin a passage of a message: opens a sub-thread that sees its ancestry as summaries plus the passage verbatim, and never its sibling threads. The new thread becomes active.",
        arguments: &[
            arg(
                "messageId",
                "The message's number, as thread_messages shows it",
                Kind::Integer,
                true,
            ),
            arg("passage", "The passage to pin, exactly as the message has it", Kind::String, true),
            arg(
                "start",
                "Where the passage starts, in UTF-16 units; needed only when it appears more than once",
                Kind::Integer,
                false,
            ),
            arg(
                "title",
                "The new thread's title (defaults to the start of the passage)",
                Kind::String,
                false,
            ),
        ],
        writes: true,
    },
    ToolSpec {
        name: "pin_close",
        description: "Close a pinned thread with its result, which its parent thread then shows",
        arguments: &[
            arg("result", "What the thread found or decided, for its parent", Kind::String, true),
            arg(
                "threadId",
                "Thread ID to close (defaults to the active thread)",
                Kind::String,
                false,
            ),
        ],
        writes: true,
    },
    ToolSpec {
        name: "profile_list",
        description: "List Pinloom's model profiles (provider, model, context window, reserve for the reply)",
        arguments: &[],
        writes: false,
    },
    ToolSpec {
        name: "context_assemble",
        description: "Show what a model would be sent from a thread under one of Pinloom's model profiles: every slice included, and every slice cut to fit the budget with the reason. Nothing is sent.",
        arguments: &[
            arg(
                "threadId",
                "Thread ID (defaults to the active thread); the plan is for its newest message",
                Kind::String,
                false,
            ),
            arg("messageId", "Plan for this message instead", Kind::Integer, false),
            arg(
                "profile",
                "Model profile name, as profile_list shows it (defaults to the first enabled one)",
                Kind::String,
                false,
            ),
            arg(
                "format",
                "report (default), plan (JSON) or request (the body as sent)",
                Kind::Choice(&["report", "plan", "request"]),
                false,
            ),
        ],
        writes: false,
    },
];

/// The input schema of a tool, as zod-to-json-schema writes ThreadMind's: a schema with
/// arguments lists them, their required ones and no others; one without arguments is an empty
/// object.
pub(crate) fn input_schema(tool: &ToolSpec) -> Map<String, Value> {
    let mut schema = Map::new();
    if tool.arguments.is_empty() {
        schema.insert("$schema".into(), json!("http://json-schema.org/draft-07/schema#"));
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), json!({}));
        return schema;
    }
    let mut properties = Map::new();
    for argument in tool.arguments {
        let mut property = Map::new();
        match argument.kind {
            Kind::String => {
                property.insert("type".into(), json!("string"));
            }
            Kind::Choice(values) => {
                property.insert("type".into(), json!("string"));
                property.insert("enum".into(), json!(values));
            }
            Kind::Choices(values) => {
                property.insert("type".into(), json!("array"));
                property.insert("items".into(), json!({ "type": "string", "enum": values }));
            }
            Kind::Integer => {
                property.insert("type".into(), json!("integer"));
            }
        }
        property.insert("description".into(), json!(argument.description));
        properties.insert(argument.name.into(), Value::Object(property));
    }
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    let required: Vec<&str> = tool
        .arguments
        .iter()
        .filter(|argument| argument.required)
        .map(|argument| argument.name)
        .collect();
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    schema.insert("additionalProperties".into(), json!(false));
    schema.insert("$schema".into(), json!("http://json-schema.org/draft-07/schema#"));
    schema
}

/// The arguments' problems in the SDK's words ("Required at title"), or `None` when they fit.
/// Arguments the schema does not name are ignored, as ThreadMind's server ignores them.
pub(crate) fn check_arguments(tool: &ToolSpec, arguments: &Map<String, Value>) -> Option<String> {
    let mut issues = Vec::new();
    for argument in tool.arguments {
        let Some(value) = arguments.get(argument.name) else {
            if argument.required {
                issues.push(format!("Required at {}", argument.name));
            }
            continue;
        };
        match (argument.kind, value) {
            (Kind::String, Value::String(_)) => {}
            (Kind::Integer, Value::Number(number)) if number.is_i64() => {}
            (Kind::Choice(values), Value::String(text)) => {
                if !values.contains(&text.as_str()) {
                    issues.push(format!("{} at {}", enum_issue(values, text), argument.name));
                }
            }
            (Kind::Choices(values), Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    match item {
                        Value::String(text) if values.contains(&text.as_str()) => {}
                        Value::String(text) => {
                            issues.push(format!(
                                "{} at {}[{index}]",
                                enum_issue(values, text),
                                argument.name
                            ));
                        }
                        other => issues.push(format!(
                            "Expected string, received {} at {}[{index}]",
                            js_type(other),
                            argument.name
                        )),
                    }
                }
            }
            (kind, other) => issues.push(format!(
                "Expected {}, received {} at {}",
                match kind {
                    Kind::String | Kind::Choice(_) => "string",
                    Kind::Choices(_) => "array",
                    Kind::Integer => "integer",
                },
                js_type(other),
                argument.name
            )),
        }
    }
    (!issues.is_empty()).then(|| {
        format!(
            "MCP error -32602: Input validation error: Invalid arguments for tool {}: {}",
            tool.name,
            issues.join("; ")
        )
    })
}

fn enum_issue(values: &[&str], received: &str) -> String {
    let expected: Vec<String> = values.iter().map(|value| format!("'{value}'")).collect();
    format!("Invalid enum value. Expected {}, received '{received}'", expected.join(" | "))
}

/// What zod calls a JSON value's type.
fn js_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Runs a tool whose arguments were checked.
pub(crate) async fn run(
    session: &ThreadMindSession,
    name: &str,
    arguments: &Map<String, Value>,
) -> anyhow::Result<String> {
    let text = |key: &str| arguments.get(key).and_then(Value::as_str).map(str::to_owned);
    let number = |key: &str| arguments.get(key).and_then(Value::as_i64);
    let required = |key: &str| text(key).unwrap_or_default();
    match name {
        "project_create" => {
            session.project_create(required("title"), text("systemContext"), text("mode")).await
        }
        "project_list" => session.project_list().await,
        "project_switch" => session.project_switch(required("projectId")).await,
        "thread_create" => session.thread_create(required("title"), text("parentId")).await,
        "thread_switch" => session.thread_switch(required("threadId")).await,
        "thread_list" => session.thread_list().await,
        "summary_update" => session.summary_update(required("content"), text("threadId")).await,
        "context_get" => session.context_get().await,
        "thread_delete" => session.thread_delete(required("threadId")).await,
        "thread_rebase" => {
            session.thread_rebase(required("threadId"), required("newParentId")).await
        }
        "threadmind_init" => {
            let clients = arguments.get("clients").and_then(Value::as_array).map(|items| {
                items.iter().filter_map(Value::as_str).map(str::to_owned).collect::<Vec<_>>()
            });
            session.threadmind_init(clients).await
        }
        "stats_show" => session.stats_show().await,
        "thread_messages" => session.thread_messages(text("threadId")).await,
        "pin_create" => {
            let start = match number("start") {
                None => None,
                Some(start) => Some(u32::try_from(start).map_err(|_| {
                    pinloom_app::ApiError::invalid_input(format!(
                        "start {start} is not a position in a message"
                    ))
                })?),
            };
            session
                .pin_create(
                    number("messageId").unwrap_or_default(),
                    required("passage"),
                    start,
                    text("title"),
                )
                .await
        }
        "pin_close" => session.pin_close(text("threadId"), required("result")).await,
        "profile_list" => session.profile_list().await,
        "context_assemble" => {
            let format = match text("format").as_deref() {
                Some("plan") => PlanFormat::Plan,
                Some("request") => PlanFormat::Request,
                _ => PlanFormat::Report,
            };
            session
                .context_assemble(text("threadId"), number("messageId"), text("profile"), format)
                .await
        }
        other => anyhow::bail!("no tool is named {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> &'static ToolSpec {
        TOOLS.iter().find(|tool| tool.name == name).unwrap_or_else(|| panic!("{name}"))
    }

    /// A schema as ThreadMind v0.4.1's tools/list gives it (its `execution` member is its SDK's,
    /// not the tool's, and is left out). Key order carries no meaning in JSON and serde_json
    /// sorts it, so the schemas are compared as values.
    fn threadminds(schema: &str) -> Value {
        serde_json::from_str(schema).unwrap_or_default()
    }

    #[test]
    fn schemas_are_threadminds() {
        assert_eq!(
            Value::Object(input_schema(tool("project_create"))),
            threadminds(
                r#"{"type":"object","properties":{"title":{"type":"string","description":"Project title"},"systemContext":{"type":"string","description":"System context or instructions for this project"},"mode":{"type":"string","enum":["solo","team"],"description":"Project mode: solo (default) or team"}},"required":["title"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}"#
            )
        );
        assert_eq!(
            Value::Object(input_schema(tool("context_get"))),
            threadminds(
                r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{}}"#
            )
        );
        assert_eq!(
            Value::Object(input_schema(tool("threadmind_init"))),
            threadminds(
                r#"{"type":"object","properties":{"clients":{"type":"array","items":{"type":"string","enum":["claude","cursor","generic"]},"description":"AI clients to generate instructions for (default: all). Options: \"claude\", \"cursor\", \"generic\""}},"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}"#
            )
        );
    }

    #[test]
    fn bad_arguments_are_refused_in_the_sdks_words() {
        let args = |value: Value| value.as_object().cloned().unwrap_or_default();
        assert_eq!(
            check_arguments(tool("thread_create"), &args(json!({}))).as_deref(),
            Some(
                "MCP error -32602: Input validation error: Invalid arguments for tool thread_create: Required at title"
            )
        );
        assert_eq!(
            check_arguments(tool("threadmind_init"), &args(json!({ "clients": ["bogus"] })))
                .as_deref(),
            Some(
                "MCP error -32602: Input validation error: Invalid arguments for tool threadmind_init: Invalid enum value. Expected 'claude' | 'cursor' | 'generic', received 'bogus' at clients[0]"
            )
        );
        assert_eq!(
            check_arguments(tool("project_create"), &args(json!({ "title": 3 }))).as_deref(),
            Some(
                "MCP error -32602: Input validation error: Invalid arguments for tool project_create: Expected string, received number at title"
            )
        );
        assert_eq!(
            check_arguments(tool("project_create"), &args(json!({ "title": "x", "extra": 1 }))),
            None
        );
    }
}
