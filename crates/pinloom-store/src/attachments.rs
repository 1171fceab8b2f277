//! Attachments on trees, threads and nodes, and annotations on nodes.

use rusqlite::{Connection, Row, params};

use crate::codec::{role_from_sql, role_to_sql};
use crate::error::StoreError;
use crate::model::{
    Annotation, Attachment, AttachmentRole, AttachmentScope, NodeId, PinId, TreeId,
};
use crate::node_rows::{node_by_id, require_node};
use crate::pins::pin_in_tree;
use crate::store::Store;
use crate::trees::{require_tree, touch_tree};

impl Store {
    /// Attaches material, stored as given: a context never depends on a file that changed later.
    pub fn add_attachment(
        &self,
        tree_id: TreeId,
        scope: AttachmentScope,
        role: AttachmentRole,
        name: &str,
        content: &str,
        created_at_ms: i64,
    ) -> Result<Attachment, StoreError> {
        self.write(|tx| {
            let id = insert_attachment(tx, tree_id, scope, role, name, content, created_at_ms)?;
            touch_tree(tx, tree_id, created_at_ms)?;
            Ok(Attachment {
                id,
                tree_id,
                scope,
                role,
                name: name.to_owned(),
                content: content.to_owned(),
                created_at_ms,
            })
        })
    }

    /// Every attachment of a tree (on the tree, its threads and its nodes), oldest first.
    pub fn attachments(&self, tree_id: TreeId) -> Result<Vec<Attachment>, StoreError> {
        let conn = self.conn();
        require_tree(&conn, tree_id)?;
        let mut statement = conn.prepare_cached(
            "SELECT id, tree_id, scope, pin_id, node_id, role, name, content, created_at_ms
             FROM attachments WHERE tree_id = ?1 ORDER BY id",
        )?;
        let attachments =
            statement.query_map([tree_id.0], attachment_from_row)?.collect::<Result<_, _>>()?;
        Ok(attachments)
    }

    /// Removes one attachment.
    pub fn remove_attachment(&self, id: i64) -> Result<(), StoreError> {
        self.write(|tx| {
            if tx.execute("DELETE FROM attachments WHERE id = ?1", [id])? == 0 {
                return Err(StoreError::NotFound { kind: "attachment", id });
            }
            Ok(())
        })
    }

    /// Writes a note on a node; it stays out of context unless `included`.
    pub fn annotate(
        &self,
        node: NodeId,
        text: &str,
        included: bool,
        created_at_ms: i64,
    ) -> Result<Annotation, StoreError> {
        if text.trim().is_empty() {
            return Err(StoreError::InvalidInput(
                "an annotation needs text: type a note first".into(),
            ));
        }
        self.write(|tx| {
            let on = node_by_id(tx, node)?;
            let id = insert_annotation(tx, node, text, included, created_at_ms)?;
            touch_tree(tx, on.tree_id, created_at_ms)?;
            Ok(Annotation { id, node_id: node, text: text.to_owned(), included, created_at_ms })
        })
    }

    /// Lets an annotation into context, or keeps it out.
    pub fn set_annotation_included(&self, id: i64, included: bool) -> Result<(), StoreError> {
        self.write(|tx| {
            if tx.execute(
                "UPDATE annotations SET included = ?2 WHERE id = ?1",
                params![id, included],
            )? == 0
            {
                return Err(StoreError::NotFound { kind: "annotation", id });
            }
            Ok(())
        })
    }

    /// The annotations on a node, oldest first.
    pub fn annotations(&self, node: NodeId) -> Result<Vec<Annotation>, StoreError> {
        let conn = self.conn();
        require_node(&conn, node)?;
        let mut statement = conn.prepare_cached(
            "SELECT id, node_id, text, included, created_at_ms FROM annotations
             WHERE node_id = ?1 ORDER BY id",
        )?;
        let annotations =
            statement.query_map([node.0], annotation_from_row)?.collect::<Result<_, _>>()?;
        Ok(annotations)
    }

    /// The annotations of a tree that are let into context, oldest first: one read for a whole
    /// path, however long.
    pub fn included_annotations(&self, tree_id: TreeId) -> Result<Vec<Annotation>, StoreError> {
        let conn = self.conn();
        require_tree(&conn, tree_id)?;
        // The notes first, then each one's message (CROSS JOIN fixes that order): left to
        // choose, SQLite walked every message of the tree to find the few with notes, a
        // 10,000-message tree's index on every cold plan (0.3 ms; ten times that at 100,000).
        let mut statement = conn.prepare_cached(
            "SELECT a.id, a.node_id, a.text, a.included, a.created_at_ms
             FROM annotations a CROSS JOIN nodes n ON n.id = a.node_id
             WHERE n.tree_id = ?1 AND a.included = 1 ORDER BY a.id",
        )?;
        let annotations =
            statement.query_map([tree_id.0], annotation_from_row)?.collect::<Result<_, _>>()?;
        Ok(annotations)
    }
}

/// Writes an attachment after checking that its thread or node is the tree's.
pub(crate) fn insert_attachment(
    conn: &Connection,
    tree_id: TreeId,
    scope: AttachmentScope,
    role: AttachmentRole,
    name: &str,
    content: &str,
    created_at_ms: i64,
) -> Result<i64, StoreError> {
    require_tree(conn, tree_id)?;
    let (scope_name, pin, node) = match scope {
        AttachmentScope::Tree => ("tree", None, None),
        AttachmentScope::Thread(pin) => {
            if let Some(pin) = pin {
                pin_in_tree(conn, pin, tree_id)?;
            }
            ("thread", pin, None)
        }
        AttachmentScope::Node(node) => {
            if node_by_id(conn, node)?.tree_id != tree_id {
                return Err(StoreError::InvalidInput(format!(
                    "node {} belongs to another tree",
                    node.0
                )));
            }
            ("node", None, Some(node))
        }
    };
    conn.prepare_cached(
        "INSERT INTO attachments (tree_id, scope, pin_id, node_id, role, name, content, created_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        tree_id.0,
        scope_name,
        pin.map(|id: PinId| id.0),
        node.map(|id: NodeId| id.0),
        role_to_sql(role),
        name,
        content,
        created_at_ms
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Writes a note on a node.
pub(crate) fn insert_annotation(
    conn: &Connection,
    node: NodeId,
    text: &str,
    included: bool,
    created_at_ms: i64,
) -> Result<i64, StoreError> {
    conn.prepare_cached(
        "INSERT INTO annotations (node_id, text, included, created_at_ms) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![node.0, text, included, created_at_ms])?;
    Ok(conn.last_insert_rowid())
}

pub(crate) fn annotation_from_row(row: &Row<'_>) -> rusqlite::Result<Annotation> {
    Ok(Annotation {
        id: row.get(0)?,
        node_id: NodeId(row.get(1)?),
        text: row.get(2)?,
        included: row.get(3)?,
        created_at_ms: row.get(4)?,
    })
}

fn attachment_from_row(row: &Row<'_>) -> rusqlite::Result<Attachment> {
    let scope = match row.get::<_, String>(2)?.as_str() {
        "tree" => AttachmentScope::Tree,
        "thread" => AttachmentScope::Thread(row.get::<_, Option<i64>>(3)?.map(PinId)),
        _ => AttachmentScope::Node(NodeId(row.get(4)?)),
    };
    Ok(Attachment {
        id: row.get(0)?,
        tree_id: TreeId(row.get(1)?),
        scope,
        role: role_from_sql(&row.get::<_, String>(5)?)?,
        name: row.get(6)?,
        content: row.get(7)?,
        created_at_ms: row.get(8)?,
    })
}
