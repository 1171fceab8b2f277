//! A conversation imported before and exported again since: its messages already here (known by
//! the global ids their tool gave them) are passed over, and only the new ones are written, each
//! hanging where it hangs in the tool, on a message already here or on another new one. What a
//! new message cannot be placed by (a parent without an id, one of another tree) is left out and
//! counted.

use pinloom_store::{ImportScope, NodeId, Store, TreeId, TreeImport};

use super::documents::ReadDocument;

/// What a merge added.
pub(super) struct Merged {
    /// New messages written.
    pub(super) added: usize,
    /// New messages left out: what they hang from could not be found.
    pub(super) unplaced: usize,
}

/// Where a message of the import stands against the tree already here.
#[derive(Clone, Copy)]
enum Standing {
    /// Here already.
    Here(NodeId),
    /// New: its index among the messages to write.
    New(usize),
    /// New, but hanging from what cannot be found: left out.
    Unplaced,
}

/// The global ids of the conversation's messages that are not in tree `here` yet; empty when
/// everything is (a conversation exported again with nothing new).
pub(super) fn new_global_ids<'a>(
    store: &Store,
    here: TreeId,
    gids: &[&'a str],
) -> anyhow::Result<Vec<&'a str>> {
    let found = store.nodes_by_global_id(here, gids)?;
    Ok(gids.iter().copied().filter(|gid| !found.contains_key(*gid)).collect())
}

/// Where the messages of an import stand against the tree here.
struct Standings {
    /// Each message's, in the import's order.
    standing: Vec<Standing>,
    /// The import indices of the new ones.
    keep: Vec<usize>,
    /// For each new one, the message here it hangs on, if it does.
    hang_on: Vec<Option<NodeId>>,
}

/// Where each message of `import` stands against tree `here`.
fn standings(store: &Store, here: TreeId, import: &TreeImport) -> anyhow::Result<Standings> {
    let gids: Vec<&str> =
        import.nodes.iter().filter_map(|node| node.global_id.as_deref()).collect();
    let found = store.nodes_by_global_id(here, &gids)?;
    let mut standing: Vec<Standing> = Vec::with_capacity(import.nodes.len());
    let mut keep: Vec<usize> = Vec::new();
    let mut hang_on: Vec<Option<NodeId>> = Vec::new();
    for node in &import.nodes {
        let known = node.global_id.as_ref().and_then(|gid| found.get(gid)).copied();
        let above = node.parent.map(|parent| standing[parent]);
        let parent_here = match above {
            Some(Standing::Here(id)) => Some(id),
            _ => None,
        };
        // A message with an id no message here has may still be one here under another id (an
        // earlier Pinloom kept none for it): the same words by the same author in the same place.
        let known = match (known, above) {
            (None, Some(Standing::Here(_)) | None) if node.global_id.is_some() => {
                store.same_message_here(here, parent_here, node.author, &node.parts)?
            }
            _ => known,
        };
        let now = match (known, above) {
            (Some(id), _) => Standing::Here(id),
            // Without an id it cannot be told from one here: new only below a new message.
            (None, Some(Standing::New(_))) => Standing::New(keep.len()),
            (None, _) if node.global_id.is_none() => Standing::Unplaced,
            (None, Some(Standing::Unplaced)) => Standing::Unplaced,
            (None, Some(Standing::Here(_)) | None) => Standing::New(keep.len()),
        };
        if let Standing::New(_) = now {
            keep.push(standing.len());
            hang_on.push(parent_here);
        }
        standing.push(now);
    }
    Ok(Standings { standing, keep, hang_on })
}

/// Writes the new messages of `read`'s one tree into tree `here`.
pub(super) fn merge_document(
    store: &Store,
    read: ReadDocument,
    here: TreeId,
) -> anyhow::Result<Merged> {
    let (mut batch, skim) = read.into_only_tree()?;
    let Standings { standing, keep, hang_on } = standings(store, here, &batch.import)?;
    let unplaced = standing.iter().filter(|s| matches!(s, Standing::Unplaced)).count();
    let new_index = |index: usize| match standing.get(index) {
        Some(Standing::New(at)) => Some(*at),
        _ => None,
    };
    let import = &mut batch.import;
    let mut nodes = Vec::with_capacity(keep.len());
    let mut preserved = Vec::with_capacity(keep.len());
    for &index in &keep {
        let mut node = import.nodes[index].clone();
        node.parent = node.parent.and_then(new_index);
        node.edited_from = node.edited_from.and_then(new_index);
        node.picked = node
            .picked
            .iter()
            .filter_map(|&(picked, with_summary)| Some((new_index(picked)?, with_summary)))
            .collect();
        nodes.push(node);
        // What a message keeps for export names no other message in a history's import.
        preserved.push(batch.preserved_nodes[index].as_ref().map(|kept| {
            let mut kept = kept.clone();
            if let Some(edge) = kept.get_mut("edge").and_then(|edge| edge.as_object_mut()) {
                edge.remove("extraSources");
            }
            skim.expand(kept.to_string())
        }));
    }
    import.nodes = nodes;
    import.attachments.retain_mut(|attachment| match attachment.scope {
        ImportScope::Node(index) => match new_index(index) {
            Some(at) => {
                attachment.scope = ImportScope::Node(at);
                true
            }
            None => false,
        },
        // The tree's own material came with it the first time.
        ImportScope::Tree | ImportScope::Thread(_) => false,
    });
    import.annotations.retain_mut(|note| match new_index(note.node) {
        Some(at) => {
            note.node = at;
            true
        }
        None => false,
    });
    let current = import.current.map(|index| standing[index]);
    import.current = match current {
        Some(Standing::New(at)) => Some(at),
        _ => None,
    };
    if import.nodes.is_empty() {
        return Ok(Merged { added: 0, unplaced });
    }
    let written = store.import_into_tree(here, import, &hang_on, &preserved)?;
    // The tool showed a message already here: the tree opens there.
    if let Some(Standing::Here(id)) = current {
        store.remember_place(here, id)?;
    }
    Ok(Merged { added: written.len(), unplaced })
}
