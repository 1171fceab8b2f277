//! Writing a new node: its thread and segment, its token counts and receipt, and the reply draft
//! it replaces, in the caller's transaction.

use rusqlite::{Connection, params};

use crate::codec::author_to_sql;
use crate::error::StoreError;
use crate::model::{NewNode, Node, NodeId, Part, PinId};
use crate::node_rows::{in_deleted_branch, node_by_id};
use crate::pins::pin_in_tree;
use crate::receipts::write_receipt;
use crate::reply_tokens::write_reply_tokens;
use crate::token_counts::write_token_counts;
use crate::trees::{require_tree, touch_tree};

pub(crate) fn insert_node(
    conn: &Connection,
    node: &NewNode,
    extra_roots: bool,
) -> Result<Node, StoreError> {
    insert_node_with(conn, node, extra_roots, false, None)
}

/// [`insert_node`], and with `under_deleted` a node may also hang under a deleted branch (a sync
/// brings a message another machine wrote before the branch was deleted here); it is then part
/// of that branch, in the trash with it. `gid` is its global id when the caller has one for it
/// (free here: checked by the caller); without, a trigger gives it a new one.
pub(crate) fn insert_node_with(
    conn: &Connection,
    node: &NewNode,
    extra_roots: bool,
    under_deleted: bool,
    gid: Option<&str>,
) -> Result<Node, StoreError> {
    if node.parts.is_empty() {
        return Err(StoreError::InvalidInput("a message needs content: it has no parts".into()));
    }
    require_tree(conn, node.tree_id)?;
    let thread = thread_of_new_node(conn, node, extra_roots)?;
    if let Some(parent) = node.parent_id
        && !under_deleted
        && in_deleted_branch(conn, parent)?
    {
        return Err(StoreError::Deleted { node: parent.0 });
    }
    if let Some(original) = node.edited_from
        && node_by_id(conn, original)?.tree_id != node.tree_id
    {
        return Err(StoreError::InvalidInput(format!(
            "node {} belongs to another tree; an edit stays in its tree",
            original.0
        )));
    }
    let text = text_of(&node.parts);
    let parts_json = match node.parts.as_slice() {
        [Part::Text { .. }] => None,
        parts => Some(serde_json::to_string(parts).map_err(|error| {
            StoreError::InvalidInput(format!("the message's parts cannot be stored: {error}"))
        })?),
    };
    let segment = segment_of_new_node(conn, node.parent_id)?;
    conn.prepare_cached(
        "INSERT INTO nodes (tree_id, parent_id, pin_id, author, text, parts_json, edited_from,
             model, generation_json, created_at_ms, segment_id, segment_pos, usage_json,
             incomplete, gid)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    )?
    .execute(params![
        node.tree_id.0,
        node.parent_id.map(|id| id.0),
        thread.map(|id| id.0),
        author_to_sql(node.author),
        text,
        parts_json,
        node.edited_from.map(|id| id.0),
        node.model,
        node.generation_json,
        node.created_at_ms,
        segment.map(|(segment_id, _)| segment_id),
        segment.map_or(0, |(_, position)| position),
        node.usage_json,
        node.incomplete,
        gid,
    ])?;
    let id = NodeId(conn.last_insert_rowid());
    if segment.is_none() {
        conn.prepare_cached("UPDATE nodes SET segment_id = id WHERE id = ?1")?.execute([id.0])?;
    }
    if under_deleted && let Some(parent) = node.parent_id {
        conn.prepare_cached(
            "UPDATE nodes SET deleted_depth = (SELECT deleted_depth FROM nodes WHERE id = ?2)
             WHERE id = ?1",
        )?
        .execute(params![id.0, parent.0])?;
    }
    write_what_comes_with(conn, id, node)?;
    touch_tree(conn, node.tree_id, node.created_at_ms)?;
    Ok(Node {
        id,
        tree_id: node.tree_id,
        parent_id: node.parent_id,
        pin_id: thread,
        author: node.author,
        text,
        parts: node.parts.clone(),
        edited_from: node.edited_from,
        model: node.model.clone(),
        generation_json: node.generation_json.clone(),
        usage_json: node.usage_json.clone(),
        excluded: false,
        bookmarked: false,
        incomplete: node.incomplete,
        kept: false,
        written_by: None,
        pruned_at_ms: None,
        created_at_ms: node.created_at_ms,
    })
}

/// The thread a new node joins: its pin's (whose anchor it must hang off), its parent's (in its
/// own tree), or the root thread for a tree's first message (a second one only as an edit of
/// the first, or with `extra_roots`).
/// What is written with a new node, in its transaction: its token counts, a continuation's
/// tokens, a reply's receipt, and the streaming draft it finishes (deleted).
fn write_what_comes_with(conn: &Connection, id: NodeId, node: &NewNode) -> Result<(), StoreError> {
    write_token_counts(
        conn,
        id,
        node.token_counts.iter().map(|(family, n)| (family.as_str(), *n)),
    )?;
    if !node.reply_tokens.is_empty() {
        write_reply_tokens(conn, id, &node.reply_tokens)?;
    }
    if let Some(receipt) = &node.receipt {
        write_receipt(conn, id, receipt)?;
    }
    if let Some(draft) = node.replaces_draft {
        delete_draft(conn, draft)?;
    }
    Ok(())
}

fn thread_of_new_node(
    conn: &Connection,
    node: &NewNode,
    extra_roots: bool,
) -> Result<Option<PinId>, StoreError> {
    Ok(match (node.pin_id, node.parent_id) {
        (Some(pin_id), parent) => {
            let pin = pin_in_tree(conn, pin_id, node.tree_id)?;
            if pin.anchor_node_id != parent {
                return Err(StoreError::InvalidInput(format!(
                    "the first message of pin {} must hang off its anchor node",
                    pin_id.0
                )));
            }
            Some(pin_id)
        }
        (None, Some(parent)) => {
            let parent = node_by_id(conn, parent)?;
            if parent.tree_id != node.tree_id {
                return Err(StoreError::InvalidInput(format!(
                    "node {} belongs to another tree; a reply continues a node of its own tree",
                    parent.id.0
                )));
            }
            parent.pin_id
        }
        // An edit of the tree's first message is a second first message, beside the original.
        (None, None)
            if extra_roots
                || node.edited_from.is_some_and(|original| is_first_message(conn, original)) =>
        {
            None
        }
        (None, None) => {
            let has_root: bool = conn
                .prepare_cached(
                    "SELECT EXISTS (SELECT 1 FROM nodes
                 WHERE tree_id = ?1 AND parent_id IS NULL AND pin_id IS NULL)",
                )?
                .query_row([node.tree_id.0], |row| row.get(0))?;
            if has_root {
                return Err(StoreError::InvalidInput(format!(
                    "tree {} already has a first message; continue one of its messages instead",
                    node.tree_id.0
                )));
            }
            None
        }
    })
}

/// Where a new node goes among the segments: its parent's segment at the next position when that
/// is free (a first child), else `None`: the node heads a segment of its own, whose id is its
/// own and is set once the id is known.
fn segment_of_new_node(
    conn: &Connection,
    parent: Option<NodeId>,
) -> Result<Option<(i64, i64)>, StoreError> {
    Ok(match parent {
        None => None,
        Some(parent) => {
            let (segment_id, position): (i64, i64) = conn
                .prepare_cached("SELECT segment_id, segment_pos FROM nodes WHERE id = ?1")?
                .query_row([parent.0], |row| Ok((row.get(0)?, row.get(1)?)))?;
            let taken: bool = conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM nodes WHERE segment_id = ?1 AND segment_pos = ?2)",
            )?
            .query_row(params![segment_id, position + 1], |row| row.get(0))?;
            (!taken).then_some((segment_id, position + 1))
        }
    })
}

/// Whether `node` is a first message of its tree (no parent, in the root thread).
fn is_first_message(conn: &Connection, node: NodeId) -> bool {
    node_by_id(conn, node).is_ok_and(|node| node.parent_id.is_none() && node.pin_id.is_none())
}

/// The text search and token counts read: the text parts, one per line.
pub(crate) fn text_of(parts: &[Part]) -> String {
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|part| match part {
            Part::Text { text } => Some(text.as_str()),
            Part::ToolCall { .. } | Part::ToolResult { .. } => None,
        })
        .collect();
    texts.join("\n")
}

pub(crate) fn delete_draft(conn: &Connection, draft: i64) -> Result<(), StoreError> {
    conn.prepare_cached("DELETE FROM reply_drafts WHERE id = ?1")?.execute([draft])?;
    Ok(())
}
