//! Replies while they stream: what has arrived is saved at least every second, so a crash of
//! the app loses at most the last second of a reply, and the next start writes what was saved
//! as an incomplete reply.

use rusqlite::params;

use crate::error::StoreError;
use crate::model::{Author, NewNode, Node, NodeId, TreeId};
use crate::node_rows::require_node;
use crate::node_writes::{delete_draft, insert_node};
use crate::store::Store;

impl Store {
    /// Saves what has arrived of a reply to `parent` from `model`, streamed by process
    /// `owner_pid`: a new draft when `draft` is `None`, else that draft's text replaced. Returns
    /// the draft's id. One short transaction.
    #[allow(clippy::too_many_arguments)] // one row's columns, each named at the call
    pub fn save_reply_draft(
        &self,
        draft: Option<i64>,
        tree_id: TreeId,
        parent: NodeId,
        model: &str,
        text: &str,
        owner_pid: u32,
        at_ms: i64,
    ) -> Result<i64, StoreError> {
        self.write(|tx| match draft {
            Some(id) => {
                let changed = tx
                    .prepare_cached(
                        "UPDATE reply_drafts SET text = ?2, saved_at_ms = ?3 WHERE id = ?1",
                    )?
                    .execute(params![id, text, at_ms])?;
                if changed == 0 {
                    return Err(StoreError::NotFound { kind: "reply draft", id });
                }
                Ok(id)
            }
            None => {
                require_node(tx, parent)?;
                tx.prepare_cached(
                    "INSERT INTO reply_drafts
                         (tree_id, parent_id, model, text, owner_pid, started_at_ms, saved_at_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
                )?
                .execute(params![tree_id.0, parent.0, model, text, owner_pid, at_ms])?;
                Ok(tx.last_insert_rowid())
            }
        })
    }

    /// Forgets a draft whose reply is not kept (it failed before any text was worth keeping).
    pub fn discard_reply_draft(&self, draft: i64) -> Result<(), StoreError> {
        self.write(|tx| delete_draft(tx, draft))
    }

    /// Writes every draft left by a process that stopped mid-reply as an incomplete reply, in
    /// one transaction, and returns those replies. `left(owner_pid, saved_at_ms)` says whether a
    /// draft was left: a fresh one may belong to a reply still arriving in another process (the
    /// desktop app, while the CLI starts). A draft whose message was deleted since went with it
    /// (the foreign key); an empty one is dropped.
    pub fn recover_reply_drafts(
        &self,
        left: impl Fn(u32, i64) -> bool,
    ) -> Result<Vec<Node>, StoreError> {
        self.write(|tx| {
            let drafts: Vec<(i64, i64, i64, String, String, u32, i64)> = tx
                .prepare_cached(
                    "SELECT id, tree_id, parent_id, model, text, owner_pid, saved_at_ms
                     FROM reply_drafts ORDER BY id",
                )?
                .query_map([], |row| {
                    Ok((
                        row.get(0)?,
                        row.get(1)?,
                        row.get(2)?,
                        row.get(3)?,
                        row.get(4)?,
                        row.get(5)?,
                        row.get(6)?,
                    ))
                })?
                .collect::<Result<_, _>>()?;
            let drafts = drafts.into_iter().filter(|draft| left(draft.5, draft.6));
            let mut written = Vec::new();
            for (id, tree, parent, model, text, _, saved_at_ms) in drafts {
                if !text.trim().is_empty() {
                    let mut node = NewNode::text(
                        TreeId(tree),
                        Some(NodeId(parent)),
                        Author::Model,
                        text,
                        saved_at_ms,
                    );
                    node.model = Some(model);
                    node.incomplete = true;
                    node.replaces_draft = Some(id);
                    written.push(insert_node(tx, &node, false)?);
                } else {
                    delete_draft(tx, id)?;
                }
            }
            Ok(written)
        })
    }
}
