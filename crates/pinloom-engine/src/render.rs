//! Renderings of a plan: provider-neutral chat messages finished per provider family, the request
//! body of each wire family, and the buffer-mode document.

use std::borrow::Cow;

use crate::plan::{ContextPlan, Origin, Role, Slice, SliceKind, SourceId};
use crate::profile::ModelProfile;
use crate::snapshot::{AttachmentKind, AttachmentScope, Author, NodeId, Part, Snapshot};

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
