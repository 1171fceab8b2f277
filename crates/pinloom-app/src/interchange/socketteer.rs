//! socketteer/loom's saved trees (Open Loom spec §8.2), read as the Open Loom v2 document the
//! spec maps them to, so one importer writes both.
//!
//! Its `creation_timestamp` ("2023-02-28-19.24.17") is local time without a zone: it cannot be
//! placed in time without guessing, so it is left out and kept under the `socketteer-loom`
//! extension, where everything else the mapping does not use goes too.

use serde_json::{Map, Value, json};

/// The namespace the spec gives what socketteer's file holds beyond the mapping.
const NAMESPACE: &str = "socketteer-loom";

/// Whether `value` is a socketteer tree: an object with a nested `root` node, a bare node, or an
/// array of nodes.
pub(super) fn detect(value: &Value) -> bool {
    let is_node = |node: &Value| node.get("text").is_some() && node.get("children").is_some();
    match value {
        Value::Object(object) => object.get("root").is_some_and(is_node) || is_node(value),
        Value::Array(nodes) => !nodes.is_empty() && nodes.iter().all(is_node),
        _ => false,
    }
}

/// The Open Loom v2 document of a socketteer file.
pub(super) fn to_open_loom(file: &Value, title: &str) -> Value {
    let (roots, rest): (Vec<&Value>, Map<String, Value>) = match file {
        Value::Object(object) if object.contains_key("root") => {
            let mut rest = object.clone();
            rest.remove("root");
            (vec![&file["root"]], rest)
        }
        Value::Array(nodes) => (nodes.iter().collect(), Map::new()),
        other => (vec![other], Map::new()),
    };
    let responses =
        rest.get("model_responses").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut nodes = Map::new();
    let mut edges = Vec::new();
    let mut root_ids = Vec::new();
    let mut generated = 0_usize;
    // Depth first without recursion: looms can be deep.
    let mut stack: Vec<(&Value, Option<String>)> =
        roots.iter().rev().map(|root| (*root, None)).collect();
    while let Some((node, parent)) = stack.pop() {
        let id = match node.get("id").and_then(Value::as_str) {
            Some(id) if !nodes.contains_key(id) => id.to_owned(),
            _ => {
                generated += 1;
                format!("socketteer-{generated}")
            }
        };
        nodes.insert(id.clone(), node_json(node, &id, &responses));
        match parent {
            None => root_ids.push(json!(id)),
            Some(parent) => edges.push(json!({
                "type": "continuation",
                "sources": [{ "nodeId": parent }],
                "targetNodeId": id,
            })),
        }
        let children = node.get("children").and_then(Value::as_array).into_iter().flatten();
        let children: Vec<&Value> = children.collect();
        for child in children.into_iter().rev() {
            stack.push((child, Some(id.clone())));
        }
    }
    let mut tree = json!({
        "id": "socketteer",
        "title": title,
        // A loom continues one text; its nodes are pieces of a document, not chat turns.
        "mode": "buffer",
        "rootNodeIds": root_ids,
        "nodes": nodes,
        "edges": edges,
    });
    if let Some(selected) = rest.get("selected_node_id").and_then(Value::as_str) {
        tree["currentNodeId"] = json!(selected);
    }
    // Chapters, summaries, canonical, the settings: all of it, under the spec's namespace.
    let mut preserved = rest;
    preserved.remove("selected_node_id");
    if !preserved.is_empty() {
        tree["extensions"] = json!({ NAMESPACE: preserved });
    }
    json!({ "format": "open-loom", "version": "2.0", "trees": [tree] })
}

fn node_json(node: &Value, id: &str, responses: &Map<String, Value>) -> Value {
    let text = node.get("text").and_then(Value::as_str).unwrap_or("");
    let meta = node.get("meta").and_then(Value::as_object);
    let role = match meta.and_then(|meta| meta.get("source")).and_then(Value::as_str) {
        Some("AI") => "model",
        Some("mixed") => "mixed",
        // "prompt", and the nodes the person wrote, which carry no source.
        _ => "human",
    };
    let mut value = json!({
        "id": id,
        "content": [{ "type": "text", "text": text }],
        "author": { "role": role },
    });
    let mut preserved = Map::new();
    for (key, field) in node.as_object().into_iter().flatten() {
        if !matches!(
            key.as_str(),
            "id" | "text" | "children" | "meta" | "generation" | "tags" | "parent_id"
        ) {
            preserved.insert(key.clone(), field.clone());
        }
    }
    if let Some(meta) = meta {
        preserved.insert("meta".into(), Value::Object(meta.clone()));
    }
    let mut out_meta = Map::new();
    let tags: Vec<&str> = node
        .get("tags")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if tags.contains(&"bookmark") {
        out_meta.insert("bookmarked".into(), json!(true));
    }
    let other_tags: Vec<&str> = tags.into_iter().filter(|tag| *tag != "bookmark").collect();
    if !other_tags.is_empty() {
        out_meta.insert("tags".into(), json!(other_tags));
    }
    if !out_meta.is_empty() {
        value["meta"] = Value::Object(out_meta);
    }
    if let Some(generation) = node.get("generation").and_then(Value::as_object) {
        preserved.insert("generation".into(), Value::Object(generation.clone()));
        let mut provenance = Map::new();
        if let Some(request) = generation.get("id").and_then(Value::as_str) {
            provenance.insert("requestId".into(), json!(request));
            // The response the request id names, when the file kept it, says which model.
            if let Some(model) =
                responses.get(request).and_then(|r| r.get("model")).and_then(Value::as_str)
            {
                provenance.insert("model".into(), json!(model));
            }
        }
        if let Some(index) = generation.get("index").and_then(Value::as_u64) {
            provenance.insert("completionIndex".into(), json!(index));
        }
        if !provenance.is_empty() {
            value["generation"] = Value::Object(provenance);
        }
    }
    if !preserved.is_empty() {
        value["extensions"] = json!({ NAMESPACE: preserved });
    }
    value
}
