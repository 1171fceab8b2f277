//! A tree's conversation settings, stored with the tree (so the app, the command line and the MCP
//! server assemble its contexts alike), and the engine settings they make.

use pinloom_engine::settings::{
    AssemblyStrategy, RetrievalWeights, Settings, TaskFrameShares, TruncationStrategy,
};
use pinloom_engine::snapshot as engine;
use pinloom_engine::snapshot::Author as EngineAuthor;
use pinloom_providers::summary::SUMMARY_INSTRUCTION;

use crate::error::ApiError;
use crate::json::{
    AssemblySettings, Author, DEFAULT_COMPACT_AT_PERCENT, DEFAULT_COMPACTION_KEEP_TURNS,
    SummaryWriting, TreeSettings,
};

/// The most summary budgets by distance a tree may set (one per level of a chain).
pub(crate) const MAX_SUMMARY_BUDGETS: u8 = 50;
/// The largest summary budget, in tokens: larger than any model's window for a summary.
pub(crate) const MAX_SUMMARY_BUDGET: u32 = 200_000;
/// The most tokens a tree may keep for the reply.
pub(crate) const MAX_TOKEN_BUFFER: u32 = 1_000_000;

/// A day, in milliseconds: the span of a tree's daily limit.
const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// The most turns a compaction may keep verbatim.
pub(crate) const MAX_KEEP_TURNS: u32 = 1000;

/// Seed 004's file size limit.
pub(crate) const DEFAULT_MAX_FILE_BYTES: u64 = 100 * 1024;

impl TreeSettings {
    /// The settings stored as `json`; an empty or unreadable text gives the defaults, since a
    /// tree must stay usable, and the next save writes a readable one.
    pub(crate) fn from_json(json: &str) -> TreeSettings {
        serde_json::from_str(json).unwrap_or_default()
    }

    /// Tree `tree`'s settings as stored. Reads the store: call it on a blocking thread.
    pub(crate) fn of_tree(
        store: &pinloom_store::Store,
        tree: pinloom_store::TreeId,
    ) -> anyhow::Result<TreeSettings> {
        Ok(TreeSettings::from_json(&store.tree_setup(tree)?.settings_json))
    }

    /// Refuses settings the engine cannot work with, saying what to change.
    pub(crate) fn check(&self) -> Result<(), ApiError> {
        if let Some(budgets) = &self.depth_budgets
            && (budgets.is_empty()
                || budgets.len() > usize::from(MAX_SUMMARY_BUDGETS)
                || budgets.iter().any(|&budget| budget == 0 || budget > MAX_SUMMARY_BUDGET))
        {
            return Err(ApiError::invalid_input(format!(
                "summary budgets must be one to {MAX_SUMMARY_BUDGETS} token counts from 1 to \
                 {MAX_SUMMARY_BUDGET}, nearest thread first (for example 800, 500, 300, 150)"
            )));
        }
        if let Some(buffer) = self.token_buffer
            && buffer > MAX_TOKEN_BUFFER
        {
            return Err(ApiError::invalid_input(format!(
                "the tokens kept for the reply must be at most {MAX_TOKEN_BUFFER}"
            )));
        }
        if let Some(instruction) = &self.summary_instruction
            && instruction.trim().is_empty()
        {
            return Err(ApiError::invalid_input(
                "the summary instruction is empty: write one, or clear it to use the default",
            ));
        }
        if let Some(percent) = self.truncation_step_percent
            && percent > 100
        {
            return Err(ApiError::invalid_input(format!(
                "a truncation step of {percent} % is not possible; use 0 (message by message) \
                 to 100, or clear it to use the model's"
            )));
        }
        self.check_what_is_written_on_its_own()?;
        if self.max_file_bytes == Some(0) {
            return Err(ApiError::invalid_input("the file size limit must be above 0 bytes"));
        }
        if let Some(framing) = &self.anchor_framing
            && !framing.contains("{anchor}")
        {
            return Err(ApiError::invalid_input(
                "the anchor wording must say where the passage goes with {anchor}, or be cleared \
                 to use the default",
            ));
        }
        if let Some(frames) = &self.task_frames {
            let shares = [
                frames.root_goal_percent,
                frames.path_summaries_percent,
                frames.sibling_results_percent,
            ];
            if shares.iter().map(|&share| u64::from(share)).sum::<u64>() > 90 {
                return Err(ApiError::invalid_input(
                    "the task frames' shares (root goal, path summaries, sibling results) must add \
                     up to 90 % at most, leaving the current thread the rest",
                ));
            }
        }
        if let Some(retrieval) = &self.retrieval {
            if retrieval.share_percent > 100 {
                return Err(ApiError::invalid_input(
                    "the search hits' share is a percentage of the budget: 0 to 100",
                ));
            }
            let each = [
                retrieval.recency_percent,
                retrieval.relevance_percent,
                retrieval.salience_percent,
            ];
            if each.iter().any(|&weight| weight > 100) {
                return Err(ApiError::invalid_input(
                    "each search weight is a percentage of the score: 0 to 100",
                ));
            }
            let weights: u32 = each.iter().sum();
            if weights == 0 {
                return Err(ApiError::invalid_input(
                    "the search weights are all 0: give recency, relevance or salience some \
                     weight (for example 30, 50, 20)",
                ));
            }
        }
        Ok(())
    }

    /// Refuses compaction settings and a daily limit that cannot work, saying what to change.
    fn check_what_is_written_on_its_own(&self) -> Result<(), ApiError> {
        if let Some(percent) = self.compact_at_percent
            && !(1..=100).contains(&percent)
        {
            return Err(ApiError::invalid_input(format!(
                "automatic compaction at {percent} % of the budget is not possible; use 1 to 100 \
                 (80 compacts when the thread's history fills four fifths of it)"
            )));
        }
        if let Some(turns) = self.compaction_keep_turns
            && !(1..=MAX_KEEP_TURNS).contains(&turns)
        {
            return Err(ApiError::invalid_input(format!(
                "a compaction keeps 1 to {MAX_KEEP_TURNS} turns verbatim (the message being sent \
                 is in the last), not {turns}"
            )));
        }
        if self.daily_token_limit == Some(0) {
            return Err(ApiError::invalid_input(
                "a daily limit of 0 tokens writes nothing: set the summaries to be written never \
                 instead, or clear the limit",
            ));
        }
        Ok(())
    }

    /// The summariser's instruction for a budget.
    pub(crate) fn summary_instruction(&self) -> &str {
        self.summary_instruction.as_deref().unwrap_or(SUMMARY_INSTRUCTION)
    }

    /// The share of the budget a thread's history fills before automatic compaction.
    pub(crate) fn compact_at_percent(&self) -> u32 {
        self.compact_at_percent.unwrap_or(DEFAULT_COMPACT_AT_PERCENT)
    }

    /// The turns a compaction keeps verbatim.
    pub(crate) fn compaction_keep_turns(&self) -> u32 {
        self.compaction_keep_turns.unwrap_or(DEFAULT_COMPACTION_KEEP_TURNS)
    }

    /// Why tree `tree`'s next request made on its own may not be sent at `now_ms`: its daily
    /// limit is spent (what its requests took in the 24 hours before). Reads the store only when
    /// there is a limit: call it on a blocking thread.
    pub(crate) fn daily_limit_refusal(
        &self,
        store: &pinloom_store::Store,
        tree: pinloom_store::TreeId,
        now_ms: i64,
    ) -> anyhow::Result<Option<ApiError>> {
        let Some(limit) = self.daily_token_limit else { return Ok(None) };
        let used = store.background_tokens_since(tree, now_ms - DAY_MS)?;
        Ok((used >= limit).then(|| {
            ApiError::invalid_input(format!(
                "not sent: this tree's requests made on their own took {used} of their {limit} \
                 tokens a day in the last 24 hours; raise the limit in Settings → This tree \
                 (`pinloom settings --daily-tokens`), or write or regenerate the summary yourself"
            ))
        }))
    }

    pub(crate) fn max_file_bytes(&self) -> u64 {
        self.max_file_bytes.unwrap_or(DEFAULT_MAX_FILE_BYTES)
    }

    /// The engine's settings for a plan made at `now_ms` for a model assembled as `model` says:
    /// the model's choices first, the tree's own on top.
    pub(crate) fn engine(&self, now_ms: i64, model: &AssemblySettings) -> Settings {
        let mut settings = Settings {
            now_ms,
            write_summaries: self.summary_writing != SummaryWriting::Never,
            ..Settings::default()
        };
        settings.truncation = match model.truncation.as_deref() {
            Some("rollingWindow") => TruncationStrategy::RollingWindow,
            Some("stopAtLimit") => TruncationStrategy::StopAtLimit,
            _ => TruncationStrategy::TruncateMiddle,
        };
        if let Some(budgets) = &model.depth_budgets {
            settings.depth_budgets =
                budgets.iter().map(|budget| u32::try_from(*budget).unwrap_or(1).max(1)).collect();
        }
        if let Some(recent) = model.minimum_recent_nodes {
            settings.minimum_recent_nodes = usize::try_from(recent).unwrap_or(0);
        }
        if let Some(percent) = model.truncation_step_percent {
            settings.truncation_step_percent = u32::try_from(percent.clamp(0, 100)).unwrap_or(0);
        }
        if let Some(budgets) = &self.depth_budgets {
            settings.depth_budgets = budgets.clone();
        }
        if let Some(percent) = self.truncation_step_percent {
            settings.truncation_step_percent = percent.min(100);
        }
        if let Some(frames) = self.task_frames {
            settings.assembly = AssemblyStrategy::TaskFrames(TaskFrameShares {
                root_goal: frames.root_goal_percent,
                path_summaries: frames.path_summaries_percent,
                sibling_results: frames.sibling_results_percent,
            });
        }
        settings.cut_boundary_message = self.cut_boundary_message;
        settings.include_closed_sibling_results = self.include_closed_sibling_results;
        settings.max_file_bytes = self.max_file_bytes();
        if let Some(framing) = &self.anchor_framing {
            settings.anchor_framing = framing.clone();
        }
        if let Some(retrieval) = &self.retrieval {
            let percent = |value: u32| f64::from(value) / 100.0;
            settings.retrieval.weights = RetrievalWeights {
                recency: percent(retrieval.recency_percent),
                relevance: percent(retrieval.relevance_percent),
                salience: percent(retrieval.salience_percent),
            };
            settings.retrieval.share_percent = retrieval.share_percent;
            settings.retrieval.filters.since_ms = retrieval.since_ms;
            settings.retrieval.filters.exclude = retrieval
                .exclude
                .iter()
                .map(|&id| engine::NodeId(u64::try_from(id).unwrap_or(u64::MAX)))
                .collect();
            settings.retrieval.filters.authors = (!retrieval.authors.is_empty()).then(|| {
                retrieval
                    .authors
                    .iter()
                    .map(|author| match author {
                        Author::Human => EngineAuthor::Human,
                        Author::Model => EngineAuthor::Model,
                        Author::Tool => EngineAuthor::Tool,
                    })
                    .collect()
            });
        }
        settings
    }
}
