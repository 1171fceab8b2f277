//! A tree's settings and context as the person reads and changes them.

use crate::error::ApiError;
use crate::json::{TreeContext, TreeSettings};

impl crate::base::pinloom::Pinloom {
    /// A tree's conversation settings.
    pub async fn tree_settings(&self, tree_id: i64) -> anyhow::Result<TreeSettings> {
        self.read("could not read the tree's settings", move |store| {
            TreeSettings::of_tree(store, pinloom_store::TreeId(tree_id))
        })
        .await
    }

    /// Replaces a tree's conversation settings after checking them; a summariser must name a
    /// model profile that exists.
    pub async fn set_tree_settings(
        &self,
        tree_id: i64,
        settings: TreeSettings,
    ) -> anyhow::Result<TreeSettings> {
        settings.check()?;
        let json = serde_json::to_string(&settings)?;
        self.write("could not save the tree's settings", move |store| {
            if let Some(name) = &settings.summarizer {
                store.profile(name).map_err(|_| {
                    ApiError::invalid_input(format!(
                        "there is no model profile named \"{name}\" to write summaries; choose one \
                         in the Model list, or add it with Budget"
                    ))
                })?;
            }
            store.set_tree_settings(
                pinloom_store::TreeId(tree_id),
                &json,
                crate::runtime::now_ms(),
            )?;
            Ok(settings)
        })
        .await
    }

    /// Puts message `node_id` among the tree's chosen search hits, or takes it out, and returns
    /// the settings as saved. Read and written in one step, so the window changes one list
    /// without holding a copy of every other setting to write back.
    pub async fn set_search_hit(
        &self,
        tree_id: i64,
        node_id: i64,
        picked: bool,
    ) -> anyhow::Result<TreeSettings> {
        self.write("could not change the chosen search hits", move |store| {
            let tree = store.tree_setup(pinloom_store::TreeId(tree_id))?;
            let node = store.node(pinloom_store::NodeId(node_id))?;
            if node.tree_id != tree.id {
                return Err(ApiError::invalid_input(format!(
                    "message #{node_id} is not in this tree; search this tree to choose its hits"
                ))
                .into());
            }
            let mut settings = TreeSettings::from_json(&tree.settings_json);
            let present = settings.search_hits.contains(&node_id);
            if picked && !present {
                settings.search_hits.push(node_id);
            } else if !picked {
                settings.search_hits.retain(|&hit| hit != node_id);
            }
            let json = serde_json::to_string(&settings)?;
            store.set_tree_settings(tree.id, &json, crate::runtime::now_ms())?;
            Ok(settings)
        })
        .await
    }

    /// What a tree says to every model: its system context, and whether buffer mode sends it.
    pub async fn tree_context(&self, tree_id: i64) -> anyhow::Result<TreeContext> {
        self.read("could not read the tree's system context", move |store| {
            let tree = store.tree_setup(pinloom_store::TreeId(tree_id))?;
            Ok(TreeContext {
                system_context: tree.system_context,
                buffer_includes_system: tree.buffer_includes_system,
            })
        })
        .await
    }

    /// Turns the system context on or off for a buffer-mode tree's continuations.
    pub async fn set_buffer_includes_system(
        &self,
        tree_id: i64,
        included: bool,
    ) -> anyhow::Result<()> {
        self.write("could not change the buffer-mode setting", move |store| {
            store.set_buffer_includes_system(
                pinloom_store::TreeId(tree_id),
                included,
                crate::runtime::now_ms(),
            )?;
            Ok(())
        })
        .await
    }

    /// Replaces a tree's system context (its standing instructions to every model).
    pub async fn set_system_context(&self, tree_id: i64, text: String) -> anyhow::Result<()> {
        self.write("could not save the system context", move |store| {
            store.set_system_context(
                pinloom_store::TreeId(tree_id),
                &text,
                crate::runtime::now_ms(),
            )?;
            Ok(())
        })
        .await
    }
}
