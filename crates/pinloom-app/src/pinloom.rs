use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use pinloom_store::{Author, NewNode, NodeId, Store, TreeId};

use crate::ApiError;
use crate::data_dir::DATABASE_FILE_NAME;
use crate::json::{Message, TreeMode, TreeSummary, TreeView};

/// Pinloom's use cases over one open database.
///
/// Cheap to clone; clones share the database.
#[derive(Debug, Clone)]
pub struct Pinloom {
    pub(crate) store: Arc<Store>,
}

impl Pinloom {
    /// Opens (creating if needed) the database in `data_dir`, creating the folder too.
    pub async fn open(data_dir: PathBuf) -> anyhow::Result<Pinloom> {
        let store = blocking(move || {
            std::fs::create_dir_all(&data_dir).map_err(|error| ApiError {
                code: crate::ErrorCode::DatabaseUnusable,
                message: format!(
                    "cannot create the data folder {}: {error}; choose another with --data-dir",
                    data_dir.display()
                ),
            })?;
            let store = Store::open(&data_dir.join(DATABASE_FILE_NAME))?;
            crate::profiles::seed_from_catalog(&store)?;
            Ok(store)
        })
        .await
        .context("could not open Pinloom's database")?;
        Ok(Pinloom { store: Arc::new(store) })
    }

    /// The database file in use.
    pub fn database_path(&self) -> &Path {
        self.store.path()
    }

    /// Creates an empty tree.
    pub async fn create_tree(&self, title: String, mode: TreeMode) -> anyhow::Result<TreeSummary> {
        let store = self.store.clone();
        let tree = blocking(move || Ok(store.create_tree(&title, mode.into(), now_ms())?))
            .await
            .context("could not create the tree")?;
        Ok(tree.into())
    }

    /// Every tree, the most recently changed first.
    pub async fn list_trees(&self) -> anyhow::Result<Vec<TreeSummary>> {
        let store = self.store.clone();
        let trees =
            blocking(move || Ok(store.list_trees()?)).await.context("could not list the trees")?;
        Ok(trees.into_iter().map(TreeSummary::from).collect())
    }

    /// A tree and its newest thread, root first.
    pub async fn open_tree(&self, tree_id: i64) -> anyhow::Result<TreeView> {
        let store = self.store.clone();
        let (tree, path) = blocking(move || {
            let tree = store.tree(TreeId(tree_id))?;
            let path = match store.newest_node(TreeId(tree_id))? {
                Some(newest) => store.ancestor_path(newest)?,
                None => Vec::new(),
            };
            Ok((tree, path))
        })
        .await
        .context("could not open the tree")?;
        Ok(TreeView { tree: tree.into(), messages: path.into_iter().map(Message::from).collect() })
    }

    /// Writes the person's message into a tree, continuing `parent_id` (absent for a tree's first
    /// message).
    pub async fn append_message(
        &self,
        tree_id: i64,
        parent_id: Option<i64>,
        text: String,
    ) -> anyhow::Result<Message> {
        if text.trim().is_empty() {
            return Err(
                ApiError::invalid_input("the message is empty: type something first").into()
            );
        }
        let store = self.store.clone();
        let node = blocking(move || {
            let node = NewNode::text(
                TreeId(tree_id),
                parent_id.map(NodeId),
                Author::Human,
                text,
                now_ms(),
            );
            Ok(store.append_node(&node)?)
        })
        .await
        .context("could not add the message")?;
        Ok(node.into())
    }
}

/// Runs store work on tokio's blocking pool: a SQLite call can wait up to the busy timeout on
/// another process's lock, and must never stall the async executor while it does.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    tokio::task::spawn_blocking(work).await.context("a database task stopped unexpectedly")?
}

pub(crate) fn now_ms() -> i64 {
    // A clock before 1970 is a broken machine; 0 keeps ordering sane rather than failing a write.
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
