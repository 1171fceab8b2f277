//! What the person marks on a message (left out of context, bookmarked, kept in every context,
//! deleted or restored) and the notes they write on it.

use pinloom_store::NodeId;

use crate::base::pinloom::Pinloom;
use crate::json::{NodeAction, NodeView};
use crate::runtime::now_ms;

impl Pinloom {
    /// Changes a message's flags. A deletion stops the summaries being written for pins that
    /// went with it.
    pub async fn mark_node(&self, node_id: i64, action: NodeAction) -> anyhow::Result<NodeView> {
        let (changed, tree) = self
            .write("could not change the message", move |store| {
                let node = NodeId(node_id);
                let changed = match action {
                    NodeAction::Exclude => store.set_excluded(node, true)?,
                    NodeAction::Include => store.set_excluded(node, false)?,
                    NodeAction::Bookmark => store.set_bookmarked(node, true)?,
                    NodeAction::Unbookmark => store.set_bookmarked(node, false)?,
                    NodeAction::Keep => store.set_kept(node, true)?,
                    NodeAction::Release => store.set_kept(node, false)?,
                    NodeAction::Delete => store.soft_delete(node, now_ms())?,
                    NodeAction::Restore => store.restore(node)?,
                };
                let tree = changed.tree_id;
                Ok((NodeView::from(changed), tree))
            })
            .await?;
        if action == NodeAction::Delete {
            self.cancel_unneeded_summaries(tree).await?;
        }
        Ok(changed)
    }

    /// Writes a note on message `node_id`; it enters context only when `included`.
    pub async fn annotate(
        &self,
        node_id: i64,
        text: String,
        included: bool,
    ) -> anyhow::Result<i64> {
        self.write("could not save the note", move |store| {
            Ok(store.annotate(NodeId(node_id), &text, included, now_ms())?.id)
        })
        .await
    }

    /// Lets a note into context, or keeps it out.
    pub async fn include_annotation(
        &self,
        annotation_id: i64,
        included: bool,
    ) -> anyhow::Result<()> {
        self.write("could not change the note", move |store| {
            Ok(store.set_annotation_included(annotation_id, included)?)
        })
        .await
    }
}
