//! What the engine is handed: a snapshot of what the store holds around the active node.
//!
//! The store builds one of these per send (the ancestor path by its recursive CTE, the summaries
//! it has cached, the attachments in scope, the full-text candidates of the prompt). The engine
//! never asks for more, so everything it decides is a function of this value.

use crate::tokens::TokenizerId;

/// A node's id (the store's row id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct NodeId(pub u64);

/// A pin's id: the pin is the sub-thread it opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PinId(pub u64);

/// A thread: the tree's root thread, or the sub-thread one pin opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ThreadRef {
    /// The nodes reachable from the tree's root without crossing a pin edge.
    Root,
    /// The nodes reachable from this pin's first node without crossing another pin edge.
    Pin(PinId),
}

/// Who wrote a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Author {
    /// A person: becomes a `user` message.
    Human,
    /// A model: becomes an `assistant` message.
    Model,
    /// A tool's results: become `tool` messages answering the call before them.
    Tool,
}

/// One part of a node's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Plain text.
    Text(String),
    /// A model's call of a tool.
    ToolCall {
        /// The call's id, which its result repeats.
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments, as the JSON text the model wrote.
        arguments: String,
    },
    /// A tool's answer to one call.
    ToolResult {
        /// The id of the call this answers.
        call_id: String,
        /// The result text.
        content: String,
    },
    /// An image, sent to a model that sees. Nodes never hold one: images are attachments, and
    /// the rendering places them in the message they belong to.
    Image {
        /// Its media type (`image/png`, `image/jpeg`, `image/gif`, `image/webp`).
        media_type: String,
        /// Its bytes in base64.
        data: String,
    },
}

impl Part {
    /// The text of the part that is counted and rendered.
    pub fn text(&self) -> &str {
        match self {
            Part::Text(text) => text,
            Part::ToolCall { arguments, .. } => arguments,
            Part::ToolResult { content, .. } => content,
            Part::Image { .. } => "",
        }
    }
}

/// How a node hangs from the node before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParentEdge {
    /// The tree's root: no parent.
    Root,
    /// An ordinary continuation of the parent.
    Continuation(NodeId),
    /// The first node of a pin's sub-thread, hanging off the anchored node.
    Pin {
        /// The node the pin was made in.
        parent: NodeId,
        /// The pin.
        pin: PinId,
    },
    /// An annotation of the parent: out of context unless the node says it is included.
    Annotation(NodeId),
}

impl ParentEdge {
    /// The parent's id, if any.
    pub fn parent(self) -> Option<NodeId> {
        match self {
            ParentEdge::Root => None,
            ParentEdge::Continuation(p) | ParentEdge::Annotation(p) => Some(p),
            ParentEdge::Pin { parent, .. } => Some(parent),
        }
    }
}

/// A cached token count of one node for one counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CachedCount {
    /// The counter it was made with.
    pub tokenizer: TokenizerId,
    /// The count of the node's content, framing overhead not included.
    pub tokens: u32,
}

/// A node's cached counts: one or two in practice (the exact family of the model planned for,
/// and perhaps another model's), kept inside the record rather than in an allocation of their
/// own, which a 10,000-message path would make 10,000 of and the planner would follow for each.
pub type CachedCounts = smallvec::SmallVec<[CachedCount; 2]>;

/// One immutable message of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRecord {
    /// The node's id.
    pub id: NodeId,
    /// How it hangs from its parent.
    pub edge: ParentEdge,
    /// Who wrote it.
    pub author: Author,
    /// Its content.
    pub parts: Vec<Part>,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    /// Explicitly kept out of context.
    pub excluded: bool,
    /// Soft-deleted.
    pub pruned: bool,
    /// Bookmarked by the user (raises retrieval salience).
    pub bookmarked: bool,
    /// For an annotation: the user asked for it to be included.
    pub include_annotation: bool,
    /// The user asked for it to survive any truncation, like the prompt (the inspector's "keep").
    pub kept: bool,
    /// Counts the store has cached for this node.
    pub cached_tokens: CachedCounts,
}

impl NodeRecord {
    /// A node with one text part and no flags: the common case, and a short form for tests.
    pub fn text(id: u64, edge: ParentEdge, author: Author, text: &str) -> NodeRecord {
        NodeRecord {
            id: NodeId(id),
            edge,
            author,
            parts: vec![Part::Text(text.to_owned())],
            created_at_ms: 0,
            excluded: false,
            pruned: false,
            bookmarked: false,
            include_annotation: false,
            kept: false,
            cached_tokens: CachedCounts::new(),
        }
    }

    /// The cached count for `tokenizer`, if the store has one.
    pub fn cached(&self, tokenizer: TokenizerId) -> Option<u32> {
        self.cached_tokens.iter().find(|c| c.tokenizer == tokenizer).map(|c| c.tokens)
    }

    /// Whether any part is a tool call.
    pub fn has_tool_call(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::ToolCall { .. }))
    }

    /// Whether any part is a tool result.
    pub fn has_tool_result(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::ToolResult { .. }))
    }
}

/// The passage a pin was opened on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    /// The highlighted text, verbatim.
    pub text: String,
    /// Character range in the anchored node (start, end).
    pub range: (u32, u32),
}

/// A pin: a sub-thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinRecord {
    /// The pin's id.
    pub id: PinId,
    /// The thread it was pinned in (its parent thread).
    pub parent_thread: ThreadRef,
    /// Its title.
    pub title: String,
    /// The highlight; absent for a sub-thread opened without one (ThreadMind's thread_create).
    pub anchor: Option<Anchor>,
    /// The message of the parent thread its sub-thread hangs off, when it has one: a closed
    /// pin's result reaches the sends of the parent thread whose path passes this message.
    pub hangs_off: Option<NodeId>,
    /// Closed pins hand a result back to their parent, like a task frame popping.
    pub closed: bool,
    /// The result handed back when closed.
    pub result: Option<String>,
}

/// A summary of one thread's path up to a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryRecord {
    /// The store's id for it: fitted summaries name the summary they condense by it.
    pub id: u64,
    /// The thread summarised.
    pub thread: ThreadRef,
    /// The last node the summary covers: for an ancestor thread, the node its child pin hangs
    /// off. `None` for a summary of the thread as a whole as it stood when written (ThreadMind's
    /// summary_update), which only a summary written on purpose is used as.
    pub up_to: Option<NodeId>,
    /// The token budget it was written for; `None` for one written without a budget.
    pub budget: Option<u32>,
    /// Who wrote it.
    pub written_by: SummaryAuthor,
    /// The model that wrote or condensed it; empty when none did.
    pub summarizer: String,
    /// Written, or asked for, on purpose (by the person, an agent, a file): used before any
    /// summary the summariser wrote on its own for the same thread and point, and never dropped
    /// for its length (fitted instead).
    pub chosen: bool,
    /// For a fitted summary: the id of the chosen summary it condenses to `budget`.
    pub fitted_from: Option<u64>,
    /// The summary text.
    pub text: String,
}

impl SummaryRecord {
    /// A summary the summariser wrote on its own at `budget`, as the tests and benchmarks make
    /// them.
    pub fn written(thread: ThreadRef, up_to: NodeId, budget: u32, text: &str) -> SummaryRecord {
        SummaryRecord {
            id: 0,
            thread,
            up_to: Some(up_to),
            budget: Some(budget),
            written_by: SummaryAuthor::Model,
            summarizer: String::new(),
            chosen: false,
            fitted_from: None,
            text: text.to_owned(),
        }
    }
}

/// Who wrote a summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SummaryAuthor {
    /// The summariser.
    Model,
    /// The person.
    Person,
    /// An agent (ThreadMind's summary_update).
    Agent,
    /// A file it came in with.
    File,
}

/// Why an ancestor thread has no summary yet, as the app knows it: the fallback in its place says
/// so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SummaryState {
    /// The summariser is writing it now.
    BeingWritten,
    /// The summariser failed, for this reason; it is tried again later.
    Failed(String),
    /// The one written no longer holds, for this reason (a message it was written from was
    /// excluded, deleted or moved since): it is not sent, and is written again.
    Stale(String),
    /// The one written by a person, an agent or a file no longer holds, for this reason: it is
    /// not sent, and kept for its writer to edit (or to have written again on purpose); the
    /// summariser does not write one in its place meanwhile.
    StaleKept(String),
}

/// What the app knows about a summary not in the snapshot: that of `thread` ending at `up_to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryNote {
    /// The thread.
    pub thread: ThreadRef,
    /// The node it must end at.
    pub up_to: NodeId,
    /// Its state.
    pub state: SummaryState,
}

/// Where an attachment hangs: its scope decides whether it is on the active path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttachmentScope {
    /// The whole tree.
    Tree,
    /// One thread.
    Thread(ThreadRef),
    /// One node.
    Node(NodeId),
}

/// What an attachment is, which is also its role in assembly (seed 002's edge source roles plus
/// seed 004's files and folders).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttachmentKind {
    /// Appended to the system context.
    Instruction(String),
    /// Reference material placed before the primary content.
    Context {
        /// A label for the report.
        title: String,
        /// The material.
        text: String,
    },
    /// An explicit file.
    File {
        /// Its path, shown in the `--- file: <path> ---` header.
        path: String,
        /// Its contents.
        content: String,
        /// Its size on disk, checked against the file size limit.
        size_bytes: u64,
    },
    /// A PDF, as the text of each of its pages.
    Pdf {
        /// Its path, shown in the header of its first page.
        path: String,
        /// Each page's text, in order.
        pages: Vec<String>,
    },
    /// An image, for models that see.
    Image {
        /// Its name (the file's, or what it was pasted as).
        name: String,
        /// Its media type.
        media_type: String,
        /// Its size in pixels, which each provider's image rule counts.
        width: u32,
        /// Its height in pixels.
        height: u32,
        /// Its bytes in base64.
        data: String,
    },
    /// A folder listing (structure without content).
    Folder {
        /// The folder.
        path: String,
        /// Its entries' relative paths.
        entries: Vec<String>,
    },
}

/// An attachment on the tree, a thread or a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// The attachment's id.
    pub id: u64,
    /// Where it hangs.
    pub scope: AttachmentScope,
    /// What it is.
    pub kind: AttachmentKind,
}

/// A tool the model may call, as its definition text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolDefinition {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its JSON Schema, as text.
    pub parameters: String,
}

/// A full-text search hit of the prompt, or a message the person added to the search slice.
///
/// The store offers only hits on the active node's path (see [`crate::permitted`]); a hit
/// from anywhere else comes in only when the person added it by hand (`added`).
#[derive(Debug, Clone, PartialEq)]
pub struct RetrievalCandidate {
    /// The node hit.
    pub node: NodeId,
    /// The text to include.
    pub text: String,
    /// Its author (a filter may select by author).
    pub author: Author,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    /// The store's full-text relevance, higher is better (FTS5's `-bm25()`).
    pub bm25: f64,
    /// Bookmarked by the user.
    pub bookmarked: bool,
    /// The node has a pin made in it.
    pub pinned: bool,
    /// The person added this message to the context by hand (a search hit they chose): it may
    /// come from any branch, and the plan labels it as theirs.
    pub added: bool,
}

/// The tree's own settings that assembly reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeInfo {
    /// The tree's title (the root thread's title in ThreadMind output).
    pub title: String,
    /// Dialogue or buffer, fixed at creation.
    pub mode: TreeMode,
    /// The tree-level system context.
    pub system_context: String,
    /// Buffer mode includes system context only when this is on.
    pub buffer_mode_system_context: bool,
    /// Seed 002's token buffer: when set, it replaces the model's reserve for the reply.
    pub token_buffer: Option<u32>,
}

/// Dialogue (messages) or buffer (one document).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeMode {
    /// A messages array with roles.
    Dialogue,
    /// One continuous document.
    Buffer,
}

/// Everything assembly reads.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    /// The tree.
    pub tree: TreeInfo,
    /// The nodes: at least the path from the root to the active node, in any order; usually the
    /// path root-first as the store's CTE returns it, which lets the walk skip its index. Other
    /// nodes (siblings, other branches) may be present and are never included.
    pub nodes: Vec<NodeRecord>,
    /// The node being answered.
    pub active: NodeId,
    /// The pins of the tree that matter: those on the path, closed pins opened from the current
    /// thread, and closed siblings.
    pub pins: Vec<PinRecord>,
    /// Summaries available for threads on the path, oldest write first (where several could
    /// serve, the planner takes the last).
    pub summaries: Vec<SummaryRecord>,
    /// Summaries the app is writing, or failed to write, for threads on the path.
    pub summary_notes: Vec<SummaryNote>,
    /// Attachments in or near scope.
    pub attachments: Vec<Attachment>,
    /// Tool definitions offered to the model.
    pub tools: Vec<ToolDefinition>,
    /// Full-text candidates for the retrieval slice.
    pub retrieval: Vec<RetrievalCandidate>,
    /// Buffer mode's uncommitted working text.
    pub working_buffer: String,
    /// The answers the person chose to fuse into one, in their order; empty for every request
    /// but a fused answer's (see [`crate::permitted`], rule 7).
    pub fuse_sources: Vec<FuseSource>,
    /// The current thread's compaction, when one covers the start of its path.
    pub compaction: Option<Compaction>,
    /// Messages the person picked from other branches and pins for a question asked over them
    /// (see [`crate::permitted`], rule 8): each names the question whose thread they start.
    pub picked: Vec<PickedSource>,
}

/// A message picked for a question over several branches: the store's facts about it, which the
/// planner checks against the path being answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickedSource {
    /// The question asked over it: it comes only into requests whose path holds that question.
    pub question: NodeId,
    /// The message picked.
    pub node: NodeId,
    /// Where it came from, as the request and the inspector name it ("the pin “Costs”, an
    /// answer by Qwen 3").
    pub label: String,
    /// Its text.
    pub text: String,
    /// Excluded by the person since it was picked.
    pub excluded: bool,
    /// Soft-deleted since it was picked.
    pub deleted: bool,
    /// Whether the person asked for its branch's summary up to it as well.
    pub with_summary: bool,
    /// That summary, when one is written and holds: of the picked message's thread from its
    /// start to the message.
    pub summary: Option<String>,
    /// The thread the picked message is in, whose summary up to it is asked for.
    pub thread: ThreadRef,
}

/// A summary standing for the current thread's messages from its start to `up_to`: those
/// messages are left out of the request and the summary sent in their place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compaction {
    /// The app's number for it.
    pub id: i64,
    /// The last message it stands for (on the active path, in the current thread).
    pub up_to: NodeId,
    /// The summary.
    pub text: String,
    /// Who wrote it, in words ("Qwen 3 (local)", "you").
    pub written_by: String,
    /// Why it no longer holds, when it does not: its messages are then planned as they are.
    pub stale: Option<String>,
}

/// An answer chosen to be fused: the store's facts about it, which the planner checks against
/// the message being answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FuseSource {
    /// The answer.
    pub node: NodeId,
    /// The message it continues in its own thread; `None` for a thread's first message or a
    /// note, which answer nothing.
    pub answers: Option<NodeId>,
    /// Its author: only a model's answer is fused.
    pub author: Author,
    /// Soft-deleted since it was chosen.
    pub deleted: bool,
    /// Its text.
    pub text: String,
    /// How the request names it: the model that wrote it.
    pub label: String,
}

impl Default for TreeInfo {
    fn default() -> Self {
        TreeInfo {
            title: String::new(),
            mode: TreeMode::Dialogue,
            system_context: String::new(),
            buffer_mode_system_context: false,
            token_buffer: None,
        }
    }
}

impl Snapshot {
    /// The pin with this id.
    pub fn pin(&self, id: PinId) -> Option<&PinRecord> {
        self.pins.iter().find(|p| p.id == id)
    }
}
