//! Local servers found where they usually listen: which models an OpenAI-compatible server
//! (llama.cpp's, LM Studio's, vLLM's) has loaded (`/models`), and whether a server answers at
//! all, asked briefly so that a first start is not held up by a port nobody listens on.

use std::time::Duration;

use serde_json::Value;

use crate::client::Provider;
use crate::error::ProviderError;
use crate::wire::{Endpoint, ProviderId};

/// How long a look for a local server waits: one on this machine answers in milliseconds, and
/// nothing listening refuses at once; a port that swallows the request is not a server to use.
pub const LOOK_TIMEOUT: Duration = Duration::from_millis(1_500);

/// One model a local OpenAI-compatible server offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedModel {
    /// Its id, as requests name it.
    pub id: String,
    /// The window the server runs it with, when it says (llama.cpp's `meta.n_ctx_train` is the
    /// trained one; its `/props` the running one).
    pub context_window: Option<u32>,
}

/// The models in an OpenAI-style `/models` answer.
pub fn served_models(answer: &Value) -> Vec<ServedModel> {
    answer
        .get("data")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|model| {
            let id = model.get("id").and_then(Value::as_str)?.to_owned();
            let context_window = model
                .pointer("/meta/n_ctx_train")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok());
            Some(ServedModel { id, context_window })
        })
        .collect()
}

impl Provider {
    /// The models the OpenAI-compatible server at `endpoint` has loaded, within
    /// [`LOOK_TIMEOUT`]. With llama.cpp's server, the window it runs with (`/props`) where it
    /// says.
    pub async fn served_models(
        &self,
        endpoint: &Endpoint,
    ) -> Result<Vec<ServedModel>, ProviderError> {
        let base = endpoint.base_url.trim_end_matches('/');
        let answer = self.look(endpoint.provider, &format!("{base}/models")).await?;
        let answer: Value =
            serde_json::from_str(&answer).map_err(|error| ProviderError::Malformed {
                provider: endpoint.provider.display_name(),
                detail: format!("/models answered with something that is not JSON: {error}"),
            })?;
        let mut models = served_models(&answer);
        if endpoint.provider == ProviderId::LlamaCpp {
            // `/props` sits beside `/v1`; a server without it keeps the trained window.
            let root = base.strip_suffix("/v1").unwrap_or(base);
            if let Ok(props) = self.look(endpoint.provider, &format!("{root}/props")).await
                && let Ok(props) = serde_json::from_str::<Value>(&props)
                && let Some(running) = props
                    .pointer("/default_generation_settings/n_ctx")
                    .and_then(Value::as_u64)
                    .and_then(|n| u32::try_from(n).ok())
            {
                for model in &mut models {
                    model.context_window = Some(running);
                }
            }
        }
        Ok(models)
    }

    /// Whether the local server at `endpoint` says `model` takes images, within
    /// [`LOOK_TIMEOUT`]: Ollama's `/api/show` lists `vision` among a model's capabilities,
    /// llama.cpp's `/props` names its `modalities`. `None` where the server does not say (an
    /// older server, another kind, no answer).
    pub async fn server_sees_images(&self, endpoint: &Endpoint, model: &str) -> Option<bool> {
        let base = endpoint.base_url.trim_end_matches('/');
        match endpoint.provider {
            ProviderId::Ollama => {
                let url = format!("{base}/api/show");
                let body = Some(serde_json::json!({ "model": model }));
                let asked = self.plain_request(endpoint.provider, &url, body);
                let show = tokio::time::timeout(LOOK_TIMEOUT, asked).await.ok()?.ok()?;
                let show: Value = serde_json::from_str(&show).ok()?;
                let capabilities = show.get("capabilities")?.as_array()?;
                Some(capabilities.iter().any(|capability| capability.as_str() == Some("vision")))
            }
            ProviderId::LlamaCpp => {
                let root = base.strip_suffix("/v1").unwrap_or(base);
                let props = self.look(endpoint.provider, &format!("{root}/props")).await.ok()?;
                let props: Value = serde_json::from_str(&props).ok()?;
                props.pointer("/modalities/vision")?.as_bool()
            }
            _ => None,
        }
    }

    /// Whether something answers at `endpoint` as its provider's server does (Ollama's
    /// `/api/tags`, otherwise `/models`), within [`LOOK_TIMEOUT`].
    pub async fn answers(&self, endpoint: &Endpoint) -> bool {
        let base = endpoint.base_url.trim_end_matches('/');
        let path = if endpoint.provider == ProviderId::Ollama { "/api/tags" } else { "/models" };
        self.look(endpoint.provider, &format!("{base}{path}")).await.is_ok()
    }

    async fn look(&self, provider: ProviderId, url: &str) -> Result<String, ProviderError> {
        match tokio::time::timeout(LOOK_TIMEOUT, self.plain_request(provider, url, None)).await {
            Ok(answer) => answer,
            Err(_) => Err(ProviderError::TimedOut {
                provider: provider.display_name(),
                phase: "before answering",
                waited: LOOK_TIMEOUT,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{ServedModel, served_models};

    #[test]
    fn a_models_list_names_each_model_and_the_window_llama_cpp_says_it_was_trained_for() {
        let answer = json!({
            "object": "list",
            "data": [
                { "id": "qwen2.5-7b-instruct-q4_k_m.gguf", "object": "model",
                  "meta": { "n_ctx_train": 32768, "n_vocab": 152064 } },
                { "id": "mistral", "object": "model" },
                { "object": "model" }
            ]
        });
        assert_eq!(
            served_models(&answer),
            [
                ServedModel {
                    id: "qwen2.5-7b-instruct-q4_k_m.gguf".into(),
                    context_window: Some(32_768)
                },
                ServedModel { id: "mistral".into(), context_window: None },
            ]
        );
        assert!(served_models(&json!({ "error": "no" })).is_empty());
    }
}
