//! Open WebUI's chat export (its chats exported as JSON): an array of chats, each holding
//! `chat.history.messages`, a map of messages that name their `parentId` and `childrenIds` (a
//! regeneration or an edit is a sibling), and `currentId`, the message it showed. A message's
//! `content` is its text, an answer names its `model`, and an image sent with a question is a
//! `data:` URL among its `files` (kept as an attachment of that message, checked as any image).

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::branching::{
    Header, Mapped, conversation_tree, is_global_id, json_array_naming, seconds_iso,
};
use super::open_loom_import::Notes;

/// Whether the start of a file is Open WebUI's chat export: an array of chats with their history
/// of messages naming their children.
pub(super) fn looks_like_chats(head: &[u8]) -> bool {
    json_array_naming(head, &["history", "childrenIds"])
}

/// The Open Loom tree of `chat` (the `index`th of the export); `None` when it holds no message
/// to show (said in `notes`).
pub(super) fn tree_of(chat: &Value, index: usize, notes: &mut Notes) -> Option<Mapped> {
    let inner = chat.get("chat").filter(|inner| inner.is_object()).unwrap_or(chat);
    let title = [chat.get("title"), inner.get("title")]
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::trim)
        .find(|title| !title.is_empty())
        .map_or_else(|| format!("Open WebUI chat {}", index + 1), str::to_owned);
    let history = inner.get("history");
    let Some(messages) = history.and_then(|h| h.get("messages")).and_then(Value::as_object) else {
        notes.add(format!("chat {title:?} has no history of messages and was left out"));
        return None;
    };
    let mut mapping = Map::new();
    let mut kept: HashMap<&str, Value> = HashMap::new();
    let mut attachments = Vec::new();
    let mut system_context = Vec::new();
    for (key, message) in messages {
        let parent = message.get("parentId").and_then(Value::as_str);
        let children = message.get("childrenIds").cloned().filter(Value::is_array);
        mapping.insert(
            key.clone(),
            json!({ "parent": parent, "children": children.unwrap_or_else(|| json!([])) }),
        );
        let text = message.get("content").and_then(Value::as_str).unwrap_or("");
        let role = message.get("role").and_then(Value::as_str).unwrap_or("user");
        if role == "system" {
            if !text.trim().is_empty() {
                system_context.push(text.to_owned());
            }
            continue;
        }
        let images = images_of(message, key, notes);
        if text.trim().is_empty() && images.is_empty() {
            notes.add("empty messages were left out");
            continue;
        }
        attachments.extend(images);
        kept.insert(key.as_str(), node_of(key, message, role, text));
    }
    // The keys the branches borrow are the mapping's own.
    let kept: HashMap<&str, Value> = kept
        .into_iter()
        .filter_map(|(key, node)| Some((mapping.get_key_value(key)?.0.as_str(), node)))
        .collect();
    let id = chat.get("id").and_then(Value::as_str).unwrap_or("");
    let time = |field: &str| {
        [chat.get(field), inner.get("timestamp").filter(|_| field == "created_at")]
            .into_iter()
            .flatten()
            .find_map(Value::as_f64)
            .and_then(seconds_iso)
    };
    let header = Header {
        id: if is_global_id(id) { id.to_owned() } else { format!("open-webui-{}", index + 1) },
        title,
        attachments,
        system_context: (!system_context.is_empty()).then(|| system_context.join("\n\n")),
        created_at: time("created_at"),
        updated_at: time("updated_at"),
    };
    let current = history.and_then(|h| h.get("currentId")).and_then(Value::as_str);
    conversation_tree(&mapping, kept, current, header, notes)
}

/// A message as an Open Loom node.
fn node_of(key: &str, message: &Value, role: &str, text: &str) -> Value {
    let author = if role == "assistant" { "model" } else { "human" };
    let mut node = json!({
        "id": key,
        "content": [{ "type": "text", "text": text }],
        "author": { "role": author },
    });
    // Open WebUI writes seconds, or milliseconds in some versions.
    let at = message
        .get("timestamp")
        .and_then(Value::as_f64)
        .map(|t| if t > 1e11 { t / 1e3 } else { t });
    if let Some(at) = at.and_then(seconds_iso) {
        node["createdAt"] = json!(at);
    }
    if author == "model"
        && let Some(model) = message.get("model").and_then(Value::as_str)
    {
        node["generation"] = json!({ "model": model });
    }
    if is_global_id(key) {
        node["extensions"] = json!({ "pinloom": { "globalId": key } });
    }
    node
}

/// The images a message carries as `data:` URLs, as attachments of it; a file it names without
/// its content is said in `notes`.
fn images_of(message: &Value, key: &str, notes: &mut Notes) -> Vec<Value> {
    let mut images = Vec::new();
    for (at, file) in
        message.get("files").and_then(Value::as_array).into_iter().flatten().enumerate()
    {
        match file.get("url").and_then(Value::as_str).filter(|url| url.starts_with("data:image/")) {
            Some(url) => images.push(json!({
                "scope": "node", "node": key, "role": "image",
                "name": format!("image {}", at + 1), "content": url,
            })),
            None => notes.add("files Open WebUI names without their content were left out"),
        }
    }
    images
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_export_is_recognised_by_its_content() {
        assert!(looks_like_chats(br#"[{"id": "a", "chat": {"history": {"messages": {"m": {"childrenIds": []}}, "currentId": "m"}}}]"#));
        assert!(!looks_like_chats(br#"[{"uuid": "a", "chat_messages": []}]"#));
    }
}
