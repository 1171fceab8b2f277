//! Pinloom's trees as an Open Loom v2 document.
//!
//! Ids are ordinals: nodes numbered in a depth-first walk from the roots (children in their
//! order), zero-padded so that the document's key order is that walk; pins in the order the walk
//! first meets their threads. An import writes the nodes in that same walk, so exporting what
//! was imported gives the same ids again.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::io::Write;

use pinloom_store::{
    self as store, AttachmentRole, AttachmentScope, Author, NodeId, Part, PinId, Store, TreeId,
    TreeMode,
};
use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value, json};

use super::open_loom_records::{
    AttachmentRecord, DocumentExtension, EdgeRecord, Lenient, NodeExtension, ProfileRecord,
    Records, SourceList, SourceRecord, SummaryRecord, SummaryWriteRecord, ThreadRecord,
    WrittenText,
};
use super::{PINLOOM, iso};
use crate::json::ExportOptions;

/// Writes one document holding `trees`, in that order, to `out` as indented JSON (ending in a
/// line break). Messages and edges, the bulk of a document, are written from typed records as
/// they are reached, never held as a JSON value tree; the document's smaller parts (threads,
/// summaries, what imports kept) are values. Keys come in sorted order, as they always have.
pub(super) fn write_document(
    store: &Store,
    trees: &[TreeId],
    options: ExportOptions,
    now_ms: i64,
    progress: &mut dyn FnMut(usize),
    mut out: impl Write,
) -> anyhow::Result<()> {
    // The document's own fields come before its trees, and the profiles they name are found
    // while reading the trees, so every tree is read before anything is written.
    let mut named = BTreeSet::new();
    let mut agents = Map::new();
    let mut extensions = Map::new();
    let mut prepared = Vec::with_capacity(trees.len());
    for (index, tree) in trees.iter().enumerate() {
        let tree = PreparedTree::read(store, *tree, index + 1, options, &mut named)?;
        // What earlier imports kept of their documents' registries and other apps' extensions.
        if let Some(preserved) = &tree.document_preserved {
            if let Some(Value::Object(preserved_agents)) = preserved.get("agents") {
                agents.extend(preserved_agents.clone());
            }
            if let Some(Value::Object(preserved_extensions)) = preserved.get("extensions") {
                extensions.extend(preserved_extensions.clone());
            }
        }
        prepared.push(tree);
    }
    let profiles: Vec<ProfileRecord> = store
        .profiles()?
        .into_iter()
        .filter(|profile| named.contains(&profile.name))
        .map(|profile| ProfileRecord {
            name: Lenient::of(profile.name),
            provider: Lenient::of(profile.provider),
            model_id: Lenient::of(profile.model_id),
            base_url: profile.base_url.into(),
            context_window: Lenient::of(profile.context_window),
            reserve: Lenient::of(profile.reserve),
            native_system: Lenient::of(profile.native_system),
            completion_endpoint: Lenient::of(profile.completion_endpoint),
            tokenizer: Lenient::of(profile.tokenizer),
            agent_system_prompt: (options.system_prompts
                && !profile.agent_system_prompt.is_empty())
            .then_some(profile.agent_system_prompt)
            .into(),
            sampling: Some(parsed(&profile.sampling_json)),
            settings: Some(parsed(&profile.settings_json)),
            prices: profile.prices_json.as_deref().map(parsed),
        })
        .collect();
    if !profiles.is_empty() {
        let ours = DocumentExtension { model_profiles: Records(profiles) };
        extensions.insert(PINLOOM.into(), serde_json::to_value(ours)?);
    }
    if !options.system_prompts {
        for agent in agents.values_mut() {
            if let Some(Value::Object(configuration)) = agent.get_mut("configuration") {
                configuration.remove("systemPrompt");
            }
        }
    }
    let progress = RefCell::new(Progress { report: progress, before: 0 });
    let document = DocumentOut {
        agents: (!agents.is_empty()).then_some(&agents),
        exported_at: iso(now_ms),
        extensions: (!extensions.is_empty()).then_some(&extensions),
        format: "open-loom",
        generator: GeneratorOut { name: "Pinloom", version: env!("CARGO_PKG_VERSION") },
        trees: TreesOut { trees: &prepared, options, progress: &progress },
        version: "2.0",
    };
    // serde writes in small pieces: `out` buffers (a file is wrapped in a `BufWriter`).
    serde_json::to_writer_pretty(&mut out, &document)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// How far the writing is, in messages of all trees so far.
struct Progress<'a> {
    report: &'a mut dyn FnMut(usize),
    before: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DocumentOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    agents: Option<&'a Map<String, Value>>,
    exported_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    extensions: Option<&'a Map<String, Value>>,
    format: &'static str,
    generator: GeneratorOut,
    trees: TreesOut<'a>,
    version: &'static str,
}

#[derive(Serialize)]
struct GeneratorOut {
    name: &'static str,
    version: &'static str,
}

struct TreesOut<'a> {
    trees: &'a [PreparedTree],
    options: ExportOptions,
    progress: &'a RefCell<Progress<'a>>,
}

impl Serialize for TreesOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut list = serializer.serialize_seq(Some(self.trees.len()))?;
        for tree in self.trees {
            list.serialize_element(&TreeOut::new(tree, self.options, self.progress))?;
            let mut progress = self.progress.borrow_mut();
            progress.before += tree.nodes.len();
            let done = progress.before;
            (progress.report)(done);
        }
        list.end()
    }
}

/// The depth-first order of a tree's nodes: roots by id, each node's children by id.
fn walk(nodes: &[store::Node]) -> Vec<usize> {
    let index: HashMap<NodeId, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut roots = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        match node.parent_id.and_then(|parent| index.get(&parent)) {
            Some(&parent) => children[parent].push(i),
            None => roots.push(i),
        }
    }
    // `nodes` come in id order, so children and roots are already in id order.
    let mut order = Vec::with_capacity(nodes.len());
    let mut stack: Vec<usize> = roots.into_iter().rev().collect();
    while let Some(i) = stack.pop() {
        order.push(i);
        stack.extend(children[i].iter().rev());
    }
    order
}

/// An ordinal id: the prefix and the number padded to the width of the largest.
fn ordinal(prefix: &str, number: usize, count: usize) -> String {
    let width = count.max(1).to_string().len();
    format!("{prefix}{number:0width$}")
}

/// A tree read for writing: its messages, the ids the document gives them, and its smaller
/// parts already as values.
struct PreparedTree {
    /// `t1`, `t2`, … in the document's order.
    id: String,
    tree: store::Tree,
    nodes: Vec<store::Node>,
    /// The depth-first walk, as indexes into `nodes`.
    order: Vec<usize>,
    node_ids: HashMap<NodeId, String>,
    pin_ids: HashMap<PinId, String>,
    /// Each message's global id, the same on every machine that syncs it.
    global_ids: HashMap<NodeId, String>,
    /// What an import kept of each message's own fields.
    node_preserved: HashMap<NodeId, Map<String, Value>>,
    receipts: HashMap<NodeId, store::Receipt>,
    /// The messages each question over picked messages was asked over, in the order picked.
    picks: HashMap<NodeId, Vec<(NodeId, bool)>>,
    annotations: Vec<store::Annotation>,
    /// The tree's `extensions`, Pinloom's own (threads, summaries, attachments, settings) in.
    extensions: Map<String, Value>,
    /// What an import kept of the tree's own fields.
    tree_preserved: Map<String, Value>,
    root_ids: Vec<String>,
    current: Option<String>,
    /// The document-level data an import kept with this tree, if any.
    document_preserved: Option<Value>,
}

impl PreparedTree {
    fn read(
        store: &Store,
        tree_id: TreeId,
        number: usize,
        options: ExportOptions,
        profiles: &mut BTreeSet<String>,
    ) -> anyhow::Result<PreparedTree> {
        let tree = store.tree(tree_id)?;
        let nodes = store.tree_nodes(tree_id)?;
        let links: Vec<_> = nodes.iter().map(|node| (node.id, node.parent_id)).collect();
        pinloom_store::check_tree_links(tree_id, &links)?;
        profiles.extend(nodes.iter().filter_map(|node| node.model.clone()));
        let pins = store.all_pins(tree_id)?;
        let preserved = store.interchange(tree_id)?;
        let receipts = store.receipts(&nodes.iter().map(|node| node.id).collect::<Vec<_>>())?;
        let tree_preserved: Map<String, Value> =
            preserved.tree.and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default();
        let node_preserved: HashMap<NodeId, Map<String, Value>> = preserved
            .nodes
            .into_iter()
            .filter_map(|(id, text)| Some((id, serde_json::from_str(&text).ok()?)))
            .collect();

        let order = walk(&nodes);
        let mut node_ids: HashMap<NodeId, String> = HashMap::with_capacity(nodes.len());
        for (position, &i) in order.iter().enumerate() {
            node_ids.insert(nodes[i].id, ordinal("n", position + 1, nodes.len()));
        }
        let root_ids = order
            .iter()
            .filter(|&&i| nodes[i].parent_id.and_then(|parent| node_ids.get(&parent)).is_none())
            .map(|&i| node_ids[&nodes[i].id].clone())
            .collect();
        let pin_order = pin_order(&pins, &nodes, &order);
        let pin_ids: HashMap<PinId, String> = pin_order
            .iter()
            .enumerate()
            .map(|(position, &i)| (pins[i].id, ordinal("p", position + 1, pins.len())))
            .collect();
        let node_ref = |id: Option<NodeId>| id.and_then(|id| node_ids.get(&id)).cloned();
        let preserved_ref =
            |value: Option<&Value>| preserved_node_ref(&node_ids, value).map(str::to_owned);
        let threads = thread_records(&pins, &pin_order, &pin_ids, &node_ids);
        let summaries = summary_records(store, tree_id, &pin_ids, &node_ids, profiles)?;
        let attachments = attachment_records(store, tree_id, &pin_ids, &node_ids)?;

        let pinloom = tree_extension(
            &tree,
            [("threads", threads), ("summaries", summaries), ("attachments", attachments)],
            |hit| preserved_ref(Some(hit)),
            profiles,
        );
        let mut extensions = tree_preserved
            .get("extensions")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        extensions.insert(PINLOOM.into(), pinloom);

        let current = match tree_preserved.get("currentNode") {
            Some(preserved) => preserved_ref(Some(preserved)),
            None => node_ref(store.newest_node(tree_id)?),
        };
        let document_preserved = preserved_document(store, &tree_preserved)?;
        let annotations = store.tree_annotations(tree_id)?;
        let firsts: Vec<NodeId> =
            nodes.iter().filter(|node| node.parent_id.is_none()).map(|node| node.id).collect();
        let mut picks: HashMap<NodeId, Vec<(NodeId, bool)>> = HashMap::new();
        for picked in store.picked_for(&firsts)? {
            picks.entry(picked.question).or_default().push((picked.node.id, picked.with_summary));
        }
        Ok(PreparedTree {
            id: format!("t{number}"),
            tree,
            nodes,
            order,
            node_ids,
            pin_ids,
            global_ids: store.node_global_ids(tree_id)?,
            node_preserved,
            receipts,
            picks,
            annotations,
            extensions,
            tree_preserved: filter_system_prompts(tree_preserved, options),
            root_ids,
            current,
            document_preserved,
        })
    }

    /// A node id stored by an import (a row id), as this document names it.
    fn preserved_ref(&self, value: Option<&Value>) -> Option<&str> {
        preserved_node_ref(&self.node_ids, value)
    }
}

/// A tree's own `pinloom` extension: its slug and global id, team and buffer flags, settings
/// (search hits named by this document's ids; a summariser named joins `profiles`) and the
/// lists of its threads, summaries and attachments that have any.
fn tree_extension(
    tree: &store::Tree,
    lists: [(&str, Vec<Value>); 3],
    hit_ref: impl Fn(&Value) -> Option<String>,
    profiles: &mut BTreeSet<String>,
) -> Value {
    let mut pinloom = json!({ "slug": tree.slug, "globalId": tree.global_id });
    if tree.sharing == store::Sharing::Team {
        pinloom["sharing"] = json!("team");
    }
    if tree.buffer_includes_system {
        pinloom["bufferIncludesSystem"] = json!(true);
    }
    let mut settings = parsed(&tree.settings_json);
    profiles.extend(settings.get("summarizer").and_then(Value::as_str).map(str::to_owned));
    // Messages added to the search slice are named by their ids in this document.
    if let Some(Value::Array(hits)) = settings.get_mut("searchHits") {
        *hits = hits.iter().filter_map(|hit| hit_ref(hit).map(Value::String)).collect();
    }
    if settings.as_object().is_some_and(|settings| !settings.is_empty()) {
        pinloom["settings"] = settings;
    }
    for (key, list) in lists {
        if !list.is_empty() {
            pinloom[key] = Value::Array(list);
        }
    }
    pinloom
}

/// A tree's threads as the document lists them: in the ids' (walk) order, each with its
/// `order` among its siblings (the order `pins` come in, which ThreadMind lists them by).
fn thread_records(
    pins: &[store::Pin],
    pin_order: &[usize],
    pin_ids: &HashMap<PinId, String>,
    node_ids: &HashMap<NodeId, String>,
) -> Vec<Value> {
    pin_order
        .iter()
        .map(|&listed| {
            let pin = &pins[listed];
            let closed = pin.closed_at_ms.zip(pin.result.as_ref());
            let record = ThreadRecord {
                id: Lenient::of(pin_ids[&pin.id].clone()),
                parent: pin.parent_pin_id.and_then(|p| pin_ids.get(&p)).cloned().into(),
                anchor_node: pin.anchor_node_id.and_then(|id| node_ids.get(&id)).cloned().into(),
                anchor: pin
                    .anchor
                    .as_ref()
                    .map(|range| json!({ "start": range.start, "end": range.end, "text": range.text }))
                    .into(),
                title: Lenient::of(pin.title.clone()),
                slug: Lenient::of(pin.slug.clone()),
                closed_at: closed.map(|(at, _)| iso(at)).into(),
                result: closed.map(|(_, result)| result.clone()).into(),
                created_at: Lenient::of(iso(pin.created_at_ms)),
                deleted_at: pin.deleted_at_ms.map(iso).into(),
                order: Lenient::of(listed as u64),
            };
            serde_json::to_value(record).unwrap_or(Value::Null)
        })
        .collect()
}

/// A summary as the document holds it, without what names its place (thread, end, versions).
fn summary_record(summary: &store::Summary, log: &[store::SummaryUpdate]) -> SummaryRecord {
    SummaryRecord {
        budget: summary.key.budget.into(),
        summarizer: (!summary.key.summarizer.is_empty())
            .then(|| summary.key.summarizer.clone())
            .into(),
        written_by: (summary.written_by != store::SummaryAuthor::Model)
            .then(|| summary.written_by.as_str().to_owned())
            .into(),
        chosen: summary.chosen.then_some(true).into(),
        written: WrittenText {
            text: Lenient::of(summary.text.clone()),
            input_chars: Lenient::of(summary.input_chars),
            input_tokens: Lenient::of(summary.input_tokens),
        },
        updated_at: Lenient::of(iso(summary.updated_at_ms)),
        log: Records(
            log.iter()
                .map(|write| SummaryWriteRecord {
                    written: WrittenText {
                        text: Lenient::of(write.text.clone()),
                        input_chars: Lenient::of(write.input_chars),
                        input_tokens: Lenient::of(write.input_tokens),
                    },
                    written_at: Lenient::of(iso(write.written_at_ms)),
                })
                .collect(),
        ),
        ..SummaryRecord::default()
    }
}

/// A tree's summaries, each with its fitted versions inside it (they mean nothing without it),
/// in an order that does not depend on the order they were written in. The summarisers they
/// name join `profiles`.
fn summary_records(
    store: &Store,
    tree_id: TreeId,
    pin_ids: &HashMap<PinId, String>,
    node_ids: &HashMap<NodeId, String>,
    profiles: &mut BTreeSet<String>,
) -> anyhow::Result<Vec<Value>> {
    let written = store.tree_summaries(tree_id)?;
    let mut summaries: Vec<Value> = Vec::new();
    for (summary, log) in &written {
        if summary.key.fitted_from.is_some() {
            continue;
        }
        profiles.insert(summary.key.summarizer.clone());
        let mut record = summary_record(summary, log);
        record.thread = summary.key.pin_id.and_then(|p| pin_ids.get(&p)).cloned().into();
        record.up_to = summary.key.path_end.and_then(|id| node_ids.get(&id)).cloned().into();
        let mut fitted: Vec<(String, SummaryRecord)> = written
            .iter()
            .filter(|(other, _)| other.key.fitted_from == Some(summary.id))
            .map(|(other, log)| {
                profiles.insert(other.key.summarizer.clone());
                let version = summary_record(other, log);
                (serde_json::to_value(&version).unwrap_or(Value::Null).to_string(), version)
            })
            .collect();
        fitted.sort_by(|a, b| a.0.cmp(&b.0));
        record.fitted = Records(fitted.into_iter().map(|(_, version)| version).collect());
        summaries.push(serde_json::to_value(record).unwrap_or(Value::Null));
    }
    summaries.sort_by_cached_key(Value::to_string);
    Ok(summaries)
}

/// A tree's attachments as the document holds them.
fn attachment_records(
    store: &Store,
    tree_id: TreeId,
    pin_ids: &HashMap<PinId, String>,
    node_ids: &HashMap<NodeId, String>,
) -> anyhow::Result<Vec<Value>> {
    Ok(store
        .attachments(tree_id)?
        .into_iter()
        .map(|attachment| {
            let (scope, thread, node) = match attachment.scope {
                AttachmentScope::Tree => ("tree", None, None),
                AttachmentScope::Thread(pin) => {
                    ("thread", pin.and_then(|p| pin_ids.get(&p)).cloned(), None)
                }
                AttachmentScope::Node(node) => ("node", None, node_ids.get(&node).cloned()),
            };
            let record = AttachmentRecord {
                scope: Lenient::of(scope.to_owned()),
                thread: thread.into(),
                node: node.into(),
                role: Lenient::of(
                    match attachment.role {
                        AttachmentRole::Context => "context",
                        AttachmentRole::Instruction => "instruction",
                        AttachmentRole::File => "file",
                        AttachmentRole::Folder => "folder",
                        AttachmentRole::Image => "image",
                        AttachmentRole::Pdf => "pdf",
                    }
                    .to_owned(),
                ),
                name: Lenient::of(attachment.name),
                content: Lenient::of(attachment.content),
                created_at: Lenient::of(iso(attachment.created_at_ms)),
            };
            serde_json::to_value(record).unwrap_or(Value::Null)
        })
        .collect())
}

/// The document-level data an import kept with a tree: a document's own data is kept with the
/// first tree it brought, and the others name that tree.
fn preserved_document(
    store: &Store,
    tree_preserved: &Map<String, Value>,
) -> anyhow::Result<Option<Value>> {
    Ok(match (tree_preserved.get("document"), tree_preserved.get("documentIn")) {
        (Some(preserved), _) => Some(preserved.clone()),
        (None, Some(Value::String(id))) => store
            .preserved_document(id)?
            .and_then(|preserved| serde_json::from_str::<Value>(&preserved).ok())
            .and_then(|mut first| first.get_mut("document").map(Value::take)),
        _ => None,
    })
}

/// A node id stored by an import (a row id), as `node_ids` names it in this document.
fn preserved_node_ref<'a>(
    node_ids: &'a HashMap<NodeId, String>,
    value: Option<&Value>,
) -> Option<&'a str> {
    value.and_then(Value::as_i64).and_then(|id| node_ids.get(&NodeId(id))).map(String::as_str)
}

/// Without `system_prompts`, the agents an import kept lose their system prompts.
fn filter_system_prompts(
    mut tree_preserved: Map<String, Value>,
    options: ExportOptions,
) -> Map<String, Value> {
    if !options.system_prompts
        && let Some(Value::Object(agents)) = tree_preserved.get_mut("agents")
    {
        for agent in agents.values_mut() {
            if let Some(Value::Object(configuration)) = agent.get_mut("configuration") {
                configuration.remove("systemPrompt");
            }
        }
    }
    tree_preserved
}

/// Pins in the order the walk meets their threads (outer pins first), then the rest by id: as
/// indexes into `pins`.
fn pin_order(pins: &[store::Pin], nodes: &[store::Node], order: &[usize]) -> Vec<usize> {
    let pin_index: HashMap<PinId, usize> =
        pins.iter().enumerate().map(|(i, p)| (p.id, i)).collect();
    let mut placed = vec![false; pins.len()];
    let mut pin_order: Vec<usize> = Vec::with_capacity(pins.len());
    let mut place = |pin: PinId, pin_order: &mut Vec<usize>| {
        let mut chain = Vec::new();
        let mut current = Some(pin);
        while let Some(id) = current {
            let Some(&i) = pin_index.get(&id) else { break };
            if placed[i] || chain.contains(&i) {
                break;
            }
            chain.push(i);
            current = pins[i].parent_pin_id;
        }
        for &i in &chain {
            placed[i] = true;
        }
        pin_order.extend(chain.into_iter().rev());
    };
    for &i in order {
        if let Some(pin) = nodes[i].pin_id {
            place(pin, &mut pin_order);
        }
    }
    for pin in pins {
        place(pin.id, &mut pin_order);
    }
    pin_order
}

/// A tree as the document writes it; keys in sorted order, as JSON objects always were.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TreeOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    agents: Option<&'a Value>,
    created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    current_node_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a Value>,
    edges: EdgesOut<'a>,
    extensions: &'a Map<String, Value>,
    id: &'a str,
    mode: Cow<'a, Value>,
    nodes: NodesOut<'a>,
    root_node_ids: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    system_context: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tags: Option<&'a Value>,
    title: &'a str,
    updated_at: String,
}

impl<'a> TreeOut<'a> {
    fn new(
        prepared: &'a PreparedTree,
        options: ExportOptions,
        progress: &'a RefCell<Progress<'a>>,
    ) -> TreeOut<'a> {
        let tree = &prepared.tree;
        let preserved = |key: &str| prepared.tree_preserved.get(key);
        TreeOut {
            agents: preserved("agents").filter(|agents| agents.is_object()),
            created_at: iso(tree.created_at_ms),
            current_node_id: prepared.current.as_deref(),
            description: preserved("description"),
            edges: EdgesOut { prepared },
            extensions: &prepared.extensions,
            id: &prepared.id,
            mode: preserved("mode").map_or_else(
                || {
                    Cow::Owned(json!(match tree.mode {
                        TreeMode::Dialogue => "dialogue",
                        TreeMode::Buffer => "buffer",
                    }))
                },
                Cow::Borrowed,
            ),
            nodes: NodesOut { prepared, options, progress },
            root_node_ids: &prepared.root_ids,
            system_context: (options.system_prompts && !tree.system_context.is_empty())
                .then_some(tree.system_context.as_str()),
            tags: preserved("tags"),
            title: &tree.title,
            updated_at: iso(tree.updated_at_ms),
        }
    }
}

/// A tree's nodes by id: its notes (`a…`), then its messages (`n…`) in the walk's order, which
/// is their ids' order.
struct NodesOut<'a> {
    prepared: &'a PreparedTree,
    options: ExportOptions,
    progress: &'a RefCell<Progress<'a>>,
}

impl Serialize for NodesOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let prepared = self.prepared;
        let mut map = serializer.serialize_map(None)?;
        for (position, note) in prepared.annotations.iter().enumerate() {
            if !prepared.node_ids.contains_key(&note.node_id) {
                continue;
            }
            let id = ordinal("a", position + 1, prepared.annotations.len());
            let node = NodeOut {
                author: AuthorOut::Written { name: None, role: "human" },
                content: ContentOut::Text([TextBlock {
                    text: Cow::Borrowed(&note.text),
                    kind: "text",
                }]),
                created_at: Some(iso(note.created_at_ms)),
                edited_from: None,
                extensions: None,
                generation: None,
                id: &id,
                meta: None,
            };
            map.serialize_entry(&id, &node)?;
        }
        for (done, &i) in prepared.order.iter().enumerate() {
            if done.is_multiple_of(store::PROGRESS_EVERY) {
                let mut progress = self.progress.borrow_mut();
                let so_far = progress.before + done;
                (progress.report)(so_far);
            }
            let node = &prepared.nodes[i];
            let id = &prepared.node_ids[&node.id];
            map.serialize_entry(id, &node_out(prepared, node, id, self.options))?;
        }
        map.end()
    }
}

/// A message or note as the document writes it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NodeOut<'a> {
    author: AuthorOut<'a>,
    content: ContentOut<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    created_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    edited_from: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extensions: Option<ExtensionsOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    generation: Option<GenerationOut<'a>>,
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    meta: Option<Map<String, Value>>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum AuthorOut<'a> {
    /// As an import kept it.
    Preserved(&'a Value),
    Written {
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<&'a str>,
        role: &'static str,
    },
}

#[derive(Serialize)]
#[serde(untagged)]
enum ContentOut<'a> {
    /// As an import kept it.
    Preserved(&'a Value),
    /// One text block: a message of plain text.
    Text([TextBlock<'a>; 1]),
    /// A block per part, tool calls and results as text.
    Parts(Vec<TextBlock<'a>>),
}

#[derive(Serialize)]
struct TextBlock<'a> {
    text: Cow<'a, str>,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
#[serde(untagged)]
enum GenerationOut<'a> {
    /// As an import kept it (without its raw response unless asked for).
    Preserved(Cow<'a, Value>),
    Written {
        #[serde(skip_serializing_if = "Option::is_none")]
        model: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        parameters: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        usage: Option<UsageOut>,
    },
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UsageOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    completion_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_tokens: Option<u64>,
}

/// A message's `extensions`: what an import kept, and Pinloom's own under `pinloom`, in key order.
struct ExtensionsOut<'a> {
    preserved: Option<&'a Map<String, Value>>,
    pinloom: Option<NodeExtension>,
}

impl Serialize for ExtensionsOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut ours = self.pinloom.as_ref();
        for (key, value) in self.preserved.into_iter().flatten() {
            if let Some(pinloom) = ours.filter(|_| key.as_str() >= PINLOOM) {
                map.serialize_entry(PINLOOM, pinloom)?;
                ours = None;
                if key == PINLOOM {
                    continue;
                }
            }
            map.serialize_entry(key, value)?;
        }
        if let Some(pinloom) = ours {
            map.serialize_entry(PINLOOM, pinloom)?;
        }
        map.end()
    }
}

fn node_out<'a>(
    prepared: &'a PreparedTree,
    node: &'a store::Node,
    id: &'a str,
    options: ExportOptions,
) -> NodeOut<'a> {
    let preserved = prepared.node_preserved.get(&node.id);
    let preserved_value = |key: &str| preserved.and_then(|preserved| preserved.get(key));
    let plain = matches!(node.parts.as_slice(), [Part::Text { .. }]);
    let content = match preserved_value("content") {
        Some(preserved) => ContentOut::Preserved(preserved),
        None if plain => {
            ContentOut::Text([TextBlock { text: Cow::Borrowed(&node.text), kind: "text" }])
        }
        None => ContentOut::Parts(
            node.parts
                .iter()
                .map(|part| TextBlock { text: Cow::Owned(part_text(part)), kind: "text" })
                .collect(),
        ),
    };
    let author = match preserved_value("author") {
        Some(preserved) => AuthorOut::Preserved(preserved),
        None => author_out(node.author, node.model.as_deref()),
    };
    let mut meta = preserved_value("meta").and_then(Value::as_object).cloned();
    for (key, set) in [
        ("bookmarked", node.bookmarked),
        ("excluded", node.excluded),
        ("pruned", node.pruned_at_ms.is_some()),
    ] {
        if set {
            meta.get_or_insert_default().insert(key.into(), json!(true));
        }
    }
    let usage: Option<Value> = node.usage_json.as_deref().map(parsed);
    let generation = generation_out(node, preserved_value("generation"), usage.as_ref(), options);
    let pinloom = NodeExtension {
        author: (node.author == Author::Tool).then(|| "tool".to_owned()).into(),
        generation_settings: node.generation_json.as_deref().map(parsed),
        incomplete: node.incomplete.then_some(true).into(),
        kept: node.kept.then_some(true).into(),
        model: node.model.clone().into(),
        parts: (!plain).then(|| serde_json::to_value(&node.parts).unwrap_or(Value::Null)),
        picked: prepared.picks.get(&node.id).map(|picks| {
            picks
                .iter()
                .filter_map(|(picked, with_summary)| {
                    let id = prepared.node_ids.get(picked)?;
                    Some(json!({ "node": id, "withSummary": with_summary }))
                })
                .collect()
        }),
        pruned_at: node.pruned_at_ms.map(iso).into(),
        receipt: prepared
            .receipts
            .get(&node.id)
            .map(|receipt| receipt_json(&receipt.json, &prepared.node_ids, &prepared.pin_ids)),
        thread: node.pin_id.and_then(|pin| prepared.pin_ids.get(&pin)).cloned().into(),
        global_id: prepared.global_ids.get(&node.id).cloned().into(),
        usage,
    };
    let preserved_extensions = preserved_value("extensions")
        .and_then(Value::as_object)
        .filter(|preserved| !preserved.is_empty());
    let pinloom = (!pinloom.is_empty()).then_some(pinloom);
    let extensions = (preserved_extensions.is_some() || pinloom.is_some())
        .then_some(ExtensionsOut { preserved: preserved_extensions, pinloom });
    NodeOut {
        author,
        content,
        created_at: preserved_value("omitCreatedAt").is_none().then(|| iso(node.created_at_ms)),
        edited_from: node
            .edited_from
            .and_then(|original| prepared.node_ids.get(&original))
            .map(String::as_str),
        extensions,
        generation,
        id,
        meta,
    }
}

/// A message's `generation`: as an import preserved it (without its raw response unless asked
/// for), or as Pinloom writes it for a reply with a model or a usage.
fn generation_out<'a>(
    node: &'a store::Node,
    preserved: Option<&'a Value>,
    usage: Option<&Value>,
    options: ExportOptions,
) -> Option<GenerationOut<'a>> {
    match preserved {
        Some(preserved) => {
            let without_raw = !options.raw_responses
                && preserved
                    .as_object()
                    .is_some_and(|preserved| preserved.contains_key("rawResponse"));
            Some(GenerationOut::Preserved(if without_raw {
                let mut preserved = preserved.clone();
                if let Value::Object(generation) = &mut preserved {
                    generation.remove("rawResponse");
                }
                Cow::Owned(preserved)
            } else {
                Cow::Borrowed(preserved)
            }))
        }
        None if node.model.is_some() || usage.is_some() => Some(GenerationOut::Written {
            model: node.model.as_deref(),
            parameters: node.generation_json.as_deref().map(parsed),
            usage: usage.and_then(|usage| {
                let prompt_tokens = usage.get("input_tokens").and_then(Value::as_u64);
                let completion_tokens = usage.get("output_tokens").and_then(Value::as_u64);
                let total_tokens = prompt_tokens.zip(completion_tokens).map(|(i, o)| i + o);
                (prompt_tokens.is_some() || completion_tokens.is_some()).then_some(UsageOut {
                    completion_tokens,
                    prompt_tokens,
                    total_tokens,
                })
            }),
        }),
        None => None,
    }
}

/// A tree's edges: each message's continuation from its parent in the walk's order, each note's
/// annotation edge, then the edges an import could not map, written back as they came.
struct EdgesOut<'a> {
    prepared: &'a PreparedTree,
}

impl Serialize for EdgesOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let prepared = self.prepared;
        let continuation = Value::String("continuation".into());
        let annotation = Value::String("annotation".into());
        let mut list = serializer.serialize_seq(None)?;
        for &i in &prepared.order {
            let node = &prepared.nodes[i];
            let Some(parent) = node.parent_id.and_then(|parent| prepared.node_ids.get(&parent))
            else {
                continue;
            };
            let id = &prepared.node_ids[&node.id];
            let edge_preserved = prepared
                .node_preserved
                .get(&node.id)
                .and_then(|preserved| preserved.get("edge"))
                .and_then(Value::as_object);
            let mut sources = vec![SourceRecord {
                node_id: Cow::Borrowed(parent),
                role: edge_preserved.and_then(|edge| edge.get("role")).map(Cow::Borrowed),
            }];
            for extra in edge_preserved
                .and_then(|edge| edge.get("extraSources"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(node_id) = prepared.preserved_ref(extra.get("node")) {
                    let role = extra.get("role").map(Cow::Borrowed);
                    sources.push(SourceRecord { node_id: Cow::Borrowed(node_id), role });
                }
            }
            list.serialize_element(&EdgeRecord {
                created_at: edge_preserved
                    .and_then(|edge| edge.get("createdAt"))
                    .map(Cow::Borrowed),
                extensions: edge_preserved
                    .and_then(|edge| edge.get("extensions"))
                    .map(Cow::Borrowed),
                id: Lenient::of(format!("e{}", &id[1..])),
                sources: SourceList(sources),
                target_node_id: Lenient::of(Cow::Borrowed(id.as_str())),
                kind: Some(Cow::Borrowed(&continuation)),
            })?;
        }
        let included = json!({ PINLOOM: { "included": true } });
        for (position, note) in prepared.annotations.iter().enumerate() {
            let Some(about) = prepared.node_ids.get(&note.node_id) else { continue };
            let id = ordinal("a", position + 1, prepared.annotations.len());
            list.serialize_element(&EdgeRecord {
                created_at: None,
                extensions: note.included.then_some(Cow::Borrowed(&included)),
                id: Lenient::of(format!("e{id}")),
                sources: SourceList(vec![SourceRecord {
                    node_id: Cow::Borrowed(about),
                    role: None,
                }]),
                target_node_id: Lenient::of(Cow::Borrowed(id.as_str())),
                kind: Some(Cow::Borrowed(&annotation)),
            })?;
        }
        for (position, preserved) in prepared
            .tree_preserved
            .get("edges")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let Some(target) = prepared.preserved_ref(preserved.get("target")) else { continue };
            let sources: Vec<SourceRecord<'_>> = preserved
                .get("sources")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|source| {
                    Some(SourceRecord {
                        node_id: Cow::Borrowed(prepared.preserved_ref(source.get("node"))?),
                        role: source.get("role").map(Cow::Borrowed),
                    })
                })
                .collect();
            list.serialize_element(&EdgeRecord {
                created_at: preserved.get("createdAt").map(Cow::Borrowed),
                extensions: preserved.get("extensions").map(Cow::Borrowed),
                id: Lenient::of(format!("x{}", position + 1)),
                sources: SourceList(sources),
                target_node_id: Lenient::of(Cow::Borrowed(target)),
                kind: Some(preserved.get("type").map_or(Cow::Borrowed(&annotation), Cow::Borrowed)),
            })?;
        }
        list.end()
    }
}

/// A reply's receipt for the document: the messages and threads it names by their document
/// ids, so that an import elsewhere names its own; ids of anything else (attachments, notes,
/// tools) are left out, since the document does not number them.
fn receipt_json(
    stored: &str,
    node_ids: &HashMap<NodeId, String>,
    pin_ids: &HashMap<PinId, String>,
) -> Value {
    let mut receipt = parsed(stored);
    if let Some(Value::Array(sent)) = receipt.get_mut("sent") {
        for entry in sent {
            let source = entry.get("source").and_then(Value::as_str).unwrap_or_default();
            let reference = |value: Option<&Value>| -> Value {
                let Some(id) = value.and_then(Value::as_i64) else { return Value::Null };
                let named = match source {
                    "node" | "retrieval" | "addedSearchHit" | "picked" | "pickedSummary" => {
                        node_ids.get(&NodeId(id))
                    }
                    "summary" | "anchor" | "pinResult" => pin_ids.get(&PinId(id)),
                    _ => None,
                };
                named.map_or(Value::Null, |named| json!(named))
            };
            let first = reference(entry.get("sourceId"));
            let last = reference(entry.get("lastId"));
            entry["sourceId"] = first;
            if entry.get("lastId").is_some_and(|last| !last.is_null()) {
                entry["lastId"] = last;
            }
        }
    }
    receipt
}

/// The Open Loom author of a message Pinloom wrote: a tool's result is the system's, named
/// `tool`; a model's reply names the profile that wrote it.
fn author_out(author: Author, model: Option<&str>) -> AuthorOut<'_> {
    match author {
        Author::Human => AuthorOut::Written { name: None, role: "human" },
        Author::Model => AuthorOut::Written { name: model, role: "model" },
        Author::Tool => AuthorOut::Written { name: Some("tool"), role: "system" },
    }
}

/// [`author_out`] as a value, for the readers that build one.
pub(super) fn author_json(author: Author, model: Option<&str>) -> Value {
    serde_json::to_value(author_out(author, model)).unwrap_or(Value::Null)
}

/// A part as text, for readers that know only text blocks.
fn part_text(part: &Part) -> String {
    match part {
        Part::Text { text } => text.clone(),
        Part::ToolCall { name, arguments, .. } => format!("[tool call {name}: {arguments}]"),
        Part::ToolResult { content, .. } => format!("[tool result: {content}]"),
    }
}

/// JSON stored as text, as a value (an empty object when it does not parse).
fn parsed(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| json!({}))
}
