//! What the families' request bodies share: a message's text joined, its images, the wire's
//! role names, turns of the same wire role merged, a tool call's arguments as JSON, tools in each
//! family's shape, and an image's size as the rules read it.
//!
//! The wire shapes borrow the request's text. Fields are declared in alphabetical order so the
//! JSON written straight from them has its keys in the same order as a `serde_json::Value` map
//! (sorted), whichever of `request_body` and `wire_body` made it.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::plan::Role;
use crate::snapshot::{Part, ToolDefinition};

pub(super) fn arguments_value(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => Value::Object(Map::new()),
    }
}

/// One turn of the families whose turns hold a list (Anthropic's content blocks, Gemini's
/// parts); `role` is the wire role.
#[derive(Serialize)]
pub(super) struct Turn<B> {
    pub(super) content: Vec<B>,
    pub(super) role: &'static str,
}

/// The text parts of a message, joined by blank lines; borrowed when there is only one.
pub(super) fn joined_text(parts: &[Part]) -> Cow<'_, str> {
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

/// An image part's media type and base64 data.
pub(super) fn image_data(part: &Part) -> Option<(&str, &str)> {
    match part {
        Part::Image { media_type, data } => Some((media_type, data)),
        _ => None,
    }
}

pub(super) fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// Pushes a turn, merging it into the previous one when the wire role is the same (Anthropic
/// and Gemini carry tool results in user turns, which then meet the next user text).
pub(super) fn push_merged<B>(out: &mut Vec<Turn<B>>, role: &'static str, blocks: Vec<B>) {
    if let Some(last) = out.last_mut()
        && last.role == role
    {
        last.content.extend(blocks);
        return;
    }
    out.push(Turn { content: blocks, role });
}

/// The tools `indexes` picks out of `definitions`, each in the family's `shape` (given its name,
/// its description and its parameters' schema).
pub(super) fn tool_values(
    definitions: &[ToolDefinition],
    indexes: &[usize],
    shape: impl Fn(&str, &str, Value) -> Value,
) -> Vec<Value> {
    indexes
        .iter()
        .filter_map(|&i| definitions.get(i))
        .map(|tool| shape(&tool.name, &tool.description, arguments_value(&tool.parameters)))
        .collect()
}

/// An image's size in pixels as the rules read it (a side of 0 is taken as 1).
pub(super) fn pixels(width: u32, height: u32) -> (f64, f64) {
    (f64::from(width.max(1)), f64::from(height.max(1)))
}

/// A rule's result as a count of tokens.
pub(super) fn to_tokens(value: f64) -> u32 {
    // The rules stay far below u32::MAX for any size a u32 can name.
    value.clamp(0.0, f64::from(u32::MAX)) as u32
}
