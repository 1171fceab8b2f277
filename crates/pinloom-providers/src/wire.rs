//! Building requests: pure functions from an endpoint, a model profile and the engine's wire body
//! to the URL, headers and JSON a provider expects, each family's part in `family/`. No key is added here, so a [`WireRequest`] can
//! be shown to the person ("what was sent") and logged without leaking one; the client adds the
//! key's header at the last moment.

use pinloom_engine::profile::ModelProfile;
use serde_json::{Value, json};

pub use crate::endpoint::{Endpoint, ProviderId};
use crate::error::ProviderError;
use crate::family::{SamplingFields, wire_of};
// Named from here too, where they have always been named: what a request is made of.
pub use crate::request::{Framing, Sampling, TOP_TOKENS, Task, WireRequest};

/// Builds the request for `task` to `endpoint` with `profile`'s model and settings: the family's
/// shape of it (`family/`), the content type, and the sampling settings where the family reads
/// them.
///
/// A completion asked of a family with no completion endpoint (Anthropic, Gemini) is an error
/// that says which models can do buffer mode.
pub fn build(
    endpoint: &Endpoint,
    profile: &ModelProfile,
    sampling: Sampling,
    task: Task<'_>,
) -> Result<WireRequest, ProviderError> {
    let wire = wire_of(endpoint.provider.family());
    let max_output = sampling.max_output_tokens.unwrap_or(profile.reserve);
    let shaped = wire.shape(endpoint, profile, sampling, task, max_output)?;
    let mut headers = vec![("content-type", "application/json".to_owned())];
    headers.extend(shaped.headers);
    let mut body = shaped.body;
    apply_sampling(&wire.sampling_fields(), &mut body, sampling, max_output);
    Ok(WireRequest {
        provider: endpoint.provider,
        model: profile.model.clone(),
        url: shaped.url,
        headers,
        body,
        framing: shaped.framing,
        completion: shaped.completion,
    })
}

/// Puts the sampling settings where the family reads them.
fn apply_sampling(fields: &SamplingFields, body: &mut Value, sampling: Sampling, max_output: u32) {
    let mut set = |path: &[&str], value: Value| {
        let mut at = &mut *body;
        for key in &path[..path.len() - 1] {
            if !at.get(*key).is_some_and(Value::is_object) {
                at[*key] = json!({});
            }
            at = &mut at[*key];
        }
        at[path[path.len() - 1]] = value;
    };
    if let Some(value) = sampling.temperature {
        set(fields.temperature, json!(value));
    }
    if let Some(value) = sampling.top_p {
        set(fields.top_p, json!(value));
    }
    if let Some(cap) = fields.output_cap
        && sampling.max_output_tokens.is_some()
    {
        set(cap, json!(max_output));
    }
}
