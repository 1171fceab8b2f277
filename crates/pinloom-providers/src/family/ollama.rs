//! Ollama's native API (`/api/chat`, and `/api/generate` for a continuation): where a request
//! goes and what it carries beside the engine's body, and how a reply's lines read.

use pinloom_engine::family::wire_body;
use pinloom_engine::profile::ModelProfile;
use reqwest::header::{AUTHORIZATION, HeaderName};
use serde_json::{Value, json};

use super::{FamilyWire, SamplingFields, Shaped};
use crate::decoder::{Decoded, Decoder, entry_choice, text_of};
use crate::endpoint::Endpoint;
use crate::error::ProviderError;
use crate::request::{Framing, Sampling, TOP_TOKENS, Task};

/// Ollama.
pub(super) struct Ollama;

impl FamilyWire for Ollama {
    fn shape(
        &self,
        endpoint: &Endpoint,
        profile: &ModelProfile,
        _sampling: Sampling,
        task: Task<'_>,
        _max_output: u32,
    ) -> Result<Shaped, ProviderError> {
        let base = endpoint.base_url.trim_end_matches('/');
        let (url, body, completion) = match task {
            Task::Chat { request, tools } => {
                (format!("{base}/api/chat"), wire_body(request, tools, profile), false)
            }
            Task::Complete { prompt } => {
                // `raw`: the document is continued as written, not wrapped in the chat template.
                let body = json!({
                    "model": profile.model,
                    "prompt": prompt,
                    "raw": true,
                    "stream": true,
                    "options": {"num_ctx": profile.context_window},
                    // Ollama versions that know the fields report them; earlier ones ignore them.
                    "logprobs": true,
                    "top_logprobs": TOP_TOKENS,
                });
                (format!("{base}/api/generate"), body, true)
            }
        };
        Ok(Shaped { framing: Framing::JsonLines, ..Shaped::streamed(url, body, completion) })
    }

    /// Ollama's output cap is `num_predict`; its `num_ctx` is already in the body, sized to the
    /// profile's window.
    fn sampling_fields(&self) -> SamplingFields {
        SamplingFields {
            temperature: &["options", "temperature"],
            top_p: &["options", "top_p"],
            output_cap: Some(&["options", "num_predict"]),
        }
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
        decode_line(decoder, data)
    }
}

/// Decodes one NDJSON line (Ollama).
pub(crate) fn decode_line(decoder: &mut Decoder, line: &str) -> Result<Decoded, ProviderError> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(Decoded::default());
    }
    let value = decoder.json(line)?;
    if let Some(error) = value.get("error") {
        return Err(decoder.in_stream(&serde_json::json!({ "message": text_of(error) })));
    }
    let text = if decoder.completion {
        value.get("response").and_then(Value::as_str)
    } else {
        value.pointer("/message/content").and_then(Value::as_str)
    };
    let mut decoded = Decoded { text: text.unwrap_or_default().to_owned(), finished: false };
    if decoder.completion
        && let Some(entries) = value.get("logprobs").and_then(Value::as_array)
    {
        decoder.keep_tokens(entries.iter().filter_map(entry_choice));
    }
    if value.get("done").and_then(Value::as_bool) == Some(true) {
        decoder.usage.input_tokens = value.get("prompt_eval_count").and_then(Value::as_u64);
        decoder.usage.output_tokens = value.get("eval_count").and_then(Value::as_u64);
        decoder.finish_reason = value.get("done_reason").and_then(Value::as_str).map(str::to_owned);
        decoder.finished = true;
        decoded.finished = true;
    }
    Ok(decoded)
}
