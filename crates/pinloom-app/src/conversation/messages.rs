//! The person's messages: written into a thread or a pin with their token counts, edited as a new
//! branch, and the message a reply answers.

use std::sync::Arc;

use anyhow::Context;
use pinloom_store::{self as store, Author, NewNode, NodeId, Store, TreeId};

use crate::base::engine_inputs::{stored_counts, token_counts};
use crate::base::pinloom::Pinloom;
use crate::base::snapshot_cache::SnapshotCache;
use crate::error::ApiError;
use crate::json::{Message, NodeView};
use crate::runtime::{blocking, now_ms};

impl Pinloom {
    /// Writes the person's message into a tree, continuing `parent_id` (absent for a tree's first
    /// message), with its token counts.
    pub async fn append_message(
        &self,
        tree_id: i64,
        parent_id: Option<i64>,
        text: String,
    ) -> anyhow::Result<Message> {
        let node = self.append_human(TreeId(tree_id), parent_id.map(NodeId), None, text).await?;
        Ok(node.into())
    }

    /// Writes the person's message in pin `pin_id`'s sub-thread, after its message `parent_id`
    /// or as its first message.
    pub(in crate::conversation) async fn append_in_pin(
        &self,
        pin_id: i64,
        parent_id: Option<i64>,
        text: String,
    ) -> anyhow::Result<NodeView> {
        match parent_id {
            None => self.ask_in_pin(pin_id, text).await,
            Some(parent) => {
                let tree = self
                    .read("could not open the sub-thread", move |store| {
                        Ok(store.pin(store::PinId(pin_id))?.tree_id)
                    })
                    .await?;
                Ok(self.append_human(tree, Some(NodeId(parent)), None, text).await?.into())
            }
        }
    }

    /// The message answering `node_id` again answers: the reply's prompt, given a reply.
    pub(in crate::conversation) async fn prompt_of(&self, node_id: i64) -> anyhow::Result<NodeId> {
        let node = self
            .read("could not answer again", move |store| Ok(store.node(NodeId(node_id))?))
            .await?;
        match (node.author, node.parent_id) {
            (Author::Model, Some(parent)) => Ok(parent),
            (Author::Model, None) => {
                Err(ApiError::invalid_input("this reply has no message before it to answer again")
                    .into())
            }
            _ => Ok(node.id),
        }
    }

    /// Writes an edit of a message as a new branch beside it; the original stays.
    pub async fn edit_message(&self, node_id: i64, text: String) -> anyhow::Result<NodeView> {
        if text.trim().is_empty() {
            return Err(ApiError::invalid_input("the edit is empty: type something first").into());
        }
        let edited = self
            .write("could not edit the message", move |store| {
                let parts = vec![store::Part::Text { text }];
                let counts = token_counts(&parts);
                Ok(store.edit_node(NodeId(node_id), parts, counts, now_ms())?)
            })
            .await?;
        Ok(edited.into())
    }

    /// Writes the person's rewrite of a model's reply as a new reply beside it, marked as edited
    /// (it names the reply it came from); the original stays one switch away. Nothing is sent:
    /// the next message on this branch carries the rewrite as the model's turn.
    pub async fn edit_reply(&self, node_id: i64, text: String) -> anyhow::Result<NodeView> {
        if text.trim().is_empty() {
            return Err(ApiError::invalid_input(
                "the edited reply is empty: type the reply as it should read, or cancel",
            )
            .into());
        }
        let edited = self
            .write("could not save the edited reply", move |store| {
                let original = store.node(NodeId(node_id))?;
                if original.author != Author::Model {
                    return Err(ApiError::invalid_input(
                        "only a model's reply is edited this way: your own message is edited \
                         with Edit, which asks again",
                    )
                    .into());
                }
                let parts = vec![store::Part::Text { text }];
                let counts = token_counts(&parts);
                Ok(store.edit_node(original.id, parts, counts, now_ms())?)
            })
            .await?;
        Ok(edited.into())
    }

    /// Writes the person's message `text` in `tree` after `parent` (in `pin`'s sub-thread, when
    /// given), with its token counts, and extends the tree's cached path by it.
    pub(in crate::conversation) async fn append_human(
        &self,
        tree: TreeId,
        parent: Option<NodeId>,
        pin: Option<store::PinId>,
        text: String,
    ) -> anyhow::Result<store::Node> {
        if text.trim().is_empty() {
            return Err(
                ApiError::invalid_input("the message is empty: type something first").into()
            );
        }
        let store = self.store.clone();
        let snapshot_cache = self.snapshot_cache.clone();
        blocking(move || {
            let mut node = NewNode::text(tree, parent, Author::Human, text, now_ms());
            node.pin_id = pin;
            node.token_counts = token_counts(&node.parts);
            let written = store.append_node(&node)?;
            extend_cached_path(&store, &snapshot_cache, &written, &node.token_counts)?;
            Ok(written)
        })
        .await
        .context("could not add the message")
    }
}

/// Extends this tree's cached path by a node just written after its end; any other cached path
/// of the tree no longer matches and is dropped.
/// `counts` are the node's stored counts, as written with it (counted once, not again here).
fn extend_cached_path(
    store: &Arc<Store>,
    snapshot_cache: &Arc<SnapshotCache>,
    written: &store::Node,
    counts: &[(String, u64)],
) -> anyhow::Result<()> {
    let data_version = store.data_version()?;
    snapshot_cache.forget_plans();
    if let Some(parent) = written.parent_id
        && let Some(mut path) =
            snapshot_cache.check_out(store, data_version, written.tree_id, parent)
        && let Err(error) = path.extend(store, written, &stored_counts(counts))
    {
        path.discard();
        return Err(error.into());
    }
    Ok(())
}
