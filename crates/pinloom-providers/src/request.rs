//! What a request to a model is made of: the sampling settings, what is asked (a chat reply or a
//! continuation), how the reply is framed, and the request itself, ready to send without its key.

use pinloom_engine::render::ChatRequest;
use pinloom_engine::snapshot::ToolDefinition;
use serde_json::Value;

use crate::endpoint::ProviderId;

/// The per-model sampling settings a profile carries; unset ones are left to the provider.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sampling {
    /// Temperature.
    pub temperature: Option<f32>,
    /// Nucleus sampling.
    pub top_p: Option<f32>,
    /// The most tokens the reply may have; the profile's reserve when unset.
    pub max_output_tokens: Option<u32>,
}

/// What is asked of the model.
#[derive(Debug, Clone, Copy)]
pub enum Task<'a> {
    /// A chat reply to a finished request (dialogue mode, summaries).
    Chat {
        /// The request, system placement and role rules already applied by the engine.
        request: &'a ChatRequest,
        /// The tool definitions `request.tools` indexes into.
        tools: &'a [ToolDefinition],
    },
    /// A continuation of a document (buffer mode), on a completion endpoint.
    Complete {
        /// The document to continue.
        prompt: &'a str,
    },
}

/// How the reply's bytes are framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// Server-sent events (OpenAI-compatible, Anthropic, Gemini with `alt=sse`).
    ServerSentEvents,
    /// One JSON object per line (Ollama).
    JsonLines,
}

/// A request ready to send, without its key.
#[derive(Debug, Clone, PartialEq)]
pub struct WireRequest {
    /// The provider it goes to.
    pub provider: ProviderId,
    /// The model asked.
    pub model: String,
    /// The full address.
    pub url: String,
    /// Headers other than the key's.
    pub headers: Vec<(&'static str, String)>,
    /// The JSON body.
    pub body: Value,
    /// How the reply is framed.
    pub framing: Framing,
    /// Whether the reply is a completion (text) rather than a chat message.
    pub completion: bool,
}

/// How many of the likeliest tokens at each place a continuation asks for.
pub const TOP_TOKENS: u32 = 5;
