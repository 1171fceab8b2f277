//! Pinloom's MCP server over stdio: a drop-in for ThreadMind v0.4.1 (its twelve tools, eleven
//! prompts and two resources, same names and outputs) on Pinloom's database, plus pins and
//! assembly under a model profile.
//!
//! It holds no logic: each tool is one call of the application layer's
//! [`ThreadMindSession`], whose text becomes the tool's result. Resources answer to
//! `pinloom://` and to ThreadMind's `threadmind://`. A client that subscribes to a resource is
//! told it changed after every tool that writes, and after any write of another process to the
//! database (the desktop app's), which the server notices through SQLite's `data_version`.

#![deny(missing_docs)]

mod prompts;
mod tools;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pinloom_app::{ApiError, Pinloom, ThreadMindSession};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, Prompt, PromptArgument, PromptMessage,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceUpdatedNotificationParam, Role, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, Tool, UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};

/// How often the server looks for another process's writes while a client is subscribed.
const WATCH_EVERY: Duration = Duration::from_millis(500);

/// The two resources: (our URI, ThreadMind's URI, name, description, MIME type of the listing).
const RESOURCES: [(&str, &str, &str, &str, &str); 2] = [
    (
        "pinloom://context",
        "threadmind://context",
        "current-context",
        "The assembled context for the active thread (walks up the parent chain)",
        "text/markdown",
    ),
    (
        "pinloom://tree",
        "threadmind://tree",
        "thread-tree",
        "Thread tree visualization for the active project",
        "text/plain",
    ),
];

/// Serves MCP on this process's standard input and output until the client closes it. The
/// session's active project and thread are those of `folder` (the working folder, as ThreadMind
/// keeps them per project folder).
pub async fn serve_stdio(pinloom: Pinloom, folder: String) -> anyhow::Result<()> {
    serve_lines(pinloom, folder, tokio::io::stdin(), tokio::io::stdout()).await
}

/// How much of a message may wait between the line filter and the protocol, each way.
const PIPE_BYTES: usize = 1 << 20;

/// JSON-RPC's answer to a line that is not JSON (or is, with a lone surrogate in a string).
const PARSE_ERROR: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the line is not valid JSON"}}"#;

/// Serves MCP over newline-delimited JSON on `input` and `output`. A line that is not JSON gets
/// JSON-RPC's parse error and the session goes on: rmcp's own transport would drop such a line
/// without a word, and a client waiting for an answer would wait forever. Valid lines pass to
/// rmcp untouched; its answers and the parse errors share `output` a whole line at a time.
async fn serve_lines<R, W>(
    pinloom: Pinloom,
    folder: String,
    input: R,
    output: W,
) -> anyhow::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let (protocol_in, mut to_protocol) = tokio::io::duplex(PIPE_BYTES);
    let (mut from_protocol, protocol_out) = tokio::io::duplex(PIPE_BYTES);
    let (lines, mut outgoing) = tokio::sync::mpsc::unbounded_channel::<String>();

    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(line) = outgoing.recv().await {
            if output.write_all(line.as_bytes()).await.is_err() || output.flush().await.is_err() {
                break; // the client went away
            }
        }
    });
    let answers = lines.clone();
    let forwarder = tokio::spawn(async move {
        let mut replies = BufReader::new(&mut from_protocol);
        let mut line = String::new();
        while matches!(replies.read_line(&mut line).await, Ok(read) if read > 0) {
            if answers.send(std::mem::take(&mut line)).is_err() {
                break;
            }
        }
    });
    let reader = tokio::spawn(async move {
        let mut requests = BufReader::new(input);
        let mut line = Vec::new();
        while matches!(requests.read_until(b'\n', &mut line).await, Ok(read) if read > 0) {
            let text = std::mem::take(&mut line);
            let trimmed = text.trim_ascii();
            if trimmed.is_empty() {
                continue;
            }
            if serde_json::from_slice::<serde_json::Value>(trimmed).is_ok() {
                if to_protocol.write_all(trimmed).await.is_err()
                    || to_protocol.write_all(b"\n").await.is_err()
                {
                    break;
                }
            } else if lines.send(format!("{PARSE_ERROR}\n")).is_err() {
                break;
            }
        }
        // The client closed its end: so does the protocol's input, and the session ends.
        let _ = to_protocol.shutdown().await;
    });

    let server = PinloomServer::new(pinloom, folder);
    let running = server.serve((protocol_in, protocol_out)).await?;
    running.waiting().await?;
    reader.abort();
    // What the protocol wrote last is sent before the process ends.
    let _ = forwarder.await;
    let _ = writer.await;
    Ok(())
}

/// The server's state: the session, and what the client subscribed to.
#[derive(Clone)]
struct PinloomServer {
    pinloom: Pinloom,
    session: ThreadMindSession,
    subscriptions: Arc<Mutex<BTreeSet<String>>>,
    /// Set once the watcher of other processes' writes has started.
    watching: Arc<AtomicBool>,
}

impl PinloomServer {
    fn new(pinloom: Pinloom, folder: String) -> PinloomServer {
        PinloomServer {
            session: pinloom.threadmind_session(folder),
            pinloom,
            subscriptions: Arc::default(),
            watching: Arc::default(),
        }
    }

    fn subscribed(&self) -> Vec<String> {
        self.subscriptions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// Tells the client every resource it subscribed to may have changed. A client that has gone
    /// away is no reason to fail the tool that wrote.
    async fn notify(&self, peer: &Peer<RoleServer>) -> bool {
        for uri in self.subscribed() {
            if peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
                .is_err()
            {
                return false;
            }
        }
        true
    }

    /// Starts, once, the task that notices other processes' writes while anything is subscribed.
    fn watch(&self, peer: Peer<RoleServer>) {
        if self.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        let server = self.clone();
        tokio::spawn(async move {
            let mut writes = server.pinloom.outside_writes(WATCH_EVERY).await;
            loop {
                writes.changed().await;
                if !server.notify(&peer).await {
                    return;
                }
            }
        });
    }
}

fn text_result(text: String, is_error: bool) -> CallToolResult {
    let mut result = if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    // ThreadMind's results carry `isError` only when they are errors.
    if !is_error {
        result.is_error = None;
    }
    result
}

/// A resource URI in either scheme, as ours.
fn resource_uri(uri: &str) -> Option<&'static str> {
    RESOURCES
        .iter()
        .find(|(ours, theirs, ..)| uri == *ours || uri == *theirs)
        .map(|(ours, ..)| *ours)
}

#[allow(deprecated)] // resources/subscribe is what every client of the initialize handshake uses
impl ServerHandler for PinloomServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .enable_resources_subscribe()
                .build(),
        )
        .with_server_info(Implementation::new("pinloom", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Pinloom keeps this project's conversations as a tree of threads with ThreadMind's \
             tools: call context_get when a session starts, summary_update after significant \
             work, thread_create when the subject changes. pin_create pins a passage of a \
             message as a sub-thread; context_assemble shows what a model would be sent.",
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            tools::TOOLS
                .iter()
                .map(|tool| Tool::new(tool.name, tool.description, tools::input_schema(tool)))
                .collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = tools::TOOLS.iter().find(|tool| tool.name == request.name) else {
            let message = format!("MCP error -32602: Tool {} not found", request.name);
            return Ok(text_result(message, true).into());
        };
        let arguments = request.arguments.unwrap_or_default();
        if let Some(refusal) = tools::check_arguments(tool, &arguments) {
            return Ok(text_result(refusal, true).into());
        }
        match tools::run(&self.session, tool.name, &arguments).await {
            Ok(text) => {
                if tool.writes {
                    self.notify(&context.peer).await;
                }
                Ok(text_result(text, false).into())
            }
            Err(error) => {
                let error = ApiError::from(error);
                Ok(text_result(format!("Error: {}", error.message), true).into())
            }
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(
            prompts::PROMPTS
                .iter()
                .map(|prompt| {
                    let arguments = prompt
                        .arguments
                        .iter()
                        .map(|(name, description, required)| {
                            PromptArgument::new(*name)
                                .with_description(*description)
                                .with_required(*required)
                        })
                        .collect();
                    Prompt::new(prompt.name, Some(prompt.description), Some(arguments))
                })
                .collect(),
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let Some(prompt) = prompts::PROMPTS.iter().find(|prompt| prompt.name == request.name)
        else {
            return Err(ErrorData::invalid_params(
                format!("MCP error -32602: Prompt {} not found", request.name),
                None,
            ));
        };
        let arguments = request.arguments.unwrap_or_default();
        if let Some(refusal) = prompts::check_arguments(prompt, &arguments) {
            return Err(ErrorData::invalid_params(refusal, None));
        }
        let state = self
            .session
            .prompt_state()
            .await
            .map_err(|error| ErrorData::internal_error(ApiError::from(error).message, None))?;
        let text = prompts::message(prompt.name, &arguments, &state);
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(
            RESOURCES
                .iter()
                .map(|(uri, _, name, description, mime)| {
                    Resource::new(*uri, *name).with_description(*description).with_mime_type(*mime)
                })
                .collect(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let not_found = || {
            ErrorData::invalid_params(
                format!("MCP error -32602: Resource {} not found", request.uri),
                None,
            )
        };
        let which = resource_uri(&request.uri).ok_or_else(not_found)?;
        let read = if which == RESOURCES[0].0 {
            self.session.context_resource().await
        } else {
            self.session.tree_resource().await
        };
        let read =
            read.map_err(|error| ErrorData::internal_error(ApiError::from(error).message, None))?;
        // The contents name the URI the client asked for, in whichever scheme.
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(read.text, request.uri.clone()).with_mime_type(read.mime_type),
        ])
        .into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if resource_uri(&request.uri).is_none() {
            return Err(ErrorData::invalid_params(
                format!("MCP error -32602: Resource {} not found", request.uri),
                None,
            ));
        }
        self.subscriptions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(request.uri);
        self.watch(context.peer);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .remove(&request.uri);
        Ok(())
    }
}
