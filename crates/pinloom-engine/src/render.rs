//! Renderings of a plan: provider-neutral chat messages finished per provider family, the request
//! body of each wire family, and the buffer-mode document.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::plan::{ContextPlan, Origin, Role, Slice, SliceKind, SourceId};
use crate::profile::{ModelProfile, ProviderFamily};
use crate::snapshot::{
    AttachmentKind, AttachmentScope, Author, NodeId, Part, Snapshot, ToolDefinition,
};

/// One rendered message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    /// Its role.
    pub role: Role,
    /// Its parts.
    pub parts: Vec<Part>,
}

impl ChatMessage {
    fn text(role: Role, text: &str) -> ChatMessage {
        ChatMessage { role, parts: vec![Part::Text(text.to_owned())] }
    }

    fn has_tool_parts(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::ToolCall { .. } | Part::ToolResult { .. }))
    }
}

/// The provider-neutral request: system text (when the model takes it natively), messages, and
/// the indices of the tool definitions kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatRequest {
    /// The system context for the provider's native field; `None` when injected or empty.
    pub system: Option<String>,
    /// The messages, role rules applied.
    pub messages: Vec<ChatMessage>,
    /// Indices into the snapshot's tool definitions.
    pub tools: Vec<usize>,
    /// Mistral: the last message is an assistant turn to be continued (`prefix: true`).
    pub prefix_last_assistant: bool,
}

/// The text of a slice.
pub fn slice_text<'a>(slice: &'a Slice, snapshot: &'a Snapshot) -> std::borrow::Cow<'a, str> {
    match &slice.origin {
        Origin::Text(text) | Origin::Cut { text, .. } => std::borrow::Cow::Borrowed(text),
        Origin::Node(i) => {
            let parts = &snapshot.nodes[*i].parts;
            if parts.len() == 1 {
                std::borrow::Cow::Borrowed(parts[0].text())
            } else {
                std::borrow::Cow::Owned(parts.iter().map(Part::text).collect::<Vec<_>>().join("\n"))
            }
        }
    }
}

/// Builds the provider-neutral messages, finished for the profile's family and rules.
pub fn chat_request(
    plan: &ContextPlan,
    snapshot: &Snapshot,
    profile: &ModelProfile,
) -> ChatRequest {
    let rules = profile.role_rules;
    let mut system_blocks: Vec<String> = Vec::new();
    let mut tools = Vec::new();
    let mut messages: Vec<ChatMessage> = Vec::new();
    let mut fills = plan.role_fills.iter().peekable();
    // Search hits go right before the prompt: everything before them is then the same from one
    // request of a thread to the next, which is what providers' prompt caches reuse.
    let mut recalled: Vec<Cow<'_, str>> = plan
        .slices
        .iter()
        .filter(|s| s.is_included() && s.kind == SliceKind::SearchResult)
        .map(|s| slice_text(s, snapshot))
        .collect();
    // Answers to fuse follow the message they answer, with the instruction last: the request
    // reads as the question, the answers, and what to make of them.
    let mut fused: Vec<Cow<'_, str>> = Vec::new();
    let mut images = placed_images(plan, snapshot);
    for (i, slice) in plan.slices.iter().enumerate() {
        if !slice.is_included() {
            continue;
        }
        match slice.kind {
            SliceKind::SearchResult => {}
            SliceKind::ToolDefinition => {
                if let SourceId::Tool(t) = slice.source {
                    tools.push(t);
                }
            }
            SliceKind::RecentHistory | SliceKind::OldHistory | SliceKind::Prompt => {
                while let Some(fill) = fills.next_if(|f| f.before_slice <= i) {
                    messages.push(ChatMessage::text(fill.role, &fill.text));
                }
                if let Some(marker) = plan.marker.as_ref().filter(|m| m.before_slice == i) {
                    messages.push(ChatMessage::text(Role::User, &marker.text));
                }
                if slice.kind == SliceKind::Prompt && !recalled.is_empty() {
                    let block = std::mem::take(&mut recalled).join("\n\n");
                    messages.push(ChatMessage::text(Role::User, &block));
                }
                let mut message = match &slice.origin {
                    Origin::Node(n) => {
                        let node = &snapshot.nodes[*n];
                        Some((node.id, node_message(node.author, &node.parts)))
                    }
                    Origin::Cut { node, text } => {
                        let node = &snapshot.nodes[*node];
                        Some((node.id, node_message(node.author, &[Part::Text(text.clone())])))
                    }
                    Origin::Text(_) => None,
                };
                if let Some((node, message)) = &mut message {
                    let prompt = slice.kind == SliceKind::Prompt;
                    images.place(*node, prompt, message);
                }
                messages.extend(message.map(|(_, message)| message));
            }
            // Placed with their messages by `placed_images`.
            SliceKind::WorkingBuffer | SliceKind::Image => {}
            SliceKind::FuseSource => fused.push(slice_text(slice, snapshot)),
            _ => system_blocks.push(slice_text(slice, snapshot).into_owned()),
        }
    }
    if !fused.is_empty() {
        messages.push(ChatMessage::text(Role::User, &fused.join("\n\n")));
    }
    if rules.strict_alternation {
        for m in &mut messages {
            flatten_tools(m);
        }
    }
    let messages = merge_same_role(messages, rules.strict_alternation);
    let mut request = ChatRequest { system: None, messages, tools, prefix_last_assistant: false };
    place_system(&mut request, system_blocks.join("\n\n"), profile);
    request.prefix_last_assistant = rules.last_user_or_tool
        && request.messages.last().is_some_and(|m| m.role == Role::Assistant);
    request
}

/// The images a request sends: each with the message it was attached to when that message is
/// sent, the rest (on the tree, a thread, or a message cut from the history) with the prompt.
struct PlacedImages {
    /// (the message it goes with, the part); `None` goes with the prompt.
    images: Vec<(Option<NodeId>, Part)>,
}

fn placed_images(plan: &ContextPlan, snapshot: &Snapshot) -> PlacedImages {
    let sent: Vec<NodeId> = plan
        .slices
        .iter()
        .filter(|s| s.is_included() && (s.kind.is_history() || s.kind == SliceKind::Prompt))
        .filter_map(|s| match &s.origin {
            Origin::Node(n) | Origin::Cut { node: n, .. } => Some(snapshot.nodes[*n].id),
            Origin::Text(_) => None,
        })
        .collect();
    let images = plan
        .slices
        .iter()
        .filter(|s| s.is_included() && s.kind == SliceKind::Image)
        .filter_map(|s| {
            let SourceId::Attachment(id) = s.source else { return None };
            let attachment = snapshot.attachments.iter().find(|a| a.id == id)?;
            let AttachmentKind::Image { media_type, data, .. } = &attachment.kind else {
                return None;
            };
            let part = Part::Image { media_type: media_type.clone(), data: data.clone() };
            let with = match attachment.scope {
                AttachmentScope::Node(node) if sent.contains(&node) => Some(node),
                _ => None,
            };
            Some((with, part))
        })
        .collect();
    PlacedImages { images }
}

impl PlacedImages {
    /// Puts the images that go with `node` (and, for the prompt, those that go with it) before
    /// the message's text, as the providers advise for images and the question about them.
    fn place(&mut self, node: NodeId, prompt: bool, message: &mut ChatMessage) {
        let mut parts = Vec::new();
        self.images.retain(|(with, part)| {
            let here = *with == Some(node) || (prompt && with.is_none());
            if here {
                parts.push(part.clone());
            }
            !here
        });
        if !parts.is_empty() {
            parts.append(&mut message.parts);
            message.parts = parts;
        }
    }
}

fn node_message(author: Author, parts: &[Part]) -> ChatMessage {
    let role = match author {
        Author::Human => Role::User,
        Author::Model => Role::Assistant,
        Author::Tool => Role::Tool,
    };
    let parts = parts
        .iter()
        .map(|p| match p {
            Part::Text(t) => Part::Text(t.clone()),
            Part::ToolCall { id, name, arguments } => {
                Part::ToolCall { id: id.clone(), name: name.clone(), arguments: arguments.clone() }
            }
            Part::ToolResult { call_id, content } => {
                Part::ToolResult { call_id: call_id.clone(), content: content.clone() }
            }
            Part::Image { media_type, data } => {
                Part::Image { media_type: media_type.clone(), data: data.clone() }
            }
        })
        .collect();
    ChatMessage { role, parts }
}

/// Strict-alternation templates take no tool roles: calls and results become text.
fn flatten_tools(message: &mut ChatMessage) {
    if message.role == Role::Tool {
        message.role = Role::User;
    }
    for part in &mut message.parts {
        let text = match part {
            Part::Text(_) | Part::Image { .. } => continue,
            Part::ToolCall { id, name, arguments } => {
                format!("[tool call {name} ({id}): {arguments}]")
            }
            Part::ToolResult { call_id, content } => {
                format!("[tool result ({call_id}): {content}]")
            }
        };
        *part = Part::Text(text);
    }
}

/// Merges consecutive same-role messages, never across a tool call and its results (seed 002,
/// engine_anchors §2 invariant 4). With `everything`, all runs merge (tools were flattened).
fn merge_same_role(messages: Vec<ChatMessage>, everything: bool) -> Vec<ChatMessage> {
    let mut out: Vec<ChatMessage> = Vec::with_capacity(messages.len());
    for m in messages {
        if let Some(last) = out.last_mut()
            && last.role == m.role
            && (everything || (!last.has_tool_parts() && !m.has_tool_parts()))
        {
            join_text(last, m);
            continue;
        }
        out.push(m);
    }
    out
}

fn join_text(into: &mut ChatMessage, from: ChatMessage) {
    for part in from.parts {
        match (into.parts.last_mut(), part) {
            (Some(Part::Text(a)), Part::Text(b)) => {
                a.push_str("\n\n");
                a.push_str(&b);
            }
            (_, part) => into.parts.push(part),
        }
    }
}

/// Puts the system context at the head of the first user message (`"{system}\n\n{first}"`), or
/// as a user message of its own when there is none.
fn inject_system(messages: &mut Vec<ChatMessage>, system: &str) {
    if let Some(first) = messages.iter_mut().find(|m| m.role == Role::User) {
        match first.parts.iter_mut().find_map(|p| match p {
            Part::Text(t) => Some(t),
            _ => None,
        }) {
            Some(text) => *text = format!("{system}\n\n{text}"),
            None => first.parts.insert(0, Part::Text(system.to_owned())),
        }
    } else {
        messages.insert(0, ChatMessage::text(Role::User, system));
    }
}

fn arguments_value(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => Value::Object(Map::new()),
    }
}

fn tools_value(
    definitions: &[ToolDefinition],
    tools: &[usize],
    family: ProviderFamily,
) -> Vec<Value> {
    tools
        .iter()
        .filter_map(|&i| definitions.get(i))
        .map(|t| {
            let schema = arguments_value(&t.parameters);
            match family {
                ProviderFamily::Anthropic => {
                    json!({"name": t.name, "description": t.description, "input_schema": schema})
                }
                ProviderFamily::Gemini => {
                    json!({"name": t.name, "description": t.description, "parameters": schema})
                }
                ProviderFamily::OpenAiCompatible | ProviderFamily::Ollama => json!({
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": schema}
                }),
            }
        })
        .collect()
}

/// The request body for the profile's wire family, as JSON text, written straight from the
/// request's borrowed text (no intermediate `Value` tree: W3's cost is this body).
pub fn request_body(plan: &ContextPlan, snapshot: &Snapshot, profile: &ModelProfile) -> String {
    let request = chat_request(plan, snapshot, profile);
    // Serializing these structs cannot fail: every map key is a string.
    serde_json::to_string(&body(&request, &snapshot.tools, profile)).unwrap_or_default()
}

/// The body of `request` in the profile's wire family; `tools` is the list `request.tools`
/// indexes into. The providers crate sends it, adding only transport fields. The same JSON as
/// [`request_body`] (keys in order), as a value to add fields to.
pub fn wire_body(request: &ChatRequest, tools: &[ToolDefinition], profile: &ModelProfile) -> Value {
    serde_json::to_value(body(request, tools, profile)).unwrap_or(Value::Null)
}

fn body<'a>(
    request: &'a ChatRequest,
    tools: &[ToolDefinition],
    profile: &'a ModelProfile,
) -> WireBody<'a> {
    let tools = tools_value(tools, &request.tools, profile.family);
    match profile.family {
        ProviderFamily::OpenAiCompatible => WireBody::OpenAi(openai_body(request, tools, profile)),
        ProviderFamily::Anthropic => WireBody::Anthropic(anthropic_body(request, tools, profile)),
        ProviderFamily::Gemini => WireBody::Gemini(gemini_body(request, tools)),
        ProviderFamily::Ollama => WireBody::Ollama(ollama_body(request, tools, profile)),
    }
}

/// A request of one user turn under a system text, finished for the profile as `chat_request`
/// finishes a plan's: the system text goes to the native field, or is injected into the turn
/// when the model takes none. Summaries are asked for this way.
pub fn single_turn(system: &str, prompt: &str, profile: &ModelProfile) -> ChatRequest {
    let mut request = ChatRequest {
        system: None,
        messages: vec![ChatMessage::text(Role::User, prompt)],
        tools: Vec::new(),
        prefix_last_assistant: false,
    };
    place_system(&mut request, system.to_owned(), profile);
    request
}

/// The system text in the provider's native field when the model takes one, else injected into
/// the first user message; nothing when it is empty.
fn place_system(request: &mut ChatRequest, system: String, profile: &ModelProfile) {
    if system.is_empty() {
        return;
    }
    if profile.native_system {
        request.system = Some(system);
    } else {
        inject_system(&mut request.messages, &system);
    }
}

// The wire shapes, borrowing the request's text. Fields are declared in alphabetical order so the
// JSON written straight from them has its keys in the same order as a `serde_json::Value` map
// (sorted), whichever of `request_body` and `wire_body` made it.

#[derive(Serialize)]
#[serde(untagged)]
enum WireBody<'a> {
    OpenAi(OpenAiBody<'a>),
    Anthropic(AnthropicBody<'a>),
    Gemini(GeminiBody<'a>),
    Ollama(OllamaBody<'a>),
}

#[derive(Serialize)]
struct OpenAiBody<'a> {
    messages: Vec<OpenAiMessage<'a>>,
    model: &'a str,
    stream: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
}

#[derive(Serialize)]
struct OpenAiMessage<'a> {
    /// `null` for an assistant turn that only calls tools.
    content: Option<OpenAiContent<'a>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    prefix: bool,
    role: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<OpenAiToolCall<'a>>,
}

/// A message's content: its text, or a list of parts when it carries images.
#[derive(Serialize)]
#[serde(untagged)]
enum OpenAiContent<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<OpenAiContentPart<'a>>),
}

#[derive(Serialize)]
#[serde(untagged)]
enum OpenAiContentPart<'a> {
    Image {
        image_url: OpenAiImageUrl,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    Text {
        text: Cow<'a, str>,
        #[serde(rename = "type")]
        kind: &'static str,
    },
}

#[derive(Serialize)]
struct OpenAiImageUrl {
    url: String,
}

#[derive(Serialize)]
struct OpenAiToolCall<'a> {
    function: OpenAiFunction<'a>,
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct OpenAiFunction<'a> {
    arguments: &'a str,
    name: &'a str,
}

/// One turn of the families whose turns hold a list (Anthropic's content blocks, Gemini's
/// parts); `role` is the wire role.
#[derive(Serialize)]
struct Turn<B> {
    content: Vec<B>,
    role: &'static str,
}

#[derive(Serialize)]
struct AnthropicBody<'a> {
    max_tokens: u32,
    messages: Vec<Turn<AnthropicBlock<'a>>>,
    model: &'a str,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<AnthropicSystem<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
}

/// Anthropic's system field: a string, or one text block carrying a cache breakpoint.
#[derive(Serialize)]
#[serde(untagged)]
enum AnthropicSystem<'a> {
    Text(&'a str),
    Cached([CachedText<'a>; 1]),
}

#[derive(Serialize)]
struct CachedText<'a> {
    cache_control: CacheControl,
    text: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// Anthropic's breakpoint: everything up to and including the block is cached for five minutes.
#[derive(Serialize, Clone, Copy)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

#[derive(Serialize)]
#[serde(untagged)]
enum AnthropicBlock<'a> {
    Text {
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
        text: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    ToolUse {
        id: &'a str,
        input: Value,
        name: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    ToolResult {
        content: &'a str,
        tool_use_id: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    Image {
        source: AnthropicImageSource<'a>,
        #[serde(rename = "type")]
        kind: &'static str,
    },
}

#[derive(Serialize)]
struct AnthropicImageSource<'a> {
    data: &'a str,
    media_type: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct GeminiBody<'a> {
    contents: Vec<GeminiTurn<'a>>,
    #[serde(rename = "systemInstruction", skip_serializing_if = "Option::is_none")]
    system_instruction: Option<GeminiSystem<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
}

#[derive(Serialize)]
struct GeminiTurn<'a> {
    parts: Vec<GeminiPart<'a>>,
    role: &'static str,
}

#[derive(Serialize)]
struct GeminiSystem<'a> {
    parts: [GeminiText<'a>; 1],
}

#[derive(Serialize)]
struct GeminiText<'a> {
    text: &'a str,
}

#[derive(Serialize)]
#[serde(untagged)]
enum GeminiPart<'a> {
    Text(GeminiText<'a>),
    Call {
        #[serde(rename = "functionCall")]
        function_call: GeminiCall<'a>,
    },
    Response {
        #[serde(rename = "functionResponse")]
        function_response: GeminiResponse<'a>,
    },
    Inline {
        #[serde(rename = "inlineData")]
        inline_data: GeminiBlob<'a>,
    },
}

#[derive(Serialize)]
struct GeminiBlob<'a> {
    data: &'a str,
    #[serde(rename = "mimeType")]
    mime_type: &'a str,
}

#[derive(Serialize)]
struct GeminiCall<'a> {
    args: Value,
    name: &'a str,
}

#[derive(Serialize)]
struct GeminiResponse<'a> {
    name: &'a str,
    response: GeminiResult<'a>,
}

#[derive(Serialize)]
struct GeminiResult<'a> {
    content: &'a str,
}

#[derive(Serialize)]
struct OllamaBody<'a> {
    messages: Vec<OllamaMessage<'a>>,
    model: &'a str,
    options: OllamaOptions,
    stream: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
}

#[derive(Serialize)]
struct OllamaMessage<'a> {
    content: Cow<'a, str>,
    /// Images in base64, which Ollama takes beside the text rather than as parts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    images: Vec<&'a str>,
    role: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<Value>,
}

#[derive(Serialize)]
struct OllamaOptions {
    num_ctx: u32,
}

/// The text parts of a message, joined by blank lines; borrowed when there is only one.
fn joined_text(parts: &[Part]) -> Cow<'_, str> {
    let mut texts = parts.iter().filter_map(|p| match p {
        Part::Text(t) => Some(t.as_str()),
        _ => None,
    });
    let Some(first) = texts.next() else { return Cow::Borrowed("") };
    match texts.next() {
        None => Cow::Borrowed(first),
        Some(second) => {
            let mut joined = format!("{first}\n\n{second}");
            for text in texts {
                joined.push_str("\n\n");
                joined.push_str(text);
            }
            Cow::Owned(joined)
        }
    }
}

fn openai_body<'a>(
    request: &'a ChatRequest,
    tools: Vec<Value>,
    profile: &'a ModelProfile,
) -> OpenAiBody<'a> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    let plain = |role: &'static str, content: Cow<'a, str>| OpenAiMessage {
        content: Some(OpenAiContent::Text(content)),
        prefix: false,
        role,
        tool_call_id: None,
        tool_calls: Vec::new(),
    };
    if let Some(system) = &request.system {
        messages.push(plain("system", Cow::Borrowed(system)));
    }
    let last = request.messages.len().saturating_sub(1);
    for (i, m) in request.messages.iter().enumerate() {
        if m.role == Role::Tool {
            // One tool message per result.
            for p in &m.parts {
                if let Part::ToolResult { call_id, content } = p {
                    messages.push(OpenAiMessage {
                        tool_call_id: Some(call_id),
                        ..plain("tool", Cow::Borrowed(content))
                    });
                }
            }
            continue;
        }
        let text = joined_text(&m.parts);
        let tool_calls: Vec<OpenAiToolCall<'a>> = m
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::ToolCall { id, name, arguments } => Some(OpenAiToolCall {
                    function: OpenAiFunction { arguments, name },
                    id,
                    kind: "function",
                }),
                _ => None,
            })
            .collect();
        let images: Vec<OpenAiContentPart<'a>> = m
            .parts
            .iter()
            .filter_map(image_data)
            .map(|(media_type, data)| OpenAiContentPart::Image {
                image_url: OpenAiImageUrl { url: format!("data:{media_type};base64,{data}") },
                kind: "image_url",
            })
            .collect();
        let content = if images.is_empty() {
            (tool_calls.is_empty() || !text.is_empty()).then_some(OpenAiContent::Text(text))
        } else {
            let mut parts = images;
            if !text.is_empty() {
                parts.push(OpenAiContentPart::Text { text, kind: "text" });
            }
            Some(OpenAiContent::Parts(parts))
        };
        messages.push(OpenAiMessage {
            content,
            prefix: i == last && request.prefix_last_assistant,
            role: role_name(m.role),
            tool_call_id: None,
            tool_calls,
        });
    }
    OpenAiBody { messages, model: &profile.model, stream: true, tools }
}

/// An image part's media type and base64 data.
fn image_data(part: &Part) -> Option<(&str, &str)> {
    match part {
        Part::Image { media_type, data } => Some((media_type, data)),
        _ => None,
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// Pushes a turn, merging it into the previous one when the wire role is the same (Anthropic
/// and Gemini carry tool results in user turns, which then meet the next user text).
fn push_merged<B>(out: &mut Vec<Turn<B>>, role: &'static str, blocks: Vec<B>) {
    if let Some(last) = out.last_mut()
        && last.role == role
    {
        last.content.extend(blocks);
        return;
    }
    out.push(Turn { content: blocks, role });
}

fn anthropic_body<'a>(
    request: &'a ChatRequest,
    tools: Vec<Value>,
    profile: &'a ModelProfile,
) -> AnthropicBody<'a> {
    let mut messages: Vec<Turn<AnthropicBlock<'a>>> = Vec::with_capacity(request.messages.len());
    for m in &request.messages {
        let role = if m.role == Role::Assistant { "assistant" } else { "user" };
        let blocks = m
            .parts
            .iter()
            .map(|p| match p {
                Part::Text(text) => {
                    AnthropicBlock::Text { cache_control: None, text, kind: "text" }
                }
                Part::ToolCall { id, name, arguments } => AnthropicBlock::ToolUse {
                    id,
                    input: arguments_value(arguments),
                    name,
                    kind: "tool_use",
                },
                Part::ToolResult { call_id, content } => AnthropicBlock::ToolResult {
                    content,
                    tool_use_id: call_id,
                    kind: "tool_result",
                },
                Part::Image { media_type, data } => AnthropicBlock::Image {
                    source: AnthropicImageSource { data, media_type, kind: "base64" },
                    kind: "image",
                },
            })
            .collect();
        push_merged(&mut messages, role, blocks);
    }
    let system = request.system.as_deref().map(|text| {
        if profile.cache_breakpoints {
            AnthropicSystem::Cached([CachedText { cache_control: EPHEMERAL, text, kind: "text" }])
        } else {
            AnthropicSystem::Text(text)
        }
    });
    if profile.cache_breakpoints {
        // The newest turn before the prompt ends the prefix the next request repeats; the
        // system breakpoint covers the tools and the system text when no turn does yet.
        let before_prompt = messages.len().checked_sub(2).and_then(|i| messages.get_mut(i));
        if let Some(turn) = before_prompt
            && let Some(AnthropicBlock::Text { cache_control, .. }) = turn
                .content
                .iter_mut()
                .rev()
                .find(|block| matches!(block, AnthropicBlock::Text { .. }))
        {
            *cache_control = Some(EPHEMERAL);
        }
    }
    AnthropicBody {
        max_tokens: profile.reserve,
        messages,
        model: &profile.model,
        stream: true,
        system,
        tools,
    }
}

fn gemini_body(request: &ChatRequest, tools: Vec<Value>) -> GeminiBody<'_> {
    let mut names: Vec<(&str, &str)> = Vec::new();
    let mut turns: Vec<Turn<GeminiPart<'_>>> = Vec::with_capacity(request.messages.len());
    for m in &request.messages {
        let role = if m.role == Role::Assistant { "model" } else { "user" };
        let mut parts = Vec::with_capacity(m.parts.len());
        for p in &m.parts {
            parts.push(match p {
                Part::Text(text) => GeminiPart::Text(GeminiText { text }),
                Part::ToolCall { id, name, arguments } => {
                    names.push((id.as_str(), name.as_str()));
                    GeminiPart::Call {
                        function_call: GeminiCall { args: arguments_value(arguments), name },
                    }
                }
                Part::ToolResult { call_id, content } => {
                    let name = names.iter().find(|(id, _)| id == call_id).map_or("", |(_, n)| n);
                    GeminiPart::Response {
                        function_response: GeminiResponse {
                            name,
                            response: GeminiResult { content },
                        },
                    }
                }
                Part::Image { media_type, data } => {
                    GeminiPart::Inline { inline_data: GeminiBlob { data, mime_type: media_type } }
                }
            });
        }
        push_merged(&mut turns, role, parts);
    }
    let contents =
        turns.into_iter().map(|turn| GeminiTurn { parts: turn.content, role: turn.role }).collect();
    let tools =
        if tools.is_empty() { tools } else { vec![json!({ "functionDeclarations": tools })] };
    GeminiBody {
        contents,
        system_instruction: request
            .system
            .as_deref()
            .map(|text| GeminiSystem { parts: [GeminiText { text }] }),
        tools,
    }
}

fn ollama_body<'a>(
    request: &'a ChatRequest,
    tools: Vec<Value>,
    profile: &'a ModelProfile,
) -> OllamaBody<'a> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = &request.system {
        messages.push(OllamaMessage {
            content: Cow::Borrowed(system),
            images: Vec::new(),
            role: "system",
            tool_calls: Vec::new(),
        });
    }
    for m in &request.messages {
        if m.role == Role::Tool {
            for p in &m.parts {
                if let Part::ToolResult { content, .. } = p {
                    messages.push(OllamaMessage {
                        content: Cow::Borrowed(content),
                        images: Vec::new(),
                        role: "tool",
                        tool_calls: Vec::new(),
                    });
                }
            }
            continue;
        }
        let tool_calls = m
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::ToolCall { name, arguments, .. } => Some(
                    json!({"function": {"name": name, "arguments": arguments_value(arguments)}}),
                ),
                _ => None,
            })
            .collect();
        messages.push(OllamaMessage {
            content: joined_text(&m.parts),
            images: m.parts.iter().filter_map(image_data).map(|(_, data)| data).collect(),
            role: role_name(m.role),
            tool_calls,
        });
    }
    OllamaBody {
        messages,
        model: &profile.model,
        // Always sent: without it Ollama silently truncates to its default (engine_anchors §3).
        options: OllamaOptions { num_ctx: profile.context_window },
        stream: true,
        tools,
    }
}

/// The buffer-mode document: system context when the tree includes it, the kept nodes as one
/// continuous text, the marker where text was removed, and the working buffer.
pub fn buffer_document(plan: &ContextPlan, snapshot: &Snapshot) -> String {
    let mut out = String::new();
    let system: Vec<String> = plan
        .slices
        .iter()
        .filter(|s| s.is_included() && s.kind == SliceKind::System)
        .map(|s| slice_text(s, snapshot).into_owned())
        .collect();
    if !system.is_empty() {
        out.push_str(&system.join("\n\n"));
        out.push_str("\n\n");
    }
    let document_part = |kind: SliceKind| {
        matches!(
            kind,
            SliceKind::RecentHistory
                | SliceKind::OldHistory
                | SliceKind::Prompt
                | SliceKind::WorkingBuffer
        )
    };
    // Material (files, summaries, the anchor, search hits) before the document, each a
    // paragraph; a document is one continuous text, so nothing is placed inside it.
    for slice in plan.slices.iter().filter(|s| s.is_included()) {
        if slice.kind != SliceKind::System && !document_part(slice.kind) {
            out.push_str(&slice_text(slice, snapshot));
            out.push_str("\n\n");
        }
    }
    for (i, slice) in plan.slices.iter().enumerate() {
        if !slice.is_included() || !document_part(slice.kind) {
            continue;
        }
        if let Some(marker) = plan.marker.as_ref().filter(|m| m.before_slice == i) {
            out.push_str("\n\n");
            out.push_str(&marker.text);
            out.push_str("\n\n");
        }
        out.push_str(&slice_text(slice, snapshot));
    }
    out
}
