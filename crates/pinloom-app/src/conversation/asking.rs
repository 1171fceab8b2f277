//! What a send from a terminal needs beyond the window's: the profile to answer with when none is
//! named, and a passage pinned by its words rather than by a selection's offsets.

use pinloom_store::NodeId;

use crate::base::pinloom::Pinloom;
use crate::error::ApiError;
use crate::json::PinView;
use crate::runtime::now_ms;

impl Pinloom {
    /// The tree message `node_id` belongs to.
    pub async fn node_tree(&self, node_id: i64) -> anyhow::Result<i64> {
        self.read("could not find the message", move |store| {
            Ok(store.node(NodeId(node_id))?.tree_id.0)
        })
        .await
    }

    /// The model profile a send after message `node_id` answers with when the person names none:
    /// the one that wrote the newest reply on its path, while it exists and is the person's (not
    /// one that came with a file and is not enabled); else the person's first profile by name
    /// that can be sent to now (a local server, or a provider whose key is set); else their
    /// first by name, whose send then says which key is missing.
    pub async fn profile_for_reply(&self, node_id: Option<i64>) -> anyhow::Result<String> {
        let usable: Vec<(String, String)> = self
            .model_profiles()
            .await?
            .into_iter()
            .filter(|profile| profile.imported_from.is_none())
            .map(|profile| (profile.name, profile.provider))
            .collect();
        let last_model = match node_id {
            None => None,
            Some(node_id) => {
                self.read("could not read the thread", move |store| {
                    let path = store.ancestor_path(NodeId(node_id))?;
                    Ok(path.into_iter().rev().find_map(|node| node.model))
                })
                .await?
            }
        };
        if let Some(model) = last_model.filter(|model| usable.iter().any(|(name, _)| name == model))
        {
            return Ok(model);
        }
        // A keyring that cannot be read leaves only the local servers and the environment.
        let keys = self.key_status().await.unwrap_or_default();
        let ready = |provider: &str| match keys.iter().find(|key| key.provider == provider) {
            Some(key) => key.from_environment || key.in_keyring,
            None => true,
        };
        let first_ready = usable.iter().find(|(_, provider)| ready(provider));
        first_ready.or(usable.first()).map(|(name, _)| name.clone()).ok_or_else(|| {
            ApiError::invalid_input(
                "there are no model profiles to answer with: add one in Pinloom's Settings, or \
                 name one with --profile",
            )
            .into()
        })
    }

    /// Pins the first place message `node_id` reads `passage` and opens its sub-thread, as a
    /// selection of those words in the window would. A passage the message does not hold is
    /// refused with what to do.
    pub async fn pin_passage(&self, node_id: i64, passage: String) -> anyhow::Result<PinView> {
        if passage.trim().is_empty() {
            return Err(ApiError::invalid_input(
                "the passage is empty: quote the words of the message to pin",
            )
            .into());
        }
        self.write("could not pin the passage", move |store| {
            let node = store.node(NodeId(node_id))?;
            let Some(at) = node.text.find(&passage) else {
                return Err(ApiError::invalid_input(format!(
                    "message {node_id} does not read {passage:?}: quote its words exactly \
                     (`pinloom export --node {node_id}` shows its text)"
                ))
                .into());
            };
            // Offsets in UTF-16 units, as a browser selection counts them.
            let start = node.text[..at].encode_utf16().count();
            let end = start + passage.encode_utf16().count();
            let (Ok(start), Ok(end)) = (u32::try_from(start), u32::try_from(end)) else {
                return Err(
                    ApiError::invalid_input("the passage lies beyond what a pin holds").into()
                );
            };
            Ok(store.pin_range(NodeId(node_id), start, end, &passage, "", now_ms())?.into())
        })
        .await
    }
}
