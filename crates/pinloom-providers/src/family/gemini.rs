//! Gemini's streamGenerateContent: where a request goes and what it carries beside the engine's
//! body, where the key goes, and how a reply's frames read.

use pinloom_engine::family::wire_body;
use pinloom_engine::profile::ModelProfile;
use reqwest::header::HeaderName;
use serde_json::{Value, json};

use super::{FamilyWire, SamplingFields, Shaped, chat_only};
use crate::decoder::{Decoded, Decoder};
use crate::endpoint::Endpoint;
use crate::error::ProviderError;
use crate::request::{Sampling, Task};

/// Gemini.
pub(super) struct Gemini;

impl FamilyWire for Gemini {
    fn shape(
        &self,
        endpoint: &Endpoint,
        profile: &ModelProfile,
        _sampling: Sampling,
        task: Task<'_>,
        max_output: u32,
    ) -> Result<Shaped, ProviderError> {
        let (request, tools) = chat_only(endpoint, task)?;
        let base = endpoint.base_url.trim_end_matches('/');
        let mut body = wire_body(request, tools, profile);
        body["generationConfig"] = json!({"maxOutputTokens": max_output});
        // Gemini's model list names models `models/<id>`; either form is accepted here.
        let model = profile.model.trim_start_matches("models/");
        let url = format!("{base}/models/{model}:streamGenerateContent?alt=sse");
        Ok(Shaped::streamed(url, body, false))
    }

    fn sampling_fields(&self) -> SamplingFields {
        SamplingFields {
            temperature: &["generationConfig", "temperature"],
            top_p: &["generationConfig", "topP"],
            output_cap: None,
        }
    }

    /// A header, not the `?key=` query, so the key never appears in a URL.
    fn key_header(&self, key: &str) -> (HeaderName, String) {
        (HeaderName::from_static("x-goog-api-key"), key.to_owned())
    }

    fn decode(
        &self,
        decoder: &mut Decoder,
        _event: &str,
        data: &str,
    ) -> Result<Decoded, ProviderError> {
        let value = decoder.json(data)?;
        decode_frame(decoder, &value)
    }
}

fn decode_frame(decoder: &mut Decoder, value: &Value) -> Result<Decoded, ProviderError> {
    if let Some(error) = value.get("error") {
        return Err(decoder.in_stream(error));
    }
    let mut decoded = Decoded::default();
    if let Some(candidate) =
        value.get("candidates").and_then(Value::as_array).and_then(|c| c.first())
    {
        for part in
            candidate.pointer("/content/parts").and_then(Value::as_array).into_iter().flatten()
        {
            // Thought summaries are not the reply.
            if part.get("thought").and_then(Value::as_bool) == Some(true) {
                continue;
            }
            if let Some(text) = part.get("text").and_then(Value::as_str) {
                decoded.text.push_str(text);
            }
        }
        if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
            decoder.finish_reason = Some(reason.to_owned());
            // Complete, but not the end: Gemini has no end marker, and older models put a
            // finish reason on every frame. The stream's end is its EOF.
            decoder.finished = true;
        }
    }
    if let Some(usage) = value.get("usageMetadata") {
        decoder.usage.input_tokens = usage.get("promptTokenCount").and_then(Value::as_u64);
        decoder.usage.output_tokens = usage.get("candidatesTokenCount").and_then(Value::as_u64);
        decoder.usage.cached_input_tokens =
            usage.get("cachedContentTokenCount").and_then(Value::as_u64);
    }
    Ok(decoded)
}
