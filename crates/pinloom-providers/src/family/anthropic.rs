//! Anthropic's Messages: where a request goes and what it carries beside the engine's body,
//! where the key goes, and how a reply's events read.

use pinloom_engine::family::wire_body;
use pinloom_engine::profile::ModelProfile;
use reqwest::header::HeaderName;
use serde_json::{Value, json};

use super::{FamilyWire, SamplingFields, Shaped, chat_only};
use crate::decoder::{Decoded, Decoder};
use crate::endpoint::Endpoint;
use crate::error::ProviderError;
use crate::request::{Sampling, Task};

/// Anthropic.
pub(super) struct Anthropic;

impl FamilyWire for Anthropic {
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
        body["max_tokens"] = json!(max_output);
        let mut shaped = Shaped::streamed(format!("{base}/messages"), body, false);
        shaped.headers.push(("anthropic-version", "2023-06-01".to_owned()));
        Ok(shaped)
    }

    fn sampling_fields(&self) -> SamplingFields {
        SamplingFields { temperature: &["temperature"], top_p: &["top_p"], output_cap: None }
    }

    fn key_header(&self, key: &str) -> (HeaderName, String) {
        (HeaderName::from_static("x-api-key"), key.to_owned())
    }

    fn decode(
        &self,
        decoder: &mut Decoder,
        event: &str,
        data: &str,
    ) -> Result<Decoded, ProviderError> {
        let value = decoder.json(data)?;
        decode_frame(decoder, event, &value)
    }
}

fn decode_frame(
    decoder: &mut Decoder,
    event: &str,
    value: &Value,
) -> Result<Decoded, ProviderError> {
    let kind = value.get("type").and_then(Value::as_str).unwrap_or(event);
    let mut decoded = Decoded::default();
    match kind {
        "message_start" => {
            let usage = value.pointer("/message/usage");
            let read = |field: &str| usage.and_then(|u| u.get(field)).and_then(Value::as_u64);
            decoder.usage.cached_input_tokens = read("cache_read_input_tokens");
            decoder.usage.cache_write_input_tokens = read("cache_creation_input_tokens");
            // Anthropic's input_tokens leaves out what the cache read or wrote.
            decoder.usage.input_tokens = read("input_tokens").map(|uncached| {
                uncached
                    + decoder.usage.cached_input_tokens.unwrap_or(0)
                    + decoder.usage.cache_write_input_tokens.unwrap_or(0)
            });
            decoder.usage.output_tokens = read("output_tokens");
        }
        "content_block_delta"
            if value.pointer("/delta/type").and_then(Value::as_str) == Some("text_delta") =>
        {
            decoded.text =
                value.pointer("/delta/text").and_then(Value::as_str).unwrap_or_default().to_owned();
        }
        "message_delta" => {
            if let Some(reason) = value.pointer("/delta/stop_reason").and_then(Value::as_str) {
                decoder.finish_reason = Some(reason.to_owned());
            }
            // Cumulative, so it replaces the count from `message_start`.
            if let Some(output) = value.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                decoder.usage.output_tokens = Some(output);
            }
            if let Some(input) = value.pointer("/usage/input_tokens").and_then(Value::as_u64) {
                let usage = value.get("usage");
                let read = |field: &str| usage.and_then(|u| u.get(field)).and_then(Value::as_u64);
                if let Some(read_tokens) = read("cache_read_input_tokens") {
                    decoder.usage.cached_input_tokens = Some(read_tokens);
                }
                if let Some(written) = read("cache_creation_input_tokens") {
                    decoder.usage.cache_write_input_tokens = Some(written);
                }
                decoder.usage.input_tokens = Some(
                    input
                        + decoder.usage.cached_input_tokens.unwrap_or(0)
                        + decoder.usage.cache_write_input_tokens.unwrap_or(0),
                );
            }
        }
        "message_stop" => {
            decoder.finished = true;
            decoded.finished = true;
        }
        "error" => {
            let error = value.get("error").cloned().unwrap_or(Value::Null);
            return Err(decoder.in_stream(&error));
        }
        // `ping`, block starts and stops, thinking and tool-input deltas, and event types
        // added later: ignored, as Anthropic asks of clients.
        _ => {}
    }
    Ok(decoded)
}
