//! Reading an Open Loom document without holding what Pinloom never reads.
//!
//! A JSON value costs far more in memory than in the file: a number written in two bytes is a
//! 32-byte value, and the smallest object a map of several hundred bytes. Parsed whole, a 50 MB
//! file of numbers in a message's `meta` took 1.7 GB. So a document is read in two steps:
//!
//! - Its skeleton (the document, its trees' headers and Pinloom's extension) is built as values;
//!   each message, each edge and each list of Pinloom's records stays a slice of the file's text
//!   (a raw value, stood for by a placeholder string) until the importer reads it, one at a time.
//! - Wherever Pinloom only keeps what it does not read (another app's extension, a message's
//!   other `meta`, an unknown field), the slice is never read at all: the placeholder is kept,
//!   and [`Skim::expand`] puts the file's own text back where a kept value is written out.
//!
//! What is read is paid for: each read (the skeleton, one message) may build values that cost
//! at most [`COST_PER_BYTE`] times its text plus a small allowance, estimated from serde_json's
//! layout as they are built; a document that asks for more is refused, as is a text over the
//! import's limit.

use std::cell::Cell;
use std::hash::{BuildHasher, Hasher};

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::PINLOOM;

/// What a read may build, in estimated bytes per byte of the text it reads.
pub(super) const COST_PER_BYTE: u64 = 4;
/// What any read may build beyond that: a message's few maps cost more than its text.
const ALLOWANCE: u64 = 1 << 20;
/// The longest text an import takes: far more than any message (a whole book is about 1 MiB),
/// and what the window can still show.
pub(super) const MAX_IMPORT_TEXT_BYTES: usize = 16 << 20;

// serde_json's layout, as the estimate counts it: every value is `size_of::<Value>()`; a string
// adds its bytes; a map entry its key and a slot; a map at least one node of a B-tree.
const VALUE_BYTES: u64 = std::mem::size_of::<Value>() as u64;
const ENTRY_BYTES: u64 = 48;
const MAP_BYTES: u64 = 560;

/// Where a value sits in an Open Loom document, which decides what of it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    Document,
    Trees,
    Tree,
    TreeExtensions,
    TreePinloom,
    Nodes,
    Edges,
    Node,
    Content,
    Block,
    Generation,
    Meta,
    Edge,
    /// `extensions` of the document, a message or an edge: Pinloom's is read.
    Extensions,
    /// Everything is read.
    Any,
}

/// What becomes of one member or element.
enum Member {
    Read(Shape),
    /// Left as a slice of the text.
    Raw,
}

impl Shape {
    /// What becomes of the member `key` of an object in this place. Only what the importer
    /// reads is read; everything else it keeps or ignores unread.
    fn member(self, key: &str) -> Member {
        use Member::{Raw, Read};
        use Shape::*;
        match (self, key) {
            (Any, _) => Read(Any),
            (Document, "trees") => Read(Trees),
            (Document, "extensions") => Read(Extensions),
            (Document, "format" | "version" | "exportedAt" | "generator") => Read(Any),
            (Tree, "nodes") => Read(Nodes),
            (Tree, "edges") => Read(Edges),
            (Tree, "extensions") => Read(TreeExtensions),
            (
                Tree,
                "id" | "title" | "createdAt" | "updatedAt" | "rootNodeIds" | "currentNodeId"
                | "mode" | "systemContext",
            ) => Read(Any),
            (TreeExtensions, PINLOOM) => Read(TreePinloom),
            // The record lists are read one record at a time ([`Skim::records`]).
            (TreePinloom, "threads" | "summaries" | "attachments") => Raw,
            (TreePinloom, _) => Read(Any),
            (Extensions, PINLOOM) => Read(Any),
            (Node, "content") => Read(Content),
            (Node, "generation") => Read(Generation),
            (Node, "meta") => Read(Meta),
            (Node, "extensions") => Read(Extensions),
            (Node, "author" | "id" | "createdAt" | "editedFrom") => Read(Any),
            (Block, "type" | "text" | "altText" | "transcript") => Read(Any),
            (Generation, "model" | "usage") => Read(Any),
            (Meta, "bookmarked" | "excluded" | "pruned") => Read(Any),
            (Edge, "extensions") => Read(Extensions),
            (Edge, "id" | "type" | "sources" | "targetNodeId" | "createdAt") => Read(Any),
            _ => Raw,
        }
    }

    /// What becomes of an element of an array in this place.
    fn element(self) -> Member {
        match self {
            Shape::Trees => Member::Read(Shape::Tree),
            Shape::Content => Member::Read(Shape::Block),
            Shape::Edges => Member::Raw,
            _ => Member::Read(Shape::Any),
        }
    }
}

/// Why a read stopped, in words for the import's refusal (the caller says where).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refusal {
    /// Not JSON, or not the JSON the place needs.
    Syntax(String),
    /// A text over [`MAX_IMPORT_TEXT_BYTES`].
    Text(usize),
    /// Values that would cost more than the read may build.
    Cost { text: usize, budget: u64 },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Syntax(error) => write!(f, "is not valid JSON: {error}"),
            Refusal::Text(bytes) => write!(
                f,
                "holds a text of {:.1} MiB; Pinloom imports texts up to {} MiB: shorten it or \
                 leave it out",
                *bytes as f64 / f64::from(1 << 20),
                MAX_IMPORT_TEXT_BYTES >> 20
            ),
            Refusal::Cost { text, budget } => write!(
                f,
                "holds so many small values that reading its {:.1} MiB would take more than {} \
                 MiB of memory (Pinloom reads a part of a file into at most {COST_PER_BYTE} times \
                 its size, and 1 MiB more): remove what no loom tool writes, such as long lists \
                 of numbers",
                *text as f64 / f64::from(1 << 20),
                budget.div_ceil(1 << 20)
            ),
        }
    }
}

/// A document's text, and the slices of it that stand in its values unread.
pub(super) struct Skim {
    text: String,
    /// What a placeholder starts with: a control character and a number no file can guess, so
    /// no string of the file is taken for one.
    tag: String,
    raws: std::cell::RefCell<Vec<(usize, usize)>>,
}

impl Skim {
    pub(super) fn new(text: String) -> Skim {
        let nonce = std::collections::hash_map::RandomState::new().build_hasher().finish();
        Skim { text, tag: format!("\u{0}pinloom-raw-{nonce:016x}-"), raws: Default::default() }
    }

    /// The document's text.
    pub(super) fn text(&self) -> &str {
        &self.text
    }

    /// The document's skeleton: values where Pinloom reads, placeholders elsewhere.
    pub(super) fn document(&self) -> Result<Value, Refusal> {
        self.parse(&self.text, Shape::Document)
    }

    /// The value a placeholder stands for, read in `shape`; anything else as it is.
    pub(super) fn read(&self, value: &Value, shape: Shape) -> Result<Value, Refusal> {
        match self.raw_of(value) {
            Some(raw) => self.parse(raw, shape),
            None => Ok(value.clone()),
        }
    }

    /// The records of a list in Pinloom's extension (always left raw by the skeleton), each read
    /// alone: a missing list or one that is not a list reads as none, and a record that is not an
    /// object reads as empty (serde would read a list as the record's fields in order). Each
    /// record reads what it can (`Lenient`).
    pub(super) fn records<T: serde::de::DeserializeOwned + Default>(
        &self,
        list: Option<&Value>,
    ) -> Result<Vec<T>, Refusal> {
        let Some(items) = self.items(list) else { return Ok(Vec::new()) };
        items.into_iter().map(|item| Ok(record(&self.parse(item.get(), Shape::Any)?))).collect()
    }

    /// How many items a list of Pinloom's extension holds, without reading them.
    pub(super) fn count(&self, list: Option<&Value>) -> usize {
        self.items(list).map_or(0, |items| items.len())
    }

    /// The items of a raw list, unread; `None` when it is missing or not a list.
    fn items(&self, list: Option<&Value>) -> Option<Vec<&RawValue>> {
        serde_json::from_str(self.raw_of(list?)?).ok()
    }

    /// JSON text with every placeholder in it replaced by the file's text it stands for.
    pub(super) fn expand(&self, json: String) -> String {
        // serde_json writes the control character as \u0000.
        let escaped = format!("\"\\u0000{}", &self.tag[1..]);
        if !json.contains(&escaped) {
            return json;
        }
        let raws = self.raws.borrow();
        let mut out = String::with_capacity(json.len());
        let mut rest = json.as_str();
        while let Some(at) = rest.find(&escaped) {
            out.push_str(&rest[..at]);
            let after = &rest[at + escaped.len()..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            let slice = after[..digits]
                .parse::<usize>()
                .ok()
                .filter(|_| after[digits..].starts_with('"'))
                .and_then(|index| raws.get(index));
            match slice {
                Some(&(start, end)) => {
                    out.push_str(&self.text[start..end]);
                    rest = &after[digits + 1..];
                }
                // Not one of ours after all: written as it was.
                None => {
                    out.push_str(&escaped);
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }

    /// The text a placeholder stands for.
    fn raw_of(&self, value: &Value) -> Option<&str> {
        let index = value.as_str()?.strip_prefix(&self.tag)?.parse::<usize>().ok()?;
        let (start, end) = *self.raws.borrow().get(index)?;
        Some(&self.text[start..end])
    }

    /// A placeholder for `raw`, a slice of the text.
    fn keep(&self, raw: &RawValue) -> Value {
        let start = raw.get().as_ptr() as usize - self.text.as_ptr() as usize;
        let mut raws = self.raws.borrow_mut();
        raws.push((start, start + raw.get().len()));
        Value::String(format!("{}{}", self.tag, raws.len() - 1))
    }

    /// Reads `text` (a slice of the document's text) in `shape`, within its budget.
    fn parse(&self, text: &str, shape: Shape) -> Result<Value, Refusal> {
        let reading = Reading {
            skim: self,
            spent: Cell::new(0),
            budget: text.len() as u64 * COST_PER_BYTE + ALLOWANCE,
            refusal: Cell::new(None),
        };
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let read = Seed { reading: &reading, shape }
            .deserialize(&mut deserializer)
            .and_then(|value| deserializer.end().map(|()| value));
        read.map_err(|error| {
            reading.refusal.take().unwrap_or_else(|| Refusal::Syntax(error.to_string()))
        })
    }
}

/// One record of Pinloom's extension; one that is not an object reads as empty.
pub(super) fn record<T: serde::de::DeserializeOwned + Default>(item: &Value) -> T {
    match item {
        Value::Object(_) => T::deserialize(item).unwrap_or_default(),
        _ => T::default(),
    }
}

/// One read in progress: what it has built so far, against its budget.
struct Reading<'s> {
    skim: &'s Skim,
    spent: Cell<u64>,
    budget: u64,
    refusal: Cell<Option<Refusal>>,
}

impl Reading<'_> {
    fn spend<E: de::Error>(&self, bytes: u64) -> Result<(), E> {
        let spent = self.spent.get() + bytes;
        self.spent.set(spent);
        if spent > self.budget {
            let text = ((self.budget - ALLOWANCE) / COST_PER_BYTE) as usize;
            return Err(self.refuse(Refusal::Cost { text, budget: self.budget }));
        }
        Ok(())
    }

    fn refuse<E: de::Error>(&self, refusal: Refusal) -> E {
        let error = E::custom(refusal.to_string());
        self.refusal.set(Some(refusal));
        error
    }

    fn string<E: de::Error>(&self, text: String) -> Result<Value, E> {
        if text.len() > MAX_IMPORT_TEXT_BYTES {
            return Err(self.refuse(Refusal::Text(text.len())));
        }
        self.spend(VALUE_BYTES + text.len() as u64)?;
        Ok(Value::String(text))
    }
}

/// Reads one value in a shape.
#[derive(Clone, Copy)]
struct Seed<'r, 's> {
    reading: &'r Reading<'s>,
    shape: Shape,
}

impl<'de> DeserializeSeed<'de> for Seed<'_, '_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_, '_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
        self.reading.spend(VALUE_BYTES)?;
        Ok(Value::Bool(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        self.reading.spend(VALUE_BYTES)?;
        Ok(Value::from(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        self.reading.spend(VALUE_BYTES)?;
        Ok(Value::from(value))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        self.reading.spend(VALUE_BYTES)?;
        Ok(Value::from(value))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.reading.spend(VALUE_BYTES)?;
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
        if value.len() > MAX_IMPORT_TEXT_BYTES {
            return Err(self.reading.refuse(Refusal::Text(value.len())));
        }
        self.reading.string(value.to_owned())
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Value, E> {
        self.reading.string(value)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.reading.spend(VALUE_BYTES)?;
        let mut items = Vec::new();
        loop {
            let item = match self.shape.element() {
                Member::Read(shape) => seq.next_element_seed(Seed { shape, ..self })?,
                Member::Raw => match seq.next_element::<&'de RawValue>()? {
                    Some(raw) => Some(self.placeholder(raw)?),
                    None => None,
                },
            };
            match item {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.reading.spend(VALUE_BYTES + MAP_BYTES)?;
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            self.reading.spend(ENTRY_BYTES + key.len() as u64)?;
            let value = match self.shape.member(&key) {
                Member::Read(shape) => map.next_value_seed(Seed { shape, ..self })?,
                Member::Raw => {
                    let raw = map.next_value::<&'de RawValue>()?;
                    self.placeholder(raw)?
                }
            };
            members.insert(key, value);
        }
        Ok(Value::Object(members))
    }
}

impl Seed<'_, '_> {
    fn placeholder<E: de::Error>(&self, raw: &RawValue) -> Result<Value, E> {
        let placeholder = self.reading.skim.keep(raw);
        let length = placeholder.as_str().map_or(0, str::len) as u64;
        self.reading.spend(VALUE_BYTES + length)?;
        Ok(placeholder)
    }
}

/// A skim of `text` and its skeleton, for tests.
#[cfg(test)]
fn skeleton_of(text: &str) -> (Skim, Value) {
    let skim = Skim::new(text.to_owned());
    let value = skim.document().unwrap();
    (skim, value)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn what_is_not_read_stays_text_and_comes_back_whole() {
        let text = r#"{"format":"open-loom","agents":[{"id":"a","n":[1,2,3]}],
            "trees":[{"title":"T","nodes":{"n1":{"id":"n1","meta":{"bookmarked":true,"x":[1, 2]},
            "content":[{"type":"text","text":"hi"}]}},"edges":[{"targetNodeId":"n1","w":{}}]}]}"#;
        let (skim, document) = skeleton_of(text);
        assert_eq!(document["format"], "open-loom");
        assert!(skim.raw_of(&document["agents"]).is_some(), "{document}");
        let node = &document["trees"][0]["nodes"]["n1"];
        assert_eq!(skim.raw_of(node).map(|raw| raw.starts_with("{\"id\"")), Some(true));
        let node = skim.read(node, Shape::Node).unwrap();
        assert_eq!(node["meta"]["bookmarked"], true);
        assert_eq!(node["content"][0]["text"], "hi");
        // The unread part is written back as the file had it, spaces and all.
        let kept = skim.expand(json!({ "meta": node["meta"].clone() }).to_string());
        assert_eq!(kept, r#"{"meta":{"bookmarked":true,"x":[1, 2]}}"#);
        let edge = skim.read(&document["trees"][0]["edges"][0], Shape::Edge).unwrap();
        assert_eq!(edge["targetNodeId"], "n1");
        assert_eq!(skim.expand(edge["w"].to_string()), "{}");
    }

    #[test]
    fn a_string_of_the_file_is_never_taken_for_a_placeholder() {
        let (skim, _) = skeleton_of(r#"{"agents":[1]}"#);
        let forged = Value::String("\u{0}pinloom-raw-0000000000000000-0".into());
        assert_eq!(skim.raw_of(&forged), None);
        let written = json!({ "x": forged }).to_string();
        assert_eq!(skim.expand(written.clone()), written);
    }

    #[test]
    fn reading_dense_values_is_refused_by_its_cost() {
        let numbers = vec!["1"; 1 << 20].join(",");
        let text = format!(r#"{{"format":"open-loom","trees":[{{"title":[{numbers}]}}]}}"#);
        let skim = Skim::new(text);
        match skim.document() {
            Err(Refusal::Cost { .. }) => {}
            other => panic!("read where it should be refused: {other:?}"),
        }
        // Left unread, the same numbers cost nothing.
        let text = format!(r#"{{"format":"open-loom","trees":[{{"x":[{numbers}]}}]}}"#);
        assert!(Skim::new(text).document().is_ok());
    }
}
