//! Local models on Ollama: which are installed (`/api/tags`) and how large a window each takes
//! (`/api/show`). Ollama silently cuts a prompt longer than its `num_ctx` (engine_anchors §3), so
//! every request sends `options.num_ctx` equal to the profile's window, and the window comes from
//! here rather than a guess.

use serde_json::{Value, json};

use crate::catalog::TokenizerFamily;
use crate::client::Provider;
use crate::error::ProviderError;
use crate::wire::{Endpoint, ProviderId};
use pinloom_engine::profile::ModelProfile;

/// The window given to a model whose Modelfile sets none: its trained context, but no more than
/// this, because Ollama allocates the whole window up front and a 128k window of an 8B model
/// does not fit in the memory of most machines. The person raises it in the profile.
pub const DEFAULT_WINDOW_CAP: u32 = 32_768;

/// One installed model, as discovery found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalModel {
    /// Its name (`llama3.2:latest`).
    pub name: String,
    /// The window to budget against and send as `num_ctx`.
    pub context_window: u32,
    /// The context it was trained for, when Ollama says.
    pub trained_context: Option<u32>,
    /// Whether its template places a system prompt (`{{ .System }}`); if not, Pinloom injects the
    /// system context into the first user message.
    pub native_system: bool,
    /// Whether it can continue a document (buffer mode).
    pub completion: bool,
    /// How its tokens are counted: exactly when its tokenizer is one Pinloom has.
    pub tokenizer: TokenizerFamily,
}

impl LocalModel {
    /// Its profile: seed 004's defaults for the family, with the discovered window and system
    /// support.
    pub fn profile(&self) -> ModelProfile {
        let mut profile = ModelProfile::shipped(ProviderId::Ollama.family(), &self.name);
        profile.context_window = self.context_window;
        profile.reserve = profile.reserve.min(self.context_window / 4);
        profile.native_system = self.native_system;
        profile.tokenizer = self.tokenizer.tokenizer();
        profile
    }
}

/// Reads `/api/show`'s answer for `name`.
pub fn local_model(name: &str, show: &Value) -> LocalModel {
    let info = show.get("model_info");
    let architecture = info.and_then(|i| i.get("general.architecture")).and_then(Value::as_str);
    let trained_context = architecture
        .and_then(|arch| info.and_then(|i| i.get(format!("{arch}.context_length"))))
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok());
    // A `num_ctx` set in the Modelfile is its author's choice for this machine class.
    let configured = show
        .get("parameters")
        .and_then(Value::as_str)
        .into_iter()
        .flat_map(str::lines)
        .find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("num_ctx")).then(|| words.next()?.parse::<u32>().ok()).flatten()
        });
    let context_window = configured
        .or(trained_context.map(|trained| trained.min(DEFAULT_WINDOW_CAP)))
        .unwrap_or(DEFAULT_WINDOW_CAP);
    let template = show.get("template").and_then(Value::as_str).unwrap_or_default();
    let capabilities: Vec<&str> = show
        .get("capabilities")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    LocalModel {
        name: name.to_owned(),
        context_window,
        trained_context,
        native_system: template.is_empty() || template.contains(".System"),
        completion: capabilities.is_empty() || capabilities.contains(&"completion"),
        tokenizer: TokenizerFamily::for_gguf(
            info.and_then(|i| i.get("tokenizer.ggml.pre")).and_then(Value::as_str),
            name,
        ),
    }
}

impl Provider {
    /// The models installed on the Ollama at `endpoint`, each with its window.
    pub async fn ollama_models(
        &self,
        endpoint: &Endpoint,
    ) -> Result<Vec<LocalModel>, ProviderError> {
        let tags = self.ollama_get_json(endpoint, "/api/tags", None).await?;
        let names: Vec<String> = tags
            .get("models")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|model| model.get("name").and_then(Value::as_str).map(str::to_owned))
            .collect();
        let mut models = Vec::with_capacity(names.len());
        for name in names {
            let show =
                self.ollama_get_json(endpoint, "/api/show", Some(json!({ "model": name }))).await?;
            models.push(local_model(&name, &show));
        }
        Ok(models)
    }

    async fn ollama_get_json(
        &self,
        endpoint: &Endpoint,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, ProviderError> {
        let url = format!("{}{path}", endpoint.base_url.trim_end_matches('/'));
        let text = self.plain_request(endpoint.provider, &url, body).await?;
        serde_json::from_str(&text).map_err(|error| ProviderError::Malformed {
            provider: endpoint.provider.display_name(),
            detail: format!("{path} answered with something that is not JSON: {error}"),
        })
    }
}
