//! Pinloom's trees as an Open Loom v2 document.
//!
//! Ids are ordinals: nodes numbered in a depth-first walk from the roots (children in their
//! order), zero-padded so that the document's key order is that walk; pins in the order the walk
//! first meets their threads. An import writes the nodes in that same walk, so exporting what
//! was imported gives the same ids again.

use std::collections::HashMap;

use pinloom_store::{
    self as store, AttachmentRole, AttachmentScope, Author, NodeId, Part, PinId, Store, TreeId,
    TreeMode,
};
use serde_json::{Map, Value, json};

use super::{ExportOptions, PINLOOM, iso};

/// One document holding `trees`, in that order.
pub(super) fn document(
    store: &Store,
    trees: &[TreeId],
    options: ExportOptions,
    now_ms: i64,
    progress: &mut dyn FnMut(usize),
) -> anyhow::Result<Value> {
    let mut exported = Vec::with_capacity(trees.len());
    // The profiles the trees name: the models that wrote their messages and their summarisers,
    // so that an import elsewhere can read the provenance and write summaries alike.
    let mut named = std::collections::BTreeSet::new();
    let mut agents = Map::new();
    let mut extensions = Map::new();
    let mut messages_before = 0;
    for (index, tree) in trees.iter().enumerate() {
        let mut tree_progress = |in_tree| progress(messages_before + in_tree);
        let (tree, document_kept, messages) =
            tree_json(store, *tree, index + 1, options, &mut named, &mut tree_progress)?;
        messages_before += messages;
        // What earlier imports kept of their documents' registries and other apps' extensions.
        if let Some(kept) = document_kept {
            if let Some(Value::Object(kept_agents)) = kept.get("agents") {
                agents.extend(kept_agents.clone());
            }
            if let Some(Value::Object(kept_extensions)) = kept.get("extensions") {
                extensions.extend(kept_extensions.clone());
            }
        }
        exported.push(tree);
    }
    let profiles: Vec<Value> = store
        .profiles()?
        .into_iter()
        .filter(|profile| named.contains(&profile.name))
        .map(|profile| {
            let mut value = json!({
                "name": profile.name,
                "provider": profile.provider,
                "modelId": profile.model_id,
                "contextWindow": profile.context_window,
                "reserve": profile.reserve,
                "nativeSystem": profile.native_system,
                "completionEndpoint": profile.completion_endpoint,
                "tokenizer": profile.tokenizer,
                "sampling": parsed(&profile.sampling_json),
                "settings": parsed(&profile.settings_json),
            });
            if let Some(url) = profile.base_url {
                value["baseUrl"] = json!(url);
            }
            if let Some(prices) = &profile.prices_json {
                value["prices"] = parsed(prices);
            }
            if options.system_prompts && !profile.agent_system_prompt.is_empty() {
                value["agentSystemPrompt"] = json!(profile.agent_system_prompt);
            }
            value
        })
        .collect();
    if !profiles.is_empty() {
        extensions.insert(PINLOOM.into(), json!({ "modelProfiles": profiles }));
    }
    if !options.system_prompts {
        for agent in agents.values_mut() {
            if let Some(Value::Object(configuration)) = agent.get_mut("configuration") {
                configuration.remove("systemPrompt");
            }
        }
    }
    let mut document = json!({
        "format": "open-loom",
        "version": "2.0",
        "exportedAt": iso(now_ms),
        "generator": { "name": "Pinloom", "version": env!("CARGO_PKG_VERSION") },
        "trees": exported,
    });
    if !extensions.is_empty() {
        document["extensions"] = Value::Object(extensions);
    }
    if !agents.is_empty() {
        document["agents"] = Value::Object(agents);
    }
    Ok(document)
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

fn tree_json(
    store: &Store,
    tree_id: TreeId,
    number: usize,
    options: ExportOptions,
    profiles: &mut std::collections::BTreeSet<String>,
    progress: &mut dyn FnMut(usize),
) -> anyhow::Result<(Value, Option<Value>, usize)> {
    let tree = store.tree(tree_id)?;
    let nodes = store.tree_nodes(tree_id)?;
    profiles.extend(nodes.iter().filter_map(|node| node.model.clone()));
    let pins = store.all_pins(tree_id)?;
    let kept = store.interchange(tree_id)?;
    let receipts = store.receipts(&nodes.iter().map(|node| node.id).collect::<Vec<_>>())?;
    let (tree_kept, node_kept) = (kept.tree, kept.nodes);
    let tree_kept: Map<String, Value> =
        tree_kept.and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default();
    let node_kept: HashMap<NodeId, Map<String, Value>> = node_kept
        .into_iter()
        .filter_map(|(id, text)| Some((id, serde_json::from_str(&text).ok()?)))
        .collect();

    let order = walk(&nodes);
    let mut node_ids: HashMap<NodeId, String> = HashMap::new();
    for (position, &i) in order.iter().enumerate() {
        node_ids.insert(nodes[i].id, ordinal("n", position + 1, nodes.len()));
    }
    // Pins in the order the walk meets their threads (outer pins first), then the rest by id.
    let pin_index: HashMap<PinId, usize> =
        pins.iter().enumerate().map(|(i, p)| (p.id, i)).collect();
    let mut pin_order: Vec<usize> = Vec::with_capacity(pins.len());
    let place = |pin: PinId, pin_order: &mut Vec<usize>| {
        let mut chain = Vec::new();
        let mut current = Some(pin);
        while let Some(id) = current {
            let Some(&i) = pin_index.get(&id) else { break };
            if pin_order.contains(&i) || chain.contains(&i) {
                break;
            }
            chain.push(i);
            current = pins[i].parent_pin_id;
        }
        pin_order.extend(chain.into_iter().rev());
    };
    for &i in &order {
        if let Some(pin) = nodes[i].pin_id {
            place(pin, &mut pin_order);
        }
    }
    for pin in &pins {
        place(pin.id, &mut pin_order);
    }
    let pin_ids: HashMap<PinId, String> = pin_order
        .iter()
        .enumerate()
        .map(|(position, &i)| (pins[i].id, ordinal("p", position + 1, pins.len())))
        .collect();
    let node_ref = |id: Option<NodeId>| id.and_then(|id| node_ids.get(&id)).cloned();
    let kept_ref = |value: Option<&Value>| {
        value.and_then(Value::as_i64).and_then(|id| node_ids.get(&NodeId(id))).cloned()
    };

    let mut nodes_json = Map::new();
    let mut edges = Vec::new();
    let mut roots = Vec::new();
    for (done, &i) in order.iter().enumerate() {
        if done.is_multiple_of(store::PROGRESS_EVERY) {
            progress(done);
        }
        let node = &nodes[i];
        let id = node_ids[&node.id].clone();
        let kept = node_kept.get(&node.id);
        let mut value = node_json(node, &id, kept, &node_ids, &pin_ids, options);
        if let Some(receipt) = receipts.get(&node.id) {
            let receipt = receipt_json(&receipt.json, &node_ids, &pin_ids);
            let extensions = value
                .as_object_mut()
                .map(|node| node.entry("extensions").or_insert_with(|| json!({})));
            if let Some(Value::Object(extensions)) = extensions {
                let ours = extensions.entry(PINLOOM).or_insert_with(|| json!({}));
                ours["receipt"] = receipt;
            }
        }
        nodes_json.insert(id.clone(), value);
        match node.parent_id.and_then(|parent| node_ids.get(&parent)) {
            None => roots.push(json!(id)),
            Some(parent) => {
                let edge_kept = kept.and_then(|kept| kept.get("edge")).and_then(Value::as_object);
                let mut primary = json!({ "nodeId": parent });
                if let Some(role) = edge_kept.and_then(|edge| edge.get("role")) {
                    primary["role"] = role.clone();
                }
                let mut sources = vec![primary];
                for extra in edge_kept
                    .and_then(|edge| edge.get("extraSources"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(node) = kept_ref(extra.get("node")) {
                        let mut source = json!({ "nodeId": node });
                        if let Some(role) = extra.get("role") {
                            source["role"] = role.clone();
                        }
                        sources.push(source);
                    }
                }
                let mut edge = json!({
                    "id": format!("e{}", &id[1..]),
                    "type": "continuation",
                    "sources": sources,
                    "targetNodeId": id,
                });
                for key in ["createdAt", "extensions"] {
                    if let Some(value) = edge_kept.and_then(|edge| edge.get(key)) {
                        edge[key] = value.clone();
                    }
                }
                edges.push(edge);
            }
        }
    }
    // Notes: a node each, on an annotation edge from the message they are about.
    let annotations = store.tree_annotations(tree_id)?;
    for (position, note) in annotations.iter().enumerate() {
        let Some(about) = node_ids.get(&note.node_id) else { continue };
        let id = ordinal("a", position + 1, annotations.len());
        nodes_json.insert(
            id.clone(),
            json!({
                "id": id,
                "content": [{ "type": "text", "text": note.text }],
                "author": { "role": "human" },
                "createdAt": iso(note.created_at_ms),
            }),
        );
        let mut edge = json!({
            "id": format!("e{id}"),
            "type": "annotation",
            "sources": [{ "nodeId": about }],
            "targetNodeId": id,
        });
        if note.included {
            edge["extensions"] = json!({ PINLOOM: { "included": true } });
        }
        edges.push(edge);
    }
    // Edges an import could not map, written back as they came.
    for (position, kept) in
        tree_kept.get("edges").and_then(Value::as_array).into_iter().flatten().enumerate()
    {
        let Some(target) = kept_ref(kept.get("target")) else { continue };
        let sources: Vec<Value> = kept
            .get("sources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|source| {
                let mut written = json!({ "nodeId": kept_ref(source.get("node"))? });
                if let Some(role) = source.get("role") {
                    written["role"] = role.clone();
                }
                Some(written)
            })
            .collect();
        let mut edge = json!({
            "id": format!("x{}", position + 1),
            "type": kept.get("type").cloned().unwrap_or(json!("annotation")),
            "sources": sources,
            "targetNodeId": target,
        });
        for key in ["createdAt", "extensions"] {
            if let Some(value) = kept.get(key) {
                edge[key] = value.clone();
            }
        }
        edges.push(edge);
    }

    let threads: Vec<Value> = {
        // `pins` come in their order among siblings, which ThreadMind lists them by and which the
        // document keeps as each thread's `order`; the list itself is in the ids' (walk) order.
        pin_order
            .iter()
            .map(|&listed| {
                let pin = &pins[listed];
                let mut thread = json!({
                    "id": pin_ids[&pin.id],
                    "title": pin.title,
                    "slug": pin.slug,
                    "order": listed,
                    "createdAt": iso(pin.created_at_ms),
                });
                if let Some(parent) = pin.parent_pin_id.and_then(|p| pin_ids.get(&p)) {
                    thread["parent"] = json!(parent);
                }
                if let Some(anchor) = node_ref(pin.anchor_node_id) {
                    thread["anchorNode"] = json!(anchor);
                }
                if let Some(range) = &pin.anchor {
                    thread["anchor"] =
                        json!({ "start": range.start, "end": range.end, "text": range.text });
                }
                if let (Some(at), Some(result)) = (pin.closed_at_ms, &pin.result) {
                    thread["closedAt"] = json!(iso(at));
                    thread["result"] = json!(result);
                }
                if let Some(at) = pin.deleted_at_ms {
                    thread["deletedAt"] = json!(iso(at));
                }
                thread
            })
            .collect()
    };
    let mut summaries: Vec<Value> = Vec::new();
    for (summary, log) in store.tree_summaries(tree_id)? {
        profiles.insert(summary.key.summarizer.clone());
        let mut value = json!({
            "text": summary.text,
            "inputChars": summary.input_chars,
            "inputTokens": summary.input_tokens,
            "updatedAt": iso(summary.updated_at_ms),
            "log": log.iter().map(|write| json!({
                "text": write.text,
                "inputChars": write.input_chars,
                "inputTokens": write.input_tokens,
                "writtenAt": iso(write.written_at_ms),
            })).collect::<Vec<_>>(),
        });
        if let Some(thread) = summary.key.pin_id.and_then(|p| pin_ids.get(&p)) {
            value["thread"] = json!(thread);
        }
        if let Some(end) = node_ref(summary.key.path_end) {
            value["upTo"] = json!(end);
        }
        if let Some(budget) = summary.key.budget {
            value["budget"] = json!(budget);
        }
        if !summary.key.summarizer.is_empty() {
            value["summarizer"] = json!(summary.key.summarizer);
        }
        summaries.push(value);
    }
    // Stable whatever order the summaries were written in.
    summaries.sort_by_key(|value| value.to_string());
    let attachments: Vec<Value> = store
        .attachments(tree_id)?
        .into_iter()
        .map(|attachment| {
            let mut value = json!({
                "role": match attachment.role {
                    AttachmentRole::Context => "context",
                    AttachmentRole::Instruction => "instruction",
                    AttachmentRole::File => "file",
                    AttachmentRole::Folder => "folder",
                },
                "name": attachment.name,
                "content": attachment.content,
                "createdAt": iso(attachment.created_at_ms),
            });
            match attachment.scope {
                AttachmentScope::Tree => value["scope"] = json!("tree"),
                AttachmentScope::Thread(pin) => {
                    value["scope"] = json!("thread");
                    if let Some(thread) = pin.and_then(|p| pin_ids.get(&p)) {
                        value["thread"] = json!(thread);
                    }
                }
                AttachmentScope::Node(node) => {
                    value["scope"] = json!("node");
                    value["node"] = json!(node_ref(Some(node)));
                }
            }
            value
        })
        .collect();

    let mut pinloom = json!({ "slug": tree.slug });
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
        *hits = hits.iter().filter_map(|hit| kept_ref(Some(hit)).map(Value::String)).collect();
    }
    if settings.as_object().is_some_and(|settings| !settings.is_empty()) {
        pinloom["settings"] = settings;
    }
    for (key, list) in
        [("threads", threads), ("summaries", summaries), ("attachments", attachments)]
    {
        if !list.is_empty() {
            pinloom[key] = Value::Array(list);
        }
    }
    let mut extensions =
        tree_kept.get("extensions").and_then(Value::as_object).cloned().unwrap_or_default();
    extensions.insert(PINLOOM.into(), pinloom);

    let mode = match tree.mode {
        TreeMode::Dialogue => "dialogue",
        TreeMode::Buffer => "buffer",
    };
    let mut value = json!({
        "id": format!("t{number}"),
        "title": tree.title,
        "mode": tree_kept.get("mode").cloned().unwrap_or(json!(mode)),
        "rootNodeIds": roots,
        "createdAt": iso(tree.created_at_ms),
        "updatedAt": iso(tree.updated_at_ms),
        "nodes": nodes_json,
        "edges": edges,
        "extensions": extensions,
    });
    if options.system_prompts && !tree.system_context.is_empty() {
        value["systemContext"] = json!(tree.system_context);
    }
    let current = match tree_kept.get("currentNode") {
        Some(kept) => kept_ref(Some(kept)),
        None => node_ref(store.newest_node(tree_id)?),
    };
    if let Some(current) = current {
        value["currentNodeId"] = json!(current);
    }
    for key in ["description", "tags"] {
        if let Some(kept) = tree_kept.get(key) {
            value[key] = kept.clone();
        }
    }
    if let Some(Value::Object(agents)) = tree_kept.get("agents") {
        let mut agents = agents.clone();
        if !options.system_prompts {
            for agent in agents.values_mut() {
                if let Some(Value::Object(configuration)) = agent.get_mut("configuration") {
                    configuration.remove("systemPrompt");
                }
            }
        }
        value["agents"] = Value::Object(agents);
    }
    progress(nodes.len());
    // A document's own data is kept with the first tree it brought; the others name that tree.
    let document = match (tree_kept.get("document"), tree_kept.get("documentIn")) {
        (Some(kept), _) => Some(kept.clone()),
        (None, Some(Value::String(id))) => store
            .kept_document(id)?
            .and_then(|kept| serde_json::from_str::<Value>(&kept).ok())
            .and_then(|mut first| first.get_mut("document").map(Value::take)),
        _ => None,
    };
    Ok((value, document, nodes.len()))
}

fn node_json(
    node: &store::Node,
    id: &str,
    kept: Option<&Map<String, Value>>,
    node_ids: &HashMap<NodeId, String>,
    pin_ids: &HashMap<PinId, String>,
    options: ExportOptions,
) -> Value {
    let kept_value = |key: &str| kept.and_then(|kept| kept.get(key));
    let plain = matches!(node.parts.as_slice(), [Part::Text { .. }]);
    let content = kept_value("content").cloned().unwrap_or_else(|| {
        if plain {
            json!([{ "type": "text", "text": node.text }])
        } else {
            Value::Array(
                node.parts
                    .iter()
                    .map(|part| json!({ "type": "text", "text": part_text(part) }))
                    .collect(),
            )
        }
    });
    let author = kept_value("author")
        .cloned()
        .unwrap_or_else(|| author_json(node.author, node.model.as_deref()));
    let mut value = json!({ "id": id, "content": content, "author": author });
    if kept_value("omitCreatedAt").is_none() {
        value["createdAt"] = json!(iso(node.created_at_ms));
    }
    if let Some(original) = node.edited_from.and_then(|original| node_ids.get(&original)) {
        value["editedFrom"] = json!(original);
    }
    let mut meta = kept_value("meta").and_then(Value::as_object).cloned().unwrap_or_default();
    for (key, set) in [
        ("bookmarked", node.bookmarked),
        ("excluded", node.excluded),
        ("pruned", node.pruned_at_ms.is_some()),
    ] {
        if set {
            meta.insert(key.into(), json!(true));
        }
    }
    if !meta.is_empty() {
        value["meta"] = Value::Object(meta);
    }
    let usage: Option<Value> = node.usage_json.as_deref().map(parsed);
    let generation = match kept_value("generation") {
        Some(kept) => Some(kept.clone()),
        None if node.model.is_some() || usage.is_some() => {
            let mut generation = Map::new();
            if let Some(model) = &node.model {
                generation.insert("model".into(), json!(model));
            }
            if let Some(parameters) = node.generation_json.as_deref().map(parsed) {
                generation.insert("parameters".into(), parameters);
            }
            if let Some(usage) = &usage {
                let input = usage.get("input_tokens").and_then(Value::as_u64);
                let output = usage.get("output_tokens").and_then(Value::as_u64);
                let mut counts = Map::new();
                if let Some(input) = input {
                    counts.insert("promptTokens".into(), json!(input));
                }
                if let Some(output) = output {
                    counts.insert("completionTokens".into(), json!(output));
                }
                if let (Some(input), Some(output)) = (input, output) {
                    counts.insert("totalTokens".into(), json!(input + output));
                }
                if !counts.is_empty() {
                    generation.insert("usage".into(), Value::Object(counts));
                }
            }
            Some(Value::Object(generation))
        }
        None => None,
    };
    if let Some(mut generation) = generation {
        if !options.raw_responses
            && let Value::Object(generation) = &mut generation
        {
            generation.remove("rawResponse");
        }
        value["generation"] = generation;
    }
    let mut pinloom = Map::new();
    if let Some(thread) = node.pin_id.and_then(|pin| pin_ids.get(&pin)) {
        pinloom.insert("thread".into(), json!(thread));
    }
    if node.kept {
        pinloom.insert("kept".into(), json!(true));
    }
    if node.incomplete {
        pinloom.insert("incomplete".into(), json!(true));
    }
    if let Some(at) = node.pruned_at_ms {
        pinloom.insert("prunedAt".into(), json!(iso(at)));
    }
    if node.author == Author::Tool {
        pinloom.insert("author".into(), json!("tool"));
    }
    if !plain {
        pinloom.insert("parts".into(), serde_json::to_value(&node.parts).unwrap_or(Value::Null));
    }
    if let Some(model) = &node.model {
        pinloom.insert("model".into(), json!(model));
    }
    if let Some(usage) = usage {
        pinloom.insert("usage".into(), usage);
    }
    if let Some(settings) = node.generation_json.as_deref() {
        pinloom.insert("generationSettings".into(), parsed(settings));
    }
    let mut extensions =
        kept_value("extensions").and_then(Value::as_object).cloned().unwrap_or_default();
    if !pinloom.is_empty() {
        extensions.insert(PINLOOM.into(), Value::Object(pinloom));
    }
    if !extensions.is_empty() {
        value["extensions"] = Value::Object(extensions);
    }
    value
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
                    "node" | "retrieval" | "addedSearchHit" => node_ids.get(&NodeId(id)),
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
pub(super) fn author_json(author: Author, model: Option<&str>) -> Value {
    match (author, model) {
        (Author::Human, _) => json!({ "role": "human" }),
        (Author::Model, Some(model)) => json!({ "role": "model", "name": model }),
        (Author::Model, None) => json!({ "role": "model" }),
        (Author::Tool, _) => json!({ "role": "system", "name": "tool" }),
    }
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
