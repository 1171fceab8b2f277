//! The wire families' transport: a file per family (`openai.rs`, `anthropic.rs`, `gemini.rs`,
//! `ollama.rs`) holding where a request goes and what it carries beside the engine's body, where
//! the key goes, and how the reply's frames read; behind one trait, [`FamilyWire`], and one
//! table, [`wire_of`]. What the family decides for planning and for the body itself is the
//! engine's (`pinloom-engine/src/family/`): adding a family is a file in each, and a row in each
//! table.

mod anthropic;
mod gemini;
mod ollama;
mod openai;

use pinloom_engine::profile::{ModelProfile, ProviderFamily};
use pinloom_engine::render::ChatRequest;
use pinloom_engine::snapshot::ToolDefinition;
use reqwest::header::HeaderName;
use serde_json::Value;

use crate::decoder::{Decoded, Decoder};
use crate::endpoint::Endpoint;
use crate::error::ProviderError;
use crate::request::{Framing, Sampling, Task};

pub(crate) use ollama::decode_line;

/// What a family's request is, before its sampling settings and common headers are added.
pub(crate) struct Shaped {
    /// The full address.
    pub(crate) url: String,
    /// Headers beyond the content type (and the key's, added when it is sent).
    pub(crate) headers: Vec<(&'static str, String)>,
    /// The body.
    pub(crate) body: Value,
    /// How the reply is framed.
    pub(crate) framing: Framing,
    /// Whether the reply is a completion (text) rather than a chat message.
    pub(crate) completion: bool,
}

impl Shaped {
    /// A request to `url` whose reply comes as server-sent events.
    fn streamed(url: String, body: Value, completion: bool) -> Shaped {
        Shaped { url, headers: Vec::new(), body, framing: Framing::ServerSentEvents, completion }
    }
}

/// Where a family's body takes the sampling settings.
pub(crate) struct SamplingFields {
    /// The temperature's path in the body.
    pub(crate) temperature: &'static [&'static str],
    /// Top-p's path.
    pub(crate) top_p: &'static [&'static str],
    /// The reply's longest length, when a cap is asked for and the family takes it here rather
    /// than in its request (`shape`).
    pub(crate) output_cap: Option<&'static [&'static str]>,
}

/// What a wire family decides of transport.
pub(crate) trait FamilyWire: Sync {
    /// The request for `task` to `endpoint` with `profile`'s model, the reply at most
    /// `max_output` tokens; a task the family has no endpoint for is refused in words.
    fn shape(
        &self,
        endpoint: &Endpoint,
        profile: &ModelProfile,
        sampling: Sampling,
        task: Task<'_>,
        max_output: u32,
    ) -> Result<Shaped, ProviderError>;

    /// Where its body takes the sampling settings.
    fn sampling_fields(&self) -> SamplingFields;

    /// The header that carries a key, and the key as that header's text.
    fn key_header(&self, key: &str) -> (HeaderName, String);

    /// One frame of a reply (an SSE event of type `event`, or an NDJSON line), trimmed and not
    /// empty.
    fn decode(
        &self,
        decoder: &mut Decoder,
        event: &str,
        data: &str,
    ) -> Result<Decoded, ProviderError>;
}

/// The chat request of `task`, for a family with no completion endpoint: a continuation asked of
/// it is refused, saying which models can do buffer mode.
fn chat_only<'a>(
    endpoint: &Endpoint,
    task: Task<'a>,
) -> Result<(&'a ChatRequest, &'a [ToolDefinition]), ProviderError> {
    match task {
        Task::Chat { request, tools } => Ok((request, tools)),
        Task::Complete { .. } => {
            Err(ProviderError::NoCompletionEndpoint { provider: endpoint.provider.display_name() })
        }
    }
}

/// A family's transport: the one table of them.
pub(crate) fn wire_of(family: ProviderFamily) -> &'static dyn FamilyWire {
    match family {
        ProviderFamily::OpenAiCompatible => &openai::OpenAi,
        ProviderFamily::Anthropic => &anthropic::Anthropic,
        ProviderFamily::Gemini => &gemini::Gemini,
        ProviderFamily::Ollama => &ollama::Ollama,
    }
}
