//! Which models can answer now, said before the first send: a saved profile of a cloud provider
//! whose key is set, or of a local server that answers; and the models of local servers found
//! where they usually listen (Ollama, llama.cpp, LM Studio, vLLM) that are not saved yet, ready
//! to add. A fresh database holds the catalog's cloud models and no key, so without this the
//! first send would fail for a model nobody chose.

use std::collections::HashMap;

use futures_util::future::join_all;
use pinloom_providers::catalog::TokenizerFamily;
use pinloom_providers::{Endpoint, ProviderId};

use crate::base::pinloom::Pinloom;
use crate::json::{FoundModel, KeyStatus, ModelProfile, ModelsReady, WaitingModel};

/// The window given to a served model whose server does not say its own: llama.cpp's default.
const UNKNOWN_WINDOW: u32 = 4_096;

impl Pinloom {
    /// The saved profiles that can answer now and those that cannot (with what to do), and the
    /// models of local servers found on their usual ports that no profile names yet.
    pub async fn models_ready(&self) -> anyhow::Result<ModelsReady> {
        let profiles: Vec<ModelProfile> = self
            .model_profiles()
            .await?
            .into_iter()
            .filter(|profile| profile.imported_from.is_none())
            .collect();
        // A keyring that cannot be read counts as holding no key; the reason says so.
        let keys: HashMap<String, KeyStatus> = self
            .key_status()
            .await
            .unwrap_or_default()
            .into_iter()
            .map(|status| (status.provider.clone(), status))
            .collect();
        // Every address a local profile names, and the usual ones, looked at once each.
        let places = self.local_servers.to_vec();
        let mut addresses = places.clone();
        for profile in &profiles {
            if let Some(endpoint) = local_endpoint(profile)
                && !addresses.contains(&endpoint)
            {
                addresses.push(endpoint);
            }
        }
        let answering: Vec<bool> =
            join_all(addresses.iter().map(|endpoint| self.provider.answers(endpoint))).await;
        let answers = |endpoint: &Endpoint| {
            addresses.iter().zip(&answering).any(|(address, yes)| address == endpoint && *yes)
        };

        let mut ready = Vec::new();
        let mut waiting = Vec::new();
        for profile in &profiles {
            let Some(provider) = ProviderId::from_name(&profile.provider) else { continue };
            let reason = match local_endpoint(profile) {
                Some(endpoint) if answers(&endpoint) => None,
                Some(endpoint) => Some(format!(
                    "nothing answers at {}: start {} there, or change the profile's address",
                    endpoint.base_url,
                    provider.display_name()
                )),
                None => key_missing(provider, keys.get(provider.name())),
            };
            match reason {
                None => ready.push(profile.name.clone()),
                Some(reason) => {
                    waiting.push(WaitingModel { profile: profile.name.clone(), reason })
                }
            }
        }

        let mut found = Vec::new();
        for endpoint in places {
            if !answers(&endpoint) {
                continue;
            }
            let provider = endpoint.provider;
            for model in self.local_models(&endpoint).await {
                let mut model = model;
                // A server at its usual address is saved without one, as a person would.
                model.base_url =
                    (endpoint != Endpoint::new(provider)).then(|| endpoint.base_url.clone());
                let saved = profiles.iter().any(|profile| {
                    profile.provider == model.provider
                        && profile.model_id == model.model_id
                        && local_endpoint(profile).as_ref() == Some(&endpoint)
                });
                if !saved {
                    found.push(FoundModel {
                        server: format!("{} at {}", provider.display_name(), endpoint.base_url),
                        profile: model,
                    });
                }
            }
        }
        Ok(ModelsReady { ready, waiting, found })
    }

    /// The models the server at `endpoint` offers, as profiles ready to save; none when it
    /// cannot list them.
    async fn local_models(&self, endpoint: &Endpoint) -> Vec<ModelProfile> {
        if endpoint.provider == ProviderId::Ollama {
            let address = Some(endpoint.base_url.clone());
            return self.discover_ollama_models(address).await.unwrap_or_default();
        }
        let Ok(served) = self.provider.served_models(endpoint).await else { return Vec::new() };
        served
            .into_iter()
            .map(|model| {
                let window = model.context_window.unwrap_or(UNKNOWN_WINDOW);
                let counting = TokenizerFamily::for_open_model(&model.id);
                ModelProfile::new(
                    &format!("{} ({})", model.id, endpoint.provider.display_name()),
                    endpoint.provider.name(),
                    &model.id,
                    i64::from(window),
                    i64::from((window / 4).min(1_024)),
                    counting.name(),
                )
            })
            .collect()
    }
}

/// Where a profile of a local server sends: its own address, or its provider's default. `None`
/// for a cloud provider.
fn local_endpoint(profile: &ModelProfile) -> Option<Endpoint> {
    let provider =
        ProviderId::from_name(&profile.provider).filter(|provider| provider.is_local())?;
    Some(match profile.base_url.as_deref().filter(|url| !url.trim().is_empty()) {
        Some(url) => Endpoint::at(provider, url),
        None => Endpoint::new(provider),
    })
}

/// Why a cloud provider cannot answer yet, if it cannot: no key where Pinloom looks.
fn key_missing(provider: ProviderId, status: Option<&KeyStatus>) -> Option<String> {
    let variable = provider.key_variable()?;
    match status {
        Some(status) if status.from_environment || status.in_keyring => None,
        Some(KeyStatus { problem: Some(_), .. }) => Some(format!(
            "no key: this system's keyring cannot be used, so set {variable} before starting \
             Pinloom"
        )),
        _ => Some(format!(
            "no key for {}: paste one in Settings → Provider keys, or set {variable}",
            provider.display_name()
        )),
    }
}
