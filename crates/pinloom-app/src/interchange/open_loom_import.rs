//! An Open Loom v2 document as trees for the store to write in one transaction.
//!
//! The importer is lenient where the spec asks it to be (unknown fields, damaged graphs are
//! repaired and reported) and strict only where nothing sensible can be read: the document's
//! shape, its format and its major version. What Pinloom does not model (other apps'
//! extensions, provenance, media blocks, agents, tags) is kept as JSON to write back on export,
//! and every such thing, and everything repaired or dropped, is reported.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

use pinloom_providers::ProviderId;
use pinloom_providers::catalog::{self, TokenizerFamily};
use pinloom_store::{
    self as store, Anchor, AnnotationImport, AttachmentImport, AttachmentRole, Author, ImportScope,
    ImportedTree, NewTree, NodeImport, Part, PinImport, Preserved, Sharing, SummaryAuthor,
    SummaryImport, SummaryUpdate, TreeImport, TreeMode,
};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::open_loom_records::{
    AnchorRecord, AttachmentRecord, DocumentExtension, EdgeRecord, NodeExtension, ProfileRecord,
    SummaryRecord, ThreadRecord,
};
use super::skim::{Shape, Skim, record};
use super::{PINLOOM, parse_time};
use crate::base::engine_inputs::token_counts;
use crate::base::receipts::{ReceiptSource, receipt_references};
use crate::error::ApiError;

/// Everything an import writes, and what it says about it.
pub(super) struct ImportBatch {
    /// The document's text, which what the trees keep unread is written back from.
    pub(super) skim: Skim,
    pub(super) trees: Vec<TreeBatch>,
    pub(super) profiles: Vec<store::ModelProfile>,
    pub(super) notes: Notes,
}

/// One tree as read: what to write, and what it and its nodes keep for export. Messages are
/// named by import index until the store has given them ids.
pub(super) struct TreeBatch {
    pub(super) import: TreeImport,
    /// What the tree keeps of its own and its document's data.
    pub(super) preserved_tree: Value,
    /// What each message keeps.
    pub(super) preserved_nodes: Vec<Option<Value>>,
    pub(super) settings: Option<Value>,
    /// Each message's receipt.
    pub(super) receipts: Vec<Option<Value>>,
}

impl AsRef<TreeImport> for TreeBatch {
    fn as_ref(&self) -> &TreeImport {
        &self.import
    }
}

/// What the import report says, each different thing once with how often it happened.
#[derive(Debug, Default)]
pub(super) struct Notes {
    counted: BTreeMap<String, usize>,
    order: Vec<String>,
}

impl Notes {
    pub(super) fn add(&mut self, note: impl Into<String>) {
        let note = note.into();
        let count = self.counted.entry(note.clone()).or_insert(0);
        if *count == 0 {
            self.order.push(note);
        }
        *count += 1;
    }

    pub(super) fn into_lines(self) -> Vec<String> {
        self.order
            .into_iter()
            .map(|note| match self.counted.get(&note) {
                Some(&n) if n > 1 => format!("{note} ({n} times)"),
                _ => note,
            })
            .collect()
    }
}

fn refuse(path: &str, message: impl std::fmt::Display) -> anyhow::Error {
    ApiError::invalid_input(format!("{path}: {message}; nothing was imported")).into()
}

/// The most messages one import writes: ten times the largest trees people keep (a year of daily
/// hours of branching is about 100,000), and what a 512 MiB file of short messages holds.
const MAX_IMPORT_MESSAGES: usize = 1_000_000;

/// The most threads (pins) one import writes: far more than a person opens by hand (ThreadMind's
/// projects hold dozens), and few enough that a file of nothing but threads stays cheap.
const MAX_IMPORT_THREADS: usize = 10_000;

/// Refuses a document beyond what an import takes, before anything of its trees is read: too
/// many messages or threads in all. (A text too long is refused where it is read: [`Skim`].)
fn check_limits(skim: &Skim, trees: &[Value]) -> anyhow::Result<()> {
    let threads: usize = trees
        .iter()
        .filter_map(|tree| tree.get("extensions")?.get(PINLOOM))
        .map(|pinloom| skim.count(pinloom.get("threads")))
        .sum();
    let messages: usize = trees
        .iter()
        .filter_map(|tree| tree.get("nodes").and_then(Value::as_object))
        .map(Map::len)
        .sum();
    for (what, count, limit) in
        [("threads", threads, MAX_IMPORT_THREADS), ("messages", messages, MAX_IMPORT_MESSAGES)]
    {
        if count > limit {
            return Err(refuse(
                "$.trees",
                format!(
                    "hold {count} {what}; Pinloom imports up to {limit} at once: split the \
                     document"
                ),
            ));
        }
    }
    Ok(())
}

/// Reads what `skim` holds, whose skeleton is `document`.
pub(super) fn read_document(
    skim: Skim,
    document: &Value,
    title_hint: &str,
    now_ms: i64,
) -> anyhow::Result<ImportBatch> {
    let Value::Object(document) = document else {
        return Err(refuse("$", "an Open Loom document is a JSON object"));
    };
    match document.get("format") {
        Some(Value::String(format)) if format == "open-loom" => {}
        Some(other) => return Err(refuse("$.format", format!("is {other}, not \"open-loom\""))),
        None => {
            return Err(refuse(
                "$.format",
                "is missing; an Open Loom document says \"open-loom\" there",
            ));
        }
    }
    let version = document
        .get("version")
        .and_then(Value::as_str)
        .ok_or_else(|| refuse("$.version", "is missing or not a string like \"2.0\""))?;
    let major = version.split('.').next().and_then(|major| major.parse::<u32>().ok());
    if major != Some(2) {
        return Err(refuse(
            "$.version",
            format!(
                "Open Loom {version:?} is not a version Pinloom reads (it reads 2.x); export it as Open Loom 2.0"
            ),
        ));
    }
    let trees = match document.get("trees") {
        Some(Value::Array(trees)) if !trees.is_empty() => trees,
        Some(Value::Array(_)) => {
            return Err(refuse("$.trees", "is empty; a document holds at least one tree"));
        }
        _ => return Err(refuse("$.trees", "is missing or not an array of trees")),
    };
    check_limits(&skim, trees)?;
    let mut notes = Notes::default();
    let mut preserved_document = Map::new();
    if let Some(agents) = document.get("agents") {
        preserved_document.insert("agents".into(), agents.clone());
        notes.add("the document's agent registry is kept for export; Pinloom does not use it");
    }
    let mut profiles = Vec::new();
    if let Some(Value::Object(extensions)) = document.get("extensions") {
        let mut foreign = extensions.clone();
        if let Some(pinloom) = foreign.remove(PINLOOM) {
            profiles = model_profiles(&pinloom, &mut notes);
        }
        if !foreign.is_empty() {
            notes.add(format!(
                "the document's extensions {} are kept for export",
                names(foreign.keys())
            ));
            preserved_document.insert("extensions".into(), Value::Object(foreign));
        }
    }
    for key in document.keys() {
        if !matches!(
            key.as_str(),
            "format" | "version" | "exportedAt" | "generator" | "trees" | "agents" | "extensions"
        ) {
            notes.add(format!("$.{key} is not part of Open Loom 2.0 and was ignored"));
        }
    }
    let mut batch = ImportBatch { skim, trees: Vec::new(), profiles, notes };
    // The document's registry and other apps' extensions are kept once, with the first tree;
    // the others name where: a megabyte of agents copied into ten thousand trees would cost
    // ten gigabytes.
    let document_id = (!preserved_document.is_empty()).then(|| document_id(now_ms));
    for (index, tree) in trees.iter().enumerate() {
        let path = format!("$.trees[{index}]");
        let document = match &document_id {
            None => PreservedDocument::Nothing,
            Some(id) if index == 0 => {
                PreservedDocument::Here { preserved: &preserved_document, id }
            }
            Some(id) => PreservedDocument::With(id),
        };
        let read =
            read_tree(&batch.skim, tree, &path, document, title_hint, now_ms, &mut batch.notes)?;
        batch.trees.push(read);
    }
    count_in_parallel(&mut batch.trees);
    Ok(batch)
}

/// Counts every message of the trees as a written message is counted, on as many threads as the
/// machine has: counting is the largest part of reading a document.
fn count_in_parallel(trees: &mut [TreeBatch]) {
    let mut nodes: Vec<&mut NodeImport> =
        trees.iter_mut().flat_map(|tree| tree.import.nodes.iter_mut()).collect();
    if !nodes.is_empty() {
        crate::base::engine_inputs::load_written_counters();
    }
    crate::runtime::on_every_core(&mut nodes, |node| node.token_counts = token_counts(&node.parts));
}

fn names<'a>(keys: impl Iterator<Item = &'a String>) -> String {
    keys.map(|key| format!("\"{key}\"")).collect::<Vec<_>>().join(", ")
}

/// A continuation edge into a node, as read.
struct Incoming {
    parent: usize,
    /// What the edge carried beyond its primary source, to write back.
    preserved: Map<String, Value>,
}

/// An annotation edge, as read: it may make its target a note on its source.
struct AnnotationEdge {
    source: usize,
    target: usize,
    preserved: Map<String, Value>,
    path: String,
}

/// A tree's edges as read, nodes named by their index among the document's node keys.
struct Edges {
    /// The one continuation into each node: its parent.
    incoming: Vec<Option<Incoming>>,
    /// Each node's children, in edge order.
    children: Vec<Vec<usize>>,
    annotations: Vec<AnnotationEdge>,
    /// Edges Pinloom does not model, kept to write back.
    preserved: Vec<Value>,
}

/// What a tree keeps of its document's own data.
#[derive(Clone, Copy)]
enum PreservedDocument<'a> {
    /// The document had none.
    Nothing,
    /// Preserved with this tree, under `id`.
    Here { preserved: &'a Map<String, Value>, id: &'a str },
    /// Preserved with the tree that has `id`.
    With(&'a str),
}

/// A name for what one import kept of its document, unique across imports: the time, the
/// process and a count.
fn document_id(now_ms: i64) -> String {
    static IMPORTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let count = IMPORTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{now_ms:x}-{:x}-{count}", std::process::id())
}

/// Reads one tree in steps: its own kept data, its edges, loops cut, notes placed, the order its
/// messages are written in, its threads, its messages, then what names them by position. The
/// report's notes come in that order.
fn read_tree(
    skim: &Skim,
    tree: &Value,
    path: &str,
    document: PreservedDocument<'_>,
    title_hint: &str,
    now_ms: i64,
    notes: &mut Notes,
) -> anyhow::Result<TreeBatch> {
    let Value::Object(tree) = tree else { return Err(refuse(path, "a tree is a JSON object")) };
    let Some(Value::Object(nodes)) = tree.get("nodes") else {
        return Err(refuse(&format!("{path}.nodes"), "is missing or not an object of nodes by id"));
    };
    let edge_values: &[Value] = match tree.get("edges") {
        Some(Value::Array(edges)) => edges,
        None => {
            if nodes.len() > 1 {
                notes.add(format!(
                    "{path}.edges is missing: its nodes were imported as separate roots"
                ));
            }
            &[]
        }
        Some(_) => return Err(refuse(&format!("{path}.edges"), "is not an array of edges")),
    };
    let (mut preserved_tree, pinloom) = tree_extensions(tree, path, document, notes);

    let keys: Vec<&String> = nodes.keys().collect();
    let index: HashMap<&str, usize> =
        keys.iter().enumerate().map(|(at, key)| (key.as_str(), at)).collect();
    let mut edges = read_edges(skim, edge_values, &index, path, notes)?;
    cut_continuation_loops(&mut edges, &keys, path, notes);
    let (mut annotations, note_nodes) =
        place_notes(skim, &mut edges, nodes, &keys, path, now_ms, notes)?;
    let order = write_order(tree, &index, &edges, &note_nodes, path, notes);

    let records_at = |list: &str| format!("{path}.extensions.pinloom.{list}");
    let threads: Vec<ThreadRecord> = skim
        .records(pinloom.get("threads"))
        .map_err(|refusal| refuse(&records_at("threads"), refusal))?;
    let references = References {
        index: &index,
        position: &order.position,
        threads: threads
            .iter()
            .enumerate()
            .filter_map(|(at, thread)| Some((thread.id.0.as_deref()?, at)))
            .collect(),
    };
    let pins = threads.iter().enumerate().map(|(at, thread)| thread.pin(at, &references, now_ms));
    let mut pins: Vec<PinImport> = pins.collect();

    let texts = NodeTexts { skim, nodes, keys: &keys };
    let (imports, preserved_nodes, receipts) =
        read_messages(&texts, &edges, &order, &references, path, now_ms, notes)?;
    hang_threads_by_anchor(&mut pins, &imports, path, notes);
    renumber_notes(&mut annotations, &order, path, notes);
    renumber_preserved_edges(&mut edges.preserved, &order, path, notes);
    if !edges.preserved.is_empty() {
        preserved_tree.insert("edges".into(), Value::Array(edges.preserved));
    }
    let current_node = read_current(tree, &index, &order, path, &mut preserved_tree, notes);

    let (summaries, attachments, settings) =
        read_extension_lists(skim, &pinloom, &references, path, now_ms)?;
    let (new_tree, updated_at_ms) =
        tree_header(tree, &pinloom, path, title_hint, now_ms, &mut preserved_tree, notes);
    let import = TreeImport {
        tree: new_tree,
        slug: pinloom.get("slug").and_then(Value::as_str).map(str::to_owned),
        global_id: pinloom.get("globalId").and_then(Value::as_str).map(str::to_owned),
        buffer_includes_system: pinloom
            .get("bufferIncludesSystem")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        settings_json: "{}".to_owned(),
        updated_at_ms,
        nodes: imports,
        pins,
        summaries,
        attachments,
        annotations,
        current: current_node,
    };
    Ok(TreeBatch {
        import,
        preserved_tree: Value::Object(preserved_tree),
        preserved_nodes,
        settings,
        receipts,
    })
}

/// The summaries, attachments and settings in a tree's `pinloom` extension, the messages and
/// threads they name turned into write positions and thread indexes.
fn read_extension_lists(
    skim: &Skim,
    pinloom: &Map<String, Value>,
    references: &References<'_>,
    path: &str,
    now_ms: i64,
) -> anyhow::Result<(Vec<SummaryImport>, Vec<AttachmentImport>, Option<Value>)> {
    let records_at = |list: &str| format!("{path}.extensions.pinloom.{list}");
    let records_of_summaries: Vec<SummaryRecord> = skim
        .records(pinloom.get("summaries"))
        .map_err(|refusal| refuse(&records_at("summaries"), refusal))?;
    let mut summaries: Vec<SummaryImport> = Vec::new();
    for summary in records_of_summaries {
        let at = summaries.len();
        summaries.extend(summary.import(references, now_ms, at));
    }
    let attachments: Vec<AttachmentRecord> = skim
        .records(pinloom.get("attachments"))
        .map_err(|refusal| refuse(&records_at("attachments"), refusal))?;
    let attachments =
        attachments.into_iter().filter_map(|attachment| attachment.import(references, now_ms));
    let settings = pinloom.get("settings").cloned().map(|mut settings| {
        if let Some(Value::Array(hits)) = settings.get_mut("searchHits") {
            *hits = hits
                .iter()
                .filter_map(|hit| references.node(Some(hit)).map(|at| json!(at)))
                .collect();
        }
        settings
    });
    Ok((summaries, attachments.collect(), settings))
}

/// A tree's messages as the file holds them, unread: by the document's ids, in document order.
#[derive(Clone, Copy)]
struct NodeTexts<'a> {
    skim: &'a Skim,
    nodes: &'a Map<String, Value>,
    keys: &'a [&'a String],
}

/// What a tree's messages are read as: what to write, what each keeps, and each receipt.
type MessagesRead = (Vec<NodeImport>, Vec<Option<Value>>, Vec<Option<Value>>);

/// Reads a tree's messages in write order, each from the file's text when its turn comes (and
/// dropped after), with its parent and what its incoming edge keeps.
fn read_messages(
    texts: &NodeTexts<'_>,
    edges: &Edges,
    order: &WriteOrder,
    references: &References<'_>,
    path: &str,
    now_ms: i64,
    notes: &mut Notes,
) -> anyhow::Result<MessagesRead> {
    let mut imports = Vec::with_capacity(order.nodes.len());
    let mut preserved_nodes = Vec::with_capacity(order.nodes.len());
    let mut receipts = Vec::with_capacity(order.nodes.len());
    let NodeTexts { skim, nodes, keys } = *texts;
    for &node in &order.nodes {
        let node_path = format!("{path}.nodes[{:?}]", keys[node]);
        // Each message is read from the file's text when its turn comes, and dropped after.
        let value = skim
            .read(&nodes[keys[node].as_str()], Shape::Node)
            .map_err(|refusal| refuse(&node_path, refusal))?;
        let read = read_node(&value, &node_path, now_ms, notes, references);
        let mut import = read.import;
        import.parent = edges.incoming[node].as_ref().map(|edge| order.position[edge.parent]);
        // Only a question that starts a thread at the tree's top is asked over picks: anywhere
        // else they would ride along unseen.
        if !import.picked.is_empty() && (import.parent.is_some() || import.pin.is_some()) {
            notes.add(format!(
                "{node_path} continues another message, so the messages it names as picked were \
                 dropped"
            ));
            import.picked.clear();
        }
        let mut preserved = read.preserved;
        if let Some(edge) = &edges.incoming[node]
            && !edge.preserved.is_empty()
        {
            preserved.insert("edge".into(), Value::Object(order.renumber_sources(&edge.preserved)));
        }
        imports.push(import);
        preserved_nodes.push((!preserved.is_empty()).then_some(Value::Object(preserved)));
        receipts.push(read.receipt);
    }
    Ok((imports, preserved_nodes, receipts))
}

/// The message the tree's tool showed (`currentNodeId`), by write position: kept for export,
/// and where the tree opens. One that names no message is dropped, and said.
fn read_current(
    tree: &Map<String, Value>,
    index: &HashMap<&str, usize>,
    order: &WriteOrder,
    path: &str,
    preserved_tree: &mut Map<String, Value>,
    notes: &mut Notes,
) -> Option<usize> {
    let current = tree.get("currentNodeId").and_then(Value::as_str)?;
    let at = index.get(current).and_then(|&node| order.placed(node));
    match at {
        Some(at) => {
            preserved_tree.insert("currentNode".into(), json!(at));
        }
        None => {
            notes.add(format!("{path}.currentNodeId names no message of the tree and was dropped"))
        }
    }
    at
}

/// A thread opens from the thread of the message it hangs off, whatever the file says: a parent
/// named otherwise would place it at a depth its chain does not have.
fn hang_threads_by_anchor(
    pins: &mut [PinImport],
    imports: &[NodeImport],
    path: &str,
    notes: &mut Notes,
) {
    for (at, pin) in pins.iter_mut().enumerate() {
        let Some(anchor) = pin.anchor_node else { continue };
        let Some(anchor_thread) = imports.get(anchor).map(|node: &NodeImport| node.pin) else {
            continue;
        };
        if anchor_thread == Some(at) {
            notes.add(format!(
                "{path}: thread {:?} hangs off one of its own messages; it was opened without one",
                pin.title
            ));
            pin.anchor_node = None;
            pin.anchor = None;
        } else if pin.parent != anchor_thread {
            notes.add(format!(
                "{path}: thread {:?} named a parent other than the thread of the message it hangs \
                 off; it was placed under that thread",
                pin.title
            ));
            pin.parent = anchor_thread;
        }
    }
}

/// What a tree keeps for export of its own and its document's data (other apps' extensions,
/// description, tags, agents), and Pinloom's own extension of it.
fn tree_extensions(
    tree: &Map<String, Value>,
    path: &str,
    document: PreservedDocument<'_>,
    notes: &mut Notes,
) -> (Map<String, Value>, Map<String, Value>) {
    let mut preserved_tree = Map::new();
    match document {
        PreservedDocument::Nothing => {}
        PreservedDocument::Here { preserved, id } => {
            preserved_tree.insert("document".into(), Value::Object(preserved.clone()));
            preserved_tree.insert("documentId".into(), json!(id));
        }
        PreservedDocument::With(id) => {
            preserved_tree.insert("documentIn".into(), json!(id));
        }
    }
    let mut pinloom = Map::new();
    if let Some(Value::Object(extensions)) = tree.get("extensions") {
        let mut foreign = extensions.clone();
        if let Some(Value::Object(ours)) = foreign.remove(PINLOOM) {
            pinloom = ours;
        }
        if !foreign.is_empty() {
            notes.add(format!("{path}.extensions {} are kept for export", names(foreign.keys())));
            preserved_tree.insert("extensions".into(), Value::Object(foreign));
        }
    }
    for key in ["description", "tags", "agents"] {
        if let Some(value) = tree.get(key) {
            preserved_tree.insert(key.into(), value.clone());
            notes.add(format!("{path}.{key} is kept for export; Pinloom does not show it"));
        }
    }
    (preserved_tree, pinloom)
}

/// A source of an edge as kept for export: the node's index, and its role when it had one.
fn preserved_source(node: usize, role: Option<&Value>) -> Value {
    match role {
        Some(role) => json!({ "node": node, "role": role }),
        None => json!({ "node": node }),
    }
}

/// Reads the edges: the first continuation into a node is its parent, an annotation may make a
/// note, and anything else (a second continuation, a type Pinloom does not model) is kept.
fn read_edges(
    skim: &Skim,
    edge_values: &[Value],
    index: &HashMap<&str, usize>,
    path: &str,
    notes: &mut Notes,
) -> anyhow::Result<Edges> {
    let mut edges = Edges {
        incoming: (0..index.len()).map(|_| None).collect(),
        children: vec![Vec::new(); index.len()],
        annotations: Vec::new(),
        preserved: Vec::new(),
    };
    for (at, edge) in edge_values.iter().enumerate() {
        let edge_path = format!("{path}.edges[{at}]");
        let edge = skim.read(edge, Shape::Edge).map_err(|refusal| refuse(&edge_path, refusal))?;
        if !edge.is_object() {
            notes.add(format!("{edge_path} is not an object and was dropped"));
            continue;
        }
        let edge: EdgeRecord<'static> = record(&edge);
        let target = edge.target_node_id.0.as_deref().and_then(|target| index.get(target));
        let Some(&target) = target else {
            notes.add(format!(
                "{edge_path} names no node of the tree as its target and was dropped"
            ));
            continue;
        };
        let sources: Vec<(usize, Option<Value>)> = edge
            .sources
            .0
            .into_iter()
            .filter_map(|source| {
                Some((*index.get(source.node_id.as_ref())?, source.role.map(Cow::into_owned)))
            })
            .collect();
        if sources.is_empty() {
            notes.add(format!("{edge_path} has no source in the tree and was dropped"));
            continue;
        }
        let kind = edge.kind.as_deref().and_then(Value::as_str).unwrap_or("").to_owned();
        let mut extra = Map::new();
        for (key, value) in [("createdAt", edge.created_at), ("extensions", edge.extensions)] {
            if let Some(value) = value {
                extra.insert(key.into(), value.into_owned());
            }
        }
        let unclaimed = edges.incoming[target].is_none();
        if kind == "continuation" && unclaimed {
            edges.continue_into(target, &sources, extra, &edge_path, notes);
        } else if kind == "annotation" && unclaimed {
            let source = sources[0].0;
            edges.annotations.push(AnnotationEdge {
                source,
                target,
                preserved: extra,
                path: edge_path,
            });
        } else {
            let why = if kind == "continuation" {
                "is a second continuation into one node (Pinloom keeps trees, not graphs)"
            } else {
                "has an edge type Pinloom does not model"
            };
            notes.add(format!("{edge_path} {why}; it is kept for export"));
            let mut preserved = extra;
            preserved.insert("type".into(), json!(kind));
            preserved.insert("target".into(), json!(target));
            let sources = sources.iter().map(|(node, role)| preserved_source(*node, role.as_ref()));
            preserved.insert("sources".into(), Value::Array(sources.collect()));
            edges.preserved.push(Value::Object(preserved));
        }
    }
    Ok(edges)
}

impl Edges {
    /// Makes the continuation into `target` its parent edge: from its primary source (the first
    /// when none says so), the other sources kept for export.
    fn continue_into(
        &mut self,
        target: usize,
        sources: &[(usize, Option<Value>)],
        mut extra: Map<String, Value>,
        edge_path: &str,
        notes: &mut Notes,
    ) {
        let primary = sources
            .iter()
            .position(|(_, role)| {
                role.is_none() || role.as_ref().and_then(Value::as_str) == Some("primary")
            })
            .unwrap_or_else(|| {
                notes.add(format!(
                    "{edge_path} has no primary source: its first source was taken as the parent"
                ));
                0
            });
        let (parent, role) = &sources[primary];
        if let Some(role) = role {
            extra.insert("role".into(), role.clone());
        }
        let others: Vec<Value> = sources
            .iter()
            .enumerate()
            .filter(|(at, _)| *at != primary)
            .map(|(_, (node, role))| preserved_source(*node, role.as_ref()))
            .collect();
        if !others.is_empty() {
            notes.add(
                "sources beyond the primary one (context, instruction) are preserved for export; \
                 Pinloom's parent is the primary source",
            );
            extra.insert("extraSources".into(), Value::Array(others));
        }
        self.incoming[target] = Some(Incoming { parent: *parent, preserved: extra });
        self.children[*parent].push(target);
    }
}

/// Cuts a loop of continuations (only a damaged file has one) where it closes. Each walk up stops
/// at a node an earlier walk cleared, so the whole check is linear in the nodes.
fn cut_continuation_loops(edges: &mut Edges, keys: &[&String], path: &str, notes: &mut Notes) {
    #[derive(Clone, Copy, PartialEq)]
    enum Visit {
        Unseen,
        InProgress,
        Cleared,
    }
    let mut visits = vec![Visit::Unseen; keys.len()];
    for start in 0..keys.len() {
        let mut walked = Vec::new();
        let mut current = start;
        loop {
            match visits[current] {
                Visit::Cleared => break,
                Visit::InProgress => {
                    notes.add(format!(
                        "{path}: the continuations into node {:?} close a loop; that edge was \
                         dropped",
                        keys[current]
                    ));
                    if let Some(edge) = edges.incoming[current].take() {
                        edges.children[edge.parent].retain(|&child| child != current);
                    }
                    break;
                }
                Visit::Unseen => {
                    visits[current] = Visit::InProgress;
                    walked.push(current);
                    match &edges.incoming[current] {
                        Some(edge) => current = edge.parent,
                        None => break,
                    }
                }
            }
        }
        for node in walked {
            visits[node] = Visit::Cleared;
        }
    }
}

/// Turns annotation edges into notes: a text-only node that only an annotation edge reaches
/// becomes a note on the edge's source (named by document index until the order is known).
/// Any other annotation edge is kept for export. Returns the notes and the nodes they were.
fn place_notes(
    skim: &Skim,
    edges: &mut Edges,
    nodes: &Map<String, Value>,
    keys: &[&String],
    path: &str,
    now_ms: i64,
    notes: &mut Notes,
) -> anyhow::Result<(Vec<AnnotationImport>, HashSet<usize>)> {
    let mut placed = Vec::new();
    let mut note_nodes: HashSet<usize> = HashSet::new();
    for edge in std::mem::take(&mut edges.annotations) {
        let target = edge.target;
        let node = skim
            .read(&nodes[keys[target].as_str()], Shape::Node)
            .map_err(|refusal| refuse(&format!("{path}.nodes[{:?}]", keys[target]), refusal))?;
        let simple = edges.incoming[target].is_none()
            && edges.children[target].is_empty()
            && !note_nodes.contains(&target);
        match text_only(node.get("content")) {
            Some(text) if simple => {
                note_nodes.insert(target);
                let included = edge
                    .preserved
                    .get("extensions")
                    .and_then(|extensions| extensions.get(PINLOOM))
                    .and_then(|ours| ours.get("included"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                placed.push(AnnotationImport {
                    node: edge.source,
                    text,
                    included,
                    created_at_ms: time_of(node.get("createdAt")).unwrap_or(now_ms),
                });
            }
            _ => {
                notes.add(format!(
                    "{} annotates with a node that is not plain text or is part of the tree; the \
                     edge is preserved for export",
                    edge.path
                ));
                let mut preserved = edge.preserved;
                preserved.insert("type".into(), json!("annotation"));
                preserved.insert("target".into(), json!(target));
                preserved.insert("sources".into(), json!([{ "node": edge.source }]));
                edges.preserved.push(Value::Object(preserved));
            }
        }
    }
    Ok((placed, note_nodes))
}

/// The order a tree's messages are written in: depth first from the roots (in the order
/// `rootNodeIds` lists them, then the rest in document order), children in edge order.
struct WriteOrder {
    /// Document indices in write order.
    nodes: Vec<usize>,
    /// Each document index's write position; `usize::MAX` for a node that is not written (a
    /// note, or a node only reachable through a cut loop).
    position: Vec<usize>,
}

impl WriteOrder {
    /// The write position of document index `node`, if it is written as a message.
    fn placed(&self, node: usize) -> Option<usize> {
        self.position.get(node).copied().filter(|&at| at != usize::MAX)
    }

    /// An edge's kept data with its extra sources named by write position.
    fn renumber_sources(&self, preserved: &Map<String, Value>) -> Map<String, Value> {
        let mut preserved = preserved.clone();
        if let Some(Value::Array(extra)) = preserved.get_mut("extraSources") {
            for source in extra {
                if let Some(original) = source.get("node").and_then(Value::as_u64) {
                    source["node"] = json!(self.position[original as usize]);
                }
            }
        }
        preserved
    }
}

fn write_order(
    tree: &Map<String, Value>,
    index: &HashMap<&str, usize>,
    edges: &Edges,
    note_nodes: &HashSet<usize>,
    path: &str,
    notes: &mut Notes,
) -> WriteOrder {
    let count = index.len();
    let listed_roots: Vec<usize> = tree
        .get("rootNodeIds")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|id| id.as_str().and_then(|id| index.get(id)).copied())
        .collect();
    let mut roots: Vec<usize> = (0..count)
        .filter(|node| edges.incoming[*node].is_none() && !note_nodes.contains(node))
        .collect();
    // Looked up by maps, not by searching the lists: a document may list thousands of roots.
    let mut listed_at: HashMap<usize, usize> = HashMap::with_capacity(listed_roots.len());
    for (at, &root) in listed_roots.iter().enumerate() {
        listed_at.entry(root).or_insert(at);
    }
    roots.sort_by_key(|root| (listed_at.get(root).copied().unwrap_or(usize::MAX), *root));
    if roots.iter().any(|root| !listed_at.contains_key(root)) {
        notes.add(format!("{path}.rootNodeIds did not list every root; the tree's edges decided"));
    }
    let root_set: HashSet<usize> = roots.iter().copied().collect();
    if listed_roots.iter().any(|listed| !root_set.contains(listed)) {
        notes.add(format!(
            "{path}.rootNodeIds listed nodes that are not roots; the tree's edges decided"
        ));
    }
    let mut nodes = Vec::with_capacity(count);
    let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
    while let Some(node) = stack.pop() {
        nodes.push(node);
        stack.extend(edges.children[node].iter().rev().copied());
    }
    let mut position = vec![usize::MAX; count];
    for (at, &node) in nodes.iter().enumerate() {
        position[node] = at;
    }
    WriteOrder { nodes, position }
}

/// Names the message each note hangs on by write position. A note on a note (or on itself) has
/// no message to hang on: it is left out, said once.
fn renumber_notes(
    annotations: &mut Vec<AnnotationImport>,
    order: &WriteOrder,
    path: &str,
    notes: &mut Notes,
) {
    annotations.retain_mut(|note| match order.placed(note.node) {
        Some(at) => {
            note.node = at;
            true
        }
        None => {
            notes.add(format!(
                "{path} has a note on another note or on itself; with no message to hang on, it \
                 was left out"
            ));
            false
        }
    });
}

/// Names the nodes of kept edges by write position; an edge that names a note is left out.
fn renumber_preserved_edges(
    preserved: &mut Vec<Value>,
    order: &WriteOrder,
    path: &str,
    notes: &mut Notes,
) {
    preserved.retain_mut(|edge| {
        let mut whole = true;
        if let Some(target) = edge.get("target").and_then(Value::as_u64) {
            match order.placed(target as usize) {
                Some(at) => edge["target"] = json!(at),
                None => whole = false,
            }
        }
        if let Some(Value::Array(sources)) = edge.get_mut("sources") {
            for source in sources {
                if let Some(node) = source.get("node").and_then(Value::as_u64) {
                    match order.placed(node as usize) {
                        Some(at) => source["node"] = json!(at),
                        None => whole = false,
                    }
                }
            }
        }
        if !whole {
            notes.add(format!(
                "{path} has an annotation between notes; it names no message and was left out"
            ));
        }
        whole
    });
}

/// The tree's own fields as the store writes them, and when it was last changed. A mode Pinloom
/// does not know is read as dialogue and kept.
fn tree_header(
    tree: &Map<String, Value>,
    pinloom: &Map<String, Value>,
    path: &str,
    title_hint: &str,
    now_ms: i64,
    preserved_tree: &mut Map<String, Value>,
    notes: &mut Notes,
) -> (NewTree, i64) {
    let title = match tree.get("title").and_then(Value::as_str).map(str::trim) {
        Some(title) if !title.is_empty() => title.to_owned(),
        _ => {
            notes.add(format!("{path}.title is empty; the tree is named {title_hint:?}"));
            title_hint.to_owned()
        }
    };
    let mode = match tree.get("mode").and_then(Value::as_str) {
        None | Some("dialogue") => TreeMode::Dialogue,
        Some("buffer") => TreeMode::Buffer,
        Some(other) => {
            notes.add(format!(
                "{path}.mode {other:?} is not one Pinloom knows: read as dialogue, kept for export"
            ));
            preserved_tree.insert("mode".into(), json!(other));
            TreeMode::Dialogue
        }
    };
    let created_at_ms = time_of(tree.get("createdAt")).unwrap_or(now_ms);
    let new_tree = NewTree {
        title,
        mode,
        system_context: tree.get("systemContext").and_then(Value::as_str).unwrap_or("").to_owned(),
        sharing: match pinloom.get("sharing").and_then(Value::as_str) {
            Some("team") => Sharing::Team,
            _ => Sharing::Solo,
        },
        created_at_ms,
    };
    (new_tree, time_of(tree.get("updatedAt")).unwrap_or(created_at_ms))
}

/// How Pinloom's extension names messages and threads, turned into what the store writes: a
/// message by its write position, a thread by its index among the tree's threads.
struct References<'a> {
    index: &'a HashMap<&'a str, usize>,
    position: &'a [usize],
    threads: HashMap<&'a str, usize>,
}

impl References<'_> {
    fn node(&self, value: Option<&Value>) -> Option<usize> {
        self.node_key(value?.as_str()?)
    }

    fn node_key(&self, key: &str) -> Option<usize> {
        let node = *self.index.get(key)?;
        (self.position[node] != usize::MAX).then_some(self.position[node])
    }

    fn thread(&self, value: Option<&Value>) -> Option<usize> {
        self.thread_key(value?.as_str()?)
    }

    fn thread_key(&self, key: &str) -> Option<usize> {
        self.threads.get(key).copied()
    }
}

impl ThreadRecord {
    fn pin(&self, at: usize, references: &References<'_>, now_ms: i64) -> PinImport {
        let time = |text: &Option<String>| text.as_deref().and_then(parse_time);
        PinImport {
            parent: self.parent.0.as_deref().and_then(|id| references.thread_key(id)),
            anchor_node: self.anchor_node.0.as_deref().and_then(|key| references.node_key(key)),
            anchor: self
                .anchor
                .0
                .as_ref()
                .filter(|anchor| anchor.is_object())
                .and_then(|anchor| AnchorRecord::deserialize(anchor).ok())
                .map(|AnchorRecord { start, end, text }| Anchor { start, end, text }),
            title: self.title.0.clone().unwrap_or_else(|| "Untitled thread".to_owned()),
            slug: self.slug.0.clone(),
            closed: match (time(&self.closed_at.0), &self.result.0) {
                (Some(at), Some(result)) => Some((at, result.clone())),
                _ => None,
            },
            created_at_ms: time(&self.created_at.0).unwrap_or(now_ms),
            deleted_at_ms: time(&self.deleted_at.0),
            order: self.order.0.map_or(at, |order| order as usize),
        }
    }
}

impl SummaryRecord {
    /// The summary to write, followed by its fitted versions (which name it by its index,
    /// `at`); one without a text is left out, and so are its fitted versions.
    fn import(mut self, references: &References<'_>, now_ms: i64, at: usize) -> Vec<SummaryImport> {
        let fitted = std::mem::take(&mut self.fitted);
        let pin = self.thread.0.as_deref().and_then(|id| references.thread_key(id));
        let path_end = self.up_to.0.as_deref().and_then(|key| references.node_key(key));
        let Some(summary) = self.written_summary(pin, path_end, None, now_ms) else {
            return Vec::new();
        };
        let mut out = vec![summary];
        for version in fitted.0 {
            // A fitted version is the summariser's, for one budget; without one it is nothing.
            if version.budget.0.is_none() {
                continue;
            }
            if let Some(mut version) = version.written_summary(pin, path_end, Some(at), now_ms) {
                version.written_by = SummaryAuthor::Model;
                version.chosen = false;
                out.push(version);
            }
        }
        out
    }

    fn written_summary(
        self,
        pin: Option<usize>,
        path_end: Option<usize>,
        fitted_from: Option<usize>,
        now_ms: i64,
    ) -> Option<SummaryImport> {
        let log = self.log.0;
        let summarizer = self.summarizer.0.unwrap_or_default();
        // A summary that does not say who wrote it was the summariser's when it names one, and
        // otherwise the file's: written on purpose, and used before the summariser's own.
        let written_by = match self.written_by.0.as_deref().and_then(SummaryAuthor::parse) {
            Some(author) => author,
            None if summarizer.is_empty() => SummaryAuthor::File,
            None => SummaryAuthor::Model,
        };
        Some(SummaryImport {
            pin,
            path_end,
            budget: self.budget.0,
            summarizer,
            written_by,
            chosen: self.chosen.0.unwrap_or(written_by != SummaryAuthor::Model),
            fitted_from,
            text: self.written.text.0?,
            input_chars: self.written.input_chars.0.unwrap_or(0),
            input_tokens: self.written.input_tokens.0.unwrap_or(0),
            updated_at_ms: self.updated_at.0.as_deref().and_then(parse_time).unwrap_or(now_ms),
            log: log
                .into_iter()
                .filter_map(|write| {
                    Some(SummaryUpdate {
                        text: write.written.text.0?,
                        input_chars: write.written.input_chars.0.unwrap_or(0),
                        input_tokens: write.written.input_tokens.0.unwrap_or(0),
                        written_at_ms: write
                            .written_at
                            .0
                            .as_deref()
                            .and_then(parse_time)
                            .unwrap_or(now_ms),
                    })
                })
                .collect(),
        })
    }
}

impl AttachmentRecord {
    /// The attachment to write; one with an unknown scope or role, no name or no content, an
    /// image that is not one models take, or one on a message that is not written, is left out.
    fn import(self, references: &References<'_>, now_ms: i64) -> Option<AttachmentImport> {
        let scope = match self.scope.0.as_deref()? {
            "tree" => ImportScope::Tree,
            "thread" => ImportScope::Thread(
                self.thread.0.as_deref().and_then(|id| references.thread_key(id)),
            ),
            "node" => ImportScope::Node(references.node_key(self.node.0.as_deref()?)?),
            _ => return None,
        };
        let role = match self.role.0.as_deref()? {
            "context" => AttachmentRole::Context,
            "instruction" => AttachmentRole::Instruction,
            "file" => AttachmentRole::File,
            "folder" => AttachmentRole::Folder,
            "image" => AttachmentRole::Image,
            "pdf" => AttachmentRole::Pdf,
            _ => return None,
        };
        let name = self.name.0?;
        let mut content = self.content.0?;
        if role == AttachmentRole::Image {
            // Its kind and size read from its bytes, as an image attached here is: a file's
            // label (an SVG called a PNG, 40000 × 40000 pixels called 1 × 1) is not believed,
            // and what is not an image a model takes is left out.
            content = crate::base::media::image_from_data_url(&content, &name).ok()?;
        }
        Some(AttachmentImport {
            scope,
            role,
            name,
            content,
            created_at_ms: self.created_at.0.as_deref().and_then(parse_time).unwrap_or(now_ms),
        })
    }
}

/// The text of content that is only text blocks.
fn text_only(content: Option<&Value>) -> Option<String> {
    let blocks = content?.as_array()?;
    let mut text = String::new();
    for block in blocks {
        if block.get("type")?.as_str()? != "text" {
            return None;
        }
        text.push_str(block.get("text")?.as_str()?);
    }
    Some(text)
}

fn time_of(value: Option<&Value>) -> Option<i64> {
    value.and_then(Value::as_str).and_then(parse_time)
}

/// One message as read: what to write, what it keeps for export, and its receipt (the messages
/// and threads it names by write position).
struct NodeRead {
    import: NodeImport,
    preserved: Map<String, Value>,
    receipt: Option<Value>,
}

/// Reads one message: its content as parts (other blocks kept), its author and generation, its
/// flags, and Pinloom's own data (thread, exact parts, receipt). Its parent is set by the tree.
fn read_node(
    value: &Value,
    path: &str,
    now_ms: i64,
    notes: &mut Notes,
    references: &References<'_>,
) -> NodeRead {
    let mut preserved = Map::new();
    let empty = Map::new();
    let node = value.as_object().unwrap_or_else(|| {
        notes.add(format!("{path} is not an object: imported as an empty message"));
        &empty
    });
    let ours: NodeExtension = node
        .get("extensions")
        .and_then(|extensions| extensions.get(PINLOOM))
        .map(record)
        .unwrap_or_default();
    let parts = read_parts(node, &ours, path, notes, &mut preserved);
    let (author, model, usage_json) = read_authorship(node, &ours, path, notes, &mut preserved);
    let created_at_ms = read_created(node, path, notes, &mut preserved);
    let [bookmarked, excluded, pruned] = read_meta(node, notes, &mut preserved);
    if let Some(Value::Object(extensions)) = node.get("extensions") {
        let mut foreign = extensions.clone();
        foreign.remove(PINLOOM);
        if !foreign.is_empty() {
            notes.add(format!("message extensions {} are kept for export", names(foreign.keys())));
            preserved.insert("extensions".into(), Value::Object(foreign));
        }
    }
    let edited_from = node.get("editedFrom").and_then(|original| {
        let found = references.node(Some(original));
        if found.is_none() {
            notes.add(format!("{path}.editedFrom names no message of the tree and was dropped"));
        }
        found
    });
    let pruned_at_ms = match ours.pruned_at.0.as_deref().and_then(parse_time) {
        Some(at) => Some(at),
        None => pruned.then_some(now_ms),
    };
    let receipt = read_receipt(ours.receipt.as_ref(), path, notes, references);
    let receipt_cut = receipt
        .as_ref()
        .map(|receipt| receipt.get("verdict").and_then(Value::as_str) == Some("providerCut"));
    let import = NodeImport {
        global_id: ours.global_id.0.clone(),
        parent: None,
        pin: ours.thread.0.as_deref().and_then(|thread| references.thread_key(thread)),
        edited_from,
        author,
        // Counted for all messages at once when the document is read (`count_in_parallel`).
        token_counts: Vec::new(),
        parts,
        model,
        generation_json: ours.generation_settings.as_ref().map(Value::to_string),
        usage_json,
        excluded,
        bookmarked,
        kept: ours.kept.0.unwrap_or(false),
        incomplete: ours.incomplete.0.unwrap_or(false),
        pruned_at_ms,
        created_at_ms: created_at_ms.unwrap_or(now_ms),
        receipt_cut,
        picked: read_picked(ours.picked.as_ref(), path, notes, references),
    };
    NodeRead { import, preserved, receipt }
}

/// A question's picks as the document names them: messages of the same tree, each once, at most
/// [`pinloom_store::MAX_PICKS`]; anything else is dropped, and said. Whether the question is a
/// first message (the only kind asked over picks) is checked once the tree is laid out.
fn read_picked(
    value: Option<&Value>,
    path: &str,
    notes: &mut Notes,
    references: &References<'_>,
) -> Vec<(usize, bool)> {
    let Some(value) = value else { return Vec::new() };
    let Some(list) = value.as_array() else {
        notes.add(format!("{path}'s picked messages are not a list and were dropped"));
        return Vec::new();
    };
    let mut picked: Vec<(usize, bool)> = Vec::new();
    let mut dropped = 0;
    for entry in list {
        let found = references.node(entry.get("node"));
        let with_summary = entry.get("withSummary").and_then(Value::as_bool).unwrap_or(false);
        match found {
            Some(index)
                if picked.len() < pinloom_store::MAX_PICKS
                    && !picked.iter().any(|(earlier, _)| *earlier == index) =>
            {
                picked.push((index, with_summary));
            }
            _ => dropped += 1,
        }
    }
    if dropped > 0 {
        notes.add(format!(
            "{path} names {dropped} picked messages that are not messages of the tree, are named \
             twice or are past the {} a question is asked over; they were dropped",
            pinloom_store::MAX_PICKS
        ));
    }
    picked
}

/// A message's content as parts: text blocks become text parts; anything else is kept whole for
/// export. Pinloom's exact parts (tool calls and results) win over their text rendering; media
/// blocks are kept whatever else the node has.
fn read_parts(
    node: &Map<String, Value>,
    ours: &NodeExtension,
    path: &str,
    notes: &mut Notes,
    preserved: &mut Map<String, Value>,
) -> Vec<Part> {
    let mut parts: Vec<Part> = Vec::new();
    let mut rebuildable = true;
    match node.get("content") {
        Some(Value::Array(blocks)) => {
            for block in blocks {
                match (
                    block.get("type").and_then(Value::as_str),
                    block.get("text").and_then(Value::as_str),
                ) {
                    (Some("text"), Some(text)) => parts.push(Part::Text { text: text.to_owned() }),
                    (kind, _) => {
                        rebuildable = false;
                        let kind = kind.unwrap_or("untyped");
                        notes.add(format!(
                            "{kind} content blocks are kept for export; Pinloom shows text only"
                        ));
                        // Text-only readers show an alternative text where the block has one.
                        for key in ["altText", "transcript"] {
                            if let Some(text) = block.get(key).and_then(Value::as_str) {
                                parts.push(Part::Text { text: text.to_owned() });
                            }
                        }
                    }
                }
            }
            if blocks.is_empty() {
                rebuildable = false;
            }
        }
        _ => {
            notes.add(format!(
                "{path}.content is missing or not an array: imported as an empty message"
            ));
        }
    }
    if let Some(exact) = ours.parts.as_ref().and_then(|parts| Vec::<Part>::deserialize(parts).ok())
        && !exact.is_empty()
    {
        parts = exact;
    }
    if parts.is_empty() {
        parts.push(Part::Text { text: String::new() });
    }
    if !rebuildable && let Some(content) = node.get("content") {
        preserved.insert("content".into(), content.clone());
    }
    parts
}

/// Who wrote a message, the model named and the usage it reported; the author and generation
/// are kept exactly, unless exporting would write them the same.
fn read_authorship(
    node: &Map<String, Value>,
    ours: &NodeExtension,
    path: &str,
    notes: &mut Notes,
    preserved: &mut Map<String, Value>,
) -> (Author, Option<String>, Option<String>) {
    let author_value = node.get("author").cloned().unwrap_or_else(|| {
        notes.add(format!("{path}.author is missing: imported as the person's"));
        json!({ "role": "human" })
    });
    let role = author_value.get("role").and_then(Value::as_str).unwrap_or("human");
    let author = match (ours.author.0.as_deref(), role) {
        (Some("tool"), _) => Author::Tool,
        (_, "model" | "mixed") => Author::Model,
        _ => Author::Human,
    };
    if role == "mixed" {
        notes.add("messages of mixed authorship (a person's edit of a model's text) are shown as the model's; the authorship is kept for export");
    } else if !matches!(role, "human" | "model") && author != Author::Tool {
        notes.add(format!("author role {role:?} is shown as the person's; it is kept for export"));
    }
    let generation = node.get("generation").filter(|g| g.is_object());
    let model = ours.model.0.clone().or_else(|| {
        generation.and_then(|g| g.get("model")).and_then(Value::as_str).map(str::to_owned)
    });
    let usage_json = ours.usage.as_ref().map(Value::to_string).or_else(|| {
        let usage = generation?.get("usage")?;
        let mut ours = Map::new();
        if let Some(prompt) = usage.get("promptTokens").and_then(Value::as_u64) {
            ours.insert("input_tokens".into(), json!(prompt));
        }
        if let Some(completion) = usage.get("completionTokens").and_then(Value::as_u64) {
            ours.insert("output_tokens".into(), json!(completion));
        }
        (!ours.is_empty()).then(|| Value::Object(ours).to_string())
    });
    if author_value != super::open_loom_export::author_json(author, model.as_deref()) {
        preserved.insert("author".into(), author_value);
    }
    if let Some(generation) = generation {
        preserved.insert("generation".into(), generation.clone());
    }
    (author, model, usage_json)
}

/// When a message was written; a missing or unreadable time is left out on export too.
fn read_created(
    node: &Map<String, Value>,
    path: &str,
    notes: &mut Notes,
    preserved: &mut Map<String, Value>,
) -> Option<i64> {
    let Some(value) = node.get("createdAt") else {
        preserved.insert("omitCreatedAt".into(), json!(true));
        return None;
    };
    let parsed = value.as_str().and_then(parse_time);
    if parsed.is_none() {
        notes.add(format!("{path}.createdAt is not an ISO-8601 time with a zone; it was left out"));
        preserved.insert("omitCreatedAt".into(), json!(true));
    }
    parsed
}

/// A message's flags in `meta` (bookmarked, excluded, pruned); its other details are kept.
fn read_meta(
    node: &Map<String, Value>,
    notes: &mut Notes,
    preserved: &mut Map<String, Value>,
) -> [bool; 3] {
    let mut meta = node.get("meta").and_then(Value::as_object).cloned().unwrap_or_default();
    let flags = ["bookmarked", "excluded", "pruned"]
        .map(|key| meta.remove(key).and_then(|value| value.as_bool()).unwrap_or(false));
    if !meta.is_empty() {
        notes.add(format!("message details {} are kept for export", names(meta.keys())));
        preserved.insert("meta".into(), Value::Object(meta));
    }
    flags
}

/// A message's receipt, admitted through the untrusted-input rules, the messages and threads it
/// names turned into write positions.
fn read_receipt(
    receipt: Option<&Value>,
    path: &str,
    notes: &mut Notes,
    references: &References<'_>,
) -> Option<Value> {
    let receipt = receipt.filter(|receipt| receipt.is_object())?;
    let Some(admitted) = crate::base::receipts::admit_receipt(receipt) else {
        notes.add(format!("{path}'s receipt was unreadable and was left out"));
        return None;
    };
    Some(receipt_references(&admitted, |source, id| match source {
        ReceiptSource::Node => references.node(Some(id)),
        ReceiptSource::Pin => references.thread(Some(id)),
    }))
}

fn model_profiles(pinloom: &Value, notes: &mut Notes) -> Vec<store::ModelProfile> {
    let extension: DocumentExtension = record(pinloom);
    extension
        .model_profiles
        .0
        .into_iter()
        .filter_map(|profile| read_profile(profile, notes))
        .collect()
}

/// One model profile of the document, completed by what Pinloom knows of its model; one without
/// its name, provider or model, or of an unknown provider without its window, reserve or
/// tokenizer, is left out.
fn read_profile(profile: ProfileRecord, notes: &mut Notes) -> Option<store::ModelProfile> {
    let (Some(name), Some(provider), Some(model_id)) =
        (profile.name.0, profile.provider.0, profile.model_id.0)
    else {
        notes.add("a model profile without its name, provider or model was left out");
        return None;
    };
    // What the file leaves out is what Pinloom knows of the model: o1-mini takes no system role,
    // an instruct model continues documents, and so on.
    let known = ProviderId::from_name(&provider).map(|id| {
        let engine = catalog::profile(id, &model_id);
        let tokenizer = catalog::find(id, &model_id).map_or_else(
            || {
                if id.is_local() {
                    TokenizerFamily::for_open_model(&model_id)
                } else {
                    TokenizerFamily::Other
                }
            },
            |entry| entry.tokenizer,
        );
        (engine, catalog::completion_supported(id, &model_id), tokenizer)
    });
    let (window, reserve, native, completion, tokenizer) = match &known {
        Some((engine, completion, tokenizer)) => (
            Some(engine.context_window),
            Some(engine.reserve),
            engine.native_system,
            *completion,
            Some(tokenizer.name().to_owned()),
        ),
        None => (None, None, true, false, None),
    };
    let read = (|| {
        Some(store::ModelProfile {
            context_window: profile.context_window.0.or(window)?,
            reserve: profile.reserve.0.or(reserve)?,
            native_system: profile.native_system.0.unwrap_or(native),
            completion_endpoint: profile.completion_endpoint.0.unwrap_or(completion),
            tokenizer: profile.tokenizer.0.or(tokenizer)?,
            base_url: profile.base_url.0,
            agent_system_prompt: profile.agent_system_prompt.0.unwrap_or_default(),
            sampling_json: profile.sampling.map_or_else(|| "{}".to_owned(), |v| v.to_string()),
            settings_json: profile.settings.map_or_else(|| "{}".to_owned(), |v| v.to_string()),
            prices_json: profile.prices.filter(Value::is_object).map(|v| v.to_string()),
            name,
            provider,
            model_id,
            // Data until the person accepts it: the importer names the file.
            imported_from: None,
        })
    })();
    if read.is_none() {
        notes.add("a model profile of an unknown provider without its window, reserve or tokenizer was left out");
    }
    read
}

/// The JSON a tree or node keeps, its node numbers (import indices) turned into the ids the
/// store gave them.
pub(super) fn preserved_json(
    batch: &ImportBatch,
    which: Preserved,
    imported: &ImportedTree,
) -> Option<String> {
    let ids = &imported.nodes;
    let id = |value: &Value| {
        value.as_u64().and_then(|index| ids.get(index as usize)).map(|id| json!(id.0))
    };
    match which {
        Preserved::Receipt(tree, node) => {
            let receipt = batch.trees.get(tree)?.receipts.get(node)?.as_ref()?;
            let turned = receipt_references(receipt, |source, index| {
                let index = usize::try_from(index.as_u64()?).ok()?;
                match source {
                    ReceiptSource::Node => imported.nodes.get(index).map(|id| id.0),
                    ReceiptSource::Pin => imported.pins.get(index).map(|id| id.0),
                }
            });
            Some(turned.to_string())
        }
        Preserved::Tree(tree) => {
            let mut preserved = batch.trees.get(tree)?.preserved_tree.clone();
            let object = preserved.as_object_mut()?;
            if object.is_empty() {
                return None;
            }
            if let Some(current) = object.get("currentNode").and_then(id) {
                object.insert("currentNode".into(), current);
            }
            if let Some(Value::Array(edges)) = object.get_mut("edges") {
                for edge in edges {
                    if let Some(target) = edge.get("target").and_then(id) {
                        edge["target"] = target;
                    }
                    if let Some(Value::Array(sources)) = edge.get_mut("sources") {
                        for source in sources {
                            if let Some(node) = source.get("node").and_then(id) {
                                source["node"] = node;
                            }
                        }
                    }
                }
            }
            Some(batch.skim.expand(preserved.to_string()))
        }
        Preserved::Settings(tree) => {
            let mut settings = batch.trees.get(tree)?.settings.clone()?;
            if let Some(Value::Array(hits)) = settings.get_mut("searchHits") {
                *hits = hits.iter().filter_map(id).collect();
            }
            Some(settings.to_string())
        }
        Preserved::Node(tree, node) => {
            let mut preserved = batch.trees.get(tree)?.preserved_nodes.get(node)?.clone()?;
            if let Some(Value::Array(sources)) =
                preserved.get_mut("edge").and_then(|edge| edge.get_mut("extraSources"))
            {
                for source in sources {
                    if let Some(node) = source.get("node").and_then(id) {
                        source["node"] = node;
                    }
                }
            }
            Some(batch.skim.expand(preserved.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_of_more_messages_than_an_import_takes_is_refused_before_reading() {
        let nodes: Map<String, Value> =
            (0..=MAX_IMPORT_MESSAGES).map(|index| (index.to_string(), Value::Null)).collect();
        let trees = [json!({ "title": "Huge", "nodes": {} }), json!({ "nodes": nodes })];
        let skim = Skim::new(String::new());
        let refused = check_limits(&skim, &trees).unwrap_err().to_string();
        assert_eq!(
            refused,
            "$.trees: hold 1000001 messages; Pinloom imports up to 1000000 at once: split the \
             document; nothing was imported"
        );
        assert!(check_limits(&skim, &trees[..1]).is_ok());
    }

    /// Pinloom's extension records read field by field: a damaged field costs that field, a
    /// record that is not an object reads as empty (a list is not read as fields in order), and
    /// a summary or log entry without a text is left out.
    #[test]
    fn damaged_extension_records_lose_only_what_is_damaged() {
        let document = json!({
            "format": "open-loom",
            "version": "2.0",
            "trees": [{
                "title": "Damaged",
                "nodes": { "a": { "content": [{ "type": "text", "text": "hello" }] } },
                "edges": [],
                "extensions": { "pinloom": {
                    "threads": [
                        { "id": "t1", "title": 7, "anchor": [1, 2, "x"], "order": -1 },
                        ["t2", null, "a"],
                        { "id": "t3", "parent": "t1", "anchorNode": "a",
                          "anchor": { "start": 0, "end": 5, "text": "hello" }, "order": 9 }
                    ],
                    "summaries": [
                        { "thread": "t3", "upTo": "a", "budget": 4294967296_u64, "text": "kept",
                          "log": [{ "text": "first", "inputChars": "many" }, 3, {}] },
                        { "thread": "t3", "text": 5 }
                    ]
                }}
            }]
        });
        let skim = Skim::new(document.to_string());
        let skeleton = skim.document().unwrap();
        let batch = read_document(skim, &skeleton, "hint", 1_000).unwrap();
        let tree = &batch.trees[0].import;
        let pins: Vec<_> =
            tree.pins.iter().map(|pin| (pin.title.as_str(), pin.parent, pin.order)).collect();
        assert_eq!(
            pins,
            [
                ("Untitled thread", None, 0),
                ("Untitled thread", None, 1),
                // t3 names t1 as its parent, but its anchor sits in the tree's main line: the
                // anchor decides where a pin hangs.
                ("Untitled thread", None, 9)
            ]
        );
        assert_eq!(tree.pins[0].anchor, None, "a list is not an anchor");
        assert_eq!(tree.pins[2].anchor.as_ref().map(|anchor| anchor.text.as_str()), Some("hello"));
        assert_eq!(tree.pins[2].anchor_node, Some(0));
        assert_eq!(tree.summaries.len(), 1, "a summary without a text is left out");
        let summary = &tree.summaries[0];
        assert_eq!((summary.pin, summary.path_end, summary.budget), (Some(2), Some(0), None));
        let log: Vec<_> =
            summary.log.iter().map(|write| (write.text.as_str(), write.input_chars)).collect();
        assert_eq!(log, [("first", 0)]);
    }
}
