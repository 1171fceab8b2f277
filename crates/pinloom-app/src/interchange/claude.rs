//! Claude's data export (claude.ai): `conversations.json`, alone or in its zip with
//! `projects.json`. Each conversation lists its `chat_messages`; a message names its
//! `parent_message_uuid` where the export has it (an edit or a retry is then a sibling), and
//! follows the one before it where it does not. A message's text is its `text` blocks (its
//! `thinking` and tool blocks are left out and counted); the text extracted from a file it
//! carried is an attachment of that message; the instructions of the project a conversation
//! belongs to are its tree's system context.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::branching::{Header, Mapped, conversation_tree, is_global_id, json_array_naming};
use super::open_loom_import::Notes;

/// The parent Claude names for a conversation's first message: none.
const ROOT_PARENT: &str = "00000000-0000-4000-8000-000000000000";

/// Whether the start of a file is Claude's `conversations.json`: an array of conversations with
/// their `chat_messages`.
pub(super) fn looks_like_conversations(head: &[u8]) -> bool {
    json_array_naming(head, &["chat_messages", "uuid"])
}

/// The instructions of each project, by its id, from `projects.json`.
pub(super) fn project_instructions(projects: &Value) -> HashMap<String, String> {
    projects
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|project| {
            let id = project.get("uuid")?.as_str()?;
            let prompt = project.get("prompt_template")?.as_str()?.trim();
            (!prompt.is_empty()).then(|| (id.to_owned(), prompt.to_owned()))
        })
        .collect()
}

/// The Open Loom tree of `conversation` (the `index`th of the export); `None` when it holds no
/// message to show (said in `notes`).
pub(super) fn tree_of(
    conversation: &Value,
    index: usize,
    projects: &HashMap<String, String>,
    notes: &mut Notes,
) -> Option<Mapped> {
    let name = conversation.get("name").and_then(Value::as_str).unwrap_or("").trim();
    let title = if name.is_empty() {
        format!("Claude conversation {}", index + 1)
    } else {
        name.to_owned()
    };
    let id = conversation.get("uuid").and_then(Value::as_str).unwrap_or("");
    let messages = conversation.get("chat_messages").and_then(Value::as_array);
    let messages: Vec<&Value> = messages.into_iter().flatten().filter(|m| m.is_object()).collect();

    // Put in the shape the branches are laid out from: each message's parent and children.
    let mut mapping = Map::new();
    let mut kept: HashMap<String, Value> = HashMap::new();
    let mut attachments = Vec::new();
    let mut previous: Option<String> = None;
    for (at, message) in messages.iter().enumerate() {
        let key = message
            .get("uuid")
            .and_then(Value::as_str)
            .filter(|key| !key.is_empty() && !mapping.contains_key(*key))
            .map_or_else(|| format!("claude-{}", at + 1), str::to_owned);
        let parent = match message.get("parent_message_uuid").and_then(Value::as_str) {
            Some(ROOT_PARENT) => None,
            Some(parent) => Some(parent.to_owned()),
            None => previous.clone(),
        };
        mapping.insert(key.clone(), json!({ "parent": parent, "children": [] }));
        if let Some((node, files)) = message_node(&key, message, notes) {
            for (file_name, text) in files {
                attachments.push(json!({
                    "scope": "node", "node": key, "role": "file",
                    "name": file_name, "content": text,
                }));
            }
            kept.insert(key.clone(), node);
        }
        previous = Some(key);
    }
    let keys: Vec<String> = mapping.keys().cloned().collect();
    for key in keys {
        let parent = mapping[&key]["parent"].as_str().map(str::to_owned);
        if let Some(children) = parent.and_then(|parent| mapping.get_mut(&parent))
            && let Some(list) = children["children"].as_array_mut()
        {
            list.push(json!(key));
        }
    }
    // Children in the order the export lists the messages.
    let order: HashMap<String, usize> = messages
        .iter()
        .enumerate()
        .filter_map(|(at, m)| Some((m.get("uuid")?.as_str()?.to_owned(), at)))
        .collect();
    for node in mapping.values_mut() {
        if let Some(list) = node["children"].as_array_mut() {
            list.sort_by_key(|child| {
                child.as_str().and_then(|c| order.get(c)).copied().unwrap_or(usize::MAX)
            });
        }
    }
    // Keyed by the mapping's own keys, which the branches borrow.
    let mut borrowed: HashMap<&str, Value> = HashMap::new();
    for (key, node) in kept {
        if let Some((key, _)) = mapping.get_key_value(&key) {
            borrowed.insert(key.as_str(), node);
        }
    }
    let current = conversation
        .get("current_leaf_message_uuid")
        .and_then(Value::as_str)
        .or_else(|| messages.last().and_then(|m| m.get("uuid")).and_then(Value::as_str));
    let project = conversation
        .get("project_uuid")
        .or_else(|| conversation.get("project").and_then(|p| p.get("uuid")))
        .and_then(Value::as_str);
    let time = |field: &str| conversation.get(field).and_then(Value::as_str).map(str::to_owned);
    let header = Header {
        id: if id.is_empty() { format!("claude-{}", index + 1) } else { id.to_owned() },
        title,
        attachments,
        system_context: project.and_then(|project| projects.get(project)).cloned(),
        created_at: time("created_at"),
        updated_at: time("updated_at"),
    };
    conversation_tree(&mapping, borrowed, current, header, notes)
}

/// A message as an Open Loom node, with the text extracted from the files it carried (name,
/// text); `None` when it shows nothing.
fn message_node(
    key: &str,
    message: &Value,
    notes: &mut Notes,
) -> Option<(Value, Vec<(String, String)>)> {
    let mut text = Vec::new();
    for block in message.get("content").and_then(Value::as_array).into_iter().flatten() {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(said) =
                    block.get("text").and_then(Value::as_str).filter(|t| !t.is_empty())
                {
                    text.push(said.to_owned());
                }
            }
            Some("thinking") => {
                notes.add("Claude's thinking (shown folded in claude.ai) was left out")
            }
            Some("tool_use" | "tool_result") => {
                notes.add("tool calls and their results inside Claude's replies were left out")
            }
            _ => notes.add("parts of messages Pinloom does not read were left out"),
        }
    }
    if text.is_empty()
        && let Some(said) =
            message.get("text").and_then(Value::as_str).filter(|t| !t.trim().is_empty())
    {
        text.push(said.to_owned());
    }
    let mut files = Vec::new();
    for attachment in message.get("attachments").and_then(Value::as_array).into_iter().flatten() {
        let name = attachment.get("file_name").and_then(Value::as_str).unwrap_or("attachment");
        match attachment.get("extracted_content").and_then(Value::as_str).filter(|t| !t.is_empty())
        {
            Some(content) => files.push((name.to_owned(), content.to_owned())),
            None => notes.add("files whose text the export does not hold were left out"),
        }
    }
    let carried = message.get("files").and_then(Value::as_array).map_or(0, Vec::len);
    if carried > files.len() {
        notes.add("images and files the export names without their content were left out");
    }
    let text = text.join("\n\n");
    if text.trim().is_empty() && files.is_empty() {
        notes.add("empty messages were left out");
        return None;
    }
    let role = match message.get("sender").and_then(Value::as_str) {
        Some("assistant") => "model",
        _ => "human",
    };
    let mut node = json!({
        "id": key,
        "content": [{ "type": "text", "text": text }],
        "author": { "role": role },
    });
    if let Some(at) = message.get("created_at").and_then(Value::as_str) {
        node["createdAt"] = json!(at);
    }
    if is_global_id(key) {
        node["extensions"] = json!({ "pinloom": { "globalId": key } });
    }
    Some((node, files))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_export_is_recognised_by_its_content() {
        assert!(looks_like_conversations(
            b"[{\"uuid\": \"a\", \"name\": \"R\", \"chat_messages\": []}]"
        ));
        assert!(!looks_like_conversations(
            b"[{\"title\": \"R\", \"mapping\": {}, \"current_node\": null}]"
        ));
    }
}
