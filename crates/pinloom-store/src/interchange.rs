//! Whole trees in and out, for Open Loom: every tree of a document written in one transaction
//! (all of it or none), and the reads an export needs. What a document carried that Pinloom does
//! not model is kept as JSON beside the tree and each node, to be written back on export.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use crate::attachments::{annotation_from_row, insert_annotation, insert_attachment};
use crate::codec::author_to_sql;
use crate::error::StoreError;
use crate::local_choices::remember_place;
use crate::model::{
    Anchor, Annotation, AttachmentRole, AttachmentScope, Author, ModelProfile, NewNode, Node,
    NodeId, Part, PinId, Receipt, SummaryAuthor, SummaryKey, SummaryWrite, Tree, TreeId,
};
use crate::node_rows::{NODE_COLUMNS, node_by_id, node_from_row};
use crate::node_writes::{insert_node_with, text_of};
use crate::nodes::prune;
use crate::picks::{Pick, write_picks};
use crate::pins::{PinPlace, insert_pin};
use crate::profiles::insert_profile;
use crate::receipts::write_receipt;
use crate::search::indexed_at_the_end;
use crate::slugs::{ROOT_THREAD_SLUG, SlugPicker, slugify};
use crate::store::Store;
use crate::summaries::{SummaryUpdate, as_sql_count, insert_summary, log_summary_write};
use crate::trees::{NewTree, insert_tree, require_tree, tree_by_id};

/// A tree to write whole. Nodes, pins and summaries refer to each other by their index in these
/// lists; nodes come parents first.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeImport {
    /// The tree itself.
    pub tree: NewTree,
    /// The slug it had, kept when no other tree has it.
    pub slug: Option<String>,
    /// The global id it had (a Pinloom export's), kept when no tree here has it, so that the
    /// tree syncs as the same tree.
    pub global_id: Option<String>,
    /// Whether buffer mode includes the system context.
    pub buffer_includes_system: bool,
    /// Its settings overrides, as JSON.
    pub settings_json: String,
    /// When it last changed.
    pub updated_at_ms: i64,
    /// Its messages, parents first.
    pub nodes: Vec<NodeImport>,
    /// Its pins (threads), in the order they are listed.
    pub pins: Vec<PinImport>,
    /// Its summaries with their logs.
    pub summaries: Vec<SummaryImport>,
    /// Its attachments.
    pub attachments: Vec<AttachmentImport>,
    /// Its notes.
    pub annotations: Vec<AnnotationImport>,
    /// The message the tool it came from showed (the end of its current branch): where the
    /// tree opens until something is written in it.
    pub current: Option<usize>,
}

impl AsRef<TreeImport> for TreeImport {
    fn as_ref(&self) -> &TreeImport {
        self
    }
}

/// A message to import.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeImport {
    /// The global id it had (a Pinloom export's), kept when no message here has it.
    pub global_id: Option<String>,
    /// Its parent's index; `None` for a root.
    pub parent: Option<usize>,
    /// Its thread's index in the pins; `None` for the root thread.
    pub pin: Option<usize>,
    /// The index of the node it is an edit of.
    pub edited_from: Option<usize>,
    /// Who wrote it.
    pub author: Author,
    /// Its content.
    pub parts: Vec<Part>,
    /// The model that wrote it.
    pub model: Option<String>,
    /// Its generation settings, as JSON.
    pub generation_json: Option<String>,
    /// The usage reported for it, as JSON.
    pub usage_json: Option<String>,
    /// Left out of every context.
    pub excluded: bool,
    /// Bookmarked.
    pub bookmarked: bool,
    /// Kept in every context.
    pub kept: bool,
    /// A reply that did not finish.
    pub incomplete: bool,
    /// When it was soft-deleted.
    pub pruned_at_ms: Option<i64>,
    /// When it was written.
    pub created_at_ms: i64,
    /// Its token counts.
    pub token_counts: Vec<(String, u64)>,
    /// For a reply with a receipt: whether its provider cut the context. The receipt itself is
    /// asked for once the ids it names are known ([`Preserved::Receipt`]).
    pub receipt_cut: Option<bool>,
    /// For a question over picked messages (a first message): the picked messages' indices, in
    /// the order picked, each with whether its branch's summary goes too.
    pub picked: Vec<(usize, bool)>,
}

/// A pin to import.
#[derive(Debug, Clone, PartialEq)]
pub struct PinImport {
    /// The index of the pin it opens from; `None` for the root thread.
    pub parent: Option<usize>,
    /// The index of the node it hangs off.
    pub anchor_node: Option<usize>,
    /// The highlighted passage.
    pub anchor: Option<Anchor>,
    /// Its title.
    pub title: String,
    /// The slug it had, kept when free.
    pub slug: Option<String>,
    /// When it was closed, and its result.
    pub closed: Option<(i64, String)>,
    /// When it was opened.
    pub created_at_ms: i64,
    /// When ThreadMind's thread_delete removed it.
    pub deleted_at_ms: Option<i64>,
    /// Its place among the tree's threads as ThreadMind lists them (0 first).
    pub order: usize,
}

/// Whose kept interchange JSON [`Store::import_trees`] asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preserved {
    /// The tree of this index.
    Tree(usize),
    /// The node of this index in the tree of that index.
    Node(usize, usize),
    /// The settings of the tree of this index (they may name nodes).
    Settings(usize),
    /// The receipt of the node of this index in the tree of that index (it names nodes and
    /// pins); asked for the nodes whose `receipt_cut` is set.
    Receipt(usize, usize),
}

/// A summary to import, with every write its log kept.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryImport {
    /// The thread's pin index; `None` for the root thread.
    pub pin: Option<usize>,
    /// The index of the last node covered; `None` for the thread as a whole.
    pub path_end: Option<usize>,
    /// The budget it was written for.
    pub budget: Option<u32>,
    /// The model that wrote it ('' for a person, an agent or a file).
    pub summarizer: String,
    /// Who wrote it.
    pub written_by: SummaryAuthor,
    /// Written or asked for on purpose: sends prefer it.
    pub chosen: bool,
    /// For a fitted summary: the index, among the tree's summaries and before this one, of the
    /// chosen summary it condenses.
    pub fitted_from: Option<usize>,
    /// Its text.
    pub text: String,
    /// What it summarised, in characters and tokens.
    pub input_chars: u64,
    /// What it summarised, in tokens.
    pub input_tokens: u64,
    /// When it was last written.
    pub updated_at_ms: i64,
    /// Every write, oldest first.
    pub log: Vec<SummaryUpdate>,
}

/// Where an imported attachment hangs, by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportScope {
    /// The tree.
    Tree,
    /// A thread (a pin's index, or the root thread).
    Thread(Option<usize>),
    /// A node's index.
    Node(usize),
}

/// An attachment to import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachmentImport {
    /// Where it hangs.
    pub scope: ImportScope,
    /// Its role.
    pub role: AttachmentRole,
    /// Its name.
    pub name: String,
    /// Its content.
    pub content: String,
    /// When it was attached.
    pub created_at_ms: i64,
}

/// A note to import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnnotationImport {
    /// The node's index.
    pub node: usize,
    /// The note.
    pub text: String,
    /// Whether it enters context.
    pub included: bool,
    /// When it was written.
    pub created_at_ms: i64,
}

/// What earlier imports kept of a tree and its nodes for export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreservedInterchange {
    /// The tree's, if any.
    pub tree: Option<String>,
    /// Each node's that has some, by id.
    pub nodes: Vec<(NodeId, String)>,
}

/// What an import wrote for one tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedTree {
    /// The tree.
    pub tree: Tree,
    /// The ids of its nodes, by import index.
    pub nodes: Vec<NodeId>,
    /// The ids of its pins, by import index.
    pub pins: Vec<PinId>,
    /// The tree already here under the global id the document gave (an export imported again):
    /// this one is a copy with ids of its own.
    pub copy_of: Option<TreeId>,
}

impl Store {
    /// Adds `import`'s messages to tree `tree`, already here, in one transaction: a conversation
    /// imported before and exported again since, whose new messages hang on those already here
    /// (`hang_on`, by import index), with their attachments, notes and picks; `preserved` is what
    /// each keeps for export. The import's threads and summaries are not written (a history has
    /// none); its current message becomes where the tree opens. Returns the messages' ids.
    pub fn import_into_tree(
        &self,
        tree: TreeId,
        import: &TreeImport,
        hang_on: &[Option<NodeId>],
        preserved: &[Option<String>],
    ) -> Result<Vec<NodeId>, StoreError> {
        if !import.pins.is_empty() || !import.summaries.is_empty() {
            return Err(StoreError::InvalidInput(
                "only messages are added to a tree already here, not threads or summaries".into(),
            ));
        }
        self.write(|tx| {
            require_tree(tx, tree)?;
            let nodes = indexed_at_the_end(tx, || {
                import_nodes(tx, import, tree, hang_on, &mut [], &mut |_| {})
            })?;
            for (index, node) in import.nodes.iter().enumerate() {
                if let Some(at) = node.pruned_at_ms {
                    prune(tx, nodes[index], at)?;
                }
                if let Some(Some(json)) = preserved.get(index) {
                    tx.execute(
                        "UPDATE nodes SET interchange_json = ?2 WHERE id = ?1",
                        params![nodes[index].0, json],
                    )?;
                }
            }
            import_extras(tx, import, tree, &nodes, &[])?;
            if let Some(current) = import.current.and_then(|index| nodes.get(index)) {
                remember_place(tx, tree, *current)?;
            }
            tx.execute(
                "UPDATE trees SET updated_at_ms = max(updated_at_ms, ?2) WHERE id = ?1",
                params![tree.0, import.updated_at_ms],
            )?;
            Ok(nodes)
        })
    }

    /// A live message of tree `tree`'s root thread under `parent` (`None`: a first message) by
    /// `author` that reads as `parts` do, and whose global id Pinloom made (a UUIDv7: its tool
    /// gave it none): a message an import would otherwise bring again under the id its tool gives
    /// it now. A message its tool named is known by that name alone, so that two alike in the
    /// tool (an edit that kept the words) stay two.
    pub fn same_message_here(
        &self,
        tree: TreeId,
        parent: Option<NodeId>,
        author: Author,
        parts: &[Part],
    ) -> Result<Option<NodeId>, StoreError> {
        let conn = self.conn();
        let found: Option<i64> = conn
            .prepare_cached(
                "SELECT id FROM nodes WHERE tree_id = ?1 AND parent_id IS ?2 AND pin_id IS NULL
                   AND author = ?3 AND text = ?4 AND pruned_at_ms IS NULL
                   AND substr(gid, 15, 1) = '7' AND substr(gid, 20, 1) IN ('8', '9', 'a', 'b')
                 ORDER BY id LIMIT 1",
            )?
            .query_row(
                params![tree.0, parent.map(|id| id.0), author_to_sql(author), text_of(parts)],
                |row| row.get(0),
            )
            .optional()?;
        Ok(found.map(NodeId))
    }

    /// The messages of tree `tree` among those with the global ids `gids`, by global id.
    pub fn nodes_by_global_id(
        &self,
        tree: TreeId,
        gids: &[&str],
    ) -> Result<HashMap<String, NodeId>, StoreError> {
        let conn = self.conn();
        let mut statement =
            conn.prepare_cached("SELECT id FROM nodes WHERE gid = ?1 AND tree_id = ?2")?;
        let mut found = HashMap::new();
        for gid in gids {
            if let Some(id) =
                statement.query_row(params![gid, tree.0], |row| row.get::<_, i64>(0)).optional()?
            {
                found.insert((*gid).to_owned(), NodeId(id));
            }
        }
        Ok(found)
    }

    /// Writes every tree in one transaction (all of them, or nothing), and the model profiles
    /// not yet here by name. `kept` gives the JSON a tree or node keeps for export once the
    /// tree's node ids are known (it may name nodes). Returns what was written and the names of
    /// profiles that were already here and so were left as they are. `progress` hears how many
    /// messages are written so far, every few hundred and at the end of each tree.
    pub fn import_trees(
        &self,
        trees: &[impl AsRef<TreeImport>],
        profiles: &[ModelProfile],
        kept: impl Fn(Preserved, &ImportedTree) -> Option<String>,
        at_ms: i64,
        progress: &mut dyn FnMut(usize),
    ) -> Result<(Vec<ImportedTree>, Vec<String>), StoreError> {
        for profile in profiles {
            crate::profiles::validate(profile)?;
        }
        self.write(|tx| {
            indexed_at_the_end(tx, || {
                let mut written = Vec::with_capacity(trees.len());
                let mut messages_before = 0;
                // Every tree slug read once, so a document of many trees with one title costs a
                // probe per tree, not one per tree per earlier namesake.
                let mut tree_slugs = SlugPicker::new(
                    tx.prepare("SELECT slug FROM trees")?
                        .query_map([], |row| row.get::<_, String>(0))?
                        .collect::<Result<Vec<_>, _>>()?,
                );
                for (index, tree) in trees.iter().map(AsRef::as_ref).enumerate() {
                    let wanted =
                        tree.slug.clone().unwrap_or_else(|| slugify(tree.tree.title.trim()));
                    let slug = tree_slugs.pick(&wanted);
                    let imported = import_tree(tx, tree, &slug, &mut |in_tree| {
                        progress(messages_before + in_tree)
                    })?;
                    messages_before += tree.nodes.len();
                    tx.execute(
                        "UPDATE trees SET interchange_json = ?2 WHERE id = ?1",
                        params![imported.tree.id.0, kept(Preserved::Tree(index), &imported)],
                    )?;
                    if let Some(settings) = kept(Preserved::Settings(index), &imported) {
                        tx.execute(
                            "UPDATE trees SET settings_json = ?2 WHERE id = ?1",
                            params![imported.tree.id.0, settings],
                        )?;
                    }
                    for (node, id) in imported.nodes.iter().enumerate() {
                        if let Some(json) = kept(Preserved::Node(index, node), &imported) {
                            tx.execute(
                                "UPDATE nodes SET interchange_json = ?2 WHERE id = ?1",
                                params![id.0, json],
                            )?;
                        }
                        if let Some(provider_cut) = tree.nodes[node].receipt_cut
                            && let Some(json) = kept(Preserved::Receipt(index, node), &imported)
                        {
                            write_receipt(tx, *id, &Receipt { json, provider_cut })?;
                        }
                    }
                    written.push(imported);
                }
                let mut kept = Vec::new();
                for profile in profiles {
                    if !insert_profile(tx, profile, false, at_ms)? {
                        kept.push(profile.name.clone());
                    }
                }
                // Reread: the tree's counts and times now include everything written.
                for imported in &mut written {
                    imported.tree = tree_by_id(tx, imported.tree.id)?;
                }
                Ok((written, kept))
            })
        })
    }

    /// Every node of a tree, soft-deleted ones included, in write order.
    pub fn tree_nodes(&self, tree_id: TreeId) -> Result<Vec<Node>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(&format!(
            "SELECT {NODE_COLUMNS} FROM nodes n WHERE n.tree_id = ?1 ORDER BY n.id"
        ))?;
        let nodes = statement.query_map([tree_id.0], node_from_row)?.collect::<Result<_, _>>()?;
        Ok(nodes)
    }

    /// The kept interchange JSON of a tree and of each of its nodes that has some.
    pub fn interchange(&self, tree_id: TreeId) -> Result<PreservedInterchange, StoreError> {
        let conn = self.conn();
        let tree: Option<String> = conn
            .prepare_cached("SELECT interchange_json FROM trees WHERE id = ?1")?
            .query_row([tree_id.0], |row| row.get(0))
            .optional()?
            .ok_or(StoreError::NotFound { kind: "tree", id: tree_id.0 })?;
        let mut statement = conn.prepare_cached(
            "SELECT id, interchange_json FROM nodes
             WHERE tree_id = ?1 AND interchange_json IS NOT NULL ORDER BY id",
        )?;
        let nodes = statement
            .query_map([tree_id.0], |row| Ok((NodeId(row.get(0)?), row.get(1)?)))?
            .collect::<Result<_, _>>()?;
        Ok(PreservedInterchange { tree, nodes })
    }

    /// The kept interchange JSON of the tree that holds the document data `document_id` names
    /// (an import keeps its document's registry and extensions once, with its first tree).
    pub fn preserved_document(&self, document_id: &str) -> Result<Option<String>, StoreError> {
        let conn = self.conn();
        let kept = conn
            .prepare_cached(
                "SELECT interchange_json FROM trees
                 WHERE json_valid(interchange_json)
                   AND json_extract(interchange_json, '$.documentId') = ?1
                 LIMIT 1",
            )?
            .query_row([document_id], |row| row.get(0))
            .optional()?;
        Ok(kept)
    }

    /// Every note of a tree, included or not, oldest first.
    pub fn tree_annotations(&self, tree_id: TreeId) -> Result<Vec<Annotation>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(
            "SELECT a.id, a.node_id, a.text, a.included, a.created_at_ms
             FROM annotations a JOIN nodes n ON n.id = a.node_id
             WHERE n.tree_id = ?1 ORDER BY a.id",
        )?;
        let annotations =
            statement.query_map([tree_id.0], annotation_from_row)?.collect::<Result<_, _>>()?;
        Ok(annotations)
    }
}

/// How many messages an import writes, or an export reads out, between two progress reports:
/// often enough for a smooth bar, rarely enough that reporting costs nothing next to the work.
pub const PROGRESS_EVERY: usize = 500;

fn import_tree(
    conn: &Connection,
    import: &TreeImport,
    slug: &str,
    progress: &mut dyn FnMut(usize),
) -> Result<ImportedTree, StoreError> {
    let tree = insert_tree(conn, &import.tree, Some(slug))?;
    let copy_of = match &import.global_id {
        Some(gid) if !adopt_global_id(conn, "trees", tree.id.0, gid)? => {
            crate::sync::read::row_of(conn, "trees", gid)?.map(TreeId)
        }
        _ => None,
    };
    conn.execute(
        "UPDATE trees SET buffer_includes_system = ?2, settings_json = ?3 WHERE id = ?1",
        params![tree.id.0, import.buffer_includes_system, import.settings_json],
    )?;

    let mut pins: Vec<Option<PinId>> = vec![None; import.pins.len()];
    let nodes = import_nodes(conn, import, tree.id, &[], &mut pins, progress)?;
    for index in 0..import.pins.len() {
        ensure_pin(conn, import, tree.id, index, &mut pins, &nodes)?;
    }
    let pins: Vec<PinId> = pins.into_iter().flatten().collect();
    place_pins(conn, import, &pins)?;
    // Soft deletion last: nothing may be written under a deleted branch.
    for (index, node) in import.nodes.iter().enumerate() {
        if let Some(at) = node.pruned_at_ms {
            prune(conn, nodes[index], at)?;
        }
    }
    import_extras(conn, import, tree.id, &nodes, &pins)?;
    if let Some(current) = import.current.and_then(|index| nodes.get(index)) {
        remember_place(conn, tree.id, *current)?;
    }
    // The times the document gave, not the import's.
    conn.execute(
        "UPDATE trees SET created_at_ms = ?2, updated_at_ms = ?3 WHERE id = ?1",
        params![tree.id.0, import.tree.created_at_ms, import.updated_at_ms],
    )?;
    Ok(ImportedTree { tree: tree_by_id(conn, tree.id)?, nodes, pins, copy_of })
}

/// The import's messages, written in its order (a parent before its children), each with its
/// marks and global id; an edit's link to a message written after it is set once all are. A
/// message without a parent in the import hangs on `hang_on`'s message of the same index when
/// it names one (a message of `tree` already here). Reports progress every [`PROGRESS_EVERY`]
/// messages.
fn import_nodes(
    conn: &Connection,
    import: &TreeImport,
    tree: TreeId,
    hang_on: &[Option<NodeId>],
    pins: &mut [Option<PinId>],
    progress: &mut dyn FnMut(usize),
) -> Result<Vec<NodeId>, StoreError> {
    let mut nodes: Vec<NodeId> = Vec::with_capacity(import.nodes.len());
    for (index, node) in import.nodes.iter().enumerate() {
        let reference = |other: Option<usize>, what: &str| -> Result<Option<NodeId>, StoreError> {
            match other {
                None => Ok(None),
                Some(other) => nodes.get(other).copied().map(Some).ok_or_else(|| {
                    StoreError::InvalidInput(format!(
                        "message {index} of the import names {what} {other}, which is not written before it"
                    ))
                }),
            }
        };
        let parent = match (reference(node.parent, "the parent")?, hang_on.get(index)) {
            (Some(parent), _) => Some(parent),
            (None, Some(Some(here))) => {
                if node_by_id(conn, *here)?.tree_id != tree {
                    return Err(StoreError::InvalidInput(format!(
                        "message {index} of the import hangs on message {}, which is in another tree",
                        here.0
                    )));
                }
                Some(*here)
            }
            (None, _) => None,
        };
        // An edit may name a node written after it; that link is set once all are written.
        let edited_from = node.edited_from.and_then(|other| nodes.get(other).copied());
        let pin = match node.pin {
            None => None,
            Some(pin) => Some(ensure_pin(conn, import, tree, pin, pins, &nodes)?),
        };
        // A pin's first message hangs off its anchor; a message after it continues its thread.
        let begins_pin =
            pin.is_some() && node.parent.is_none_or(|parent| import.nodes[parent].pin != node.pin);
        let new = NewNode {
            tree_id: tree,
            parent_id: parent,
            pin_id: if begins_pin { pin } else { None },
            author: node.author,
            parts: node.parts.clone(),
            edited_from,
            model: node.model.clone(),
            generation_json: node.generation_json.clone(),
            usage_json: node.usage_json.clone(),
            incomplete: node.incomplete,
            token_counts: node.token_counts.clone(),
            created_at_ms: node.created_at_ms,
            receipt: None,
            reply_tokens: Vec::new(),
            replaces_draft: None,
        };
        let gid = node.global_id.as_deref().map(|gid| free_global_id(conn, "nodes", gid));
        let written = insert_node_with(conn, &new, true, false, gid.transpose()?.flatten())?;
        if written.pin_id != pin {
            return Err(StoreError::InvalidInput(format!(
                "message {index} of the import is said to be in another thread than its parent's"
            )));
        }
        if node.excluded || node.bookmarked || node.kept {
            conn.prepare_cached(
                "UPDATE nodes SET excluded = ?2, bookmarked = ?3, kept = ?4 WHERE id = ?1",
            )?
            .execute(params![
                written.id.0,
                node.excluded,
                node.bookmarked,
                node.kept
            ])?;
        }
        nodes.push(written.id);
        if nodes.len().is_multiple_of(PROGRESS_EVERY) {
            progress(nodes.len());
        }
    }
    progress(nodes.len());
    for (index, node) in import.nodes.iter().enumerate() {
        if let Some(original) = node.edited_from.and_then(|other| nodes.get(other))
            && original.0 > nodes[index].0
        {
            conn.execute(
                "UPDATE nodes SET edited_from = ?2 WHERE id = ?1",
                params![nodes[index].0, original.0],
            )?;
        }
    }
    Ok(nodes)
}

/// The import's threads placed among their siblings in the document's order, after every pin
/// already in the file, each with its slug and its deletion.
fn place_pins(conn: &Connection, import: &TreeImport, pins: &[PinId]) -> Result<(), StoreError> {
    // Places among siblings in the document's order, after every pin already in the file. The
    // document's numbers only rank its threads: written as they are, one near i64::MAX would
    // overflow here and leave no place for the next thread opened in the tree.
    let base: i64 =
        conn.query_row("SELECT coalesce(max(list_order), 0) FROM pins", [], |row| row.get(0))?;
    let mut ranked: Vec<usize> = (0..pins.len()).collect();
    ranked.sort_by_key(|&index| (import.pins[index].order, index));
    for (rank, index) in ranked.into_iter().enumerate() {
        let place = i64::try_from(rank)
            .ok()
            .and_then(|rank| base.checked_add(rank)?.checked_add(1))
            .ok_or_else(|| {
                StoreError::InvalidInput(
                    "the database has no room left to order more threads".to_owned(),
                )
            })?;
        conn.execute(
            "UPDATE pins SET list_order = ?2 WHERE id = ?1",
            params![pins[index].0, place],
        )?;
    }
    // Slugs: each pin gets the one it had where no live thread has it, else the next free one.
    // Insertion gave each a placeholder (a control character and its index) that no picked slug
    // can equal, so none stands in the way.
    // The tree is the import's own, so its live threads are the import's: their slugs are
    // picked in memory, each base's counter remembered.
    let mut picker = SlugPicker::new([ROOT_THREAD_SLUG.to_owned()]);
    for (index, pin) in import.pins.iter().enumerate() {
        let wanted = pin.slug.clone().unwrap_or_else(|| slugify(&pin.title));
        let slug = match pin.deleted_at_ms {
            // A deleted thread keeps its slug: only live threads' slugs are unique.
            Some(at) => {
                conn.execute(
                    "UPDATE pins SET deleted_at_ms = ?2 WHERE id = ?1",
                    params![pins[index].0, at],
                )?;
                wanted
            }
            None => picker.pick(&wanted),
        };
        conn.execute("UPDATE pins SET slug = ?2 WHERE id = ?1", params![pins[index].0, slug])?;
    }
    Ok(())
}

/// The import's summaries (with their logs), attachments and notes, each naming its messages and
/// threads by their place in the import.
fn import_extras(
    conn: &Connection,
    import: &TreeImport,
    tree: TreeId,
    nodes: &[NodeId],
    pins: &[PinId],
) -> Result<(), StoreError> {
    // What the rest of the import names by index must exist: a planner's mistake is refused,
    // never a panic inside the transaction.
    let node_at = |index: usize, what: &str| {
        nodes.get(index).copied().ok_or_else(|| {
            StoreError::InvalidInput(format!(
                "{what} of the import names message {index}, which it does not have"
            ))
        })
    };
    let pin_at = |index: usize, what: &str| {
        pins.get(index).copied().ok_or_else(|| {
            StoreError::InvalidInput(format!(
                "{what} of the import names thread {index}, which it does not have"
            ))
        })
    };
    let mut summary_rows: Vec<i64> = Vec::with_capacity(import.summaries.len());
    for summary in &import.summaries {
        let fitted_from = match summary.fitted_from {
            Some(index) => Some(*summary_rows.get(index).ok_or_else(|| {
                StoreError::InvalidInput(format!(
                    "a fitted summary of the import names summary {index}, which does not come \
                     before it"
                ))
            })?),
            None => None,
        };
        let key = SummaryKey {
            tree_id: tree,
            pin_id: summary.pin.map(|index| pin_at(index, "a summary")).transpose()?,
            path_end: summary.path_end.map(|index| node_at(index, "a summary")).transpose()?,
            budget: summary.budget,
            summarizer: summary.summarizer.clone(),
            fitted_from,
        };
        let (chars, tokens) =
            (as_sql_count(summary.input_chars)?, as_sql_count(summary.input_tokens)?);
        let write = SummaryWrite {
            text: &summary.text,
            written_by: summary.written_by,
            chosen: summary.chosen,
            input_chars: summary.input_chars,
            input_tokens: summary.input_tokens,
            written_at_ms: summary.updated_at_ms,
        };
        let id = insert_summary(conn, &key, &write, chars, tokens)?;
        summary_rows.push(id);
        for write in &summary.log {
            let (chars, tokens) =
                (as_sql_count(write.input_chars)?, as_sql_count(write.input_tokens)?);
            log_summary_write(conn, id, &write.text, chars, tokens, write.written_at_ms)?;
        }
    }
    for attachment in &import.attachments {
        let scope = match attachment.scope {
            ImportScope::Tree => AttachmentScope::Tree,
            ImportScope::Thread(pin) => AttachmentScope::Thread(
                pin.map(|index| pin_at(index, "an attachment")).transpose()?,
            ),
            ImportScope::Node(index) => AttachmentScope::Node(node_at(index, "an attachment")?),
        };
        let role = attachment.role;
        insert_attachment(
            conn,
            tree,
            scope,
            role,
            &attachment.name,
            &attachment.content,
            attachment.created_at_ms,
        )?;
    }
    for note in &import.annotations {
        let node = node_at(note.node, "a note")?;
        insert_annotation(conn, node, &note.text, note.included, note.created_at_ms)?;
    }
    for (index, node) in import.nodes.iter().enumerate().filter(|(_, node)| !node.picked.is_empty())
    {
        let picks = node
            .picked
            .iter()
            .map(|&(picked, with_summary)| {
                Ok(Pick { node: node_at(picked, "a question's pick")?, with_summary })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        write_picks(conn, node_at(index, "a question")?, &picks)?;
    }
    Ok(())
}

/// Gives row `row` of `table` the global id a document named, when it is one (a UUID's shape)
/// and no row here has it; returns whether it did.
fn adopt_global_id(
    conn: &Connection,
    table: &str,
    row: i64,
    gid: &str,
) -> Result<bool, StoreError> {
    let Some(gid) = free_global_id(conn, table, gid)? else { return Ok(false) };
    conn.execute(&format!("UPDATE {table} SET gid = ?2 WHERE rowid = ?1"), params![row, gid])?;
    Ok(true)
}

/// Whether `id` is shaped as a global id: a UUID in lowercase hex, as Pinloom writes one.
pub fn is_global_id(id: &str) -> bool {
    id.len() == 36
        && id.char_indices().all(|(at, c)| match at {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit() && !c.is_ascii_uppercase(),
        })
}

/// Whether `gid` is shaped as the ids Pinloom makes (a UUIDv7: version 7, variant 10) rather
/// than one a row kept from the tool it came from: a tree made here is never continued by a file.
/// (An id `llm` gave, a ULID written as a UUID's digits, has that shape one time in 64.)
pub fn is_made_here(gid: &str) -> bool {
    is_global_id(gid) && gid.as_bytes()[14] == b'7' && matches!(gid.as_bytes()[19], b'8'..=b'b')
}

/// `gid` when a row of `table` may take it: shaped as a global id, and no row here has it.
fn free_global_id<'g>(
    conn: &Connection,
    table: &str,
    gid: &'g str,
) -> Result<Option<&'g str>, StoreError> {
    if !is_global_id(gid) || crate::sync::read::row_of(conn, table, gid)?.is_some() {
        return Ok(None);
    }
    Ok(Some(gid))
}

/// The pin of import index `index`, written first if it is not yet (its parent pin before it).
fn ensure_pin(
    conn: &Connection,
    import: &TreeImport,
    tree: TreeId,
    index: usize,
    pins: &mut [Option<PinId>],
    nodes: &[NodeId],
) -> Result<PinId, StoreError> {
    // Walk up to the outermost pin not yet written, then write downwards: no recursion, and a
    // loop of parents (a damaged document) is refused.
    let mut chain = vec![index];
    while let Some(parent) =
        import.pins.get(*chain.last().unwrap_or(&index)).and_then(|pin| pin.parent)
    {
        if pins.get(parent).copied().flatten().is_some() {
            break;
        }
        if chain.contains(&parent) || chain.len() > import.pins.len() {
            return Err(StoreError::InvalidInput(format!(
                "pin {index} of the import is its own ancestor"
            )));
        }
        chain.push(parent);
    }
    for &current in chain.iter().rev() {
        if let Some(id) = pins.get(current).copied().flatten() {
            if current == index {
                return Ok(id);
            }
            continue;
        }
        let pin = import.pins.get(current).ok_or_else(|| {
            StoreError::InvalidInput(format!(
                "the import names pin {current}, which it does not have"
            ))
        })?;
        let parent = pin.parent.and_then(|parent| pins.get(parent).copied().flatten());
        let anchor_node = match pin.anchor_node {
            None => None,
            Some(node) => Some(*nodes.get(node).ok_or_else(|| {
                StoreError::InvalidInput(format!(
                    "pin {current} of the import hangs off message {node}, which is not written before its thread"
                ))
            })?),
        };
        // A placeholder slug no live thread can have: the slugs are picked in memory once every
        // thread is written (asking the file for a free one per thread is quadratic).
        let placeholder = format!("\u{1}{current}");
        let place = PinPlace { tree_id: tree, parent, anchor_node, anchor: pin.anchor.as_ref() };
        let written = insert_pin(conn, place, &pin.title, Some(&placeholder), pin.created_at_ms)?;
        if let Some((at, result)) = &pin.closed {
            conn.execute(
                "UPDATE pins SET closed_at_ms = ?2, result = ?3 WHERE id = ?1",
                params![written.id.0, at, result],
            )?;
        }
        pins[current] = Some(written.id);
    }
    pins.get(index).copied().flatten().ok_or_else(|| {
        StoreError::InvalidInput(format!("pin {index} of the import could not be written"))
    })
}
