//! Simon Willison's `llm` keeps its conversations in `logs.db` (read by the store, which alone
//! knows SQL): each conversation is a tree, each response a question and its reply, with the
//! model, the options it was asked with (`-o`) and the tokens `llm` counted; the system prompt of
//! its first response is the tree's system context (one that changes later is said in the report).
//! Its ids are ULIDs, 128 bits each, written here as a UUID's digits so that a conversation keeps
//! one global id and a second import passes over what the first brought.

use pinloom_store::LlmConversation;
use serde_json::{Map, Value, json};

use super::branching::{Header, Mapped, conversation_tree};
use super::open_loom_import::Notes;

/// The Open Loom tree of `conversation` (the `index`th of the log); `None` when it holds no
/// message to show (said in `notes`).
pub(super) fn tree_of(
    conversation: &LlmConversation,
    index: usize,
    notes: &mut Notes,
) -> Option<Mapped> {
    let title = conversation
        .name
        .as_deref()
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map_or_else(|| format!("llm conversation {}", index + 1), str::to_owned);
    let mut mapping = Map::new();
    let mut kept = Vec::new();
    let mut previous: Option<String> = None;
    let mut system: Option<&str> = None;
    for response in &conversation.responses {
        let key = uuid_of(&response.id).unwrap_or_else(|| format!("llm-{}", response.id));
        let asked = prompt_uuid_of(&response.id).unwrap_or_else(|| format!("{key}-prompt"));
        let at =
            response.datetime_utc.as_deref().map(|at| format!("{}Z", at.trim_end_matches('Z')));
        match (system, response.system.as_deref().filter(|s| !s.trim().is_empty())) {
            (None, Some(said)) => system = Some(said),
            (Some(first), Some(said)) if first != said => notes.add(
                "a system prompt that changed within an llm conversation is kept as its first",
            ),
            _ => {}
        }
        let mut pair = Vec::new();
        if let Some(prompt) = response.prompt.as_deref().filter(|p| !p.trim().is_empty()) {
            let mut node = json!({
                "id": asked, "content": [{ "type": "text", "text": prompt }], "author": { "role": "human" },
            });
            if prompt_uuid_of(&response.id).is_some() {
                node["extensions"] = json!({ "pinloom": { "globalId": asked } });
            }
            pair.push((asked.clone(), node));
        }
        if let Some(reply) = response.response.as_deref().filter(|r| !r.trim().is_empty()) {
            let mut generation = json!({});
            if let Some(model) = &response.model {
                generation["model"] = json!(model);
            }
            if let Some(options) = response
                .options_json
                .as_deref()
                .and_then(|o| serde_json::from_str::<Value>(o).ok())
                .filter(|o| o.as_object().is_some_and(|o| !o.is_empty()))
            {
                generation["parameters"] = options;
            }
            if let (Some(input), Some(output)) = (response.input_tokens, response.output_tokens) {
                generation["usage"] = json!({ "promptTokens": input, "completionTokens": output, "totalTokens": input + output });
            }
            let mut node = json!({ "id": key, "content": [{ "type": "text", "text": reply }], "author": { "role": "model" }, "generation": generation });
            if uuid_of(&response.id).is_some() {
                node["extensions"] = json!({ "pinloom": { "globalId": key } });
            }
            pair.push((key.clone(), node));
        }
        if pair.is_empty() {
            notes.add("llm responses with neither a prompt nor a reply were left out");
        }
        for (id, mut node) in pair {
            if let Some(at) = &at {
                node["createdAt"] = json!(at);
            }
            mapping.insert(id.clone(), json!({ "parent": previous, "children": [] }));
            if let Some(parent) = previous.as_deref().and_then(|parent| mapping.get_mut(parent)) {
                parent["children"] = json!([id.clone()]);
            }
            kept.push((id.clone(), node));
            previous = Some(id);
        }
    }
    let kept = kept
        .into_iter()
        .filter_map(|(id, node)| Some((mapping.get_key_value(&id)?.0.as_str(), node)))
        .collect();
    let header = Header {
        id: uuid_of(&conversation.id).unwrap_or_else(|| format!("llm-{}", conversation.id)),
        title,
        attachments: Vec::new(),
        system_context: system.map(str::to_owned),
        created_at: None,
        updated_at: None,
    };
    conversation_tree(&mapping, kept, previous.as_deref(), header, notes)
}

/// A ULID's 128 bits written as a UUID's digits (lowercase, dashed), when `id` is a ULID.
fn uuid_of(id: &str) -> Option<String> {
    ulid_bits(id).map(uuid_digits)
}

/// The global id of the question of the response with ULID `id`: the response's with the top bit
/// of its random part flipped, so that the two never meet and neither meets a ULID `llm` wrote
/// next (those of one millisecond count up from the bottom).
fn prompt_uuid_of(id: &str) -> Option<String> {
    ulid_bits(id).map(|bits| uuid_digits(bits ^ (1 << 79)))
}

/// A ULID's 128 bits.
fn ulid_bits(id: &str) -> Option<u128> {
    const CROCKFORD: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    if id.len() != 26 {
        return None;
    }
    let mut bits: u128 = 0;
    for byte in id.bytes() {
        let digit = CROCKFORD.iter().position(|c| *c == byte.to_ascii_uppercase())?;
        bits = bits.checked_mul(32)?.checked_add(digit as u128)?;
    }
    Some(bits)
}

fn uuid_digits(bits: u128) -> String {
    let hex = format!("{bits:032x}");
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ulid_is_written_as_a_uuid_and_anything_else_is_not() {
        assert_eq!(
            uuid_of("01ARZ3NDEKTSV4RRFFQ69G5FAV").as_deref(),
            Some("01563e3a-b5d3-d676-4c61-efb99302bd5b")
        );
        assert_eq!(uuid_of("not a ulid"), None);
        assert_eq!(uuid_of("ZZZZZZZZZZZZZZZZZZZZZZZZZZ"), None, "more than 128 bits");
    }
}
