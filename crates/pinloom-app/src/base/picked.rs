//! Messages picked for a question over several branches, as a plan and the window read them:
//! each named by where it came from, the engine given its text as it stands now and, when asked
//! for, its branch's summary up to it (`pinloom_engine::permitted`, rule 8).

use pinloom_engine::snapshot::PickedSource;
use pinloom_store::{self as store, NodeId, Store, StoreError};

use crate::base::engine_inputs::{engine_node, engine_thread};

/// Where a picked message came from, in the words the request and the window use: its thread
/// and who wrote it ("the pin “Costs”, an answer by qwen3").
pub(crate) fn picked_label(store: &Store, node: &store::Node) -> Result<String, StoreError> {
    let thread = match node.pin_id {
        Some(pin) => format!("the pin “{}”", store.pin(pin)?.title),
        None => "the main thread".to_owned(),
    };
    let whose = match (node.author, node.model.as_deref()) {
        (store::Author::Human, _) => "a message of yours".to_owned(),
        (store::Author::Model, Some(model)) => format!("an answer by {model}"),
        (store::Author::Model, None) => "an answer".to_owned(),
        (store::Author::Tool, _) => "a tool's result".to_owned(),
    };
    Ok(format!("{thread}, {whose}"))
}

/// The picks of those of `questions` asked over picked messages, as the engine reads them. The
/// summary asked for is the newest that holds of the picked message's thread ending exactly at
/// it; when there is none the plan asks for it to be written.
pub(crate) fn picked_sources(
    store: &Store,
    questions: &[NodeId],
) -> Result<Vec<PickedSource>, StoreError> {
    let mut sources = Vec::new();
    for picked in store.picked_for(questions)? {
        let node = &picked.node;
        let summary = if picked.with_summary {
            // The store lists the newest first.
            store
                .thread_summaries(node.tree_id, node.pin_id)?
                .into_iter()
                .find(|summary| summary.stale.is_none() && summary.key.path_end == Some(node.id))
                .map(|summary| summary.text)
        } else {
            None
        };
        sources.push(PickedSource {
            question: engine_node(picked.question),
            node: engine_node(node.id),
            label: picked_label(store, node)?,
            text: node.text.clone(),
            excluded: node.excluded,
            deleted: node.pruned_at_ms.is_some(),
            with_summary: picked.with_summary,
            summary,
            thread: engine_thread(node.pin_id),
        });
    }
    Ok(sources)
}
