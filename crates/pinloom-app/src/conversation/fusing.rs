//! A fused answer (big-AGI's Beam): one model writes one answer from two or more answers to the
//! same message, as a new answer beside them. Its request is the message's own context and the
//! chosen answers, numbered, with the instruction to fuse them; nothing else of their branches
//! (rule 7 of `pinloom_engine::permitted`).

use std::collections::HashSet;

use pinloom_engine::snapshot::{Author as EngineAuthor, FuseSource};
use pinloom_store::{self as store, Author, NodeId};

use crate::base::engine_inputs::engine_node;
use crate::base::pinloom::Pinloom;
use crate::error::ApiError;

/// How many answers one fused answer is written from: one is no fusion, and eight is the most a
/// fan-out makes at once.
pub const FUSE_ANSWERS: std::ops::RangeInclusive<usize> = 2..=8;

impl Pinloom {
    /// The message the answers `node_ids` answer, and the answers as the planner reads them.
    /// Refused, with what to choose instead: too few or too many, one chosen twice, one gone or
    /// deleted, a message of the person's, answers to different messages, a buffer document.
    pub(in crate::conversation) async fn fuse_sources(
        &self,
        node_ids: Vec<i64>,
    ) -> anyhow::Result<(NodeId, Vec<FuseSource>)> {
        if !FUSE_ANSWERS.contains(&node_ids.len()) {
            return Err(ApiError::invalid_input(format!(
                "{} answers were chosen: choose {} to {} answers to the same message to fuse",
                node_ids.len(),
                FUSE_ANSWERS.start(),
                FUSE_ANSWERS.end()
            ))
            .into());
        }
        let mut seen = HashSet::new();
        if let Some(twice) = node_ids.iter().find(|id| !seen.insert(**id)) {
            return Err(ApiError::invalid_input(format!(
                "answer {twice} is chosen twice: choose each answer once"
            ))
            .into());
        }
        self.read("could not read the answers to fuse", move |store| {
            let ids: Vec<NodeId> = node_ids.iter().copied().map(NodeId).collect();
            let nodes = store.nodes(&ids)?;
            if nodes.len() != ids.len() {
                return Err(ApiError::not_found(
                    "one of the chosen answers no longer exists: choose the answers again",
                )
                .into());
            }
            let prompt = nodes[0].parent_id;
            for node in &nodes {
                if node.author != Author::Model {
                    return Err(ApiError::invalid_input(
                        "only models' answers are fused: choose replies, not your own messages",
                    )
                    .into());
                }
                if node.parent_id != prompt {
                    return Err(ApiError::invalid_input(
                        "the chosen answers answer different messages: choose answers to the \
                         same message (its alternatives, one switch apart)",
                    )
                    .into());
                }
                if node.pruned_at_ms.is_some() {
                    return Err(ApiError::invalid_input(
                        "one of the chosen answers is deleted: bring it back from the trash, or \
                         choose another",
                    )
                    .into());
                }
            }
            let Some(prompt) = prompt else {
                return Err(ApiError::invalid_input(
                    "these answers answer no message: there is nothing to fuse them for",
                )
                .into());
            };
            if store.tree_setup(nodes[0].tree_id)?.mode == store::TreeMode::Buffer {
                return Err(ApiError::invalid_input(
                    "a document is continued, not answered: fuse answers in a dialogue tree",
                )
                .into());
            }
            let sources = nodes
                .into_iter()
                .map(|node| FuseSource {
                    node: engine_node(node.id),
                    answers: node.parent_id.map(engine_node),
                    author: EngineAuthor::Model,
                    deleted: false,
                    label: node.model.clone().unwrap_or_else(|| "a model".to_owned()),
                    text: node.text,
                })
                .collect();
            Ok((prompt, sources))
        })
        .await
    }
}
