//! ChatGPT's data export: `conversations.json`, alone or in the `.zip` as downloaded. The file is
//! an array of conversations; each holds a `mapping` of message nodes, each naming its `parent`
//! and its `children` in order, and `current_node`, the end of the branch ChatGPT showed. An edit
//! or a regeneration is a sibling there, so a conversation is a tree, and becomes one here: each is
//! mapped to an Open Loom tree and read by the one Open Loom importer, so every rule of an import
//! holds (limits, names checked, nothing from the file planned for or sent to).
//!
//! What the export holds that a conversation does not show is left out and counted in the report:
//! nodes without a message (the root ChatGPT makes), messages it hides (system prompts it adds,
//! the person's custom instructions, the model's memory), its reasoning summaries. An image a
//! message points at is read from the zip when the file is there (`file-…` or `file_…`, named
//! by the pointer), and named in the report when it is not.
//!
//! The file is read as a stream, a conversation at a time, and written in batches, each its own
//! transaction: a heavy user's export is hundreds of megabytes, and a failure keeps what came
//! before it. A conversation already here (by its id, kept as the tree's global id) is passed over,
//! so importing the same export again adds only what is new.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::branching::{
    Header, Mapped, conversation_tree, is_global_id, json_array_naming, seconds_iso,
};
use super::open_loom_import::Notes;

/// Whether the start of a file is ChatGPT's `conversations.json`: an array whose first
/// conversation has a `mapping` (the first 64 KB are enough: a conversation's fields come before
/// its messages' end, and the title, times and mapping start early).
pub(super) fn looks_like_conversations(head: &[u8]) -> bool {
    json_array_naming(head, &["mapping", "current_node"])
}

/// An image a message points at, read from the export.
pub(super) struct Image {
    /// Its file's name in the export.
    pub(super) name: String,
    /// Its bytes as a `data:` URL, checked to be an image models take.
    pub(super) data_url: String,
}

/// The Open Loom tree of `conversation` (the `index`th of the export); `None` when it holds no
/// message to show (said in `notes`). `image` finds the file an image pointer names.
pub(super) fn tree_of(
    conversation: &Value,
    index: usize,
    image: &mut dyn FnMut(&str) -> Option<Image>,
    notes: &mut Notes,
) -> Option<Mapped> {
    let title = conversation.get("title").and_then(Value::as_str).unwrap_or("").trim();
    let title = if title.is_empty() {
        format!("ChatGPT conversation {}", index + 1)
    } else {
        title.to_owned()
    };
    let Some(mapping) = conversation.get("mapping").and_then(Value::as_object) else {
        notes
            .add(format!("conversation {:?} has no messages (no mapping) and was left out", title));
        return None;
    };
    let id = conversation
        .get("conversation_id")
        .or_else(|| conversation.get("id"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let Messages { kept, attachments, system_context } = messages_of(mapping, image, notes);
    let times = |field: &str| conversation.get(field).and_then(Value::as_f64).and_then(seconds_iso);
    let header = Header {
        id: if id.is_empty() { format!("chatgpt-{}", index + 1) } else { id.to_owned() },
        title,
        attachments,
        system_context: (!system_context.is_empty()).then(|| system_context.join("\n\n")),
        created_at: times("create_time"),
        updated_at: times("update_time"),
    };
    let current = conversation.get("current_node").and_then(Value::as_str);
    conversation_tree(mapping, kept, current, header, notes)
}

/// The messages of a mapping a conversation shows, by their keys, the images they carry as
/// attachments, and the system prompts the person could see.
struct Messages<'m> {
    kept: HashMap<&'m str, Value>,
    attachments: Vec<Value>,
    system_context: Vec<String>,
}

fn messages_of<'m>(
    mapping: &'m Map<String, Value>,
    image: &mut dyn FnMut(&str) -> Option<Image>,
    notes: &mut Notes,
) -> Messages<'m> {
    let mut kept: HashMap<&str, Value> = HashMap::new();
    let mut attachments = Vec::new();
    let mut system_context = Vec::new();
    for (key, node) in mapping {
        let Some(message) = node.get("message").filter(|message| message.is_object()) else {
            continue;
        };
        match message_node(key, message, image, notes) {
            Shown::Message { node, images } => {
                for (name, data_url) in images {
                    attachments.push(json!({
                        "scope": "node", "node": key, "role": "image",
                        "name": name, "content": data_url,
                    }));
                }
                kept.insert(key.as_str(), node);
            }
            Shown::SystemContext(text) => system_context.push(text),
            Shown::Hidden => {}
        }
    }
    Messages { kept, attachments, system_context }
}

/// What a message of the export is here.
enum Shown {
    /// A message of the conversation, with the images it carries (name, `data:` URL).
    Message { node: Value, images: Vec<(String, String)> },
    /// A system prompt the person can see: the tree's system context.
    SystemContext(String),
    /// Not shown in the conversation: left out, counted.
    Hidden,
}

fn message_node(
    key: &str,
    message: &Value,
    image: &mut dyn FnMut(&str) -> Option<Image>,
    notes: &mut Notes,
) -> Shown {
    let metadata = message.get("metadata");
    let flag =
        |name: &str| metadata.and_then(|m| m.get(name)).and_then(Value::as_bool) == Some(true);
    let role =
        message.get("author").and_then(|a| a.get("role")).and_then(Value::as_str).unwrap_or("");
    let content = message.get("content");
    let kind =
        content.and_then(|c| c.get("content_type")).and_then(Value::as_str).unwrap_or("text");
    if matches!(kind, "user_editable_context" | "model_editable_context") {
        notes.add("custom instructions and the model's memory, which ChatGPT keeps out of the conversation, were left out");
        return Shown::Hidden;
    }
    if flag("is_visually_hidden_from_conversation") || flag("is_user_system_message") {
        notes.add("messages ChatGPT hides (the system prompts it adds) were left out");
        return Shown::Hidden;
    }
    if matches!(kind, "thoughts" | "reasoning_recap") {
        notes.add("the model's reasoning summaries (shown folded in ChatGPT) were left out");
        return Shown::Hidden;
    }
    let (text, images) = message_text(content, kind, image, notes);
    if text.trim().is_empty() && images.is_empty() {
        if !matches!(role, "system") {
            notes.add("empty messages (a tool's call with no text, a part Pinloom does not read) were left out");
        }
        return Shown::Hidden;
    }
    let (author, tool) = match role {
        "user" => ("human", false),
        "assistant" => ("model", false),
        "tool" => ("system", true),
        "system" => return Shown::SystemContext(text),
        _ => ("human", false),
    };
    let mut node = json!({
        "id": key,
        "content": [{ "type": "text", "text": text }],
        "author": { "role": author },
    });
    if let Some(name) = message.get("author").and_then(|a| a.get("name")).and_then(Value::as_str) {
        node["author"]["name"] = json!(name);
    }
    if let Some(at) = message.get("create_time").and_then(Value::as_f64).and_then(seconds_iso) {
        node["createdAt"] = json!(at);
    }
    let mut ours = Map::new();
    if tool {
        ours.insert("author".into(), json!("tool"));
    }
    if let Some(id) = message.get("id").and_then(Value::as_str).filter(|id| is_global_id(id)) {
        ours.insert("globalId".into(), json!(id));
    }
    let model = metadata.and_then(|m| m.get("model_slug")).and_then(Value::as_str);
    if let (Some(model), "model") = (model, author) {
        node["generation"] = json!({ "provider": "openai", "model": model });
    }
    if !ours.is_empty() {
        node["extensions"] = json!({ "pinloom": ours });
    }
    Shown::Message { node, images }
}

/// A message's text (its parts, code fenced, a tool's output) and the images its parts point at,
/// read from the export by `image`.
fn message_text(
    content: Option<&Value>,
    kind: &str,
    image: &mut dyn FnMut(&str) -> Option<Image>,
    notes: &mut Notes,
) -> (String, Vec<(String, String)>) {
    let mut text = Vec::new();
    let mut images = Vec::new();
    let parts = content.and_then(|c| c.get("parts")).and_then(Value::as_array);
    for part in parts.into_iter().flatten() {
        match part {
            Value::String(piece) if !piece.is_empty() => text.push(piece.clone()),
            Value::Object(object) => match object.get("content_type").and_then(Value::as_str) {
                Some("image_asset_pointer") => {
                    let pointer = object.get("asset_pointer").and_then(Value::as_str).unwrap_or("");
                    let asset = pointer.rsplit("://").next().unwrap_or(pointer);
                    match image(asset) {
                        Some(found) => images.push((found.name, found.data_url)),
                        None => notes.add(format!(
                            "image {asset} is not in the export (or is not an image models take) and was left out"
                        )),
                    }
                }
                Some("audio_transcription") => {
                    if let Some(said) = object.get("text").and_then(Value::as_str) {
                        text.push(said.to_owned());
                    }
                }
                _ => notes.add("parts of messages Pinloom does not read (audio, files without text) were left out"),
            },
            _ => {}
        }
    }
    let own_text = content.and_then(|c| c.get("text")).and_then(Value::as_str).unwrap_or("");
    match kind {
        "code" if !own_text.is_empty() => {
            let language =
                content.and_then(|c| c.get("language")).and_then(Value::as_str).unwrap_or("");
            let language = if language == "unknown" { "" } else { language };
            text.push(format!("```{language}\n{own_text}\n```"));
        }
        "execution_output" | "tether_quote" | "system_error" if !own_text.is_empty() => {
            text.push(own_text.to_owned())
        }
        "tether_browsing_display" => {
            if let Some(result) = content
                .and_then(|c| c.get("result"))
                .and_then(Value::as_str)
                .filter(|r| !r.is_empty())
            {
                text.push(result.to_owned());
            }
        }
        _ => {}
    }
    (text.join("\n\n"), images)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_export_is_recognised_by_its_content() {
        assert!(looks_like_conversations(
            b"\xef\xbb\xbf [{\"title\": \"Rivers\", \"mapping\": {}, \"current_node\": null}]"
        ));
        assert!(!looks_like_conversations(b"{\"format\": \"open-loom\"}"));
        assert!(!looks_like_conversations(b"[{\"text\": \"a\", \"children\": []}]"));
    }
}
