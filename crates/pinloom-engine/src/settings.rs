//! Assembly settings: every point where the seeds disagree, or leave a number open, is one field.

use crate::plan::SliceKind;
use crate::snapshot::{Author, NodeId};

/// What to do when the history does not fit (seed 002).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TruncationStrategy {
    /// Keep the system context, the start of the thread and the most recent nodes; drop from the
    /// middle and leave a visible marker where messages were removed. The default.
    TruncateMiddle,
    /// Keep the most recent history that fits; drop the oldest.
    RollingWindow,
    /// Refuse: an error naming what to exclude.
    StopAtLimit,
}

/// Pruning priority per slice kind: lower numbers are kept first, higher numbers pruned first.
/// Defaults follow seed 004's table, with the anchor beside the prompt and ancestor summaries
/// between tool definitions and recent history as the issue orders them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PriorityTable {
    /// System context (never pruned).
    pub system: u8,
    /// The user's prompt (never pruned).
    pub prompt: u8,
    /// The pin's anchor (never pruned).
    pub anchor: u8,
    /// Explicit files and context attachments.
    pub files: u8,
    /// Tool definitions.
    pub tools: u8,
    /// Ancestor thread summaries, and task frames' root goal and sibling results.
    pub ancestor_summaries: u8,
    /// The last `recent_history_size` messages.
    pub recent_history: u8,
    /// Folder listings.
    pub folders: u8,
    /// Retrieval (search) results.
    pub search: u8,
    /// Everything older than recent history.
    pub old_history: u8,
}

impl Default for PriorityTable {
    fn default() -> Self {
        PriorityTable {
            system: 1,
            prompt: 2,
            anchor: 2,
            files: 3,
            tools: 4,
            ancestor_summaries: 5,
            recent_history: 6,
            folders: 7,
            search: 8,
            old_history: 9,
        }
    }
}

impl PriorityTable {
    /// The priority of a kind of slice.
    pub fn of(&self, kind: SliceKind) -> u8 {
        match kind {
            SliceKind::System => self.system,
            SliceKind::Prompt => self.prompt,
            SliceKind::Anchor => self.anchor,
            SliceKind::File | SliceKind::ContextSource | SliceKind::Image => self.files,
            SliceKind::ToolDefinition => self.tools,
            SliceKind::AncestorSummary
            | SliceKind::Compaction
            | SliceKind::RootGoal
            | SliceKind::SiblingResult
            | SliceKind::PinResult
            | SliceKind::Picked => self.ancestor_summaries,
            SliceKind::RecentHistory => self.recent_history,
            SliceKind::FolderListing => self.folders,
            SliceKind::SearchResult => self.search,
            SliceKind::OldHistory => self.old_history,
            // Sent whole with the prompt: a fused answer without one of its sources misattributes.
            SliceKind::WorkingBuffer | SliceKind::FuseSource => self.prompt,
        }
    }
}

/// Seed 001's weights for the retrieval score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetrievalWeights {
    /// Weight of recency (halving every 24 hours).
    pub recency: f64,
    /// Weight of relevance (bm25, normalised to the best candidate).
    pub relevance: f64,
    /// Weight of salience (bookmarked and pinned nodes higher).
    pub salience: f64,
}

impl Default for RetrievalWeights {
    fn default() -> Self {
        RetrievalWeights { recency: 0.3, relevance: 0.5, salience: 0.2 }
    }
}

/// Seed 001's filters on retrieval candidates.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RetrievalFilters {
    /// Only candidates created at or after this time (ms since the epoch).
    pub since_ms: Option<i64>,
    /// Only candidates by these authors.
    pub authors: Option<Vec<Author>>,
    /// Never these nodes.
    pub exclude: Vec<NodeId>,
}

/// The retrieval slice's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrievalSettings {
    /// The score's weights for the active strategy.
    pub weights: RetrievalWeights,
    /// The share of the available budget the slice may take, in percent.
    pub share_percent: u32,
    /// Filters.
    pub filters: RetrievalFilters,
}

impl Default for RetrievalSettings {
    fn default() -> Self {
        RetrievalSettings {
            weights: RetrievalWeights::default(),
            share_percent: 10,
            filters: RetrievalFilters::default(),
        }
    }
}

/// How the context is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssemblyStrategy {
    /// Ancestor summaries, anchor, the current thread under the priority table.
    Standard,
    /// Seed 001's task frames: each part limited to a share of the budget.
    TaskFrames(TaskFrameShares),
}

/// Budget shares of the task-frame strategy, in percent of the available budget; the current
/// thread takes the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskFrameShares {
    /// The root goal (~5 %).
    pub root_goal: u32,
    /// The path summaries (~15 %).
    pub path_summaries: u32,
    /// Results of closed sibling pins (~10 %), when opted in.
    pub sibling_results: u32,
}

impl Default for TaskFrameShares {
    fn default() -> Self {
        TaskFrameShares { root_goal: 5, path_summaries: 15, sibling_results: 10 }
    }
}

/// Every assembly setting.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Summary budgets by distance: the nearest ancestor gets the first, deeper ones reuse the
    /// last. Deeppin's article: [800, 500, 300, 150].
    pub depth_budgets: Vec<u32>,
    /// The pruning priorities.
    pub priorities: PriorityTable,
    /// The truncation strategy.
    pub truncation: TruncationStrategy,
    /// truncateMiddle cuts in steps of this share (in percent) of the room the history has
    /// beside the stable parts: the tail's start moves only to the next step boundary, counted
    /// in tokens from the thread's start, so consecutive requests of a growing thread share a
    /// byte-identical prefix (what providers' prompt caches bill and answer faster) until the
    /// tail must move again, instead of shifting every turn as a rolling window does. 0 cuts
    /// message by message. rollingWindow never steps: it is the seed's "most recent that fits".
    pub truncation_step_percent: u32,
    /// Whether the summariser may be asked for what a plan lacks (a summary, or a summary fitted
    /// to its budget). Off, the plan asks for none: an ancestor thread without a summary sends its
    /// last messages, saying the tree's summaries are turned off.
    pub write_summaries: bool,
    /// The last N nodes are never dropped by truncation (seed 002: 4).
    pub minimum_recent_nodes: usize,
    /// truncateMiddle keeps this many nodes of the thread's start when it can.
    pub keep_start_nodes: usize,
    /// Recent history is the last this-many messages (seed 004: 50); older is old history.
    pub recent_history_size: usize,
    /// The anchor's framing; `{anchor}` is replaced by the anchor text verbatim (Deeppin's words).
    pub anchor_framing: String,
    /// The visible truncation marker; `{count}` is replaced by the number of messages omitted.
    pub truncation_marker: String,
    /// How a search hit is framed where it is placed, right before the prompt; `{text}` is the
    /// message's text.
    pub search_result_framing: String,
    /// How an ancestor thread's summary is framed: `{title}` is the thread's title, `{text}` the
    /// summary.
    pub summary_framing: String,
    /// How a compaction of the current thread's older part is framed: `{count}` is how many
    /// messages it stands for, `{text}` the summary.
    pub compaction_framing: String,
    /// How an ancestor thread without a summary is framed: `{title}`, `{reason}` (why there is
    /// none) and `{text}`, its last messages before the branching point, verbatim.
    pub excerpt_framing: String,
    /// What ends a summary cut at a sentence to fit its depth budget; `{budget}` is the budget.
    pub summary_cut_marker: String,
    /// After truncation, fill what is left of the budget with the end of the newest message it
    /// dropped (the one at the boundary), cut at a token boundary and opened with
    /// `cut_message_notice`. Off by default: a cut message can read as whole to the model, so
    /// it is the person's choice. Plain-text messages only; tool calls and results stay whole.
    pub cut_boundary_message: bool,
    /// What opens a message cut at the boundary.
    pub cut_message_notice: String,
    /// The user message put first when a provider needs one and the kept history starts with the
    /// model.
    pub leading_user_placeholder: String,
    /// The assistant message Mistral needs between tool results and the next user message.
    pub tool_to_user_bridge: String,
    /// The retrieval slice.
    pub retrieval: RetrievalSettings,
    /// The layout strategy.
    pub assembly: AssemblyStrategy,
    /// Results of closed sibling pins are included only when opted in.
    pub include_closed_sibling_results: bool,
    /// The depth guard: at most this many threads on the chain (ThreadMind: 50).
    pub max_thread_depth: usize,
    /// Files larger than this are not included (seed 004: 100 KB).
    pub max_file_bytes: u64,
    /// Folder listings show at most this many entries (seed 004: 100).
    pub max_folder_entries: usize,
    /// Folder entries matching these patterns are left out (seed 004's defaults).
    pub folder_exclude: Vec<String>,
    /// "Now", in ms since the epoch: the engine reads no clock.
    pub now_ms: i64,
}

/// Deeppin's framing of the anchor, word for word.
pub const DEEPPIN_ANCHOR_FRAMING: &str = "The user highlighted the following text and is asking a \
follow-up. Please focus your answer on this passage:\n\"{anchor}\"";

impl Default for Settings {
    fn default() -> Self {
        Settings {
            depth_budgets: vec![800, 500, 300, 150],
            priorities: PriorityTable::default(),
            truncation: TruncationStrategy::TruncateMiddle,
            truncation_step_percent: 25,
            write_summaries: true,
            minimum_recent_nodes: 4,
            keep_start_nodes: 2,
            recent_history_size: 50,
            anchor_framing: DEEPPIN_ANCHOR_FRAMING.to_owned(),
            truncation_marker: "[… {count} earlier messages omitted to fit the context window …]"
                .to_owned(),
            search_result_framing: "(Recalled from earlier in this conversation)\n{text}"
                .to_owned(),
            summary_framing: "Summary of the earlier thread \u{201c}{title}\u{201d}, up to where \
                              this conversation branched from it:\n{text}"
                .to_owned(),
            compaction_framing: "Summary of the first {count} messages of this conversation, \
                                 which it stands for (the messages after it follow verbatim):\n\
                                 {text}"
                .to_owned(),
            excerpt_framing: "Summary of the earlier thread \u{201c}{title}\u{201d} not available \
                              ({reason}); its last messages before this conversation branched \
                              from it, verbatim:\n{text}"
                .to_owned(),
            summary_cut_marker: " [\u{2026}cut to fit its budget of {budget} tokens]".to_owned(),
            cut_boundary_message: false,
            cut_message_notice: "[… the start of this message was cut to fit …] ".to_owned(),
            leading_user_placeholder: "(The conversation continues from earlier messages.)"
                .to_owned(),
            tool_to_user_bridge: "(Tool results received.)".to_owned(),
            retrieval: RetrievalSettings::default(),
            assembly: AssemblyStrategy::Standard,
            include_closed_sibling_results: false,
            max_thread_depth: 50,
            max_file_bytes: 100 * 1024,
            max_folder_entries: 100,
            folder_exclude: vec![
                "**/node_modules/**".to_owned(),
                "**/.git/**".to_owned(),
                "**/dist/**".to_owned(),
                "**/*.min.js".to_owned(),
            ],
            now_ms: 0,
        }
    }
}

impl Settings {
    /// The summary budget of the ancestor at `distance` (1 = the direct parent thread).
    pub fn depth_budget(&self, distance: usize) -> u32 {
        let index = distance.saturating_sub(1);
        self.depth_budgets.get(index).or_else(|| self.depth_budgets.last()).copied().unwrap_or(0)
    }
}
