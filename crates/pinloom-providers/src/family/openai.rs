//! OpenAI's Chat Completions and completions, and every server shaped like them (OpenRouter,
//! Mistral, LM Studio, vLLM, llama.cpp's server): where a request goes and what it carries beside
//! the engine's body, where the key goes, and how a reply's frames read.

use pinloom_engine::family::wire_body;
use pinloom_engine::profile::ModelProfile;
use reqwest::header::{AUTHORIZATION, HeaderName};
use serde_json::{Value, json};

use super::{FamilyWire, SamplingFields, Shaped};
use crate::decoder::{Decoded, Decoder, completion_choices};
use crate::endpoint::{Endpoint, ProviderId};
use crate::error::ProviderError;
use crate::request::{Sampling, TOP_TOKENS, Task};

/// OpenAI-compatible servers.
pub(super) struct OpenAi;

impl FamilyWire for OpenAi {
    fn shape(
        &self,
        endpoint: &Endpoint,
        profile: &ModelProfile,
        sampling: Sampling,
        task: Task<'_>,
        max_output: u32,
    ) -> Result<Shaped, ProviderError> {
        let base = endpoint.base_url.trim_end_matches('/');
        Ok(match task {
            Task::Chat { request, tools } => {
                let mut body = wire_body(request, tools, profile);
                // OpenAI sends usage only when asked, as a last chunk with no choices. Mistral
                // puts usage in its last chunk unasked and validates request fields strictly, so
                // the field is left out there rather than risk a refusal.
                if endpoint.provider != ProviderId::Mistral {
                    body["stream_options"] = json!({"include_usage": true});
                }
                if let Some(max) = sampling.max_output_tokens {
                    // OpenAI's reasoning models refuse `max_tokens`; other servers only know it.
                    let field = match endpoint.provider {
                        ProviderId::OpenAi => "max_completion_tokens",
                        _ => "max_tokens",
                    };
                    body[field] = json!(max);
                }
                Shaped::streamed(format!("{base}/chat/completions"), body, false)
            }
            Task::Complete { prompt } => {
                let mut body = json!({
                    "model": profile.model,
                    "prompt": prompt,
                    "max_tokens": max_output,
                    "stream": true,
                    "stream_options": {"include_usage": true},
                });
                // Each token's probability and the likeliest others at its place, which the loom
                // shows on hover and branches from. Asked only of servers whose completions
                // endpoint documents it (OpenAI's caps it at 5); others may refuse a field they
                // do not know.
                if matches!(
                    endpoint.provider,
                    ProviderId::OpenAi | ProviderId::Vllm | ProviderId::LlamaCpp
                ) {
                    body["logprobs"] = json!(TOP_TOKENS);
                }
                Shaped::streamed(format!("{base}/completions"), body, true)
            }
        })
    }

    fn sampling_fields(&self) -> SamplingFields {
        SamplingFields { temperature: &["temperature"], top_p: &["top_p"], output_cap: None }
    }

    fn key_header(&self, key: &str) -> (HeaderName, String) {
        (AUTHORIZATION, format!("Bearer {key}"))
    }

    fn decode(
        &self,
        decoder: &mut Decoder,
        _event: &str,
        data: &str,
    ) -> Result<Decoded, ProviderError> {
        if data == "[DONE]" {
            decoder.finished = true;
            return Ok(Decoded { finished: true, ..Decoded::default() });
        }
        let value = decoder.json(data)?;
        decode_frame(decoder, &value)
    }
}

fn decode_frame(decoder: &mut Decoder, value: &Value) -> Result<Decoded, ProviderError> {
    // OpenRouter reports a failure mid-stream as an `error` field with HTTP 200.
    if let Some(error) = value.get("error").filter(|error| !error.is_null()) {
        return Err(decoder.in_stream(error));
    }
    let mut decoded = Decoded::default();
    if let Some(choice) = value.get("choices").and_then(Value::as_array).and_then(|c| c.first()) {
        let text =
            if decoder.completion { choice.get("text") } else { choice.pointer("/delta/content") };
        decoded.text = text.and_then(Value::as_str).unwrap_or_default().to_owned();
        if decoder.completion
            && let Some(logprobs) = choice.get("logprobs").filter(|l| l.is_object())
        {
            decoder.keep_tokens(completion_choices(logprobs));
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            decoder.finish_reason = Some(reason.to_owned());
            // Complete, though usage and `[DONE]` may follow; some servers send no `[DONE]`.
            decoder.finished = true;
        }
    }
    if let Some(usage) = value.get("usage").filter(|usage| usage.is_object()) {
        decoder.usage.input_tokens = usage.get("prompt_tokens").and_then(Value::as_u64);
        decoder.usage.output_tokens = usage.get("completion_tokens").and_then(Value::as_u64);
        decoder.usage.cached_input_tokens =
            usage.pointer("/prompt_tokens_details/cached_tokens").and_then(Value::as_u64);
    }
    Ok(decoded)
}
