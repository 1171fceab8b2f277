//! A question over several branches: the person picks messages from different branches and pins
//! of a tree and asks one question over them. The question starts a thread of its own at the
//! tree's top, and every request of that thread carries the picked messages as slices labelled
//! as the person's (`pinloom_engine::permitted`, rule 8), and nothing else of their branches.

use anyhow::Context;
use pinloom_store::{self as store, Author, NewNode, NodeId, Pick};

use crate::base::engine_inputs::token_counts;
use crate::base::pinloom::Pinloom;
use crate::error::ApiError;
use crate::json::PickInput;
use crate::runtime::{blocking, now_ms};

impl Pinloom {
    /// Writes question `text` over the messages `picks` (of one tree, each once, none deleted)
    /// as a new thread of their tree. Nothing is written when any pick is refused.
    pub(in crate::conversation) async fn ask_over_picked(
        &self,
        picks: Vec<PickInput>,
        text: String,
    ) -> anyhow::Result<store::Node> {
        if text.trim().is_empty() {
            return Err(
                ApiError::invalid_input("the question is empty: type something first").into()
            );
        }
        let Some(first) = picks.first() else {
            return Err(ApiError::invalid_input(
                "no message is picked: pick the messages to ask over first",
            )
            .into());
        };
        let first = NodeId(first.node_id);
        let store = self.store.clone();
        let snapshot_cache = self.snapshot_cache.clone();
        blocking(move || {
            let tree = store.node(first)?.tree_id;
            let mut question = NewNode::text(tree, None, Author::Human, text, now_ms());
            question.token_counts = token_counts(&question.parts);
            let picks: Vec<Pick> = picks
                .iter()
                .map(|pick| Pick { node: NodeId(pick.node_id), with_summary: pick.with_summary })
                .collect();
            let written = store.ask_over_picked(&question, &picks)?;
            snapshot_cache.forget_plans();
            Ok(written)
        })
        .await
        .context("could not ask over the picked messages")
    }
}
