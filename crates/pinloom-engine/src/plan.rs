//! The context plan: every candidate slice, in the order it is rendered, included or pruned with
//! the reason.

use crate::snapshot::{NodeId, PinId, ThreadRef, TreeMode};
use crate::tokens::TokenizerId;

/// What a slice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SliceKind {
    /// System context: agent prompt, tree context, instruction sources.
    System,
    /// The message being answered (and the tool group it belongs to).
    Prompt,
    /// The current pin's anchor, framed.
    Anchor,
    /// An explicit file, rendered as a `--- file: <path> ---` block.
    File,
    /// A context-role attachment: reference material before the conversation.
    ContextSource,
    /// A tool definition.
    ToolDefinition,
    /// An ancestor thread's summary.
    AncestorSummary,
    /// The current thread's older part, compacted into a summary: it stands for the messages
    /// from the thread's start to the compaction's last.
    Compaction,
    /// Task frames: the root thread's goal.
    RootGoal,
    /// A closed sibling pin's result, when the person opted in.
    SiblingResult,
    /// The result of a pin closed on the current thread's path, handed back to that thread.
    PinResult,
    /// One of the last `recent_history_size` messages.
    RecentHistory,
    /// An older message.
    OldHistory,
    /// A folder listing.
    FolderListing,
    /// A retrieval result.
    SearchResult,
    /// Buffer mode's uncommitted text.
    WorkingBuffer,
    /// An answer chosen to be fused, or the instruction that follows them.
    FuseSource,
    /// An image, sent as an image part; its text is only its label for the inspector.
    Image,
    /// A message the person picked from another branch or pin for a question over several
    /// branches, or its branch's summary up to it.
    Picked,
}

impl SliceKind {
    /// The kind's name in the front ends' JSON and in stored receipts: stable, camelCase.
    pub fn as_str(self) -> &'static str {
        match self {
            SliceKind::System => "system",
            SliceKind::Prompt => "prompt",
            SliceKind::Anchor => "anchor",
            SliceKind::File => "file",
            SliceKind::ContextSource => "contextSource",
            SliceKind::ToolDefinition => "toolDefinition",
            SliceKind::AncestorSummary => "ancestorSummary",
            SliceKind::Compaction => "compaction",
            SliceKind::RootGoal => "rootGoal",
            SliceKind::SiblingResult => "siblingResult",
            SliceKind::PinResult => "pinResult",
            SliceKind::RecentHistory => "recentHistory",
            SliceKind::OldHistory => "oldHistory",
            SliceKind::FolderListing => "folderListing",
            SliceKind::SearchResult => "searchResult",
            SliceKind::WorkingBuffer => "workingBuffer",
            SliceKind::FuseSource => "fuseSource",
            SliceKind::Image => "image",
            SliceKind::Picked => "picked",
        }
    }

    /// Whether slices of this kind are message history.
    pub fn is_history(self) -> bool {
        matches!(self, SliceKind::RecentHistory | SliceKind::OldHistory)
    }
}

/// Where a slice comes from, so the UI can point at it and the user can pin or exclude it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceId {
    /// The model profile's system prompt.
    AgentPrompt,
    /// The tree's system context.
    TreeSystemContext,
    /// An attachment.
    Attachment(u64),
    /// A node of the path.
    Node(NodeId),
    /// A thread's summary.
    Summary(ThreadRef),
    /// A pin's anchor.
    Anchor(PinId),
    /// A tool definition (its index in the snapshot).
    Tool(usize),
    /// A retrieval hit: a message of the path that full-text search found for the prompt.
    Retrieval(NodeId),
    /// A message the person added to the search slice by hand; it may come from any branch.
    AddedSearchHit(NodeId),
    /// A closed pin's result.
    PinResult(PinId),
    /// The working buffer.
    WorkingBuffer,
    /// An answer to the active message chosen to be fused.
    FuseSource(NodeId),
    /// What the model is asked to do with the answers chosen to be fused.
    FuseInstruction,
    /// A message picked for a question over several branches.
    Picked(NodeId),
    /// The summary of a picked message's thread up to it.
    PickedSummary(NodeId),
    /// One page of an attached PDF (numbered from 1).
    PdfPage {
        /// The attachment.
        attachment: u64,
        /// The page.
        page: u32,
    },
}

/// Why a slice was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PruneReason {
    /// Higher-priority slices used the budget.
    OverBudget,
    /// Cut by the truncation strategy.
    Truncated,
    /// Outside the share of the budget its part may take (retrieval, task frames).
    OutsideShare,
    /// The node is marked excluded.
    Excluded,
    /// The node is soft-deleted.
    SoftDeleted,
    /// The node is an annotation not asked for.
    Annotation,
    /// The summary is empty.
    EmptySummary,
    /// The summary is larger than its depth budget.
    OverDepthBudget,
    /// The file is over the size limit.
    FileTooLarge,
    /// A tool result whose call is not on the path.
    OrphanToolResult,
    /// A tool call whose results are not all on the path.
    OrphanToolCall,
    /// Dropped so the first kept message satisfies the provider's role rules.
    ProviderRoleRule,
    /// Buffer mode leaves system context out unless the tree turns it on.
    BufferModeSystemContextOff,
    /// Left out by a retrieval filter.
    Filtered,
    /// The retrieval hit is already in the history.
    AlreadyInHistory,
    /// The retrieval hit is quoted with its ancestor thread's last messages (no summary of that
    /// thread could be had).
    AlreadyInAncestry,
    /// Task frames include sibling results only when opted in.
    NotOptedIn,
    /// A retrieval hit that is not on this message's path (another branch, a sibling pin, a
    /// parent thread after the anchor): only the person may add such a message.
    OffPath,
    /// An image, for a model that does not see (or a buffer document, which is text).
    ImageNotSeen,
    /// A page after one that did not fit: a PDF is kept from its first page on, without gaps.
    AfterCutPage,
    /// A message of the current thread's older part, which a compaction stands for.
    Compacted,
    /// A compaction that no longer holds (a message it was written from was excluded, deleted or
    /// moved since): its messages are planned as they are.
    StaleCompaction,
}

/// Where a slice's content comes from, as the inspector labels it: what the path itself may
/// know, what settings and attachments bring, and what the person put there by hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provenance {
    /// The model profile's or the tree's system text, or a tool definition.
    Setting,
    /// An attachment in scope (a file, a folder listing, reference material, an instruction).
    Attachment,
    /// The path's own messages: history, the prompt, and search hits among them.
    Path,
    /// An ancestor thread's summary.
    AncestorSummary,
    /// The current pin's anchor, verbatim.
    Anchor,
    /// A closed sibling pin's result, which the person opted in to.
    SiblingResult,
    /// Added by the person: a search hit they chose, a note they included, a message they
    /// picked for a question over several branches (and its branch's summary).
    AddedByPerson,
    /// An answer the person chose to fuse, and the instruction to fuse them.
    ChosenToFuse,
}

impl Provenance {
    /// The provenance a slice of this kind and source has unless the planner knows better (an
    /// included note is the person's, though it sits in the history).
    pub fn of(kind: SliceKind, source: SourceId) -> Provenance {
        match (kind, source) {
            (_, SourceId::AddedSearchHit(_)) | (SliceKind::Picked, _) => Provenance::AddedByPerson,
            (SliceKind::FuseSource, _) => Provenance::ChosenToFuse,
            (_, SourceId::Attachment(_) | SourceId::PdfPage { .. }) => Provenance::Attachment,
            (SliceKind::System | SliceKind::ToolDefinition, _) => Provenance::Setting,
            (SliceKind::AncestorSummary, _) => Provenance::AncestorSummary,
            (SliceKind::Anchor, _) => Provenance::Anchor,
            (SliceKind::SiblingResult, _) => Provenance::SiblingResult,
            (
                SliceKind::File
                | SliceKind::ContextSource
                | SliceKind::FolderListing
                | SliceKind::Image,
                _,
            ) => Provenance::Attachment,
            (
                SliceKind::Prompt
                | SliceKind::Compaction
                | SliceKind::RootGoal
                | SliceKind::PinResult
                | SliceKind::RecentHistory
                | SliceKind::OldHistory
                | SliceKind::SearchResult
                | SliceKind::WorkingBuffer,
                _,
            ) => Provenance::Path,
        }
    }
}

impl PruneReason {
    /// The reason's name in the front ends' JSON: stable, camelCase.
    pub fn as_str(self) -> &'static str {
        match self {
            PruneReason::OverBudget => "overBudget",
            PruneReason::Truncated => "truncated",
            PruneReason::OutsideShare => "outsideShare",
            PruneReason::Excluded => "excluded",
            PruneReason::SoftDeleted => "softDeleted",
            PruneReason::Annotation => "annotation",
            PruneReason::EmptySummary => "emptySummary",
            PruneReason::OverDepthBudget => "overDepthBudget",
            PruneReason::FileTooLarge => "fileTooLarge",
            PruneReason::OrphanToolResult => "orphanToolResult",
            PruneReason::OrphanToolCall => "orphanToolCall",
            PruneReason::ProviderRoleRule => "providerRoleRule",
            PruneReason::BufferModeSystemContextOff => "bufferModeSystemContextOff",
            PruneReason::Filtered => "filtered",
            PruneReason::AlreadyInHistory => "alreadyInHistory",
            PruneReason::AlreadyInAncestry => "alreadyInAncestry",
            PruneReason::NotOptedIn => "notOptedIn",
            PruneReason::OffPath => "offPath",
            PruneReason::ImageNotSeen => "imageNotSeen",
            PruneReason::AfterCutPage => "afterCutPage",
            PruneReason::Compacted => "compacted",
            PruneReason::StaleCompaction => "staleCompaction",
        }
    }

    /// Whether a message left out of the history for this reason is kept out of the search hits
    /// too. A compacted message is summarised, not withdrawn: the search may still recover it.
    pub fn keeps_out_of_search(self) -> bool {
        self != PruneReason::Compacted
    }
}

/// Included, or pruned with a reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SliceStatus {
    /// In the context.
    Included,
    /// Left out.
    Pruned(PruneReason),
}

/// Where a slice's text lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A node of the snapshot, by index: history stays borrowed, never copied.
    Node(usize),
    /// Text the engine composed (framing, file blocks, summaries).
    Text(String),
    /// The end of a node's text, cut at the boundary to fit (`Settings::cut_boundary_message`).
    Cut {
        /// The node, by index in the snapshot.
        node: usize,
        /// The notice and the kept end.
        text: String,
    },
}

/// One candidate piece of context.
#[derive(Debug, Clone, PartialEq)]
pub struct Slice {
    /// What it is.
    pub kind: SliceKind,
    /// Where it comes from.
    pub source: SourceId,
    /// Its pruning priority.
    pub priority: u8,
    /// Where its content comes from.
    pub provenance: Provenance,
    /// Its tokens under the plan's counter, framing included.
    pub tokens: u32,
    /// Included or pruned.
    pub status: SliceStatus,
    /// The retrieval score, for search results.
    pub score: Option<f64>,
    /// Slices of one tool group share a group number and are kept or dropped together.
    pub group: u32,
    /// For a message cut at the boundary: the tokens of the whole message, of which only the end
    /// (`tokens`) is included. The report lists it as cut.
    pub cut_from: Option<u32>,
    pub(crate) origin: Origin,
}

impl Slice {
    /// Whether the slice is in the context.
    pub fn is_included(&self) -> bool {
        self.status == SliceStatus::Included
    }

    /// The snapshot index of the node whose whole text this slice is (history, the prompt);
    /// `None` for text the engine composed or cut.
    pub fn node_index(&self) -> Option<usize> {
        match self.origin {
            Origin::Node(index) => Some(index),
            Origin::Text(_) | Origin::Cut { .. } => None,
        }
    }
}

/// The visible marker where truncateMiddle or rollingWindow removed messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruncationMarker {
    /// The marker goes before this slice.
    pub before_slice: usize,
    /// How many messages it stands for.
    pub omitted: usize,
    /// Its tokens (counted in the plan's total).
    pub tokens: u32,
    /// Its text.
    pub text: String,
}

/// The role of a rendered message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// System instructions.
    System,
    /// The person.
    User,
    /// The model.
    Assistant,
    /// Tool results.
    Tool,
}

/// A message a provider's role rules need that no node supplies (a user turn before a history
/// that starts with the model; Mistral's assistant turn between tool results and a user message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleFill {
    /// The fill goes before this slice (and before a marker at the same place).
    pub before_slice: usize,
    /// Its role.
    pub role: Role,
    /// Its text.
    pub text: String,
    /// Its tokens (counted in the plan's total).
    pub tokens: u32,
}

/// A summary the plan wanted and the snapshot did not have: the app may write it and re-plan.
/// Meanwhile the plan carries what it could in its place ([`AncestorContent`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MissingSummary {
    /// The ancestor thread.
    pub thread: ThreadRef,
    /// The node the summary must end at.
    pub up_to: NodeId,
    /// The budget it must fit.
    pub budget: u32,
    /// `Some(id)` when what is missing is the fitted version of chosen summary `id` (too long
    /// for the budget): condensed from its text rather than written from the thread.
    pub condense: Option<u64>,
}

/// One ancestor thread of the path and what the plan carries of it: every ancestor has one, so
/// none is ever left out without a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AncestorEntry {
    /// The thread.
    pub thread: ThreadRef,
    /// How far up the chain it is: 1 for the current thread's parent.
    pub distance: usize,
    /// The node of it the next thread down hangs off: what it is known up to.
    pub up_to: NodeId,
    /// Its depth budget.
    pub budget: u32,
    /// Its slice in [`ContextPlan::slices`], included or pruned with the reason.
    pub slice: usize,
    /// What the slice holds.
    pub content: AncestorContent,
    /// The slice's text without its framing: the summary, fitted or cut, or the excerpt.
    pub text: String,
}

/// What stands for an ancestor thread in a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AncestorContent {
    /// A summary as written: `record` indexes [`crate::snapshot::Snapshot::summaries`].
    Summary {
        /// The summary.
        record: usize,
    },
    /// A summary written on purpose that is longer than the budget, in its fitted version.
    Fitted {
        /// The fitted version.
        record: usize,
        /// The summary as written.
        from: usize,
    },
    /// A summary longer than the budget cut at a sentence with a visible marker, until a fitted
    /// version is written (or for good when the summariser wrote it and a recount grew it).
    Cut {
        /// The summary.
        record: usize,
        /// Its tokens whole.
        whole_tokens: u32,
    },
    /// No summary: the thread's last messages up to the node, verbatim, within the budget.
    Excerpt {
        /// The messages it quotes whole, oldest first (one cut to its end is not listed).
        quoted: Vec<NodeId>,
        /// Why no summary stands here.
        reason: ExcerptReason,
    },
    /// Task frames: the root thread's first message, its goal.
    RootGoal,
}

/// Why an ancestor thread is carried as its last messages instead of a summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExcerptReason {
    /// None has been written yet.
    NotWritten,
    /// The summariser is writing it.
    BeingWritten,
    /// The summariser failed, for this reason.
    Failed(String),
    /// The one written no longer holds.
    Stale {
        /// Why: a message it was written from was excluded, deleted or moved since.
        why: String,
        /// What becomes of it.
        then: AfterStale,
    },
    /// The tree's summaries are turned off: none is asked for.
    TurnedOff,
}

impl ExcerptReason {
    /// In words, after "summary not available: ".
    pub fn describe(&self) -> String {
        match self {
            ExcerptReason::NotWritten => "not written yet".to_owned(),
            ExcerptReason::BeingWritten => "being written".to_owned(),
            ExcerptReason::Failed(why) => format!("the summariser failed ({why})"),
            ExcerptReason::Stale { why, then: AfterStale::WrittenAgain } => {
                format!("the one there was {why}, so it is not sent; it is written again")
            }
            ExcerptReason::Stale { why, then: AfterStale::KeptToEdit } => format!(
                "the one there was {why}, so it is not sent: edit it, or let the summariser \
                 write it again (Regenerate)"
            ),
            ExcerptReason::Stale { why, then: AfterStale::TurnedOff } => format!(
                "the one there was {why}, so it is not sent (the tree's summaries are turned off)"
            ),
            ExcerptReason::TurnedOff => {
                "the tree's summaries are turned off (its settings: Summaries written)".to_owned()
            }
        }
    }
}

/// What becomes of a summary that no longer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterStale {
    /// The summariser writes it again (in the background, or for the next send).
    WrittenAgain,
    /// Written by a person, an agent or a file: kept for its writer to edit, or to have the
    /// summariser write it again on purpose.
    KeptToEdit,
    /// Nothing: the tree's summaries are turned off.
    TurnedOff,
}

/// What truncateMiddle's steps left unused: the messages a step boundary cut that would have
/// fitted, so that the request's start stays byte-identical for the provider's prompt cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepCut {
    /// Messages the step cut.
    pub messages: usize,
    /// Their tokens.
    pub tokens: u32,
    /// The step, in tokens.
    pub step_tokens: u32,
}

/// One message of the current thread's history as a plan fitted it ([`ContextPlan::history_fill`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryFill {
    /// The message.
    pub node: NodeId,
    /// Its tokens, all its slices together.
    pub tokens: u32,
    /// Whether the budget cut it, or part of it.
    pub cut: bool,
}

/// What truncateMiddle gave up for recent turns when the budget is small: the thread's kept
/// start, the marker and the step each cost as much as a recent turn there, and keep less.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmallBudget {
    /// The history's room: the budget beside what is never cut.
    pub room: u32,
    /// Messages cut, which no marker stands for.
    pub omitted: usize,
}

/// The thread's first turn, when truncateMiddle did not keep it: what it would have cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartGivenUp {
    /// Its tokens.
    pub tokens: u32,
    /// The history's room it would have taken a share of.
    pub room: u32,
}

/// One line of the pruned-slices report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrunedEntry {
    /// What it is.
    pub kind: SliceKind,
    /// Where it comes from.
    pub source: SourceId,
    /// Its priority.
    pub priority: u8,
    /// Its tokens.
    pub tokens: u32,
    /// Why it was cut.
    pub reason: PruneReason,
}

/// The plan: every candidate in render order, and the totals.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextPlan {
    /// Every candidate slice, in the order the renderings place them, but for search results:
    /// they come last here and are rendered right before the prompt, so that what precedes
    /// them stays byte-identical from one request of a thread to the next (prompt caching).
    pub slices: Vec<Slice>,
    /// The budget: window minus reserve (or minus the tree's token buffer).
    pub available: u32,
    /// Tokens of the included slices, the role fills and the marker.
    pub used: u32,
    /// The counter the counts are in.
    pub tokenizer: TokenizerId,
    /// Dialogue or buffer.
    pub mode: TreeMode,
    /// Where messages were removed, if they were.
    pub marker: Option<TruncationMarker>,
    /// Messages added for the provider's role rules.
    pub role_fills: Vec<RoleFill>,
    /// Node counts made during planning (no cached count matched): the store should cache them.
    pub newly_counted: Vec<(NodeId, u32)>,
    /// Summaries the plan wanted and did not find.
    pub missing_summaries: Vec<MissingSummary>,
    /// Every ancestor thread, root first, and what stands for it.
    pub ancestors: Vec<AncestorEntry>,
    /// The reply limit: what the budget keeps free for the reply, and the most tokens the
    /// request asks the reply to have (the tree's token buffer, else the profile's reserve).
    pub reply_limit: u32,
    /// How many messages of the thread's start truncateMiddle kept (included), when it cut.
    pub kept_start: usize,
    /// What the truncation step left unused, when it cut anything that fitted.
    pub step_cut: Option<StepCut>,
    /// Set when truncateMiddle cut the history of a small budget: it gave up the kept start,
    /// the marker and the step for recent turns.
    pub small_budget: Option<SmallBudget>,
    /// Set when truncateMiddle cut the history and did not keep the thread's first turn (it
    /// did not fit, or would have taken more than a quarter of the history's room).
    pub start_given_up: Option<StartGivenUp>,
    /// Bookkeeping for the incremental append path.
    pub(crate) history: HistoryIndex,
}

/// The plan's view of its history, kept so that appending a node is proportional to that node.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct HistoryIndex {
    /// Slice indices of the current thread's nodes in path order (history and prompt).
    pub(crate) node_slices: Vec<usize>,
    /// Index into `node_slices` of the first node of the kept tail; everything before it, apart
    /// from a kept start, is pruned.
    pub(crate) tail_start: usize,
    /// How many of the first entries of `node_slices` are the kept start (truncateMiddle).
    pub(crate) kept_start: usize,
    /// Index into `node_slices` where the prompt group starts.
    pub(crate) prompt_start: usize,
    /// The next free group number.
    pub(crate) next_group: u32,
}

impl ContextPlan {
    /// The included slices, in order.
    pub fn included(&self) -> impl Iterator<Item = &Slice> {
        self.slices.iter().filter(|s| s.is_included())
    }

    /// The pruned-slices report: every slice cut, with its priority, tokens and reason.
    pub fn pruned_report(&self) -> Vec<PrunedEntry> {
        self.slices
            .iter()
            .filter_map(|s| match s.status {
                SliceStatus::Included => None,
                SliceStatus::Pruned(reason) => Some(PrunedEntry {
                    kind: s.kind,
                    source: s.source,
                    priority: s.priority,
                    tokens: s.tokens,
                    reason,
                }),
            })
            .collect()
    }

    /// The messages included only in part, cut at the boundary: (slice, whole tokens, kept
    /// tokens). They are in the context, so they are not in the pruned report; the UI shows them
    /// beside it.
    pub fn cut_report(&self) -> Vec<(&Slice, u32, u32)> {
        self.slices.iter().filter_map(|s| s.cut_from.map(|whole| (s, whole, s.tokens))).collect()
    }

    /// Sum of the included slices' tokens and the marker's: what `used` must equal.
    pub fn recount_used(&self) -> u64 {
        let slices: u64 = self.included().map(|s| u64::from(s.tokens)).sum();
        let fills: u64 = self.role_fills.iter().map(|f| u64::from(f.tokens)).sum();
        slices + fills + self.marker.as_ref().map_or(0, |m| u64::from(m.tokens))
    }

    /// The current thread's history before the prompt as the budget left it, in path order:
    /// each message sent or cut for room, with its tokens (its slices' together) and whether the
    /// budget cut it or part of it. Messages left out for what they are (compacted, excluded,
    /// deleted, a note not asked for) are not listed: no fitting concerns them. What a
    /// compaction weighs (`pinloom-app`'s automatic compaction, the W6 benchmark).
    pub fn history_fill(&self) -> Vec<HistoryFill> {
        let mut history: Vec<HistoryFill> = Vec::new();
        for slice in self.slices.iter().filter(|slice| slice.kind.is_history()) {
            let SourceId::Node(node) = slice.source else { continue };
            let cut = match slice.status {
                SliceStatus::Included => slice.cut_from.is_some(),
                SliceStatus::Pruned(PruneReason::OverBudget | PruneReason::Truncated) => true,
                SliceStatus::Pruned(_) => continue,
            };
            match history.last_mut() {
                Some(last) if last.node == node => {
                    last.tokens = last.tokens.saturating_add(slice.tokens);
                    last.cut |= cut;
                }
                _ => history.push(HistoryFill { node, tokens: slice.tokens, cut }),
            }
        }
        history
    }

    /// Whether anything was truncated or pruned for budget.
    pub fn truncated(&self) -> bool {
        self.marker.is_some()
            || self.slices.iter().any(|s| s.cut_from.is_some())
            || self.slices.iter().any(|s| {
                matches!(
                    s.status,
                    SliceStatus::Pruned(
                        PruneReason::OverBudget
                            | PruneReason::Truncated
                            | PruneReason::OutsideShare
                    )
                )
            })
    }
}
