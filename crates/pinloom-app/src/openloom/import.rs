//! An Open Loom v2 document as trees for the store to write in one transaction.
//!
//! The importer is lenient where the spec asks it to be (unknown fields, damaged graphs are
//! repaired and reported) and strict only where nothing sensible can be read: the document's
//! shape, its format and its major version. What Pinloom does not model (other apps'
//! extensions, provenance, media blocks, agents, tags) is kept as JSON to write back on export,
//! and every such thing, and everything repaired or dropped, is reported.

use std::collections::{BTreeMap, HashMap, HashSet};

use pinloom_store::{
    self as store, Anchor, AnnotationImport, AttachmentImport, AttachmentRole, Author, ImportScope,
    ImportedTree, Kept, NewTree, NodeImport, Part, PinImport, Sharing, SummaryImport,
    SummaryUpdate, TreeImport, TreeMode,
};
use serde_json::{Map, Value, json};

use super::{PINLOOM, parse_time};
use crate::ApiError;
use crate::inputs::token_counts;

/// Everything an import writes, and what it says about it.
pub(super) struct Plan {
    pub(super) trees: Vec<TreeImport>,
    /// Per tree: what it keeps, and what each of its nodes keeps (by import index).
    pub(super) kept: Vec<(Value, Vec<Option<Value>>)>,
    /// Per tree: its settings, messages named by import index.
    pub(super) settings: Vec<Option<Value>>,
    /// Per tree: each node's receipt, the messages and threads it names by import index.
    pub(super) receipts: Vec<Vec<Option<Value>>>,
    pub(super) profiles: Vec<store::ModelProfile>,
    pub(super) notes: Notes,
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
/// The longest text an import takes: far more than any message (a whole book is about 1 MiB),
/// and what the window can still show.
const MAX_IMPORT_TEXT_BYTES: usize = 16 << 20;

/// Refuses a document beyond what an import takes, before anything is planned: too many
/// messages in all, or one text too long. One pass over the document.
fn check_limits(trees: &[Value]) -> anyhow::Result<()> {
    let messages: usize = trees
        .iter()
        .filter_map(|tree| tree.get("nodes").and_then(Value::as_object))
        .map(Map::len)
        .sum();
    if messages > MAX_IMPORT_MESSAGES {
        return Err(refuse(
            "$.trees",
            format!(
                "hold {messages} messages; Pinloom imports up to {MAX_IMPORT_MESSAGES} at once: \
                 split the document"
            ),
        ));
    }
    for (index, tree) in trees.iter().enumerate() {
        let mut pending = vec![tree];
        while let Some(value) = pending.pop() {
            match value {
                Value::String(text) if text.len() > MAX_IMPORT_TEXT_BYTES => {
                    return Err(refuse(
                        &format!("$.trees[{index}]"),
                        format!(
                            "holds a text of {:.1} MiB; Pinloom imports texts up to {} MiB: \
                             shorten it or leave it out",
                            text.len() as f64 / f64::from(1 << 20),
                            MAX_IMPORT_TEXT_BYTES >> 20
                        ),
                    ));
                }
                Value::Array(items) => pending.extend(items),
                Value::Object(members) => pending.extend(members.values()),
                _ => {}
            }
        }
    }
    Ok(())
}

/// Reads a document that says it is Open Loom.
pub(super) fn plan(document: &Value, title_hint: &str, now_ms: i64) -> anyhow::Result<Plan> {
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
    check_limits(trees)?;
    let mut notes = Notes::default();
    let mut kept_document = Map::new();
    if let Some(agents) = document.get("agents") {
        kept_document.insert("agents".into(), agents.clone());
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
            kept_document.insert("extensions".into(), Value::Object(foreign));
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
    let mut plan = Plan {
        trees: Vec::new(),
        kept: Vec::new(),
        settings: Vec::new(),
        receipts: Vec::new(),
        profiles,
        notes,
    };
    // The document's registry and other apps' extensions are kept once, with the first tree;
    // the others name where: a megabyte of agents copied into ten thousand trees would cost
    // ten gigabytes.
    let document_id = (!kept_document.is_empty()).then(|| document_id(now_ms));
    for (index, tree) in trees.iter().enumerate() {
        let path = format!("$.trees[{index}]");
        let document = match &document_id {
            None => KeptDocument::Nothing,
            Some(id) if index == 0 => KeptDocument::Here { kept: &kept_document, id },
            Some(id) => KeptDocument::With(id),
        };
        let read = tree_plan(tree, &path, document, title_hint, now_ms, &mut plan.notes)?;
        plan.trees.push(read.import);
        plan.kept.push((read.kept_tree, read.kept_nodes));
        plan.settings.push(read.settings);
        plan.receipts.push(read.receipts);
    }
    count_in_parallel(&mut plan.trees);
    Ok(plan)
}

/// Counts every message of the trees as a written message is counted, on as many threads as the
/// machine has: counting is the largest part of reading a document.
fn count_in_parallel(trees: &mut [TreeImport]) {
    let mut nodes: Vec<&mut NodeImport> =
        trees.iter_mut().flat_map(|tree| tree.nodes.iter_mut()).collect();
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let share = nodes.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for chunk in nodes.chunks_mut(share) {
            scope.spawn(move || {
                for node in chunk {
                    node.token_counts = token_counts(&node.parts);
                }
            });
        }
    });
}

fn names<'a>(keys: impl Iterator<Item = &'a String>) -> String {
    keys.map(|key| format!("\"{key}\"")).collect::<Vec<_>>().join(", ")
}

/// One tree as read: what to write, and what it and its nodes keep for export.
struct TreePlan {
    import: TreeImport,
    kept_tree: Value,
    kept_nodes: Vec<Option<Value>>,
    settings: Option<Value>,
    receipts: Vec<Option<Value>>,
}

/// A continuation edge into a node, as read.
struct Incoming {
    parent: usize,
    /// What the edge carried beyond its primary source, to write back.
    kept: Map<String, Value>,
}

/// What a tree keeps of its document's own data.
#[derive(Clone, Copy)]
enum KeptDocument<'a> {
    /// The document had none.
    Nothing,
    /// Kept with this tree, under `id`.
    Here { kept: &'a Map<String, Value>, id: &'a str },
    /// Kept with the tree that has `id`.
    With(&'a str),
}

/// A name for what one import kept of its document, unique across imports: the time, the
/// process and a count.
fn document_id(now_ms: i64) -> String {
    static IMPORTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let count = IMPORTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{now_ms:x}-{:x}-{count}", std::process::id())
}

fn tree_plan(
    tree: &Value,
    path: &str,
    document: KeptDocument<'_>,
    title_hint: &str,
    now_ms: i64,
    notes: &mut Notes,
) -> anyhow::Result<TreePlan> {
    let Value::Object(tree) = tree else { return Err(refuse(path, "a tree is a JSON object")) };
    let Some(Value::Object(nodes)) = tree.get("nodes") else {
        return Err(refuse(&format!("{path}.nodes"), "is missing or not an object of nodes by id"));
    };
    let edges: &[Value] = match tree.get("edges") {
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
    let mut kept_tree = Map::new();
    match document {
        KeptDocument::Nothing => {}
        KeptDocument::Here { kept, id } => {
            kept_tree.insert("document".into(), Value::Object(kept.clone()));
            kept_tree.insert("documentId".into(), json!(id));
        }
        KeptDocument::With(id) => {
            kept_tree.insert("documentIn".into(), json!(id));
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
            kept_tree.insert("extensions".into(), Value::Object(foreign));
        }
    }
    for key in ["description", "tags", "agents"] {
        if let Some(value) = tree.get(key) {
            kept_tree.insert(key.into(), value.clone());
            notes.add(format!("{path}.{key} is kept for export; Pinloom does not show it"));
        }
    }

    let keys: Vec<&String> = nodes.keys().collect();
    let index: HashMap<&str, usize> =
        keys.iter().enumerate().map(|(i, k)| (k.as_str(), i)).collect();
    let mut incoming: Vec<Option<Incoming>> = (0..keys.len()).map(|_| None).collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); keys.len()];
    let mut kept_edges: Vec<Value> = Vec::new();
    let mut annotation_edges: Vec<(usize, usize, Map<String, Value>, String)> = Vec::new();
    for (e, edge) in edges.iter().enumerate() {
        let edge_path = format!("{path}.edges[{e}]");
        let Value::Object(edge) = edge else {
            notes.add(format!("{edge_path} is not an object and was dropped"));
            continue;
        };
        let target =
            edge.get("targetNodeId").and_then(Value::as_str).and_then(|t| index.get(t).copied());
        let Some(target) = target else {
            notes.add(format!(
                "{edge_path} names no node of the tree as its target and was dropped"
            ));
            continue;
        };
        let sources: Vec<(usize, Option<Value>)> = edge
            .get("sources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|source| {
                let node =
                    source.get("nodeId").and_then(Value::as_str).and_then(|id| index.get(id))?;
                Some((*node, source.get("role").cloned()))
            })
            .collect();
        if sources.is_empty() {
            notes.add(format!("{edge_path} has no source in the tree and was dropped"));
            continue;
        }
        let kind = edge.get("type").and_then(Value::as_str).unwrap_or("");
        let mut extra = Map::new();
        for key in ["createdAt", "extensions"] {
            if let Some(value) = edge.get(key) {
                extra.insert(key.into(), value.clone());
            }
        }
        if kind == "continuation" && incoming[target].is_none() {
            let primary = sources
                .iter()
                .position(|(_, role)| role.is_none() || role.as_ref().and_then(Value::as_str) == Some("primary"))
                .unwrap_or_else(|| {
                    notes.add(format!("{edge_path} has no primary source: its first source was taken as the parent"));
                    0
                });
            let (parent, role) = &sources[primary];
            if let Some(role) = role {
                extra.insert("role".into(), role.clone());
            }
            let others: Vec<Value> = sources
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != primary)
                .map(|(_, (node, role))| match role {
                    Some(role) => json!({ "node": node, "role": role }),
                    None => json!({ "node": node }),
                })
                .collect();
            if !others.is_empty() {
                notes.add("sources beyond the primary one (context, instruction) are kept for export; Pinloom's parent is the primary source");
                extra.insert("extraSources".into(), Value::Array(others));
            }
            incoming[target] = Some(Incoming { parent: *parent, kept: extra });
            children[*parent].push(target);
            continue;
        }
        if kind == "annotation" && incoming[target].is_none() {
            annotation_edges.push((sources[0].0, target, extra, edge_path));
            continue;
        }
        let why = if kind == "continuation" {
            "is a second continuation into one node (Pinloom keeps trees, not graphs)"
        } else {
            "has an edge type Pinloom does not model"
        };
        notes.add(format!("{edge_path} {why}; it is kept for export"));
        let mut kept = extra;
        kept.insert("type".into(), json!(kind));
        kept.insert("target".into(), json!(target));
        kept.insert(
            "sources".into(),
            Value::Array(
                sources
                    .iter()
                    .map(|(node, role)| match role {
                        Some(role) => json!({ "node": node, "role": role }),
                        None => json!({ "node": node }),
                    })
                    .collect(),
            ),
        );
        kept_edges.push(Value::Object(kept));
    }
    // A loop of continuations (only a damaged file has one) is cut where it closes. Each walk up
    // stops at a node an earlier walk cleared, so the whole check is linear in the nodes.
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
                        "{path}: the continuations into node {:?} close a loop; that edge was dropped",
                        keys[current]
                    ));
                    if let Some(edge) = incoming[current].take() {
                        children[edge.parent].retain(|&child| child != current);
                    }
                    break;
                }
                Visit::Unseen => {
                    visits[current] = Visit::InProgress;
                    walked.push(current);
                    match &incoming[current] {
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
    // Notes: a text-only node that only an annotation edge reaches becomes a note on the source.
    let mut notes_on: Vec<AnnotationImport> = Vec::new();
    let mut note_nodes: HashSet<usize> = HashSet::new();
    for (source, target, extra, edge_path) in annotation_edges {
        let node = &nodes[keys[target].as_str()];
        let text = text_only(node.get("content"));
        let simple = incoming[target].is_none()
            && children[target].is_empty()
            && !note_nodes.contains(&target);
        match text {
            Some(text) if simple => {
                note_nodes.insert(target);
                let included = extra
                    .get("extensions")
                    .and_then(|ext| ext.get(PINLOOM))
                    .and_then(|ours| ours.get("included"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let created = node.get("createdAt").and_then(Value::as_str).and_then(parse_time);
                notes_on.push(AnnotationImport {
                    node: source,
                    text,
                    included,
                    created_at_ms: created.unwrap_or(now_ms),
                });
            }
            _ => {
                notes.add(format!("{edge_path} annotates with a node that is not plain text or is part of the tree; the edge is kept for export"));
                let mut kept = extra;
                kept.insert("type".into(), json!("annotation"));
                kept.insert("target".into(), json!(target));
                kept.insert("sources".into(), json!([{ "node": source }]));
                kept_edges.push(Value::Object(kept));
            }
        }
    }

    // The order nodes are written: depth first from the roots, children in edge order.
    let listed_roots: Vec<usize> = tree
        .get("rootNodeIds")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|id| id.as_str().and_then(|id| index.get(id)).copied())
        .collect();
    let mut roots: Vec<usize> =
        (0..keys.len()).filter(|i| incoming[*i].is_none() && !note_nodes.contains(i)).collect();
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
    let mut order = Vec::with_capacity(keys.len());
    let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
    while let Some(node) = stack.pop() {
        order.push(node);
        stack.extend(children[node].iter().rev().copied());
    }
    let mut position = vec![usize::MAX; keys.len()];
    for (i, &node) in order.iter().enumerate() {
        position[node] = i;
    }

    // Threads, from Pinloom's own extension.
    let threads: Vec<&Value> =
        pinloom.get("threads").and_then(Value::as_array).into_iter().flatten().collect();
    let thread_index: HashMap<&str, usize> = threads
        .iter()
        .enumerate()
        .filter_map(|(i, thread)| Some((thread.get("id")?.as_str()?, i)))
        .collect();
    let node_ref = |value: Option<&Value>| -> Option<usize> {
        let key = value?.as_str()?;
        let node = *index.get(key)?;
        (position[node] != usize::MAX).then_some(position[node])
    };
    let thread_ref = |value: Option<&Value>| {
        value.and_then(Value::as_str).and_then(|id| thread_index.get(id).copied())
    };
    let pins: Vec<PinImport> = threads
        .iter()
        .enumerate()
        .map(|(i, thread)| PinImport {
            parent: thread_ref(thread.get("parent")),
            anchor_node: node_ref(thread.get("anchorNode")),
            anchor: thread.get("anchor").and_then(|anchor| {
                Some(Anchor {
                    start: u32::try_from(anchor.get("start")?.as_u64()?).ok()?,
                    end: u32::try_from(anchor.get("end")?.as_u64()?).ok()?,
                    text: anchor.get("text")?.as_str()?.to_owned(),
                })
            }),
            title: thread
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or("Untitled thread")
                .to_owned(),
            slug: thread.get("slug").and_then(Value::as_str).map(str::to_owned),
            closed: match (
                time_of(thread.get("closedAt")),
                thread.get("result").and_then(Value::as_str),
            ) {
                (Some(at), Some(result)) => Some((at, result.to_owned())),
                _ => None,
            },
            created_at_ms: time_of(thread.get("createdAt")).unwrap_or(now_ms),
            deleted_at_ms: time_of(thread.get("deletedAt")),
            order: thread.get("order").and_then(Value::as_u64).map_or(i, |order| order as usize),
        })
        .collect();

    let mut imports = Vec::with_capacity(order.len());
    let mut kept_nodes = Vec::with_capacity(order.len());
    let mut receipts = Vec::with_capacity(order.len());
    for &node in &order {
        let node_path = format!("{path}.nodes[{:?}]", keys[node]);
        let value = &nodes[keys[node].as_str()];
        let (import, kept, receipt) =
            node_plan(value, &node_path, now_ms, notes, &|v| node_ref(v), &|v| thread_ref(v));
        receipts.push(receipt);
        let mut import = import;
        import.parent = incoming[node].as_ref().map(|edge| position[edge.parent]);
        let mut kept = kept;
        if let Some(edge) = &incoming[node]
            && !edge.kept.is_empty()
        {
            let mut edge_kept = edge.kept.clone();
            if let Some(Value::Array(extra)) = edge_kept.get_mut("extraSources") {
                for source in extra {
                    if let Some(original) = source.get("node").and_then(Value::as_u64) {
                        source["node"] = json!(position[original as usize]);
                    }
                }
            }
            kept.insert("edge".into(), Value::Object(edge_kept));
        }
        imports.push(import);
        kept_nodes.push((!kept.is_empty()).then_some(Value::Object(kept)));
    }
    // A note on a note (or on itself) has no message to hang on: it is left out, said once.
    let placed = |node: usize| position.get(node).copied().filter(|&at| at != usize::MAX);
    notes_on.retain_mut(|note| match placed(note.node) {
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
    kept_edges.retain_mut(|edge| {
        let mut whole = true;
        if let Some(target) = edge.get("target").and_then(Value::as_u64) {
            match placed(target as usize) {
                Some(at) => edge["target"] = json!(at),
                None => whole = false,
            }
        }
        if let Some(Value::Array(sources)) = edge.get_mut("sources") {
            for source in sources {
                if let Some(node) = source.get("node").and_then(Value::as_u64) {
                    match placed(node as usize) {
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
    if !kept_edges.is_empty() {
        kept_tree.insert("edges".into(), Value::Array(kept_edges));
    }
    if let Some(current) = tree.get("currentNodeId").and_then(Value::as_str) {
        match index.get(current).filter(|node| position[**node] != usize::MAX) {
            Some(&node) => {
                kept_tree.insert("currentNode".into(), json!(position[node]));
            }
            None => notes
                .add(format!("{path}.currentNodeId names no message of the tree and was dropped")),
        }
    }

    let summaries = pinloom
        .get("summaries")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|summary| {
            Some(SummaryImport {
                pin: thread_ref(summary.get("thread")),
                path_end: node_ref(summary.get("upTo")),
                budget: summary
                    .get("budget")
                    .and_then(Value::as_u64)
                    .and_then(|b| u32::try_from(b).ok()),
                summarizer: summary
                    .get("summarizer")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                text: summary.get("text")?.as_str()?.to_owned(),
                input_chars: summary.get("inputChars").and_then(Value::as_u64).unwrap_or(0),
                input_tokens: summary.get("inputTokens").and_then(Value::as_u64).unwrap_or(0),
                updated_at_ms: time_of(summary.get("updatedAt")).unwrap_or(now_ms),
                log: summary
                    .get("log")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|write| {
                        Some(SummaryUpdate {
                            text: write.get("text")?.as_str()?.to_owned(),
                            input_chars: write
                                .get("inputChars")
                                .and_then(Value::as_u64)
                                .unwrap_or(0),
                            input_tokens: write
                                .get("inputTokens")
                                .and_then(Value::as_u64)
                                .unwrap_or(0),
                            written_at_ms: time_of(write.get("writtenAt")).unwrap_or(now_ms),
                        })
                    })
                    .collect(),
            })
        })
        .collect();
    let attachments = pinloom
        .get("attachments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|attachment| {
            let scope = match attachment.get("scope")?.as_str()? {
                "tree" => ImportScope::Tree,
                "thread" => ImportScope::Thread(thread_ref(attachment.get("thread"))),
                "node" => ImportScope::Node(node_ref(attachment.get("node"))?),
                _ => return None,
            };
            Some(AttachmentImport {
                scope,
                role: match attachment.get("role")?.as_str()? {
                    "context" => AttachmentRole::Context,
                    "instruction" => AttachmentRole::Instruction,
                    "file" => AttachmentRole::File,
                    "folder" => AttachmentRole::Folder,
                    _ => return None,
                },
                name: attachment.get("name")?.as_str()?.to_owned(),
                content: attachment.get("content")?.as_str()?.to_owned(),
                created_at_ms: time_of(attachment.get("createdAt")).unwrap_or(now_ms),
            })
        })
        .collect();

    let settings = pinloom.get("settings").cloned().map(|mut settings| {
        if let Some(Value::Array(hits)) = settings.get_mut("searchHits") {
            *hits = hits
                .iter()
                .filter_map(|hit| node_ref(Some(hit)).map(|index| json!(index)))
                .collect();
        }
        settings
    });
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
            kept_tree.insert("mode".into(), json!(other));
            TreeMode::Dialogue
        }
    };
    let created_at_ms = time_of(tree.get("createdAt")).unwrap_or(now_ms);
    let import = TreeImport {
        tree: NewTree {
            title,
            mode,
            system_context: tree
                .get("systemContext")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            sharing: match pinloom.get("sharing").and_then(Value::as_str) {
                Some("team") => Sharing::Team,
                _ => Sharing::Solo,
            },
            created_at_ms,
        },
        slug: pinloom.get("slug").and_then(Value::as_str).map(str::to_owned),
        buffer_includes_system: pinloom
            .get("bufferIncludesSystem")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        settings_json: "{}".to_owned(),
        updated_at_ms: time_of(tree.get("updatedAt")).unwrap_or(created_at_ms),
        nodes: imports,
        pins,
        summaries,
        attachments,
        annotations: notes_on,
    };
    Ok(TreePlan { import, kept_tree: Value::Object(kept_tree), kept_nodes, settings, receipts })
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

fn node_plan(
    value: &Value,
    path: &str,
    now_ms: i64,
    notes: &mut Notes,
    node_ref: &dyn Fn(Option<&Value>) -> Option<usize>,
    thread_ref: &dyn Fn(Option<&Value>) -> Option<usize>,
) -> (NodeImport, Map<String, Value>, Option<Value>) {
    let mut kept = Map::new();
    let empty = Map::new();
    let node = value.as_object().unwrap_or_else(|| {
        notes.add(format!("{path} is not an object: imported as an empty message"));
        &empty
    });
    let pinloom =
        node.get("extensions").and_then(|ext| ext.get(PINLOOM)).and_then(Value::as_object);
    let ours = |key: &str| pinloom.and_then(|ours| ours.get(key));

    // Content: text blocks become text parts; anything else is kept whole for export.
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
    // Pinloom's exact parts (tool calls and results) win over their text rendering; media blocks
    // are kept whatever else the node has.
    if let Some(exact) =
        ours("parts").and_then(|parts| serde_json::from_value::<Vec<Part>>(parts.clone()).ok())
        && !exact.is_empty()
    {
        parts = exact;
    }
    if parts.is_empty() {
        parts.push(Part::Text { text: String::new() });
    }
    if !rebuildable && let Some(content) = node.get("content") {
        kept.insert("content".into(), content.clone());
    }

    let author_value = node.get("author").cloned().unwrap_or_else(|| {
        notes.add(format!("{path}.author is missing: imported as the person's"));
        json!({ "role": "human" })
    });
    let role = author_value.get("role").and_then(Value::as_str).unwrap_or("human");
    let author = match (ours("author").and_then(Value::as_str), role) {
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
    let model = ours("model")
        .or_else(|| generation.and_then(|g| g.get("model")))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let usage_json = ours("usage").map(Value::to_string).or_else(|| {
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
    // Author and generation are kept exactly, unless exporting would write them the same.
    if author_value != super::export::author_json(author, model.as_deref()) {
        kept.insert("author".into(), author_value);
    }
    if let Some(generation) = generation {
        kept.insert("generation".into(), generation.clone());
    }

    let created = match node.get("createdAt") {
        None => {
            kept.insert("omitCreatedAt".into(), json!(true));
            None
        }
        Some(value) => {
            let parsed = value.as_str().and_then(parse_time);
            if parsed.is_none() {
                notes.add(format!(
                    "{path}.createdAt is not an ISO-8601 time with a zone; it was left out"
                ));
                kept.insert("omitCreatedAt".into(), json!(true));
            }
            parsed
        }
    };
    let mut meta = node.get("meta").and_then(Value::as_object).cloned().unwrap_or_default();
    let flag = |meta: &mut Map<String, Value>, key: &str| {
        meta.remove(key).and_then(|v| v.as_bool()).unwrap_or(false)
    };
    let bookmarked = flag(&mut meta, "bookmarked");
    let excluded = flag(&mut meta, "excluded");
    let pruned = flag(&mut meta, "pruned");
    if !meta.is_empty() {
        notes.add(format!("message details {} are kept for export", names(meta.keys())));
        kept.insert("meta".into(), Value::Object(meta));
    }
    if let Some(Value::Object(extensions)) = node.get("extensions") {
        let mut foreign = extensions.clone();
        foreign.remove(PINLOOM);
        if !foreign.is_empty() {
            notes.add(format!("message extensions {} are kept for export", names(foreign.keys())));
            kept.insert("extensions".into(), Value::Object(foreign));
        }
    }
    let edited_from = match node.get("editedFrom") {
        None => None,
        Some(original) => {
            let found = node_ref(Some(original));
            if found.is_none() {
                notes
                    .add(format!("{path}.editedFrom names no message of the tree and was dropped"));
            }
            found
        }
    };
    let pruned_at_ms = match time_of(ours("prunedAt")) {
        Some(at) => Some(at),
        None => pruned.then_some(now_ms),
    };
    let import = NodeImport {
        parent: None,
        pin: thread_ref(ours("thread")),
        edited_from,
        author,
        // Counted for all messages at once when the document is read (`count_in_parallel`).
        token_counts: Vec::new(),
        parts,
        model,
        generation_json: ours("generationSettings").map(Value::to_string),
        usage_json,
        excluded,
        bookmarked,
        kept: ours("kept").and_then(Value::as_bool).unwrap_or(false),
        incomplete: ours("incomplete").and_then(Value::as_bool).unwrap_or(false),
        pruned_at_ms,
        created_at_ms: created.unwrap_or(now_ms),
        receipt_cut: None,
    };
    let receipt = ours("receipt").filter(|receipt| receipt.is_object()).map(|receipt| {
        receipt_references(receipt, |source, id| match source {
            ReceiptSource::Node => node_ref(Some(id)),
            ReceiptSource::Pin => thread_ref(Some(id)),
        })
    });
    let import = NodeImport {
        receipt_cut: receipt
            .as_ref()
            .map(|receipt| receipt.get("verdict").and_then(Value::as_str) == Some("providerCut")),
        ..import
    };
    (import, kept, receipt)
}

/// What kind of thing a receipt's slice names by id.
#[derive(Clone, Copy)]
enum ReceiptSource {
    Node,
    Pin,
}

/// A receipt with the ids its slices name turned by `turn` (document ids into import indices,
/// import indices into the store's ids); an id that turns into nothing becomes `null`.
fn receipt_references<T: serde::Serialize>(
    receipt: &Value,
    turn: impl Fn(ReceiptSource, &Value) -> Option<T>,
) -> Value {
    let mut receipt = receipt.clone();
    if let Some(Value::Array(sent)) = receipt.get_mut("sent") {
        for entry in sent {
            let source = match entry.get("source").and_then(Value::as_str) {
                Some("node" | "retrieval" | "addedSearchHit") => Some(ReceiptSource::Node),
                Some("summary" | "anchor" | "pinResult") => Some(ReceiptSource::Pin),
                _ => None,
            };
            for key in ["sourceId", "lastId"] {
                let Some(id) = entry.get(key).filter(|id| !id.is_null()) else { continue };
                let turned = source.and_then(|source| turn(source, id));
                entry[key] = turned.map_or(Value::Null, |turned| json!(turned));
            }
        }
    }
    receipt
}

fn model_profiles(pinloom: &Value, notes: &mut Notes) -> Vec<store::ModelProfile> {
    pinloom
        .get("modelProfiles")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|profile| {
            let text = |key: &str| profile.get(key).and_then(Value::as_str).map(str::to_owned);
            let number = |key: &str| profile.get(key).and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok());
            let read = Some(store::ModelProfile {
                name: text("name")?,
                provider: text("provider")?,
                model_id: text("modelId")?,
                base_url: text("baseUrl"),
                context_window: number("contextWindow")?,
                reserve: number("reserve")?,
                native_system: profile.get("nativeSystem").and_then(Value::as_bool).unwrap_or(true),
                completion_endpoint: profile.get("completionEndpoint").and_then(Value::as_bool).unwrap_or(false),
                tokenizer: text("tokenizer")?,
                agent_system_prompt: text("agentSystemPrompt").unwrap_or_default(),
                sampling_json: profile.get("sampling").map_or_else(|| "{}".to_owned(), Value::to_string),
                settings_json: profile.get("settings").map_or_else(|| "{}".to_owned(), Value::to_string),
                prices_json: profile.get("prices").filter(|prices| prices.is_object()).map(Value::to_string),
            });
            if read.is_none() {
                notes.add("a model profile without its name, provider, model, window, reserve or tokenizer was left out");
            }
            read
        })
        .collect()
}

/// The JSON a tree or node keeps, its node numbers (import indices) turned into the ids the
/// store gave them.
pub(super) fn kept_json(plan: &Plan, which: Kept, imported: &ImportedTree) -> Option<String> {
    let ids = &imported.nodes;
    let id = |value: &Value| {
        value.as_u64().and_then(|index| ids.get(index as usize)).map(|id| json!(id.0))
    };
    match which {
        Kept::Receipt(tree, node) => {
            let receipt = plan.receipts.get(tree)?.get(node)?.as_ref()?;
            let turned = receipt_references(receipt, |source, index| {
                let index = usize::try_from(index.as_u64()?).ok()?;
                match source {
                    ReceiptSource::Node => imported.nodes.get(index).map(|id| id.0),
                    ReceiptSource::Pin => imported.pins.get(index).map(|id| id.0),
                }
            });
            Some(turned.to_string())
        }
        Kept::Tree(tree) => {
            let mut kept = plan.kept.get(tree)?.0.clone();
            let object = kept.as_object_mut()?;
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
            Some(kept.to_string())
        }
        Kept::Settings(tree) => {
            let mut settings = plan.settings.get(tree)?.clone()?;
            if let Some(Value::Array(hits)) = settings.get_mut("searchHits") {
                *hits = hits.iter().filter_map(id).collect();
            }
            Some(settings.to_string())
        }
        Kept::Node(tree, node) => {
            let mut kept = plan.kept.get(tree)?.1.get(node)?.clone()?;
            if let Some(Value::Array(sources)) =
                kept.get_mut("edge").and_then(|edge| edge.get_mut("extraSources"))
            {
                for source in sources {
                    if let Some(node) = source.get("node").and_then(id) {
                        source["node"] = node;
                    }
                }
            }
            Some(kept.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_of_more_messages_than_an_import_takes_is_refused_before_planning() {
        let nodes: Map<String, Value> =
            (0..=MAX_IMPORT_MESSAGES).map(|index| (index.to_string(), Value::Null)).collect();
        let trees = [json!({ "title": "Huge", "nodes": {} }), json!({ "nodes": nodes })];
        let refused = check_limits(&trees).unwrap_err().to_string();
        assert_eq!(
            refused,
            "$.trees: hold 1000001 messages; Pinloom imports up to 1000000 at once: split the \
             document; nothing was imported"
        );
        assert!(check_limits(&trees[..1]).is_ok());
    }
}
