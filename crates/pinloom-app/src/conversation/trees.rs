//! Trees as a whole: making one, and listing them.

use pinloom_store::TreeId;

use crate::base::pinloom::Pinloom;
use crate::json::{TreeMode, TreeSummary};
use crate::runtime::now_ms;

impl Pinloom {
    /// Creates an empty tree.
    pub async fn create_tree(&self, title: String, mode: TreeMode) -> anyhow::Result<TreeSummary> {
        let tree = self
            .write("could not create the tree", move |store| {
                Ok(store.create_tree(&title, mode.into(), now_ms())?)
            })
            .await?;
        Ok(tree.into())
    }

    /// Every tree, the most recently changed first.
    pub async fn list_trees(&self) -> anyhow::Result<Vec<TreeSummary>> {
        let trees = self.read("could not list the trees", |store| Ok(store.list_trees()?)).await?;
        Ok(trees.into_iter().map(TreeSummary::from).collect())
    }

    /// One tree as the tree list shows it (what a window opening it needs: the thread itself is
    /// read by the thread view).
    pub async fn tree_summary(&self, tree_id: i64) -> anyhow::Result<TreeSummary> {
        let tree = self
            .read("could not open the tree", move |store| Ok(store.tree(TreeId(tree_id))?))
            .await?;
        Ok(tree.into())
    }
}
