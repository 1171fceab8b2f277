//! Renaming trees, and the trash: a tree, a message with its branch, or a thread the person
//! deletes leaves its list and comes back whole until the trash is emptied, the one step that
//! erases anything.

use std::collections::HashMap;

use pinloom_store::{NodeId, TreeId};

use crate::base::pinloom::Pinloom;
use crate::json::{DeletedBranchView, EmptiedTrashView, TrashView, TreeSummary};
use crate::runtime::now_ms;

/// How much of a deleted message the trash shows.
const PREVIEW_CHARACTERS: usize = 120;

impl Pinloom {
    /// Records that tree `tree_id`'s title was taken from its message `node_id` (the command
    /// line titles a new tree after its first question): while that message is excluded or
    /// deleted, requests do not name the tree by it. A rename makes the title the person's.
    pub async fn title_from_message(&self, tree_id: i64, node_id: i64) -> anyhow::Result<()> {
        self.write("could not record where the title came from", move |store| {
            Ok(store.set_title_taken_from(TreeId(tree_id), NodeId(node_id))?)
        })
        .await
    }

    /// Gives tree `tree_id` a new title; the project id agents know it by stays.
    pub async fn rename_tree(&self, tree_id: i64, title: String) -> anyhow::Result<TreeSummary> {
        let tree = self
            .write("could not rename the tree", move |store| {
                Ok(store.rename_tree(TreeId(tree_id), &title, now_ms())?)
            })
            .await?;
        Ok(tree.into())
    }

    /// Puts tree `tree_id` in the trash.
    pub async fn trash_tree(&self, tree_id: i64) -> anyhow::Result<TreeSummary> {
        let tree = self
            .write("could not delete the tree", move |store| {
                Ok(store.trash_tree(TreeId(tree_id), now_ms())?)
            })
            .await?;
        Ok(tree.into())
    }

    /// Takes tree `tree_id` out of the trash.
    pub async fn restore_tree(&self, tree_id: i64) -> anyhow::Result<TreeSummary> {
        let tree = self
            .write("could not restore the tree", move |store| {
                Ok(store.restore_tree(TreeId(tree_id))?)
            })
            .await?;
        Ok(tree.into())
    }

    /// What is in the trash: trees, and messages deleted with their branches in the other trees.
    /// Threads deleted whole are offered per tree (`deleted_threads`).
    pub async fn trash(&self) -> anyhow::Result<TrashView> {
        self.read("could not read the trash", move |store| {
            let trees = store.trashed_trees()?;
            let titles: HashMap<TreeId, String> =
                store.list_trees()?.into_iter().map(|tree| (tree.id, tree.title)).collect();
            let branches = store
                .deleted_branches()?
                .into_iter()
                .map(|node| DeletedBranchView {
                    id: node.id.0,
                    tree_id: node.tree_id.0,
                    tree_title: titles.get(&node.tree_id).cloned().unwrap_or_default(),
                    author: node.author.into(),
                    preview: node.text.chars().take(PREVIEW_CHARACTERS).collect(),
                    deleted_at_ms: node.pruned_at_ms.unwrap_or(node.created_at_ms),
                })
                .collect();
            Ok(TrashView { trees: trees.into_iter().map(TreeSummary::from).collect(), branches })
        })
        .await
    }

    /// Erases everything in the trash for good.
    pub async fn empty_trash(&self) -> anyhow::Result<EmptiedTrashView> {
        let emptied =
            self.write("could not empty the trash", |store| Ok(store.empty_trash()?)).await?;
        let count = |value: usize| u32::try_from(value).unwrap_or(u32::MAX);
        Ok(EmptiedTrashView {
            trees: count(emptied.trees),
            branches: count(emptied.branches),
            threads: count(emptied.threads),
        })
    }
}
