//! The shapes that cross to front ends. Output-only shapes derive only `Serialize`, so the
//! generated TypeScript has one type for each rather than a read and a write variant.
//! They are serialised with camelCase names and described to
//! TypeScript through specta; ids are SQLite row ids, far below 2^53, so they travel as numbers.

use pinloom_engine::threadmind::ThreadMindContext;
use pinloom_engine::tokens::CharHeuristic;
use pinloom_providers::ReplyEvent;
use pinloom_store as store;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

/// How a tree is read and continued; fixed when it is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum TreeMode {
    /// Chat turns between a person and models.
    Dialogue,
    /// One continuous document that generation continues.
    Buffer,
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum Author {
    /// The person.
    Human,
    /// A language model.
    Model,
    /// A tool's result.
    Tool,
}

/// A tree as the tree list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct TreeSummary {
    /// Its id.
    pub id: i64,
    /// Its ThreadMind project id (what the MCP server and `pinloom` call it).
    pub slug: String,
    /// Its title.
    pub title: String,
    /// Dialogue or buffer.
    pub mode: TreeMode,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    /// Last change to it or its messages, milliseconds since the Unix epoch.
    pub updated_at_ms: i64,
    /// How many messages it holds, over all its branches.
    pub message_count: u32,
    /// Its global id: the same on every machine that syncs it, where `id` is this database's.
    pub global_id: String,
    /// Who shared it with a team this database syncs with, when it is shared.
    pub shared_by: Option<String>,
}

/// One message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Its id.
    pub id: i64,
    /// The message before it; absent for the tree's first.
    pub parent_id: Option<i64>,
    /// Who wrote it.
    pub author: Author,
    /// For a message from a team: the member who wrote it (a reply: who asked for it), as the
    /// team's roster names them; absent for the person's own.
    pub written_by: Option<String>,
    /// Its text.
    pub text: String,
    /// When it was written, milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    /// Its size in tokens by ThreadMind's estimate (3.5 characters a token), until exact
    /// per-model counts exist.
    pub token_estimate: u32,
}

impl From<TreeMode> for store::TreeMode {
    fn from(mode: TreeMode) -> store::TreeMode {
        match mode {
            TreeMode::Dialogue => store::TreeMode::Dialogue,
            TreeMode::Buffer => store::TreeMode::Buffer,
        }
    }
}

impl From<store::TreeMode> for TreeMode {
    fn from(mode: store::TreeMode) -> TreeMode {
        match mode {
            store::TreeMode::Dialogue => TreeMode::Dialogue,
            store::TreeMode::Buffer => TreeMode::Buffer,
        }
    }
}

impl From<store::Author> for Author {
    fn from(author: store::Author) -> Author {
        match author {
            store::Author::Human => Author::Human,
            store::Author::Model => Author::Model,
            store::Author::Tool => Author::Tool,
        }
    }
}

impl From<store::Tree> for TreeSummary {
    fn from(tree: store::Tree) -> TreeSummary {
        TreeSummary {
            id: tree.id.0,
            slug: tree.slug,
            title: tree.title,
            mode: tree.mode.into(),
            created_at_ms: tree.created_at_ms,
            updated_at_ms: tree.updated_at_ms,
            message_count: u32::try_from(tree.node_count).unwrap_or(u32::MAX),
            global_id: tree.global_id,
            shared_by: tree.shared_by,
        }
    }
}

impl From<store::Node> for Message {
    fn from(node: store::Node) -> Message {
        let estimate = CharHeuristic::ThreeAndAHalfChars.estimate(&node.text);
        Message {
            id: node.id.0,
            parent_id: node.parent_id.map(|id| id.0),
            author: node.author.into(),
            written_by: node.written_by,
            token_estimate: u32::try_from(estimate).unwrap_or(u32::MAX),
            text: node.text,
            created_at_ms: node.created_at_ms,
        }
    }
}

/// A model profile: which model, where, and the budgets the context engine plans with. Domain
/// data, shared by every front end; read and written whole. (Sampling holds floats, so a profile
/// is `PartialEq` only.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ModelProfile {
    /// The unique name people choose it by.
    pub name: String,
    /// The provider's stored name: `openai`, `anthropic`, `gemini`, `openrouter`, `mistral`,
    /// `ollama`, `lmstudio`, `vllm` or `llamacpp`.
    pub provider: String,
    /// The provider's model id.
    pub model_id: String,
    /// Where to reach it, when not the provider's default address.
    pub base_url: Option<String>,
    /// Its context window, in tokens. Signed so that a negative number typed in a form reaches
    /// the checks and is refused in words, rather than failing to parse.
    pub context_window: i64,
    /// Tokens kept free for the reply; less than the window.
    pub reserve: i64,
    /// Whether it takes a system prompt in the provider's native field (else it is injected into
    /// the first user message).
    pub native_system: bool,
    /// Whether it can continue a document (buffer mode).
    pub completion_endpoint: bool,
    /// How its tokens are counted: `o200k`, `cl100k`, `claude`, `gemini` or `other`.
    pub tokenizer: String,
    /// The agent-level system prompt.
    pub agent_system_prompt: String,
    /// How the model samples; unset values are left to the provider.
    #[serde(default)]
    pub sampling: SamplingSettings,
    /// How contexts for this model are assembled; unset values take the defaults (a tree's own
    /// settings win over these).
    #[serde(default)]
    pub assembly: AssemblySettings,
    /// What the model costs, for each reply's receipt; none when unknown (local models).
    #[serde(default)]
    pub prices: Option<Prices>,
    /// The file it came with, while the person has not enabled it (Settings → Models from imported files): until
    /// then it is never planned for, sent to, or offered as a default. Saving keeps it as it is;
    /// only enabling clears it.
    #[serde(default)]
    pub imported_from: Option<String>,
}

/// A profile's sampling settings.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase", default)]
pub struct SamplingSettings {
    /// Temperature, 0 to 2.
    pub temperature: Option<f32>,
    /// Nucleus sampling, 0 to 1.
    pub top_p: Option<f32>,
    /// The most tokens a reply may have; the reserve when unset.
    pub max_output_tokens: Option<i64>,
}

/// A profile's assembly settings.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase", default)]
pub struct AssemblySettings {
    /// What to do when the history does not fit: `truncateMiddle` (the default),
    /// `rollingWindow` or `stopAtLimit`.
    pub truncation: Option<String>,
    /// Summary budgets by distance from the current thread, nearest first.
    pub depth_budgets: Option<Vec<i64>>,
    /// The last this-many messages are never dropped (4 when unset).
    pub minimum_recent_nodes: Option<i64>,
    /// truncateMiddle cuts in steps of this percent of the history's room, so consecutive
    /// requests share their start for the provider's prompt cache (25 when unset; 0 cuts
    /// message by message).
    pub truncation_step_percent: Option<i64>,
    /// Mark the stable start of each request for the provider's prompt cache (Anthropic's
    /// `cache_control`); on for Anthropic when unset.
    pub cache_breakpoints: Option<bool>,
    /// Whether the model takes images; told by its name when unset (a model served under a
    /// name of its own may need saying so).
    pub sees_images: Option<bool>,
}

impl ModelProfile {
    /// A profile of `model_id` at `provider`'s own address with a `context_window`-token window,
    /// `reserve` tokens kept for the reply and `tokenizer` counting; it takes a native system
    /// prompt, has no completion endpoint, no agent prompt, and leaves sampling and assembly to
    /// the defaults. Change the fields for anything else.
    pub fn new(
        name: &str,
        provider: &str,
        model_id: &str,
        context_window: i64,
        reserve: i64,
        tokenizer: &str,
    ) -> ModelProfile {
        ModelProfile {
            name: name.to_owned(),
            provider: provider.to_owned(),
            model_id: model_id.to_owned(),
            base_url: None,
            context_window,
            reserve,
            native_system: true,
            completion_endpoint: false,
            tokenizer: tokenizer.to_owned(),
            agent_system_prompt: String::new(),
            sampling: SamplingSettings::default(),
            assembly: AssemblySettings::default(),
            prices: None,
            imported_from: None,
        }
    }

    /// The stored record. The numbers must have passed the profile checks (non-negative,
    /// within `u32`).
    pub(crate) fn into_record(self) -> store::ModelProfile {
        let sampling_json = serde_json::to_string(&self.sampling).unwrap_or_else(|_| "{}".into());
        let settings_json = serde_json::to_string(&self.assembly).unwrap_or_else(|_| "{}".into());
        store::ModelProfile {
            name: self.name,
            provider: self.provider,
            model_id: self.model_id.trim().to_owned(),
            base_url: self.base_url.map(|url| url.trim_end_matches('/').to_owned()),
            context_window: u32::try_from(self.context_window).unwrap_or(0),
            reserve: u32::try_from(self.reserve).unwrap_or(u32::MAX),
            native_system: self.native_system,
            completion_endpoint: self.completion_endpoint,
            tokenizer: self.tokenizer,
            agent_system_prompt: self.agent_system_prompt,
            sampling_json,
            settings_json,
            prices_json: self.prices.and_then(|prices| serde_json::to_string(&prices).ok()),
            imported_from: self.imported_from,
        }
    }
}

impl From<store::ModelProfile> for ModelProfile {
    fn from(profile: store::ModelProfile) -> ModelProfile {
        ModelProfile {
            name: profile.name,
            provider: profile.provider,
            model_id: profile.model_id,
            base_url: profile.base_url,
            context_window: i64::from(profile.context_window),
            reserve: i64::from(profile.reserve),
            native_system: profile.native_system,
            completion_endpoint: profile.completion_endpoint,
            tokenizer: profile.tokenizer,
            agent_system_prompt: profile.agent_system_prompt,
            // Unreadable stored JSON reads as unset: the profile stays usable and the next save
            // writes readable JSON.
            sampling: serde_json::from_str(&profile.sampling_json).unwrap_or_default(),
            assembly: serde_json::from_str(&profile.settings_json).unwrap_or_default(),
            prices: profile.prices_json.as_deref().and_then(|json| serde_json::from_str(json).ok()),
            imported_from: profile.imported_from,
        }
    }
}

/// A message with everything the conversation view shows about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct NodeView {
    /// The message.
    pub message: Message,
    /// The thread it belongs to: a pin's id, absent for the tree's root thread.
    pub pin_id: Option<i64>,
    /// The message it is an edit of.
    pub edited_from: Option<i64>,
    /// The answers a fused answer was written from; empty for every other message.
    pub fused_from: Vec<i64>,
    /// The model profile that wrote it.
    pub model: Option<String>,
    /// The usage the provider reported, as JSON (`inputTokens`, `outputTokens`,
    /// `cachedInputTokens`).
    pub usage_json: Option<String>,
    /// Left out of every context by the person.
    pub excluded: bool,
    /// Bookmarked.
    pub bookmarked: bool,
    /// Kept in every context, whatever the truncation.
    pub kept: bool,
    /// A reply that did not finish (cancelled or broken off); its text is what arrived.
    pub incomplete: bool,
    /// Soft-deleted (shown only where deleted messages are asked for).
    pub deleted: bool,
}

impl From<store::Node> for NodeView {
    fn from(node: store::Node) -> NodeView {
        NodeView {
            pin_id: node.pin_id.map(|id| id.0),
            edited_from: node.edited_from.map(|id| id.0),
            fused_from: fused_from(node.generation_json.as_deref()),
            model: node.model.clone(),
            usage_json: node.usage_json.clone(),
            excluded: node.excluded,
            bookmarked: node.bookmarked,
            kept: node.kept,
            incomplete: node.incomplete,
            deleted: node.pruned_at_ms.is_some(),
            message: Message::from(node),
        }
    }
}

/// The answers a reply was fused from, as its generation settings keep them: none for a reply
/// that was not fused or whose settings cannot be read.
fn fused_from(generation_json: Option<&str>) -> Vec<i64> {
    // Most replies were not fused: their settings are not parsed for it.
    match generation_json {
        Some(json) if json.contains("\"fusedFrom\"") => serde_json::from_str::<ReplySettings>(json)
            .map(|settings| settings.fused_from)
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// What a send or a regeneration wrote.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct Exchange {
    /// The person's message (absent when an existing message was answered again).
    pub prompt: Option<NodeView>,
    /// The model's reply, incomplete when it was cancelled or broke off.
    pub reply: NodeView,
    /// Why the reply is incomplete, when it is: `{ code, message }`.
    pub interruption: Option<crate::error::ApiError>,
    /// The plan the request was made from.
    pub plan: PlanView,
    /// The reply's receipt: what was planned and sent beside what the provider counted.
    pub receipt: Option<Receipt>,
}

/// Where the person last asked from the terminal (`pinloom ask -c` continues there).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LastAsked {
    /// Their question, or its reply once it was written.
    pub node_id: i64,
    /// Its tree.
    pub tree_id: i64,
    /// The question's text while it has no reply (the send failed or was stopped first).
    pub unanswered: Option<String>,
}

/// One exchange of the log (`pinloom log`): a question and the reply it got, with what the
/// reply's receipt says it took.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggedExchange {
    /// The reply.
    pub reply_id: i64,
    /// Its tree.
    pub tree_id: i64,
    /// The tree's title.
    pub tree_title: String,
    /// The person's message it answers, when it answers one.
    pub question_id: Option<i64>,
    /// That message's text.
    pub question: String,
    /// The model profile that answered.
    pub profile: String,
    /// The team member who asked, for an exchange that came from a team.
    pub asked_by: Option<String>,
    /// Tokens sent, by the provider's count when it gave one, else by the plan's.
    pub prompt_tokens: u64,
    /// Reply tokens the provider counted.
    pub reply_tokens: Option<u64>,
    /// What it cost, when the profile has prices.
    pub cost_usd: Option<f64>,
    /// When the reply was written, in milliseconds since the Unix epoch.
    pub at_ms: i64,
}

/// A message found by a search across trees (`pinloom search`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FoundMessage {
    /// Its tree.
    pub tree_id: i64,
    /// The tree's title.
    pub tree_title: String,
    /// The message and the start of its text.
    #[serde(flatten)]
    pub hit: SearchResult,
    /// How well it matches, across every tree (lower is better: SQLite's bm25 rank).
    pub rank: f64,
}

/// One candidate piece of context in a plan, included or cut with the reason.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct SliceView {
    /// What it is: `system`, `prompt`, `anchor`, `file`, `contextSource`, `toolDefinition`,
    /// `ancestorSummary`, `rootGoal`, `siblingResult`, `pinResult` (a pin closed on this
    /// thread's path hands its result back), `recentHistory`, `oldHistory`,
    /// `folderListing`, `searchResult`, `workingBuffer`, `fuseSource`, `image` or `picked` (a
    /// message picked for a question over several branches, or its branch's summary).
    pub kind: String,
    /// Where it comes from: `agentPrompt`, `treeSystemContext`, `attachment`, `node`,
    /// `annotation`, `summary`, `anchor`, `tool`, `retrieval`, `addedSearchHit`, `pinResult`,
    /// `workingBuffer`, `fuseSource`, `fuseInstruction`, `picked`, `pickedSummary` (the picked
    /// message's id) or `pdfPage` (one page of a PDF: the attachment's id, the page in the
    /// preview's marker).
    pub source: String,
    /// Whose it is: the path's own, an ancestor's summary, settings, or added by the person.
    pub provenance: Provenance,
    /// The id of the source (a node, attachment, annotation or pin), when it has one; a summary's
    /// is its thread's pin (absent for the root thread).
    pub source_id: Option<i64>,
    /// Its pruning priority: the higher the number, the sooner it is cut (1 and 2 never are).
    pub priority: u8,
    /// Its tokens, framing included.
    pub tokens: u32,
    /// Whether it is in the context.
    pub included: bool,
    /// Why it was cut: `overBudget`, `truncated`, `outsideShare`, `excluded`, `softDeleted`,
    /// `annotation`, `emptySummary`, `overDepthBudget`, `fileTooLarge`, `orphanToolResult`,
    /// `orphanToolCall`, `providerRoleRule`, `bufferModeSystemContextOff`, `filtered`,
    /// `alreadyInHistory`, `alreadyInAncestry`, `notOptedIn`, `offPath`, `imageNotSeen` (the
    /// model does not see images) or `afterCutPage` (a PDF page after one that did not fit).
    pub reason: Option<String>,
    /// For a message cut at the boundary: the whole message's tokens, of which `tokens` are kept.
    pub cut_from: Option<u32>,
    /// A message the person keeps in every context.
    pub kept: bool,
    /// The start of its text, for the inspector's list.
    pub preview: String,
    /// Named by the plan's refusal as one to exclude so that the context fits.
    pub exclude_to_fit: bool,
    /// How many of the plan's slices this line stands for: 1, or a run of alike slices in a row
    /// (the thousands of old messages truncation cut from a long thread) folded into one line,
    /// described by its first slice with the run's tokens summed; `context_slices` lists them.
    pub count: u32,
    /// Where this line starts among the plan's slices.
    pub first: u32,
    /// For a folded run: the source id of its last slice (a run of messages is `#first–#last`).
    pub last_source_id: Option<i64>,
}

/// Where a slice's content comes from, as the inspector labels it (the rule of what a path may
/// know is in `pinloom_engine::permitted`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum Provenance {
    /// The model's or the tree's system text, or a tool definition.
    Setting,
    /// An attachment in scope.
    Attachment,
    /// The path's own messages, and search hits among them.
    Path,
    /// An ancestor thread's summary.
    AncestorSummary,
    /// The pin's anchor passage.
    Anchor,
    /// A closed sibling pin's result, opted in to.
    SiblingResult,
    /// Added by the person: a search hit they chose, a note they included.
    AddedByPerson,
    /// An answer the person chose to fuse, and the instruction to fuse them.
    ChosenToFuse,
}

impl From<pinloom_engine::plan::Provenance> for Provenance {
    fn from(provenance: pinloom_engine::plan::Provenance) -> Provenance {
        use pinloom_engine::plan::Provenance as Engine;
        match provenance {
            Engine::Setting => Provenance::Setting,
            Engine::Attachment => Provenance::Attachment,
            Engine::Path => Provenance::Path,
            Engine::AncestorSummary => Provenance::AncestorSummary,
            Engine::Anchor => Provenance::Anchor,
            Engine::SiblingResult => Provenance::SiblingResult,
            Engine::AddedByPerson => Provenance::AddedByPerson,
            Engine::ChosenToFuse => Provenance::ChosenToFuse,
        }
    }
}

/// A context plan as the inspector and the budget panel show it.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct PlanView {
    /// The message being answered.
    pub node_id: i64,
    /// The model profile planned for.
    pub profile: String,
    /// The budget: window minus the reserve (or the tree's token buffer).
    pub available: u32,
    /// Tokens used by what is included.
    pub used: u32,
    /// The counter: `o200k`, `cl100k`, or `estimate at N chars/token`.
    pub tokenizer: String,
    /// Whether anything was truncated or cut for the budget.
    pub truncated: bool,
    /// How many messages truncation left out (a marker stands for them, unless the budget is small).
    pub omitted_messages: u32,
    /// Every candidate, in render order (search results last, though they are sent right
    /// before the prompt), long runs of alike slices folded into one line each (`count`).
    pub slices: Vec<SliceView>,
    /// Ancestor summaries the plan wanted and no summariser has written yet.
    pub missing_summaries: u32,
    /// When the provider cut the context of the newest reply on this path (a local server's own
    /// window): what happened and what to change. The next request is likely cut the same way.
    pub provider_cut: Option<String>,
    /// When the tree stops at the limit and this context does not fit: why, and what to exclude
    /// (also marked on the slices). The slices are then the ones truncation would have kept;
    /// a send from here is refused.
    pub refusal: Option<String>,
    /// Where the request goes; empty when there is no request (a refusal).
    pub url: String,
    /// The request body exactly as it would be sent (the key travels in a header, never here);
    /// empty when the plan is refused, since nothing would be sent. `None` when it was left out:
    /// the window's previews leave it out (it is as long as the whole context, 600 KB for a long
    /// thread, and a window refreshes its preview on every change) and ask for it with
    /// `Pinloom::preview_request` when the person shows the request.
    pub body: Option<String>,
    /// The most tokens the reply may have: what the budget keeps free for it, and what the
    /// request asks for (the tree's token buffer, else the profile's reserve).
    pub reply_limit: u32,
    /// Every ancestor thread, root first, and what the request carries of it.
    pub ancestry: Vec<AncestorView>,
    /// How many of the thread's first messages truncateMiddle kept (it keeps the start), when it
    /// cut the history.
    pub kept_start: u32,
    /// What the truncation step left unused, when it cut messages that would have fitted.
    pub step_cut: Option<StepCutView>,
    /// When truncateMiddle cut the history of a small budget: the history's room, in tokens.
    /// It then keeps no start, no marker and no step, which would each cost a recent turn.
    pub small_budget: Option<u32>,
    /// When truncateMiddle cut the history without keeping the thread's first turn: its tokens
    /// (it did not fit, or would have taken more than a quarter of the history's room).
    pub start_given_up: Option<u32>,
    /// The tree's task frames, when it assembles its requests so (seed 001).
    pub task_frames: Option<TaskFramesChoice>,
    /// The compaction of the thread's older part, when one covers this message's path.
    pub compaction: Option<CompactionNote>,
    /// A compaction the tree's setting asks for here: offered (`ask`) or made before the send
    /// (`automatic`).
    pub compaction_due: Option<CompactionDue>,
}

/// A compaction the tree's setting asks for before this plan's send.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct CompactionDue {
    /// Whether the send makes it (`automatic`) or only offers it (`ask`).
    pub automatic: bool,
    /// The last message it would stand for.
    pub up_to: i64,
    /// How many of the history's messages it would replace that are sent now or cut.
    pub messages: u32,
    /// Their tokens.
    pub tokens: u32,
    /// How many of those the plan cuts.
    pub cut: u32,
    /// The turns it keeps verbatim.
    pub keep_turns: u32,
    /// Why it is due, in words.
    pub reason: String,
}

/// The compaction a plan meets: which messages a summary stands for, and whether it is sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct CompactionNote {
    /// Its number (`pinloom uncompact` takes it).
    pub id: i64,
    /// The first message it stands for (absent while it is stale: it stands for none).
    pub first: Option<i64>,
    /// The last message it stands for.
    pub up_to: i64,
    /// How many messages it stands for.
    pub messages: u32,
    /// The summary's tokens, framing included.
    pub tokens: u32,
    /// Who wrote the summary: a profile's name, "you", "an agent".
    pub written_by: String,
    /// Whether the request carries it (it may not fit).
    pub included: bool,
    /// Why not, when it does not (`overBudget`, `staleCompaction`).
    pub reason: Option<String>,
    /// Why it no longer holds, when it does not: the messages are sent as they are meanwhile.
    pub stale: Option<String>,
    /// The thread: a pin's id, absent for the root thread (with `up_to`, where the person's
    /// own summary is written to edit it).
    pub pin_id: Option<i64>,
    /// The summary, as written.
    pub text: String,
}

impl PlanView {
    /// The request body, or `""` when it was left out (or the plan is refused).
    pub fn request_body(&self) -> &str {
        self.body.as_deref().unwrap_or_default()
    }

    /// The same plan without its request body: what the window's previews carry.
    pub fn without_body(self) -> PlanView {
        PlanView { body: None, ..self }
    }
}

/// Where a planned request goes and what it carries, asked for apart from its plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct RequestView {
    /// Where the request goes; empty when the plan is refused.
    pub url: String,
    /// The request body exactly as it would be sent; empty when the plan is refused.
    pub body: String,
}

/// An ancestor thread of a plan, and what stands for it: what the pin knows of where it came
/// from.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct AncestorView {
    /// The thread: a pin's id, absent for the root thread.
    pub pin_id: Option<i64>,
    /// Its title.
    pub title: String,
    /// How far up the chain it is: 1 for the current thread's parent.
    pub distance: u32,
    /// The message it is known up to (where the next thread down hangs off).
    pub up_to: i64,
    /// Its depth budget.
    pub budget: u32,
    /// Its slice's tokens, framing included.
    pub tokens: u32,
    /// Whether the request carries it.
    pub included: bool,
    /// Why not, when it does not (`overBudget`, `outsideShare`, `overDepthBudget`).
    pub reason: Option<String>,
    /// What stands for it.
    pub state: AncestorState,
    /// Who wrote the summary in use (absent for an excerpt or a root goal).
    pub written_by: Option<SummaryAuthor>,
    /// The model that wrote or condensed it.
    pub summarizer: Option<String>,
    /// A summary of the whole thread (ThreadMind's summary_update), not only up to `up_to`.
    pub whole_thread: bool,
    /// The text the request carries for it (without its framing).
    pub text: String,
    /// For a fitted or cut summary: the summary as written, and its tokens.
    pub written_text: Option<String>,
    /// Its tokens as written.
    pub written_tokens: Option<u32>,
    /// For an excerpt: why no summary stands here ("not written yet", "being written", "the
    /// summariser failed (…)").
    pub unavailable: Option<String>,
    /// For an excerpt standing in for a summary that no longer holds: why it does not ("written
    /// before message #12 was excluded").
    pub stale: Option<String>,
    /// Whether a summary for it is being written now.
    pub pending: bool,
}

/// What stands for an ancestor thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum AncestorState {
    /// A summary, as written.
    Summary,
    /// A summary written on purpose, condensed by the summariser to fit the budget.
    Fitted,
    /// A summary cut at a sentence to fit the budget, marked so.
    Cut,
    /// No summary: the thread's last messages before the branching point, verbatim.
    Excerpt,
    /// Task frames: the root thread's first message.
    RootGoal,
}

/// Who wrote a summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum SummaryAuthor {
    /// The summariser, a model.
    Model,
    /// The person.
    Person,
    /// An agent, through ThreadMind's summary_update.
    Agent,
    /// A file it was imported from.
    File,
}

impl From<store::SummaryAuthor> for SummaryAuthor {
    fn from(author: store::SummaryAuthor) -> SummaryAuthor {
        match author {
            store::SummaryAuthor::Model => SummaryAuthor::Model,
            store::SummaryAuthor::Person => SummaryAuthor::Person,
            store::SummaryAuthor::Agent => SummaryAuthor::Agent,
            store::SummaryAuthor::File => SummaryAuthor::File,
        }
    }
}

/// What truncateMiddle's step left unused: so that the request's start stays the same from one
/// send to the next (the provider's prompt cache), the kept history starts at a step boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct StepCutView {
    /// Messages the step cut that would have fitted.
    pub messages: u32,
    /// Their tokens.
    pub tokens: u32,
    /// The step, in tokens (a share of the history's room: 25 % unless changed).
    pub step_tokens: u32,
}

/// Two branches side by side from where they part: their messages aligned row by row, a word
/// diff within each pair, each side's model, tokens, time and cost, and what their requests did
/// not share.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// The last message both paths share; absent when they share none (two first messages).
    pub common_ancestor: Option<NodeView>,
    /// How many messages the two paths share, the common ancestor included.
    pub shared: u32,
    /// The two branches below the common ancestor, aligned: a row pairs messages of the same
    /// author at the same step; a message the other side has no counterpart for stands alone.
    pub rows: Vec<ComparedRow>,
    /// The left branch: where it ends and what its replies cost.
    pub left: ComparedSide,
    /// The right branch.
    pub right: ComparedSide,
    /// What one side's request sent and the other's did not.
    pub context: ContextDiff,
    /// The settings in which the two sides' last replies differ (`temperature`, `maxTokens`,
    /// …; the names of [`ReplySettings`]' fields), when both kept theirs.
    pub settings_differ: Vec<String>,
}

/// One row of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ComparedRow {
    /// The left branch's message at this step, if it has one.
    pub left: Option<NodeView>,
    /// The right branch's.
    pub right: Option<NodeView>,
    /// For a pair, the word-level difference of the two texts (empty for a lone message).
    pub diff: Vec<DiffSpan>,
    /// Whether the row shows a difference: a lone message, or a pair whose texts differ.
    pub differs: bool,
}

/// Which request a side's context figures describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum ContextSource {
    /// The request that wrote the side's last message (it is a reply with a receipt): what was
    /// really sent, under the profile it was sent to.
    Sent,
    /// The request a send from the side's last message would make under the chosen profile
    /// (the side ends with the person's message, or with a reply written before receipts).
    Planned,
}

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ComparedSide {
    /// The branch's last message.
    pub end: i64,
    /// The model profile that wrote the branch's last reply, if a model wrote one.
    pub model: Option<String>,
    /// Which request the context figures describe.
    pub context_source: ContextSource,
    /// That request's context, in tokens by Pinloom's count.
    pub context_tokens: u32,
    /// The room that request had (the window less the reserve).
    pub context_available: u32,
    /// The profile that request was planned for.
    pub context_profile: String,
    /// Reply tokens the provider counted for the branch's last reply.
    pub reply_tokens: Option<u64>,
    /// From sending to the first text of the last reply, in milliseconds.
    pub first_text_ms: Option<u64>,
    /// From sending to the end of the last reply, in milliseconds.
    pub took_ms: Option<u64>,
    /// What the branch's replies below the common ancestor cost, in US dollars, over the replies
    /// whose profiles have prices; absent when none has.
    pub cost: Option<f64>,
    /// How many replies below the common ancestor the cost covers.
    pub priced_replies: u32,
    /// How many replies the branch has below the common ancestor.
    pub replies: u32,
    /// The settings the branch's last reply was made with, when it kept them.
    pub settings: Option<ReplySettings>,
}

/// The settings a reply was made with: kept on the message, exported in Open Loom as its
/// generation's parameters (`maxTokens` is Open Loom's name for the reply limit), and shown side
/// by side when two branches are compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ReplySettings {
    /// The model profile.
    pub profile: String,
    /// The provider's model id.
    pub model_id: String,
    /// The provider.
    pub provider: String,
    /// The temperature asked for; absent when left to the provider.
    pub temperature: Option<f32>,
    /// The top-p asked for; absent when left to the provider.
    pub top_p: Option<f32>,
    /// The reply limit asked for, in tokens.
    pub max_tokens: u32,
    /// The model's context window the request was planned for.
    pub context_window: u32,
    /// How the history was fitted: `truncateMiddle`, `rollingWindow` or `stopAtLimit`.
    pub truncation: String,
    /// The profile that writes the ancestor summaries.
    pub summarizer: String,
    /// The answers a fused answer was written from, in their order; empty for any other reply.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fused_from: Vec<i64>,
}

impl ReplySettings {
    /// The names of the settings in which `self` and `other` differ, as the comparison marks
    /// them (`temperature`, `topP`, `maxTokens`, …).
    pub fn differences(&self, other: &ReplySettings) -> Vec<String> {
        let mut names = Vec::new();
        let mut differ = |name: &str, differs: bool| {
            if differs {
                names.push(name.to_owned());
            }
        };
        differ("profile", self.profile != other.profile);
        differ("modelId", self.model_id != other.model_id);
        differ("provider", self.provider != other.provider);
        differ("temperature", self.temperature != other.temperature);
        differ("topP", self.top_p != other.top_p);
        differ("maxTokens", self.max_tokens != other.max_tokens);
        differ("contextWindow", self.context_window != other.context_window);
        differ("truncation", self.truncation != other.truncation);
        differ("summarizer", self.summarizer != other.summarizer);
        names
    }
}

/// What two requests did not share, slice by slice (a message of a path counts as one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ContextDiff {
    /// Sent by the left side's request only.
    pub left_only: Vec<DiffEntry>,
    /// Sent by the right side's request only.
    pub right_only: Vec<DiffEntry>,
    /// Sent by both with a different text or size (the right side's figures).
    pub changed: Vec<DiffEntry>,
    /// How many slices and messages both sent unchanged.
    pub shared: u32,
}

/// How far each side of a comparison reaches from the message picked for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum CompareReach {
    /// Each side ends at the message picked for it.
    Picked,
    /// Each side goes on from its message down its newest continuation in its thread: two
    /// siblings of a fork compared as the whole branches they start.
    Branches,
}

/// What a send answers: a new message in a thread or a pin, an existing message again, an edit,
/// or a buffer document continued. One model answers it through `reply_start`, several at once
/// through `reply_fan_out`.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase", tag = "kind")]
pub enum SendTarget {
    /// A new message of the person's continuing `parent_id` in the tree's thread (absent: the
    /// tree's first message).
    Thread {
        /// The tree.
        tree_id: i64,
        /// The message it continues.
        parent_id: Option<i64>,
        /// What the person wrote.
        text: String,
        /// Images that go with it, for models that see.
        #[serde(default)]
        images: Vec<ImageInput>,
    },
    /// A new message in a pin's sub-thread, after `parent_id` (absent: its first message).
    Pin {
        /// The pin.
        pin_id: i64,
        /// The message it continues.
        parent_id: Option<i64>,
        /// What the person wrote.
        text: String,
        /// Images that go with it, for models that see.
        #[serde(default)]
        images: Vec<ImageInput>,
    },
    /// Answer a message again (a reply's prompt, when given a reply).
    Regenerate {
        /// The message.
        node_id: i64,
    },
    /// Edit the person's message as a new branch and answer the edit.
    Edit {
        /// The message edited.
        node_id: i64,
        /// Its new text.
        text: String,
    },
    /// Continue a buffer-mode document from a message.
    Continue {
        /// The end of the document on show.
        node_id: i64,
        /// The most tokens the continuation may have (a loom's length); the tree's token
        /// buffer, else the model's reserve, when absent.
        #[serde(default)]
        length: Option<u32>,
    },
    /// Write one answer from two or more answers to the same message, as a new answer beside
    /// them: its request carries the message's own context and the chosen answers.
    Fuse {
        /// The answers chosen, in the order they are numbered in the request.
        node_ids: Vec<i64>,
    },
    /// A question over messages picked from several branches and pins of one tree: a new thread
    /// at the tree's top whose every request carries the picked messages, labelled as the
    /// person's, and nothing else of their branches.
    OverPicked {
        /// The messages picked, in the order picked.
        picks: Vec<PickInput>,
        /// The question.
        text: String,
    },
}

/// A message picked for a question over several branches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct PickInput {
    /// The message.
    pub node_id: i64,
    /// Whether its branch's summary up to it goes too.
    pub with_summary: bool,
}

/// A message a thread's question was asked over, as the thread shows it at its top: a link back
/// to where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct PickedView {
    /// The message.
    pub node_id: i64,
    /// Its thread: a pin's id, absent for the root thread.
    pub pin_id: Option<i64>,
    /// Where it came from, in words ("the pin “Costs”, an answer by qwen3").
    pub came_from: String,
    /// Its opening words.
    pub opening: String,
    /// Whether its branch's summary up to it goes too.
    pub with_summary: bool,
    /// Left out since it was picked: excluded or deleted, in words; absent while it goes.
    pub left_out: Option<String>,
}

/// An image that goes with a message being written: pasted in the window, or chosen in the
/// composer's dialog (`image_read`). It is stored as an attachment of that message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ImageInput {
    /// What it is called: its file's name, or what the window named a pasted one.
    pub name: String,
    /// Its bytes as a `data:` URL (`data:image/png;base64,…`).
    pub data_url: String,
}

/// A continuation's tokens, as the loom may show them.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ReplyTokens {
    /// Its provider reported none (it was not asked, or does not say), or it is the person's.
    None,
    /// They spell another text than the reply's (a token ended inside a character).
    Mismatch,
    /// The tokens, in order.
    Shown {
        /// Each token with its probability and alternatives.
        tokens: Vec<TokenView>,
    },
}

/// One generated token of a continuation, as the loom shows it on hover.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct TokenView {
    /// Its text.
    pub text: String,
    /// How likely the model found it, from 0 to 1.
    pub probability: f64,
    /// The likeliest tokens at its place (it among them, usually), most likely first.
    pub alternatives: Vec<TokenAlternative>,
}

/// A token the model might have written instead.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct TokenAlternative {
    /// Its text.
    pub text: String,
    /// How likely the model found it, from 0 to 1.
    pub probability: f64,
}

/// One model's side of a fan-out: its reply, or why it has none.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct LaneAnswer {
    /// Its place among the models asked, from 0.
    pub lane: u32,
    /// The model profile asked.
    pub profile: String,
    /// The reply with its plan and receipt (incomplete when stopped or broken off).
    pub exchange: Option<Exchange>,
    /// Why no reply was written: `{ code, message }`.
    pub error: Option<crate::error::ApiError>,
}

/// One prompt answered by several models, each reply a sibling branch.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct FanOut {
    /// The message answered (written once, whatever became of the replies).
    pub prompt: NodeView,
    /// Each model's side, in the order they were asked.
    pub answers: Vec<LaneAnswer>,
}

/// One run of a word-level diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct DiffSpan {
    /// `same`, `left` (only in the left message) or `right` (only in the right).
    pub side: String,
    /// The words, with their spacing.
    pub text: String,
}

/// What is in the trash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct TrashView {
    /// Trees deleted, the latest first.
    pub trees: Vec<TreeSummary>,
    /// Messages deleted with the branch under them, in trees not in the trash, the latest first.
    pub branches: Vec<DeletedBranchView>,
}

/// A message deleted with its branch, which can be restored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct DeletedBranchView {
    /// The message's id.
    pub id: i64,
    /// Its tree.
    pub tree_id: i64,
    /// Its tree's title.
    pub tree_title: String,
    /// Who wrote it.
    pub author: Author,
    /// The start of its text.
    pub preview: String,
    /// When it was deleted.
    pub deleted_at_ms: i64,
}

/// What emptying the trash erased.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct EmptiedTrashView {
    /// Trees.
    pub trees: u32,
    /// Messages, each with its branch.
    pub branches: u32,
    /// Threads deleted whole.
    pub threads: u32,
}

/// A thread deleted whole, which can be restored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct DeletedThreadView {
    /// The pin's id.
    pub id: i64,
    /// Its title.
    pub title: String,
    /// When it was deleted.
    pub deleted_at_ms: i64,
}

/// A pin: a sub-thread opened on a passage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct PinView {
    /// Its id.
    pub id: i64,
    /// The thread it was opened from: a pin's id, absent for the root thread.
    pub parent_pin_id: Option<i64>,
    /// The message it was opened on.
    pub anchor_node_id: Option<i64>,
    /// The highlighted passage, verbatim.
    pub anchor_text: Option<String>,
    /// Its title.
    pub title: String,
    /// How many pins deep it is (1 under the root thread).
    pub depth: u32,
    /// Closed, with its result shown in the parent thread.
    pub closed: bool,
    /// The result handed back when closed.
    pub result: Option<String>,
}

impl From<store::Pin> for PinView {
    fn from(pin: store::Pin) -> PinView {
        PinView {
            id: pin.id.0,
            parent_pin_id: pin.parent_pin_id.map(|id| id.0),
            anchor_node_id: pin.anchor_node_id.map(|id| id.0),
            anchor_text: pin.anchor.map(|anchor| anchor.text),
            title: pin.title,
            depth: pin.depth,
            closed: pin.closed_at_ms.is_some(),
            result: pin.result,
        }
    }
}

/// Material attached to a tree, a thread or a message, as stored when attached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentView {
    /// Its id.
    pub id: i64,
    /// `file`, `folder`, `context`, `instruction`, `image` or `pdf`.
    pub role: String,
    /// Its name: the path of a file or folder, a title otherwise.
    pub name: String,
    /// Its size in bytes as stored.
    pub bytes: u64,
    /// The message it is attached to, when it is attached to one.
    pub node_id: Option<i64>,
    /// An image's `data:` URL as a page shows it; a PDF's page count is in `pages`.
    pub image: Option<String>,
    /// A PDF's number of pages.
    pub pages: Option<u32>,
}

/// Where an attachment hangs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase", tag = "on", content = "id")]
pub enum AttachTo {
    /// The whole tree.
    Tree,
    /// One thread: a pin's id, absent for the root thread.
    Thread(Option<i64>),
    /// One message.
    Node(i64),
}

/// What a file attached stands as in every request it reaches: the file as it is (text, a PDF's
/// pages, an image), or its text in one of seed 002's edge roles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum AttachAs {
    /// As it is: text, a PDF's pages or an image, placed with the reference material.
    #[default]
    File,
    /// Its text joins the system context (the Instruction role).
    Instruction,
    /// Its text is reference material placed before the conversation (the Context role).
    Context,
}

/// A summary of a thread's path up to a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct SummaryView {
    /// The thread: a pin's id, absent for the root thread.
    pub pin_id: Option<i64>,
    /// The last message it covers; absent for the whole thread.
    pub up_to: Option<i64>,
    /// The token budget it was written for.
    pub budget: Option<u32>,
    /// The profile that wrote it; empty when a person, an agent or a file did.
    pub summarizer: String,
    /// Who wrote it.
    pub written_by: SummaryAuthor,
    /// Written or asked for on purpose: sends use it before the summariser's own.
    pub chosen: bool,
    /// For a fitted version: it condenses another summary to `budget`.
    pub fitted: bool,
    /// Its text.
    pub text: String,
    /// How many times it was written (by models and by hand).
    pub update_count: u64,
    /// Why it no longer holds ("written before message #12 was excluded"): it is not sent, and
    /// the summariser writes it again (one by a person, an agent or a file is kept, to edit).
    pub stale: Option<String>,
}

/// What a tree cost: its replies (from their receipts) and the requests Pinloom made on its own
/// for it, each with how many have a price (a model without prices costs nothing here).
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct TreeSpending {
    /// Replies with a receipt.
    pub replies: u32,
    /// Those whose model has prices.
    pub replies_priced: u32,
    /// What those cost, in US dollars.
    pub replies_usd: f64,
    /// Requests made on their own (summaries, condensations, compactions, suggested results).
    pub background: u32,
    /// Those whose model has prices.
    pub background_priced: u32,
    /// What those cost, in US dollars.
    pub background_usd: f64,
    /// Both.
    pub total_usd: f64,
}

/// A request Pinloom made on its own (a summary, a condensation), as `pinloom requests` lists
/// it: what it was for, the model, the tokens planned and counted, the cost, the time, how it
/// ended, and its body as sent.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct BackgroundRequestView {
    /// Its number.
    pub id: i64,
    /// The tree it served.
    pub tree_id: i64,
    /// `summary`, `condensation` or `compaction`.
    pub kind: String,
    /// The model profile asked.
    pub model: String,
    /// The thread summarised: a pin's id, absent for the root thread.
    pub pin_id: Option<i64>,
    /// The last message summarised.
    pub up_to: Option<i64>,
    /// The tokens Pinloom counted in what it sent.
    pub planned_tokens: u64,
    /// The prompt tokens the provider counted, when it said.
    pub prompt_tokens: Option<u64>,
    /// The reply's tokens, when the provider said.
    pub reply_tokens: Option<u64>,
    /// What it cost, in dollars, when the profile has prices.
    pub cost_usd: Option<f64>,
    /// When it was sent.
    pub started_at_ms: i64,
    /// How long it took.
    pub duration_ms: i64,
    /// Why it failed, when it did.
    pub failure: Option<String>,
    /// The request body as sent (JSON); absent in a list, which leaves bodies out.
    pub body: Option<String>,
}

impl From<store::Summary> for SummaryView {
    fn from(summary: store::Summary) -> SummaryView {
        SummaryView {
            pin_id: summary.key.pin_id.map(|id| id.0),
            up_to: summary.key.path_end.map(|id| id.0),
            budget: summary.key.budget,
            summarizer: summary.key.summarizer,
            written_by: summary.written_by.into(),
            chosen: summary.chosen,
            fitted: summary.key.fitted_from.is_some(),
            text: summary.text,
            update_count: summary.update_count,
            stale: summary.stale,
        }
    }
}

/// A message as a thread shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ThreadMessage {
    /// The message.
    pub node: NodeView,
    /// Its alternatives (regenerations and edits) including itself, oldest first: what a "2/3"
    /// switcher steps through.
    pub alternatives: Vec<i64>,
    /// The pins made in it, oldest first.
    pub pins: Vec<PinView>,
    /// A reply whose provider counted materially fewer prompt tokens than were sent: it cut
    /// the context (its receipt says what happened and what to change).
    pub provider_cut: bool,
}

/// One thread of a tree: the root thread, or a pin's sub-thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ThreadView {
    /// The tree.
    pub tree: TreeSummary,
    /// The pin whose sub-thread this is; absent for the root thread.
    pub pin: Option<PinView>,
    /// A page of its messages on the branch on show, oldest first: the newest ones, or those
    /// around a message jumped to; the rest come through `thread_page`.
    pub messages: Vec<ThreadMessage>,
    /// Where the page starts: how many of the thread's messages on this branch come before it.
    pub first: u32,
    /// How many messages the thread has on this branch, the page included.
    pub total: u32,
    /// The branch's last message in this thread (what a send continues); absent for an empty
    /// thread.
    pub end: Option<i64>,
    /// For a thread started by a question over several branches: the messages it was asked
    /// over, in the order picked. Empty for every other thread.
    pub picked: Vec<PickedView>,
}

/// Which models can answer now, as a first start shows them.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ModelsReady {
    /// Saved profiles that can answer now: a cloud provider's with its key set, or a local
    /// server's that answers.
    pub ready: Vec<String>,
    /// Saved profiles that cannot answer yet, with why and what to do.
    pub waiting: Vec<WaitingModel>,
    /// Models of local servers found on their usual ports that no profile names, ready to save.
    pub found: Vec<FoundModel>,
}

/// A saved profile that cannot answer yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct WaitingModel {
    /// The profile.
    pub profile: String,
    /// Why not, and what to do, in words.
    pub reason: String,
}

/// A model a local server offers that no profile names yet.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct FoundModel {
    /// The server, in words ("llama.cpp server at http://127.0.0.1:8080/v1").
    pub server: String,
    /// The profile it would be saved as.
    pub profile: ModelProfile,
}

/// Whether a provider has a key, and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct KeyStatus {
    /// The provider's stored name.
    pub provider: String,
    /// Its name for people.
    pub display_name: String,
    /// The environment variable that overrides the keyring.
    pub variable: String,
    /// A key is set in the environment (it wins).
    pub from_environment: bool,
    /// A key is in the OS keyring.
    pub in_keyring: bool,
    /// Why the keyring could not be read, if it could not.
    pub problem: Option<String>,
}

/// What bringing a passage back into a thread would add, shown before it is added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct Promotion {
    /// The message as it would be written: where it came from, who wrote it, the passage.
    pub text: String,
    /// What it adds to every later context of the thread, counted for the chosen model.
    pub tokens: u32,
    /// How it was counted (the model's tokenizer, or an estimate).
    pub counting: String,
}

/// What a connection test got back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionCheck {
    /// The start of the model's answer.
    pub reply: String,
    /// How long the round trip took.
    pub milliseconds: u32,
}

/// The tree map as a picture: every live message placed at a depth (across) and on a lane (down).
/// A straight run of a chain is one lane; a branch or a pin starts a run of its own on a lane
/// below its parent's, joined at the message it continues from. Compact on purpose: a tree of
/// 100,000 messages crosses to the window as one array of ids and one string, not as 100,000
/// objects (what a message says is read when it is pointed at).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct TreeMapView {
    /// Every message's id, run after run: a run's messages are consecutive, in order.
    pub ids: Vec<i64>,
    /// Who wrote each message of `ids`, one letter each: `h` the person, `m` a model, `t` a tool.
    pub authors: String,
    /// The runs, in the order a walk from the roots meets them.
    pub runs: Vec<MapRun>,
    /// The live pins of the tree, for their titles and anchors.
    pub pins: Vec<MapPin>,
    /// How many lanes the runs take.
    pub lanes: u32,
    /// How many depths: the deepest message's depth plus one.
    pub depths: u32,
}

/// A straight run of messages on one lane of the tree map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct MapRun {
    /// Where its messages start in [`TreeMapView::ids`].
    pub first: u32,
    /// How many messages it holds.
    pub len: u32,
    /// Its lane, 0 the top one.
    pub lane: u32,
    /// Its first message's depth: 0 for a root, one more than the message it continues from.
    pub depth: u32,
    /// The message it continues from, as a position in [`TreeMapView::ids`]; absent for a root.
    pub from: Option<u32>,
    /// Its thread: a pin's id, absent for the root thread.
    pub pin_id: Option<i64>,
}

/// A pin as the tree map names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct MapPin {
    /// Its id.
    pub id: i64,
    /// Its title.
    pub title: String,
    /// The highlighted passage it was opened from, absent when it was opened without one.
    pub anchor: Option<String>,
    /// Whether it was closed with a result.
    pub closed: bool,
}

/// One message on the tree map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct OutlineEntry {
    /// Its id.
    pub id: i64,
    /// The message before it.
    pub parent_id: Option<i64>,
    /// Its thread: a pin's id, absent for the root thread.
    pub pin_id: Option<i64>,
    /// Who wrote it.
    pub author: Author,
    /// For a message from a team: the member who wrote it (a reply: who asked for it).
    pub written_by: Option<String>,
    /// The start of its text.
    pub preview: String,
    /// How many messages continue it.
    pub child_count: u32,
    /// Left out of every context.
    pub excluded: bool,
    /// Bookmarked.
    pub bookmarked: bool,
    /// Soft-deleted.
    pub deleted: bool,
}

impl From<store::OutlineRow> for OutlineEntry {
    fn from(row: store::OutlineRow) -> OutlineEntry {
        OutlineEntry {
            id: row.id.0,
            parent_id: row.parent_id.map(|id| id.0),
            pin_id: row.pin_id.map(|id| id.0),
            author: row.author.into(),
            written_by: row.written_by,
            preview: row.preview,
            child_count: u32::try_from(row.child_count).unwrap_or(u32::MAX),
            excluded: row.excluded,
            bookmarked: row.bookmarked,
            deleted: row.pruned,
        }
    }
}

/// A note on a message, out of context unless included.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct NoteView {
    /// Its id.
    pub id: i64,
    /// The note.
    pub text: String,
    /// Whether it goes into context.
    pub included: bool,
}

impl From<store::Annotation> for NoteView {
    fn from(note: store::Annotation) -> NoteView {
        NoteView { id: note.id, text: note.text, included: note.included }
    }
}

/// A message found by the search box.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    /// The message.
    pub node_id: i64,
    /// Its thread: a pin's id, absent for the root thread.
    pub pin_id: Option<i64>,
    /// Who wrote it.
    pub author: Author,
    /// The start of its text.
    pub preview: String,
}

/// The names a model profile's fields may take.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ProfileChoices {
    /// Provider names, in the order forms list them.
    pub providers: Vec<String>,
    /// Token counter names.
    pub tokenizers: Vec<String>,
    /// Truncation strategy names.
    pub truncations: Vec<String>,
}

/// How far an import or an export has come, for the window's progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase", tag = "stage")]
pub enum TransferProgress {
    /// Reading the file to import: `bytes` of `total`.
    Reading {
        /// Bytes read so far.
        bytes: u64,
        /// The file's size.
        total: u64,
    },
    /// The document is read and checked: it holds `total` messages, none written yet.
    Checked {
        /// Messages in the document.
        total: u64,
    },
    /// Writing the imported messages into the database: `messages` of `total`.
    Writing {
        /// Messages written so far.
        messages: u64,
        /// Messages in the document.
        total: u64,
    },
    /// Reading the tree out of the database for an export: `messages` of `total`.
    Collecting {
        /// Messages read out so far.
        messages: u64,
        /// Messages in the tree.
        total: u64,
    },
    /// Writing the export's file: `bytes` long.
    Saving {
        /// The file's size.
        bytes: u64,
    },
}

/// The file formats a tree is exported to from the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum ExportFormat {
    /// Open Loom v2 JSON: lossless, imported again by Pinloom and other loom tools.
    OpenLoom,
    /// Markdown for reading and sharing: every message once, under a heading naming it.
    Markdown,
}

/// An export the window asks for.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ExportRequest {
    /// The tree.
    pub tree_id: i64,
    /// The format.
    pub format: ExportFormat,
    /// The file to write (replaced only once the export is whole).
    pub path: String,
    /// Open Loom: leave out the tree's system context and profiles' and agents' system prompts.
    pub without_system_prompts: bool,
    /// Open Loom: leave out raw provider responses kept from imports.
    pub without_raw_responses: bool,
}

/// A finished export.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ExportDone {
    /// The file written.
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// How many messages it holds.
    pub messages: u64,
}

/// A tree an import wrote, as the window lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ImportedTreeView {
    /// Its id.
    pub id: i64,
    /// Its title.
    pub title: String,
    /// How many messages it has.
    pub messages: u64,
    /// How many threads (pins) it has.
    pub threads: u64,
}

/// What an import did: the trees written and the report as `pinloom import` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ImportReportView {
    /// The trees written.
    pub trees: Vec<ImportedTreeView>,
    /// What was not mapped, kept only for export, or repaired (empty when everything was).
    pub notes: Vec<String>,
    /// The whole report, word for word what the command line prints.
    pub text: String,
}

// A reply's receipt: what its request was planned to hold and what was sent.
/// How a reply's prompt count compares with what was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum Verdict {
    /// The provider counted about what was sent (or less only by what its cache could keep).
    Matched,
    /// The provider counted materially fewer prompt tokens than were sent: it cut the context.
    ProviderCut,
    /// The provider did not report a prompt count (a stream that broke early, some servers).
    NotReported,
}

/// Tokens of one kind of slice in a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct KindTokens {
    /// The slice kind (`system`, `recentHistory`, `searchResult`, …).
    pub kind: String,
    /// How many slices of it were sent.
    pub slices: u32,
    /// Their tokens, as planned.
    pub tokens: u32,
}

/// One thing a request sent: a slice, or a run of consecutive messages of the path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct SentSlice {
    /// The slice kind; `history` for a run of messages (the prompt included).
    pub kind: String,
    /// Where it comes from, as the plan names sources (`node`, `summary`, `anchor`, …).
    pub source: String,
    /// The source's id (for a run, its first message).
    pub source_id: Option<i64>,
    /// For a run: its last message and how many messages it holds.
    pub last_id: Option<i64>,
    /// How many messages (1 for a slice that is not a run).
    pub count: u32,
    /// Its tokens, as planned.
    pub tokens: u32,
    /// A digest of composed text (summaries, files, the anchor, search hits), so that two
    /// requests can tell a changed text from the same one; messages never change.
    pub digest: Option<String>,
    /// For an ancestor thread: what stood for it ("summary written by …", "your summary,
    /// fitted", "summary not available: …; its last messages, verbatim").
    #[serde(default)]
    pub note: Option<String>,
}

/// What a model's prices make of a reply, in US dollars.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    /// The prompt (cache reads and writes at their own prices when the profile has them).
    pub input: f64,
    /// The reply.
    pub output: f64,
    /// Both.
    pub total: f64,
}

/// A model's prices per million tokens, in US dollars, as the person entered them.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase", default)]
pub struct Prices {
    /// Prompt tokens.
    pub input_per_million: f64,
    /// Reply tokens.
    pub output_per_million: f64,
    /// Prompt tokens read from the provider's cache; the input price when unset.
    pub cache_read_per_million: Option<f64>,
    /// Prompt tokens written to the provider's cache; the input price when unset.
    pub cache_write_per_million: Option<f64>,
}

/// A reply's receipt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    /// The model profile the request was planned for.
    pub profile: String,
    /// The provider's model id.
    pub model: String,
    /// The provider's stored name (`openai`, `ollama`, …).
    pub provider: String,
    /// How the plan counted tokens (`o200k`, `cl100k`, `estimate at 3.800 chars/token`, …).
    pub tokenizer: String,
    /// Whether those counts are exact for the model (OpenAI's tokenizers), not estimates.
    pub exact_counts: bool,
    /// The budget: window minus the reserve.
    pub available: u32,
    /// Tokens the plan sent, by Pinloom's count.
    pub planned: u32,
    /// The planned tokens by kind of slice.
    pub by_kind: Vec<KindTokens>,
    /// What was sent, in order.
    pub sent: Vec<SentSlice>,
    /// Prompt tokens the provider counted, cached ones included.
    pub counted: Option<u64>,
    /// Of those, read from the provider's prompt cache.
    pub cache_read: Option<u64>,
    /// Of those, written to the provider's prompt cache.
    pub cache_write: Option<u64>,
    /// Reply tokens the provider counted.
    pub output: Option<u64>,
    /// The fewest prompt tokens the provider should have counted: what was sent, less what a
    /// local server's cache could hold from the requests this one repeats.
    pub expected_at_least: u64,
    /// What the server holds after this reply (its prompt and the reply), for the next check.
    pub server_context: u64,
    /// The verdict.
    pub verdict: Verdict,
    /// What happened and what to change, when the provider cut the context.
    pub message: Option<String>,
    /// What the profile's prices make of it.
    pub cost: Option<Cost>,
    /// From sending to the first text, in milliseconds.
    pub first_text_ms: Option<u64>,
    /// From sending to the end of the reply, in milliseconds.
    pub took_ms: u64,
    /// It came with an imported file: its numbers are the file's, and it carries no words (what
    /// is said of it is composed from its numbers).
    #[serde(default)]
    pub imported: bool,
}

/// One thing that differs between two requests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct DiffEntry {
    /// The slice kind (`history` for a message).
    pub kind: String,
    /// Where it comes from, as the plan names sources.
    pub source: String,
    /// The source's id.
    pub source_id: Option<i64>,
    /// Its tokens in the request that has it (for a changed slice, the later one); messages of
    /// a run are counted as a run only, so a single message shows none.
    pub tokens: Option<u32>,
    /// The start of its text, for messages.
    pub preview: String,
}

/// How a reply's request differs from the request before it on its path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct RequestDiff {
    /// The reply whose request is compared.
    pub later: i64,
    /// The reply before it on its path that has a receipt; absent when there is none.
    pub earlier: Option<i64>,
    /// Sent now and not before.
    pub came: Vec<DiffEntry>,
    /// Sent before and not now.
    pub went: Vec<DiffEntry>,
    /// Sent both times, with a different text or size.
    pub changed: Vec<DiffEntry>,
    /// How many slices and messages were sent both times unchanged.
    pub unchanged: u32,
}

/// A compaction just made: the thread's older part, which a summary now stands for.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct CompactionView {
    /// Its number (`pinloom uncompact` takes it).
    pub id: i64,
    /// The first message it stands for.
    pub first: i64,
    /// The last.
    pub up_to: i64,
    /// How many messages it stands for.
    pub messages: u32,
    /// The turns after it, kept verbatim.
    pub keep_turns: u32,
    /// The summary's tokens, counted for the model it was made for.
    pub tokens: u32,
    /// The profile that wrote the summary.
    pub written_by: String,
    /// The summary.
    pub text: String,
}

// A tree's conversation settings.
/// How a tree's contexts are assembled and its summaries written. Every field has a default, so a
/// tree stores only what the person changed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase", default)]
pub struct TreeSettings {
    /// The model profile that writes ancestor-thread summaries; the profile being sent to when
    /// unset.
    pub summarizer: Option<String>,
    /// When the summariser is asked for them: as a pin opens (the default), only when a question
    /// is asked in a pin, or never.
    pub summary_writing: SummaryWriting,
    /// truncateMiddle's step for this tree, in percent of the history's room (0 to 100), over
    /// the model's "Cut in steps of": a larger step keeps the start of requests the same for the
    /// provider's prompt cache, 0 fills the budget. The model's when unset.
    pub truncation_step_percent: Option<u32>,
    /// The summariser's instruction; `{budget}` becomes the token budget. The shipped
    /// instruction when unset.
    pub summary_instruction: Option<String>,
    /// Summary budgets by distance from the current thread (nearest first); Deeppin's
    /// [800, 500, 300, 150] when unset.
    pub depth_budgets: Option<Vec<u32>>,
    /// Tokens kept for the reply instead of the profile's reserve (seed 002's token buffer).
    pub token_buffer: Option<u32>,
    /// Fill what truncation leaves with the end of the newest message it dropped, marked as cut.
    pub cut_boundary_message: bool,
    /// Pins see the results of closed pins opened from the same thread (their siblings).
    pub include_closed_sibling_results: bool,
    /// Files larger than this many bytes are refused when attached (100 KB when unset).
    pub max_file_bytes: Option<u64>,
    /// Messages the person found by search and added to the search slice: offered to every plan
    /// of the tree as retrieval candidates beside the automatic ones (never to a pin that may not
    /// see them).
    pub search_hits: Vec<i64>,
    /// How a pin's passage is framed for the model; `{anchor}` becomes the passage. Deeppin's
    /// wording when unset.
    pub anchor_framing: Option<String>,
    /// Seed 001's task frames; the standard assembly (ancestor summaries, the anchor, the
    /// thread under the priority table) when unset.
    pub task_frames: Option<TaskFramesChoice>,
    /// How search hits among the thread's own messages are scored and filtered; seed 001's
    /// weights, a 10 % share and no filter when unset.
    pub retrieval: Option<RetrievalChoice>,
    /// When the thread a message is sent in has its older part compacted into a summary: never,
    /// offered when its history is cut (the default), or automatically before such a send.
    pub compaction: CompactionWhen,
    /// For automatic compaction: the share of the budget, in percent, the thread's own history
    /// may fill before it is compacted ([`DEFAULT_COMPACT_AT_PERCENT`] when unset); a history
    /// that is cut is compacted whatever its share.
    pub compact_at_percent: Option<u32>,
    /// The last turns a compaction keeps verbatim, the message being sent among them
    /// ([`DEFAULT_COMPACTION_KEEP_TURNS`] when unset).
    pub compaction_keep_turns: Option<u32>,
    /// The most tokens the tree's requests made on their own (summaries, condensations,
    /// automatic compactions) may take in 24 hours, read and written; checked before each, so
    /// one may go a little past it. No limit when unset. What the person asks for by hand
    /// (Regenerate, Compact, a suggested result) is never held back by it, though it counts.
    pub daily_token_limit: Option<u64>,
}

/// The share of the budget a thread's history may fill before automatic compaction.
pub const DEFAULT_COMPACT_AT_PERCENT: u32 = 80;
/// The turns a compaction keeps verbatim unless the tree or the person says otherwise.
pub const DEFAULT_COMPACTION_KEEP_TURNS: u32 = 4;

/// When a thread's older part is compacted into a summary as its history outgrows the budget.
/// Each compaction is a request to the summariser: the person sees it coming (the plan's
/// `compactionDue`) and finds it in the tree's requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum CompactionWhen {
    /// Never on its own: truncation cuts the history; *Compact* stays at hand.
    Off,
    /// When a send would cut the thread's history, the plan offers compaction instead; nothing
    /// is written until the person compacts.
    #[default]
    Ask,
    /// Before a send whose thread's history is cut, or fills more than the tree's share of the
    /// budget, the older part is compacted (the last turns kept); if the summariser fails, the
    /// send goes with truncation and the failure is in the tree's requests.
    Automatic,
}

/// When a tree's summariser is asked for the summaries a pin's ancestors need. Each summary is a
/// request to a provider, possibly a paid one, and a pin opened and never asked in needs none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum SummaryWriting {
    /// In the background as a pin opens or is shown, so its first question waits for none.
    #[default]
    WhenPinned,
    /// Only when a question is asked in a pin: that send waits for them (30 s at most).
    WhenAsked,
    /// Never: an ancestor thread without a summary sends its last messages, and says why.
    /// Summaries written before, or by a person, an agent or a file, are still sent.
    Never,
}

/// How a tree's search hits are chosen (seed 001's retrieval slice).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct RetrievalChoice {
    /// Weight of recency, in percent of the score (seed 001: 30).
    pub recency_percent: u32,
    /// Weight of relevance (50).
    pub relevance_percent: u32,
    /// Weight of salience: bookmarked and pinned messages higher (20).
    pub salience_percent: u32,
    /// The share of the budget search hits may take, in percent (10).
    pub share_percent: u32,
    /// Only messages by these authors; every author when empty.
    pub authors: Vec<Author>,
    /// Only messages written at or after this time, in milliseconds since the Unix epoch.
    pub since_ms: Option<i64>,
    /// Messages the search never recalls, by number (seed 001's "excluding ids"); they stay in
    /// the history where their thread carries them.
    #[serde(default)]
    pub exclude: Vec<i64>,
}

/// Seed 001's weights and share, and no filter: what a tree without a retrieval choice gets.
impl Default for RetrievalChoice {
    fn default() -> RetrievalChoice {
        RetrievalChoice {
            recency_percent: 30,
            relevance_percent: 50,
            salience_percent: 20,
            share_percent: 10,
            authors: Vec::new(),
            since_ms: None,
            exclude: Vec::new(),
        }
    }
}

/// Seed 001's task frames for a tree: the root thread stands as its goal (its first message),
/// and each part of a request takes at most a share of the budget; the current thread has the
/// rest. Each share is in percent of the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct TaskFramesChoice {
    /// The root goal (seed 001: 5).
    pub root_goal_percent: u32,
    /// The summaries of the threads above (15).
    pub path_summaries_percent: u32,
    /// The results of closed sibling pins, when the tree includes them (10).
    pub sibling_results_percent: u32,
}

impl Default for TaskFramesChoice {
    fn default() -> TaskFramesChoice {
        TaskFramesChoice {
            root_goal_percent: 5,
            path_summaries_percent: 15,
            sibling_results_percent: 10,
        }
    }
}

/// What a tree says to every model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct TreeContext {
    /// Its system context; empty when it has none.
    pub system_context: String,
    /// Whether buffer mode's continuations are sent the system context (off by default: a
    /// document continues best from its own text).
    pub buffer_includes_system: bool,
}

// What can be done to a message.
/// What can be done to a message's flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum NodeAction {
    /// Keep it out of every context.
    Exclude,
    /// Let it back into context.
    Include,
    /// Bookmark it (retrieval ranks it higher).
    Bookmark,
    /// Remove the bookmark.
    Unbookmark,
    /// Keep it in every context, whatever the truncation (the inspector's "keep").
    Keep,
    /// Let truncation treat it as any other message again.
    Release,
    /// Soft-delete it and everything under it; restorable.
    Delete,
    /// Bring a soft-deleted message and its branch back.
    Restore,
}

// One model of a fan-out.
/// One model of a fan-out: the profile asked, where its reply's pieces go, and what stops it.
pub struct FanOutLane {
    /// The model profile's name.
    pub profile: String,
    /// The reply's pieces as they arrive.
    pub events: UnboundedSender<ReplyEvent>,
    /// Stops this model's reply only; what arrived is kept, marked incomplete.
    pub cancel: CancellationToken,
}

// ThreadMind's tools' outputs.
/// What a resource read returns: its MIME type and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceText {
    /// `text/markdown` or `text/plain`.
    pub mime_type: &'static str,
    /// The text.
    pub text: String,
}

/// What the MCP prompts show of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptState {
    /// The active project's id.
    pub project: Option<String>,
    /// The active thread's id (`main` when a project is active).
    pub thread: Option<String>,
    /// The active thread's summary, trimmed; empty when it has none.
    pub summary: String,
    /// The assembled context of the active thread.
    pub context: Option<ThreadMindContext>,
}

/// Which of ThreadMind's two reports on a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadMindReport {
    /// `context_get`'s text.
    Context,
    /// `stats_show`'s text.
    Stats,
}

// How a plan is written out.
/// How `context_assemble` shows a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanFormat {
    /// A readable report: the budget, every slice included, every slice cut with its reason.
    Report,
    /// The plan as JSON.
    Plan,
    /// The request body exactly as the provider would receive it.
    Request,
}

// Imports and exports.
/// What an export leaves out, as the spec asks exporters to offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportOptions {
    /// Tree system contexts, profiles' agent prompts and agents' system prompts.
    pub system_prompts: bool,
    /// The raw provider responses (Tier 3 provenance) imports kept.
    pub raw_responses: bool,
}

/// A tree an import wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedTreeSummary {
    /// Its number.
    pub id: i64,
    /// Its ThreadMind project id.
    pub slug: String,
    /// Its title.
    pub title: String,
    /// How many messages it has.
    pub messages: usize,
    /// How many threads (pins) it has.
    pub threads: usize,
}

/// What an import wrote, and what it could not map, kept only for export, or repaired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportReport {
    /// The trees written.
    pub trees: Vec<ImportedTreeSummary>,
    /// Every thing not mapped, kept for export only, or repaired, once each.
    pub notes: Vec<String>,
}

/// What a sync did, for the window's Settings → Sync and `pinloom sync`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct SyncReport {
    /// The git remote synced with.
    pub remote: String,
    /// Records (messages, pins, trees, …) this machine wrote to the folder.
    pub sent_records: usize,
    /// Field changes (titles, flags, deletions, …) this machine wrote.
    pub sent_changes: usize,
    /// Records that arrived from other machines.
    pub received_records: usize,
    /// Field changes that arrived.
    pub received_changes: usize,
    /// The trees something arrived in, to refresh.
    pub trees_changed: Vec<i64>,
    /// Whether a commit was made (none when nothing was new here).
    pub committed: bool,
    /// Whether the remote took new commits.
    pub pushed: bool,
    /// What a person should know: refusals, waits, conflicts and how they were settled.
    pub notes: Vec<String>,
    /// When it finished.
    pub at_ms: i64,
    /// The whole report in words.
    pub text: String,
}

/// A team this database has joined, as Settings → Sync lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct TeamView {
    /// Its name (letters, digits, '-', '_').
    pub name: String,
    /// Its git remote.
    pub remote: String,
    /// The trees shared with it here, by id.
    pub shared_trees: Vec<i64>,
    /// What its last sync did.
    pub last: Option<SyncReport>,
    /// This machine's standing in it.
    pub standing: TeamStanding,
    /// Its members, as its roster names them (none for a team made before rosters).
    pub members: Vec<TeamMember>,
    /// Whether this machine owns it: invites, removes members.
    pub owned: bool,
}

/// A machine's standing in a team.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum TeamStanding {
    /// A team made before rosters: every member's device writes to it, unencrypted.
    Open,
    /// A member under the roster its owner signed.
    Member,
    /// Asked to join; waiting for the owner's Pinloom to admit this machine.
    Asked,
    /// Removed by the owner: nothing is sent or read any more.
    Removed,
}

/// A member of a team, as its roster names them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct TeamMember {
    /// The name they go by.
    pub name: String,
    /// Their device's id.
    pub device: String,
    /// Whether they own the team.
    pub owner: bool,
    /// Whether this is this machine.
    pub you: bool,
}

/// The window's Settings → Sync: where this database syncs, whether on its own, what the last
/// sync did and what waits to go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct SyncStatus {
    /// The git remote; none until the first sync.
    pub remote: Option<String>,
    /// Whether it syncs after each reply and every few minutes.
    pub automatic: bool,
    /// Whether model profiles and prices go too (never keys).
    pub profiles: bool,
    /// What the last sync did.
    pub last: Option<SyncReport>,
    /// Records (messages, pins, …) written here and not in the remote yet.
    pub waiting_records: u64,
    /// Field changes (titles, flags, deletions, …) made here and not in the remote yet.
    pub waiting_changes: u64,
    /// How many teams this database has joined: Sync now syncs them too, with or without a
    /// remote of its own.
    pub teams: u32,
    /// Whether the own remote is encrypted (seen so by a sync here).
    pub encrypted: bool,
}
