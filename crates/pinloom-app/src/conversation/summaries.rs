//! Ancestor-thread summaries: written by the tree's summariser at the depth budget the plan asks
//! for, all missing ones at once, cached by (path end, budget, summariser), editable by hand, and
//! every write logged by the store.

use anyhow::Context;
use futures_util::future::join_all;
use pinloom_engine::plan::MissingSummary;
use pinloom_engine::snapshot::{Author, ParentEdge};
use pinloom_providers::summary::summary_request;
use pinloom_store::{NodeId, PinId, SummaryKey, TreeId};
use tokio_util::sync::CancellationToken;

use crate::conversation::Planned;
use crate::conversation::engine_inputs::ModelChoice;
use crate::conversation::snapshot_cache::store_pin;
use crate::json::SummaryView;
use crate::pinloom::Pinloom;
use crate::runtime::{blocking, now_ms};

/// What ends a summary that came back over its budget and was cut to fit.
pub const CUT_SUMMARY_NOTE: &str = " […summary cut to its budget]";

impl Pinloom {
    /// Writes every summary `planned` lacks, asking the summariser for all of them at once;
    /// `cancel` (the person's Stop) ends the wait. Returns how many were written.
    pub(crate) async fn write_missing_summaries(
        &self,
        planned: &Planned,
        cancel: &CancellationToken,
    ) -> anyhow::Result<usize> {
        let summarizer_name =
            planned.settings.summarizer.clone().unwrap_or_else(|| planned.choice.name.clone());
        let this = self.clone();
        let name = summarizer_name.clone();
        let summarizer = blocking(move || this.model_choice(&name))
            .await
            .context("could not choose the summariser; set one in the tree's settings")?;
        let key = self.key_for(summarizer.provider).await?;
        let instruction = planned.settings.summary_instruction().to_owned();
        let requests = planned.plan.missing_summaries.iter().map(|missing| {
            let transcript = transcript(planned, missing);
            let summarizer = &summarizer;
            let instruction = &instruction;
            let key = key.as_ref();
            async move {
                let text = self
                    .summarise(summarizer, instruction, &transcript, missing.budget, key, cancel)
                    .await
                    .with_context(|| {
                        format!(
                            "{} could not summarise an ancestor thread; choose another \
                             summariser in the tree's settings, or write the summary by hand",
                            summarizer.name
                        )
                    })?;
                anyhow::Ok((*missing, transcript, text))
            }
        });
        let written = join_all(requests).await.into_iter().collect::<anyhow::Result<Vec<_>>>()?;
        let count = written.len();
        let store = self.store.clone();
        let snapshot_cache = self.snapshot_cache.clone();
        let tree = planned.tree.id;
        let tokenizer = summarizer.engine.tokenizer;
        blocking(move || {
            for (missing, transcript, text) in written {
                let key = SummaryKey {
                    tree_id: tree,
                    pin_id: store_pin(missing.thread),
                    path_end: Some(NodeId(i64::try_from(missing.up_to.0)?)),
                    budget: Some(missing.budget),
                    summarizer: summarizer_name.clone(),
                };
                let chars = transcript.encode_utf16().count() as u64;
                store.set_summary(&key, &text, chars, tokenizer.count(&transcript), now_ms())?;
            }
            snapshot_cache.forget_plans();
            Ok(())
        })
        .await
        .context("could not save the summaries")?;
        Ok(count)
    }

    async fn summarise(
        &self,
        summarizer: &ModelChoice,
        instruction: &str,
        transcript: &str,
        budget: u32,
        key: Option<&pinloom_providers::ApiKey>,
        cancel: &CancellationToken,
    ) -> anyhow::Result<String> {
        let wire = summary_request(
            &summarizer.endpoint,
            &summarizer.engine,
            instruction,
            transcript,
            budget,
        )?;
        // Nobody watches a summary arrive; its pieces go nowhere.
        let (sink, _) = tokio::sync::mpsc::unbounded_channel();
        let reply = self.provider.stream(&wire, key, &sink, cancel).await?;
        if let Some(interruption) = reply.interruption {
            return Err(interruption.into());
        }
        Ok(fit_summary(summarizer.engine.tokenizer, reply.text.trim(), budget))
    }

    /// Replaces the text of a summary by hand: the summary of thread `pin_id` (absent for the
    /// root thread) up to message `up_to`, at `budget`, as `summarizer` wrote it. The earlier text
    /// stays in the summary's log.
    pub async fn edit_summary(
        &self,
        tree_id: i64,
        pin_id: Option<i64>,
        up_to: i64,
        budget: Option<u32>,
        summarizer: String,
        text: String,
    ) -> anyhow::Result<SummaryView> {
        if text.trim().is_empty() {
            return Err(crate::ApiError::invalid_input(
                "a summary cannot be empty: write one, or exclude the thread instead",
            )
            .into());
        }
        let summary = self
            .write("could not save the summary", move |store| {
                let key = SummaryKey {
                    tree_id: TreeId(tree_id),
                    pin_id: pin_id.map(PinId),
                    path_end: Some(NodeId(up_to)),
                    budget,
                    summarizer,
                };
                let (chars, tokens) = match store.summary(&key)? {
                    Some(existing) => (existing.input_chars, existing.input_tokens),
                    None => (0, 0),
                };
                Ok(store.set_summary(&key, &text, chars, tokens, now_ms())?)
            })
            .await?;
        Ok(summary.into())
    }

    /// The summaries written for thread `pin_id` (absent: the root thread), newest first.
    pub async fn summaries(
        &self,
        tree_id: i64,
        pin_id: Option<i64>,
    ) -> anyhow::Result<Vec<SummaryView>> {
        let summaries = self
            .read("could not read the summaries", move |store| {
                Ok(store.thread_summaries(TreeId(tree_id), pin_id.map(PinId))?)
            })
            .await?;
        Ok(summaries.into_iter().map(SummaryView::from).collect())
    }
}

/// A summary cut to its budget when the model overran it, ending with a visible note.
pub(crate) fn fit_summary(
    tokenizer: pinloom_engine::tokens::Tokenizer,
    text: &str,
    budget: u32,
) -> String {
    if tokenizer.count(text) <= u64::from(budget) {
        return text.to_owned();
    }
    let room = u64::from(budget).saturating_sub(tokenizer.count(CUT_SUMMARY_NOTE));
    format!("{}{CUT_SUMMARY_NOTE}", tokenizer.head_within(text, room))
}

/// The messages of the thread a missing summary covers, as a transcript: the segment of the plan's
/// path in that thread that ends at the summary's last node, leaving out what the person excluded
/// or deleted.
fn transcript(planned: &Planned, missing: &MissingSummary) -> String {
    let nodes = &planned.path.snapshot.nodes;
    let Some(end) = nodes.iter().position(|node| node.id == missing.up_to) else {
        return String::new();
    };
    // The thread begins at the last pin edge at or before its end (the path's start for the
    // root thread).
    let start = nodes[..=end]
        .iter()
        .rposition(|node| matches!(node.edge, ParentEdge::Pin { .. }))
        .unwrap_or(0);
    let mut out = String::new();
    for node in &nodes[start..=end] {
        if node.excluded || node.pruned {
            continue;
        }
        let who = match (node.author, node.edge) {
            (_, ParentEdge::Annotation(_)) => "Note",
            (Author::Human, _) => "Person",
            (Author::Model, _) => "Model",
            (Author::Tool, _) => "Tool",
        };
        let text: Vec<&str> = node.parts.iter().map(pinloom_engine::snapshot::Part::text).collect();
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(who);
        out.push_str(": ");
        out.push_str(&text.join("\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use pinloom_engine::tokens::Tokenizer;

    use super::{CUT_SUMMARY_NOTE, fit_summary};

    #[test]
    fn an_overlong_summary_is_cut_to_its_budget_with_a_note() {
        let long = "Meanders grow as the outer bank erodes. ".repeat(40);
        let fitted = fit_summary(Tokenizer::O200k, &long, 50);
        assert!(Tokenizer::O200k.count(&fitted) <= 50, "{fitted}");
        assert!(fitted.ends_with(CUT_SUMMARY_NOTE));
        assert!(fitted.starts_with("Meanders grow"));
        assert_eq!(fit_summary(Tokenizer::O200k, "Short.", 50), "Short.");
    }
}
