//! The domain model as the store holds it.

use serde::{Deserialize, Serialize};

/// The id of a tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TreeId(pub i64);

/// The id of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub i64);

/// The id of a pin, which is also the id of the sub-thread it opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PinId(pub i64);

/// The most threads a chain may hold, the root thread's included: ThreadMind walks at most 50
/// levels, and the context engine plans at most as many (`Settings::max_thread_depth`), so a
/// thread the store lets exist can always be planned and shown whole.
pub const MAX_THREADS_ON_A_CHAIN: u32 = 50;

/// The most pin levels a thread may sit under: every thread of a chain but the root's.
pub const MAX_PIN_DEPTH: u32 = MAX_THREADS_ON_A_CHAIN - 1;

/// How a tree is read and continued, fixed when the tree is created (seed 002).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeMode {
    /// Messages between a person and models, sent as chat turns.
    Dialogue,
    /// One continuous document that generation continues.
    Buffer,
}

/// Whether a listing of messages includes soft-deleted ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deleted {
    /// Only live messages: what paths, views and plans see.
    Left,
    /// Soft-deleted ones too: what a restore or an export needs.
    Included,
}

/// Who wrote a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Author {
    /// The person using Pinloom.
    Human,
    /// A language model.
    Model,
    /// A tool's result.
    Tool,
}

/// One part of a node's content. Pinloom defines no tools yet, but imported tool groups keep
/// their calls and results, tied by the call's id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// A model asking for a tool to run.
    ToolCall {
        /// The call's id, which its result names.
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments, as the JSON text the model produced.
        arguments: String,
    },
    /// A tool's answer to one call.
    ToolResult {
        /// The id of the call this answers.
        call_id: String,
        /// What the tool returned.
        content: String,
    },
}

/// ThreadMind's project mode: whose threads may be changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// One person's project (ThreadMind's default).
    Solo,
    /// A team's project, where only a thread's author may change it. Pinloom has one author per
    /// machine, so it behaves as a solo project until trees are shared between people.
    Team,
}

/// A tree as the store holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    /// Its id.
    pub id: TreeId,
    /// Its ThreadMind project id: a slug of its title, unique among trees.
    pub slug: String,
    /// Its title, never blank.
    pub title: String,
    /// ThreadMind's project mode.
    pub sharing: Sharing,
    /// Dialogue or buffer, fixed at creation.
    pub mode: TreeMode,
    /// The tree-level system context.
    pub system_context: String,
    /// Whether buffer mode includes the system context (off by default, seed 002).
    pub buffer_includes_system: bool,
    /// The tree's settings overrides, as JSON the application layer reads.
    pub settings_json: String,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    /// When it or any of its nodes last changed, in milliseconds since the Unix epoch.
    pub updated_at_ms: i64,
    /// How many nodes it holds, soft-deleted ones included.
    pub node_count: u64,
    /// When the person put it in the trash; absent for a live tree.
    pub deleted_at_ms: Option<i64>,
    /// Its global id (a UUIDv7), the same in every database that holds it through a sync.
    pub global_id: String,
    /// Who shared it to a team this database syncs with, if it is shared.
    pub shared_by: Option<String>,
}

/// What every context of a tree is set up with: a tree without the fields a context does not
/// need, read without counting its messages (a scan of the tree's index, ~0.2 ms of each plan on a
/// 10,000-message tree and ten times that on 100,000).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeSetup {
    /// Its id.
    pub id: TreeId,
    /// Its title, never blank.
    pub title: String,
    /// Dialogue or buffer, fixed at creation.
    pub mode: TreeMode,
    /// The tree-level system context.
    pub system_context: String,
    /// Whether buffer mode includes the system context (off by default, seed 002).
    pub buffer_includes_system: bool,
    /// The tree's settings overrides, as JSON the application layer reads.
    pub settings_json: String,
}

/// One immutable message in a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Its id.
    pub id: NodeId,
    /// The tree it belongs to.
    pub tree_id: TreeId,
    /// The node before it; `None` for the tree's root and for the first node of a pin that has
    /// no anchor node.
    pub parent_id: Option<NodeId>,
    /// The thread it belongs to: the pin that opened it, or `None` for the root thread.
    pub pin_id: Option<PinId>,
    /// Who wrote it.
    pub author: Author,
    /// Its text: the text parts joined, which search and token counts read.
    pub text: String,
    /// Its content, part by part.
    pub parts: Vec<Part>,
    /// The node this one is an edit of.
    pub edited_from: Option<NodeId>,
    /// The model that wrote it, for model nodes.
    pub model: Option<String>,
    /// The generation settings it was written with, as JSON.
    pub generation_json: Option<String>,
    /// The usage the provider reported for it, as JSON.
    pub usage_json: Option<String>,
    /// Left out of every context.
    pub excluded: bool,
    /// Marked by the person as worth finding again.
    pub bookmarked: bool,
    /// A reply whose stream broke before it finished.
    pub incomplete: bool,
    /// Kept in every context the person's budget allows, like the prompt.
    pub kept: bool,
    /// When it was soft-deleted; its subtree is hidden until it is restored.
    pub pruned_at_ms: Option<i64>,
    /// When it was written, in milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    /// For a message that arrived from a team's folder: its author's name in the team's roster
    /// (or "a member of the team" where the team has none). `None` for the person's own.
    pub written_by: Option<String>,
}

/// A node on an ancestor path as a plan reads it ([`Store::plan_path`](crate::Store::plan_path)):
/// what the context engine needs and nothing a view shows (model, usage, generation settings),
/// with each text read once and moved into its part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathStep {
    /// Its id.
    pub id: NodeId,
    /// The node before it.
    pub parent_id: Option<NodeId>,
    /// The thread it belongs to.
    pub pin_id: Option<PinId>,
    /// Who wrote it.
    pub author: Author,
    /// Its content.
    pub content: StepContent,
    /// Left out of every context.
    pub excluded: bool,
    /// Marked by the person as worth finding again.
    pub bookmarked: bool,
    /// Kept in every context the person's budget allows.
    pub kept: bool,
    /// When it was written, in milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    /// Its stored count in the tokenizer family the path was read for, if any.
    pub tokens: Option<u64>,
}

/// A path step's content: most messages are one text, held without a list around it (a path of
/// 10,000 messages is read on every cold plan, and each list is an allocation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepContent {
    /// One text part.
    Text(String),
    /// Anything else, part by part (tool calls and results).
    Parts(Vec<Part>),
}

impl From<Vec<Part>> for StepContent {
    fn from(mut parts: Vec<Part>) -> StepContent {
        match parts.as_mut_slice() {
            [Part::Text { text }] => StepContent::Text(std::mem::take(text)),
            _ => StepContent::Parts(parts),
        }
    }
}

impl From<Node> for PathStep {
    /// The step a whole node makes on a path (a node just written, added to a path in memory).
    fn from(node: Node) -> PathStep {
        PathStep {
            id: node.id,
            parent_id: node.parent_id,
            pin_id: node.pin_id,
            author: node.author,
            content: StepContent::from(node.parts),
            excluded: node.excluded,
            bookmarked: node.bookmarked,
            kept: node.kept,
            created_at_ms: node.created_at_ms,
            tokens: None,
        }
    }
}

/// What a finished reply taught, written with it ([`crate::Store::append_reply`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplyLearned<'a> {
    /// Counts of one exact tokenizer family the plan made for messages without them.
    pub family_counts: Option<(&'a str, &'a [(NodeId, u64)])>,
    /// The reply's profile and its corrected characters per token (in thousandths).
    pub calibration: Option<(&'a str, u32)>,
}

/// A node to append.
#[derive(Debug, Clone, PartialEq)]
pub struct NewNode {
    /// The tree to append to.
    pub tree_id: TreeId,
    /// The node it continues. `None` only for the tree's first node, or for the first node of a
    /// pin without an anchor node.
    pub parent_id: Option<NodeId>,
    /// `Some` to begin (or branch the beginning of) a pin's sub-thread: the parent must then be
    /// the pin's anchor node. `None` to continue the parent's thread.
    pub pin_id: Option<PinId>,
    /// Who wrote it.
    pub author: Author,
    /// Its content; must not be empty.
    pub parts: Vec<Part>,
    /// The node it is an edit of.
    pub edited_from: Option<NodeId>,
    /// The model that wrote it.
    pub model: Option<String>,
    /// The generation settings, as JSON.
    pub generation_json: Option<String>,
    /// The usage the provider reported for a model's reply, as JSON.
    pub usage_json: Option<String>,
    /// A reply that did not finish (cancelled, or its stream broke): kept, and marked.
    pub incomplete: bool,
    /// Its token counts, one per tokenizer family, written with it.
    pub token_counts: Vec<(String, u64)>,
    /// When it was written, in milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    /// For a model's reply: the receipt of the request that made it, written with it.
    pub receipt: Option<Receipt>,
    /// For a continuation: the tokens it was generated as, when its provider reported them,
    /// written with it.
    pub reply_tokens: Vec<ReplyToken>,
    /// The streaming draft this reply finishes ([`Store::save_reply_draft`]): deleted in the
    /// same transaction the node is written in.
    ///
    /// [`Store::save_reply_draft`]: crate::Store::save_reply_draft
    pub replaces_draft: Option<i64>,
}

/// A token a continuation was generated as, as its provider reported it: the token's text, its
/// natural log-probability, and the likeliest tokens at its place with theirs, most likely first.
/// What the loom shows on hover and branches from; kept beside the reply, on this machine only (a
/// sync or an export carries the reply's text, which is what a branch is made from).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplyToken {
    /// The token's text.
    pub token: String,
    /// Its natural log-probability.
    pub logprob: f64,
    /// The likeliest tokens at its place, most likely first, each with its log-probability.
    pub top: Vec<(String, f64)>,
}

/// A reply's receipt as the application layer made it: what was planned and sent beside what the
/// provider counted. The store keeps it whole and indexes only whether the provider cut it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The receipt, as JSON.
    pub json: String,
    /// The provider counted materially fewer prompt tokens than were sent: it cut the context.
    pub provider_cut: bool,
}

impl NewNode {
    /// A plain-text node continuing `parent_id`'s thread.
    pub fn text(
        tree_id: TreeId,
        parent_id: Option<NodeId>,
        author: Author,
        text: impl Into<String>,
        created_at_ms: i64,
    ) -> NewNode {
        NewNode {
            tree_id,
            parent_id,
            pin_id: None,
            author,
            parts: vec![Part::Text { text: text.into() }],
            edited_from: None,
            model: None,
            generation_json: None,
            usage_json: None,
            incomplete: false,
            token_counts: Vec::new(),
            created_at_ms,
            receipt: None,
            reply_tokens: Vec::new(),
            replaces_draft: None,
        }
    }
}

/// The highlighted passage a pin was opened from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    /// Where it starts, in UTF-16 code units of the anchor node's text.
    pub start: u32,
    /// Where it ends (exclusive), in UTF-16 code units.
    pub end: u32,
    /// The passage, verbatim.
    pub text: String,
}

/// A pin: a sub-thread opened from a node, with or without a highlighted passage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// Its id, also the id of its thread.
    pub id: PinId,
    /// Its ThreadMind thread id: a slug of its title, unique among the tree's live threads and
    /// never `main` (the root thread's).
    pub slug: String,
    /// Its tree.
    pub tree_id: TreeId,
    /// The thread it opens from; `None` for the root thread.
    pub parent_pin_id: Option<PinId>,
    /// The node its sub-thread hangs off.
    pub anchor_node_id: Option<NodeId>,
    /// The highlighted passage, absent for a sub-thread opened without one.
    pub anchor: Option<Anchor>,
    /// Its title.
    pub title: String,
    /// How many pin levels its thread sits under (1 for a pin of the root thread).
    pub depth: u32,
    /// When it was closed; `None` while open.
    pub closed_at_ms: Option<i64>,
    /// What it found, handed back to its parent when closed.
    pub result: Option<String>,
    /// When it was opened.
    pub created_at_ms: i64,
    /// When ThreadMind's thread_delete removed it (and its sub-threads) from every view.
    pub deleted_at_ms: Option<i64>,
}

/// The tree and thread a working folder's headless session has active (ThreadMind's
/// `activeProjectId` and `activeThreadId`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workspace {
    /// The active tree, if any.
    pub tree_id: Option<TreeId>,
    /// The active thread of that tree; `None` for its root thread.
    pub pin_id: Option<PinId>,
}

/// The key a summary is cached under: a thread's path up to a node, at a budget, by a writer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SummaryKey {
    /// The tree.
    pub tree_id: TreeId,
    /// The thread summarised; `None` for the root thread.
    pub pin_id: Option<PinId>,
    /// The last node summarised; `None` for the thread as a whole.
    pub path_end: Option<NodeId>,
    /// The token budget it was written for; `None` for no budget.
    pub budget: Option<u32>,
    /// The model that wrote it; empty when a person, an agent or a file did.
    pub summarizer: String,
    /// For a fitted summary: the chosen summary it condenses to `budget`.
    pub fitted_from: Option<i64>,
}

/// Who wrote a summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SummaryAuthor {
    /// The summariser, a model (named by the key's `summarizer`).
    Model,
    /// The person, in the window.
    Person,
    /// An agent, through ThreadMind's `summary_update`.
    Agent,
    /// A file it was imported from, which did not say.
    File,
}

impl SummaryAuthor {
    /// Its name in the database and in exports.
    pub fn as_str(self) -> &'static str {
        match self {
            SummaryAuthor::Model => "model",
            SummaryAuthor::Person => "person",
            SummaryAuthor::Agent => "agent",
            SummaryAuthor::File => "file",
        }
    }

    /// The author a stored or exported name stands for.
    pub fn parse(name: &str) -> Option<SummaryAuthor> {
        Some(match name {
            "model" => SummaryAuthor::Model,
            "person" => SummaryAuthor::Person,
            "agent" => SummaryAuthor::Agent,
            "file" => SummaryAuthor::File,
            _ => return None,
        })
    }
}

/// One write of a summary's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryWrite<'a> {
    /// The text.
    pub text: &'a str,
    /// Who wrote it.
    pub written_by: SummaryAuthor,
    /// Whether it was written or asked for on purpose: sends prefer it to any summary the
    /// summariser wrote on its own.
    pub chosen: bool,
    /// How many characters it summarised.
    pub input_chars: u64,
    /// How many tokens it summarised.
    pub input_tokens: u64,
    /// When.
    pub written_at_ms: i64,
}

impl<'a> SummaryWrite<'a> {
    /// A summary the summariser wrote on its own.
    pub fn model(text: &'a str, input_chars: u64, input_tokens: u64, at_ms: i64) -> Self {
        SummaryWrite {
            text,
            written_by: SummaryAuthor::Model,
            chosen: false,
            input_chars,
            input_tokens,
            written_at_ms: at_ms,
        }
    }

    /// A summary written on purpose by `author` (the person, an agent, a file).
    pub fn chosen(text: &'a str, author: SummaryAuthor, at_ms: i64) -> Self {
        SummaryWrite {
            text,
            written_by: author,
            chosen: true,
            input_chars: 0,
            input_tokens: 0,
            written_at_ms: at_ms,
        }
    }
}

/// A summary's current text and what it summarised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Its row.
    pub id: i64,
    /// What it is a summary of.
    pub key: SummaryKey,
    /// Who wrote it.
    pub written_by: SummaryAuthor,
    /// Written or asked for on purpose (see [`SummaryWrite::chosen`]).
    pub chosen: bool,
    /// The summary.
    pub text: String,
    /// How many characters it summarised.
    pub input_chars: u64,
    /// How many tokens it summarised.
    pub input_tokens: u64,
    /// When it was last written.
    pub updated_at_ms: i64,
    /// How many times it has been written (ThreadMind's stats count updates).
    pub update_count: u64,
    /// Why it no longer holds, when a message it was written from has since been excluded,
    /// deleted or moved away ("written before message #12 was excluded"): such a summary is
    /// never sent, and a write clears it.
    pub stale: Option<String>,
}

/// What an attachment hangs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttachmentScope {
    /// The whole tree.
    Tree,
    /// One thread: a pin's, or the root thread's (`None`).
    Thread(Option<PinId>),
    /// One node.
    Node(NodeId),
}

/// How an attachment enters context (seed 002's edge source roles, plus seed 004's kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttachmentRole {
    /// Reference material placed before the primary content.
    Context,
    /// Appended to the system context.
    Instruction,
    /// A file's contents.
    File,
    /// A folder listing.
    Folder,
    /// An image, as a `data:` URL (its media type and its bytes in base64).
    Image,
    /// A PDF, as the text of its pages, each after a form feed (`\u{c}`) but the first.
    Pdf,
}

/// Material attached to a tree, thread or node, stored as it was when attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// Its id.
    pub id: i64,
    /// Its tree.
    pub tree_id: TreeId,
    /// What it hangs on.
    pub scope: AttachmentScope,
    /// How it enters context.
    pub role: AttachmentRole,
    /// Its name (a file path, a folder path, a title).
    pub name: String,
    /// Its content as read when attached.
    pub content: String,
    /// When it was attached.
    pub created_at_ms: i64,
}

/// A note on a node, out of context unless included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    /// Its id.
    pub id: i64,
    /// The node it is on.
    pub node_id: NodeId,
    /// The note.
    pub text: String,
    /// Whether it goes into context.
    pub included: bool,
    /// When it was written.
    pub created_at_ms: i64,
}

/// A model and its budget, as every front end sees it. Serialized as a sync folder's profile
/// record holds it: everything but the mark of one that came with a file (profiles hold no key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelProfile {
    /// A unique name people choose it by.
    pub name: String,
    /// The provider's stored name (`openai`, `anthropic`, `ollama`, …), which implies its wire
    /// family; the application layer checks it.
    pub provider: String,
    /// The provider's model id.
    pub model_id: String,
    /// Where to reach it, when not the provider's default.
    pub base_url: Option<String>,
    /// Its context window, in tokens.
    pub context_window: u32,
    /// Tokens kept free for the reply; less than the window.
    pub reserve: u32,
    /// Whether it takes a system prompt in the provider's native field.
    pub native_system: bool,
    /// Whether it has a completion endpoint (buffer mode).
    pub completion_endpoint: bool,
    /// Its tokenizer family.
    pub tokenizer: String,
    /// The agent-level system prompt.
    pub agent_system_prompt: String,
    /// Sampling settings, as JSON.
    pub sampling_json: String,
    /// Context settings (truncation strategy, depth budgets, …), as JSON.
    pub settings_json: String,
    /// What the model costs, as JSON, when the person entered prices.
    pub prices_json: Option<String>,
    /// The file it came with, while the person has not enabled it: until then it is never
    /// planned for, sent to, or offered as a default.
    #[serde(skip)]
    pub imported_from: Option<String>,
}

/// A live message's place in its tree, as the tree map draws it: nothing of its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShapeRow {
    /// The node.
    pub id: NodeId,
    /// Its parent.
    pub parent_id: Option<NodeId>,
    /// Its thread.
    pub pin_id: Option<PinId>,
    /// Who wrote it.
    pub author: Author,
}

/// One row of a tree's outline, for the map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlineRow {
    /// The node.
    pub id: NodeId,
    /// Its parent.
    pub parent_id: Option<NodeId>,
    /// Its thread.
    pub pin_id: Option<PinId>,
    /// Who wrote it.
    pub author: Author,
    /// The start of its text.
    pub preview: String,
    /// How many children it has.
    pub child_count: u64,
    /// Left out of every context.
    pub excluded: bool,
    /// Bookmarked.
    pub bookmarked: bool,
    /// Soft-deleted.
    pub pruned: bool,
    /// The team member who wrote it, for a message from a team.
    pub written_by: Option<String>,
}

/// One full-text hit.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    /// The node found.
    pub node_id: NodeId,
    /// Its thread: `None` for the root thread.
    pub pin_id: Option<PinId>,
    /// Who wrote it.
    pub author: Author,
    /// Its text.
    pub text: String,
    /// SQLite's bm25 rank: lower is more relevant, and it is negative for matches.
    pub bm25: f64,
    /// When the node was written, for recency scoring.
    pub created_at_ms: i64,
    /// Whether the node is bookmarked, for salience.
    pub bookmarked: bool,
    /// Whether a pin is anchored in the node, for salience.
    pub pinned: bool,
}
