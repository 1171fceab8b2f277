//! What every history's conversations share on their way to Open Loom trees: a conversation's
//! messages, each naming its parent, laid out as branches in the tool's sibling order but for the
//! branch the tool showed, written last (and named as the tree's current message, where it
//! opens), and ids kept as global ids where they are shaped as Pinloom's.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::open_loom_import::Notes;
use super::times::iso;

/// Whether a conversation's or a message's id can be its global id: the store's rule.
pub(super) use pinloom_store::is_global_id;

/// A tree's nodes, its edges in sibling order, and its roots.
struct Branches {
    nodes: Map<String, Value>,
    edges: Vec<Value>,
    root_ids: Vec<Value>,
}

/// The messages `kept` (taken out of it as they are placed) as Open Loom nodes and edges.
/// `mapping` names each message's `parent` and its `children` in order, as ChatGPT's export does
/// (other histories are put in that shape); `current` ends the branch the tool showed. Depth first from the roots through each node's children in order, a loop of parents never followed
/// twice. A node left out passes its children to its nearest kept ancestor. What stays in `kept`
/// hangs on no root.
fn branches(
    mapping: &Map<String, Value>,
    kept: &mut HashMap<&str, Value>,
    current: Option<&str>,
) -> Branches {
    let parent_of =
        |key: &str| mapping.get(key).and_then(|node| node.get("parent")).and_then(Value::as_str);
    let roots: Vec<&str> = mapping
        .keys()
        .map(String::as_str)
        .filter(|key| parent_of(key).is_none_or(|parent| !mapping.contains_key(parent)))
        .collect();
    // The branch the tool showed, from `current` up (a loop of parents stops the walk).
    let mut on_shown_branch: HashSet<&str> = HashSet::new();
    let mut up = current;
    while let Some(key) = up.filter(|key| mapping.contains_key(*key)) {
        if !on_shown_branch.insert(key) {
            break;
        }
        up = parent_of(key);
    }
    let mut seen: HashSet<&str> = HashSet::new();
    let mut nodes = Map::new();
    let mut edges = Vec::new();
    let mut root_ids = Vec::new();
    let mut stack: Vec<(&str, Option<&str>)> =
        roots.iter().rev().map(|root| (*root, None)).collect();
    while let Some((key, kept_above)) = stack.pop() {
        if !seen.insert(key) {
            continue;
        }
        let mut above = kept_above;
        if let Some(node) = kept.remove(key) {
            nodes.insert(key.to_owned(), node);
            match kept_above {
                Some(parent) => edges.push(json!({
                    "type": "continuation",
                    "sources": [{ "nodeId": parent }],
                    "targetNodeId": key,
                })),
                None => root_ids.push(json!(key)),
            }
            above = Some(key);
        }
        let children =
            mapping.get(key).and_then(|node| node.get("children")).and_then(Value::as_array);
        let children: Vec<&str> =
            children.into_iter().flatten().filter_map(Value::as_str).collect();
        let children: Vec<&str> = children
            .into_iter()
            .filter(|child| mapping.contains_key(*child) && parent_of(child) == Some(key))
            .collect();
        // The child on the branch the tool showed is written last among its siblings (pushed
        // first), so that where the tree opens and the order of its switchers agree.
        let (shown, others): (Vec<&str>, Vec<&str>) =
            children.into_iter().partition(|child| on_shown_branch.contains(child));
        for child in shown.into_iter().chain(others.into_iter().rev()) {
            stack.push((child, above));
        }
    }
    Branches { nodes, edges, root_ids }
}

/// A conversation read into an Open Loom tree.
pub(super) struct Mapped {
    /// The tree, as an Open Loom document holds it.
    pub(super) tree: Value,
    /// Its messages.
    pub(super) messages: usize,
    /// The conversation's id, when it can be the tree's global id.
    pub(super) global_id: Option<String>,
}

/// What a conversation brings beside its messages.
pub(super) struct Header {
    /// Its id in the document written (the tool's own, else one made up).
    pub(super) id: String,
    pub(super) title: String,
    /// Attachments of its messages, as Pinloom's extension holds them (`node`: the message key).
    pub(super) attachments: Vec<Value>,
    pub(super) system_context: Option<String>,
    /// ISO-8601 times.
    pub(super) created_at: Option<String>,
    pub(super) updated_at: Option<String>,
}

/// The Open Loom tree of a conversation whose messages `kept` are laid out from `mapping` (see
/// [`branches`]), opening on `current` (or its nearest ancestor kept); `None` when it shows no
/// message. What could not be placed is said in `notes`.
pub(super) fn conversation_tree(
    mapping: &Map<String, Value>,
    mut kept: HashMap<&str, Value>,
    current: Option<&str>,
    header: Header,
    notes: &mut Notes,
) -> Option<Mapped> {
    let Header { id, title, mut attachments, system_context, created_at, updated_at } = header;
    let Branches { nodes, edges, root_ids } = branches(mapping, &mut kept, current);
    if !kept.is_empty() {
        notes.add(format!(
            "{} messages of {title:?} were left out: their parents loop, or name no message",
            kept.len()
        ));
    }
    if nodes.is_empty() {
        notes.add(format!("conversation {title:?} has no message to show and was left out"));
        return None;
    }
    let parent_of =
        |key: &str| mapping.get(key).and_then(|node| node.get("parent")).and_then(Value::as_str);
    let mut current = current;
    let mut steps = 0;
    while let Some(key) = current.filter(|key| !nodes.contains_key(*key)) {
        current = parent_of(key);
        steps += 1;
        if steps > mapping.len() {
            current = None;
        }
    }
    let global_id = is_global_id(&id).then(|| id.clone());
    let mut pinloom = Map::new();
    if let Some(gid) = &global_id {
        pinloom.insert("globalId".into(), json!(gid));
    }
    attachments.retain(|attachment| {
        attachment["node"].as_str().is_some_and(|node| nodes.contains_key(node))
    });
    if !attachments.is_empty() {
        pinloom.insert("attachments".into(), Value::Array(attachments));
    }
    let messages = nodes.len();
    let mut tree = json!({
        "id": id,
        "title": title,
        "mode": "dialogue",
        "rootNodeIds": root_ids,
        "nodes": nodes,
        "edges": edges,
        "extensions": { "pinloom": pinloom },
    });
    let fields = [("currentNodeId", current.map(str::to_owned)), ("systemContext", system_context)];
    let times = [("createdAt", created_at), ("updatedAt", updated_at)];
    for (field, value) in fields.into_iter().chain(times) {
        if let Some(value) = value {
            tree[field] = json!(value);
        }
    }
    Some(Mapped { tree, messages, global_id })
}

/// Seconds since the epoch, as ChatGPT and Open WebUI write times, as an ISO-8601 time.
pub(super) fn seconds_iso(seconds: f64) -> Option<String> {
    let ms = seconds * 1_000.0;
    (ms.is_finite() && (0.0..=253_402_300_799_000.0).contains(&ms)).then(|| iso(ms as i64))
}

/// Whether `head` (a file's first bytes) starts a JSON array, after a byte-order mark and
/// spaces, and names each of `keys` as an object's key: how each tool's export is told apart.
pub(super) fn json_array_naming(head: &[u8], keys: &[&str]) -> bool {
    let text = String::from_utf8_lossy(head);
    let text = text.trim_start_matches('\u{feff}').trim_start();
    text.starts_with('[') && keys.iter().all(|key| text.contains(&format!("\"{key}\"")))
}
