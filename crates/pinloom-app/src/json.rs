//! The shapes that cross to front ends. Output-only shapes derive only `Serialize`, so the
//! generated TypeScript has one type for each rather than a read and a write variant.
//! They are serialised with camelCase names and described to
//! TypeScript through specta; ids are SQLite row ids, far below 2^53, so they travel as numbers.

use pinloom_engine::tokens::CharHeuristic;
use pinloom_store as store;
use serde::{Deserialize, Serialize};

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
    /// Its text.
    pub text: String,
    /// When it was written, milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    /// Its size in tokens by ThreadMind's estimate (3.5 characters a token), until exact
    /// per-model counts exist.
    pub token_estimate: u32,
}

/// An open tree: the tree and the thread on show, root first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct TreeView {
    /// The tree.
    pub tree: TreeSummary,
    /// The messages from the root to the newest message, root first.
    pub messages: Vec<Message>,
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
            title: tree.title,
            mode: tree.mode.into(),
            created_at_ms: tree.created_at_ms,
            updated_at_ms: tree.updated_at_ms,
            message_count: u32::try_from(tree.node_count).unwrap_or(u32::MAX),
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
            token_estimate: u32::try_from(estimate).unwrap_or(u32::MAX),
            text: node.text,
            created_at_ms: node.created_at_ms,
        }
    }
}

/// A model profile: which model, where, and the budgets the context engine plans with. Domain
/// data, shared by every front end; read and written whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
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
    /// Its context window, in tokens.
    pub context_window: u32,
    /// Tokens kept free for the reply; less than the window.
    pub reserve: u32,
    /// Whether it takes a system prompt in the provider's native field (else it is injected into
    /// the first user message).
    pub native_system: bool,
    /// Whether it can continue a document (buffer mode).
    pub completion_endpoint: bool,
    /// How its tokens are counted: `o200k`, `cl100k`, `claude`, `gemini` or `other`.
    pub tokenizer: String,
    /// The agent-level system prompt.
    pub agent_system_prompt: String,
}

impl ModelProfile {
    /// The stored record, with the sampling and context settings this shape does not carry.
    pub(crate) fn into_record(
        self,
        sampling_json: String,
        settings_json: String,
    ) -> store::ModelProfile {
        store::ModelProfile {
            name: self.name,
            provider: self.provider,
            model_id: self.model_id.trim().to_owned(),
            base_url: self.base_url.map(|url| url.trim_end_matches('/').to_owned()),
            context_window: self.context_window,
            reserve: self.reserve,
            native_system: self.native_system,
            completion_endpoint: self.completion_endpoint,
            tokenizer: self.tokenizer,
            agent_system_prompt: self.agent_system_prompt,
            sampling_json,
            settings_json,
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
            context_window: profile.context_window,
            reserve: profile.reserve,
            native_system: profile.native_system,
            completion_endpoint: profile.completion_endpoint,
            tokenizer: profile.tokenizer,
            agent_system_prompt: profile.agent_system_prompt,
        }
    }
}
