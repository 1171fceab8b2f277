//! What a send from a terminal needs beyond the window's: the profile to answer with when none is
//! named, and a passage pinned by its words rather than by a selection's offsets.

use pinloom_providers::ProviderId;
use pinloom_store::{Author, Deleted, LocalChoice, NodeId};

use crate::base::pinloom::Pinloom;
use crate::error::ApiError;
use crate::json::{LastAsked, PinView};
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
    /// one that came with a file and is not enabled); else the default chosen on this machine
    /// (`pinloom models default`); else the person's first profile by name that can be sent to
    /// now (a local server, or a provider whose key is set); else their first by name, whose
    /// send then says which key is missing.
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
        let default = self.default_profile().await?;
        if let Some(model) = last_model
            .into_iter()
            .chain(default)
            .find(|model| usable.iter().any(|(name, _)| name == model))
        {
            return Ok(model);
        }
        // Looked at in order, and the keyring asked only for a cloud profile that comes before
        // any that needs no key: a locked or absent keyring can take a while to say no, and a
        // send from the terminal should not wait on it for a local model. A keyring that cannot
        // be read leaves only the local servers and the environment.
        let mut keyring_usable = true;
        let mut first_ready = None;
        for (name, provider) in &usable {
            let ready = match ProviderId::from_name(provider) {
                None => false,
                Some(id) if id.key_variable().is_none() => true,
                Some(id) if pinloom_providers::keys::key_from_environment(id).is_some() => true,
                Some(_) if !keyring_usable => false,
                Some(id) => match self.key_for(id).await {
                    Ok(found) => found.is_some(),
                    Err(_) => {
                        keyring_usable = false;
                        false
                    }
                },
            };
            if ready {
                first_ready = Some(name);
                break;
            }
        }
        first_ready.or(usable.first().map(|(name, _)| name)).cloned().ok_or_else(|| {
            ApiError::invalid_input(
                "there are no model profiles to answer with: add one with `pinloom models add` \
                 or in the window's Settings",
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

    /// Remembers message `node_id` as where the person last asked from the terminal, for
    /// `pinloom ask -c`: their question as soon as it is written, its reply once that is.
    pub async fn remember_asked(&self, node_id: i64) -> anyhow::Result<()> {
        self.write("could not remember the conversation", move |store| {
            store.node(NodeId(node_id))?;
            Ok(store.set_local_choice(LocalChoice::LastAsked, Some(&node_id.to_string()))?)
        })
        .await
    }

    /// Where the person last asked from the terminal, if that message is still there: the
    /// message, its tree, and when it is their own question, its text (it has no reply yet, or
    /// the reply would have been remembered instead).
    pub async fn last_asked(&self) -> anyhow::Result<Option<LastAsked>> {
        self.read("could not read the last conversation", move |store| {
            let Some(id) = store.local_choice(LocalChoice::LastAsked)? else {
                return Ok(None);
            };
            let Ok(node_id) = id.parse::<i64>() else { return Ok(None) };
            // Deleted since, or gone with its tree: there is nothing to continue.
            let Ok(node) = store.node(NodeId(node_id)) else { return Ok(None) };
            if store.is_deleted(node.id)? {
                return Ok(None);
            }
            let replies = store.children(node.id, Deleted::Left)?;
            let unanswered = (node.author == Author::Human
                && replies.iter().all(|child| child.author != Author::Model))
            .then(|| node.text.clone());
            Ok(Some(LastAsked { node_id, tree_id: node.tree_id.0, unanswered }))
        })
        .await
    }
}
