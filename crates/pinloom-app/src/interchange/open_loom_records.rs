//! Open Loom v2 as Pinloom reads and writes it, described once: the records of Pinloom's own
//! extension (threads, summaries, attachments, model profiles, a message's own data) and of the
//! document's edges, each one type that the import deserializes and the export serializes.
//!
//! Reading is lenient the same way everywhere: a field that holds something other than it should
//! reads as absent ([`Lenient`]), a record that is not an object reads as empty, and a list that
//! is not a list reads as none ([`Records`]), so one damaged field costs that field and not the
//! document. Writing leaves absent fields out. A field present as `null` stays present where the
//! importer tells it from a missing one (an edge's `createdAt`, `extensions`, `type`, a source's
//! `role`), since what it keeps is written back as it came.
//!
//! Exports go through `serde_json::Value` objects for these records, whose keys are sorted, so the
//! order of fields here never changes a document's bytes.

use std::borrow::Cow;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::skim::record;

/// The extension namespace Pinloom writes its own data under.
pub(in crate::interchange) const PINLOOM: &str = "pinloom";

/// A field that reads as absent when it holds something other than it should.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Lenient<T>(pub(super) Option<T>);

impl<T> Lenient<T> {
    /// A field to write.
    pub(super) fn of(value: T) -> Lenient<T> {
        Lenient(Some(value))
    }

    /// Whether the field is left out when written.
    pub(super) fn is_absent(&self) -> bool {
        self.0.is_none()
    }
}

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Lenient(None)
    }
}

impl<T> From<Option<T>> for Lenient<T> {
    fn from(value: Option<T>) -> Lenient<T> {
        Lenient(value)
    }
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(Lenient(T::deserialize(value).ok()))
    }
}

impl<T: Serialize> Serialize for Lenient<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// A list of records, each read alone: a list that is not a list reads as none, and an item that
/// is not an object reads as an empty record (serde would read a list as the record's fields in
/// order).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Records<T>(pub(super) Vec<T>);

impl<T> Records<T> {
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<T> Default for Records<T> {
    fn default() -> Self {
        Records(Vec::new())
    }
}

impl<'de, T: serde::de::DeserializeOwned + Default> Deserialize<'de> for Records<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Records(match Value::deserialize(deserializer)? {
            Value::Array(items) => items.iter().map(record).collect(),
            _ => Vec::new(),
        }))
    }
}

impl<T: Serialize> Serialize for Records<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// A thread (pin) as Pinloom's extension holds it.
#[derive(Deserialize, Serialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct ThreadRecord {
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) id: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) parent: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) anchor_node: Lenient<String>,
    /// Read as a value first: an anchor must be an object (see [`record`]).
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) anchor: Lenient<Value>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) title: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) slug: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) closed_at: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) result: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) created_at: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) deleted_at: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) order: Lenient<u64>,
}

/// A pin's highlighted passage; all three fields or no anchor.
#[derive(Deserialize, Serialize)]
pub(super) struct AnchorRecord {
    pub(super) start: u32,
    pub(super) end: u32,
    pub(super) text: String,
}

/// An ancestor-thread summary as Pinloom's extension holds it, with the log of its writes and
/// its fitted versions (one per budget), which mean nothing without it.
#[derive(Deserialize, Serialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct SummaryRecord {
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) thread: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) up_to: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) budget: Lenient<u32>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) summarizer: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) written_by: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) chosen: Lenient<bool>,
    #[serde(flatten)]
    pub(super) written: WrittenText,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) updated_at: Lenient<String>,
    pub(super) log: Records<SummaryWriteRecord>,
    #[serde(skip_serializing_if = "Records::is_empty")]
    pub(super) fitted: Records<SummaryRecord>,
}

/// One write in a summary's log.
#[derive(Deserialize, Serialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct SummaryWriteRecord {
    #[serde(flatten)]
    pub(super) written: WrittenText,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) written_at: Lenient<String>,
}

/// What a summary and each write in its log hold: the text, and what it summarised.
#[derive(Deserialize, Serialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct WrittenText {
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) text: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) input_chars: Lenient<u64>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) input_tokens: Lenient<u64>,
}

/// An attachment as Pinloom's extension holds it.
#[derive(Deserialize, Serialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct AttachmentRecord {
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) scope: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) thread: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) node: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) role: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) name: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) content: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) created_at: Lenient<String>,
}

/// A model profile as the document's `pinloom` extension holds it (`modelProfiles`).
#[derive(Deserialize, Serialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct ProfileRecord {
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) name: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) provider: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) model_id: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) base_url: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) context_window: Lenient<u32>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) reserve: Lenient<u32>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) native_system: Lenient<bool>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) completion_endpoint: Lenient<bool>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) tokenizer: Lenient<String>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) agent_system_prompt: Lenient<String>,
    /// Any JSON: stored as its text.
    #[serde(deserialize_with = "present_value", skip_serializing_if = "Option::is_none")]
    pub(super) sampling: Option<Value>,
    /// Any JSON: stored as its text.
    #[serde(deserialize_with = "present_value", skip_serializing_if = "Option::is_none")]
    pub(super) settings: Option<Value>,
    /// Read only when an object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) prices: Option<Value>,
}

/// The document's own `pinloom` extension.
#[derive(Deserialize, Serialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct DocumentExtension {
    pub(super) model_profiles: Records<ProfileRecord>,
}

/// A message's own data in Pinloom's extension: what Open Loom's fields do not say.
#[derive(Deserialize, Serialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct NodeExtension {
    /// `"tool"` for a tool's result (Open Loom's author is then the system).
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) author: Lenient<String>,
    /// Any JSON: stored as its text.
    #[serde(deserialize_with = "present_value", skip_serializing_if = "Option::is_none")]
    pub(super) generation_settings: Option<Value>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) incomplete: Lenient<bool>,
    /// Kept in every context the message is on the path of.
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) kept: Lenient<bool>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) model: Lenient<String>,
    /// The exact parts (tool calls and results), when the content's text blocks are not all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) parts: Option<Value>,
    /// For a question over picked messages: `[{"node": id, "withSummary": bool}]`, in the order
    /// picked; read through the untrusted-input rules (messages of the same tree, each once).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) picked: Option<Value>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) pruned_at: Lenient<String>,
    /// Read only when an object, and then through the untrusted-input rules.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) receipt: Option<Value>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) thread: Lenient<String>,
    /// Its global id: the same on every machine that syncs it, kept by an import where free.
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) global_id: Lenient<String>,
    /// Any JSON: stored as its text.
    #[serde(deserialize_with = "present_value", skip_serializing_if = "Option::is_none")]
    pub(super) usage: Option<Value>,
}

impl NodeExtension {
    /// Whether there is nothing to write.
    pub(super) fn is_empty(&self) -> bool {
        self.author.is_absent()
            && self.generation_settings.is_none()
            && self.incomplete.is_absent()
            && self.kept.is_absent()
            && self.model.is_absent()
            && self.parts.is_none()
            && self.picked.is_none()
            && self.pruned_at.is_absent()
            && self.receipt.is_none()
            && self.thread.is_absent()
            && self.global_id.is_absent()
            && self.usage.is_none()
    }
}

/// An edge between messages: `type` is Open Loom's (continuation, annotation, or another the
/// document's writer knows), its sources name nodes by the document's ids.
#[derive(Deserialize, Serialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct EdgeRecord<'a> {
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub(super) created_at: Option<Cow<'a, Value>>,
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub(super) extensions: Option<Cow<'a, Value>>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) id: Lenient<String>,
    pub(super) sources: SourceList<'a>,
    #[serde(skip_serializing_if = "Lenient::is_absent")]
    pub(super) target_node_id: Lenient<Cow<'a, str>>,
    #[serde(
        rename = "type",
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) kind: Option<Cow<'a, Value>>,
}

/// One source of an edge.
#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SourceRecord<'a> {
    pub(super) node_id: Cow<'a, str>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub(super) role: Option<Cow<'a, Value>>,
}

/// A field that is there, `null` included (serde reads a `null` option as absent).
fn present_value<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// [`present_value`], as the `Cow` a borrowed export writes.
fn present<'de, 'a, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Cow<'a, Value>>, D::Error> {
    Ok(present_value(deserializer)?.map(Cow::Owned))
}

/// An edge's sources: one that does not name a node by a string is dropped; a list that is not a
/// list reads as none.
#[derive(Default)]
pub(super) struct SourceList<'a>(pub(super) Vec<SourceRecord<'a>>);

impl<'de> Deserialize<'de> for SourceList<'_> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(SourceList(match Value::deserialize(deserializer)? {
            // An item that is not an object names no node (serde would read a list as fields).
            Value::Array(items) => items
                .into_iter()
                .filter(Value::is_object)
                .filter_map(|item| SourceRecord::deserialize(item).ok())
                .collect(),
            _ => Vec::new(),
        }))
    }
}

impl Serialize for SourceList<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}
