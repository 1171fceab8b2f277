//! Model profiles: stored in the database so the app, the command line and the MCP server see the
//! same ones; seeded from the providers' catalog into an empty database, then the person's to
//! edit, extend and delete.

use anyhow::Context;
use pinloom_providers::ProviderId;
use pinloom_providers::catalog::{self, SHIPPED, TokenizerFamily};
use pinloom_store::{LocalChoice, Store, StoreError};

use crate::base::pinloom::Pinloom;
use crate::error::ApiError;
use crate::json::{ModelProfile, ProfileChoices};
use crate::runtime::now_ms;

/// The name a shipped model's profile gets: the model id and who serves it.
fn shipped_name(provider: ProviderId, model: &str) -> String {
    format!("{model} ({})", provider.display_name())
}

/// Writes the catalog's models into a database that has no profiles yet. A database with any
/// profile is left alone, so edits and deletions stay as the person made them.
pub(crate) fn seed_from_catalog(store: &Store) -> Result<(), StoreError> {
    if !store.profiles()?.is_empty() {
        return Ok(());
    }
    let now = now_ms();
    for entry in SHIPPED {
        let engine = catalog::profile(entry.provider, entry.model);
        store.put_profile(
            &pinloom_store::ModelProfile {
                name: shipped_name(entry.provider, entry.model),
                provider: entry.provider.name().to_owned(),
                model_id: entry.model.to_owned(),
                base_url: None,
                context_window: engine.context_window,
                reserve: engine.reserve,
                native_system: engine.native_system,
                completion_endpoint: catalog::completion_supported(entry.provider, entry.model),
                tokenizer: entry.tokenizer.name().to_owned(),
                agent_system_prompt: String::new(),
                sampling_json: "{}".to_owned(),
                settings_json: "{}".to_owned(),
                prices_json: None,
                imported_from: None,
            },
            now,
        )?;
    }
    Ok(())
}

impl Pinloom {
    /// Every model profile, by name.
    pub async fn model_profiles(&self) -> anyhow::Result<Vec<ModelProfile>> {
        let profiles = self
            .read("could not read the model profiles", move |store| Ok(store.profiles()?))
            .await?;
        Ok(profiles.into_iter().map(ModelProfile::from).collect())
    }

    /// Creates a profile, or replaces the one with the same name.
    pub async fn save_model_profile(
        &self,
        mut profile: ModelProfile,
    ) -> anyhow::Result<ModelProfile> {
        crate::base::profile_check::check(&profile)?;
        // A new profile is the person's; one that came with a file keeps its mark (the store
        // leaves it as stored) until the person enables it.
        profile.imported_from = None;
        // Through `write`, so the plans this process keeps for the old numbers are dropped.
        let saved = self
            .write("could not save the model profile", move |store| {
                Ok(store.put_profile(&profile.into_record(), now_ms())?)
            })
            .await?;
        Ok(saved.into())
    }

    /// The models installed on the Ollama at `base_url` (the default address when absent), as
    /// profiles ready to save: named `<model> (Ollama)`, with the window discovery found. Nothing
    /// is saved; the person picks which to keep.
    pub async fn discover_ollama_models(
        &self,
        base_url: Option<String>,
    ) -> anyhow::Result<Vec<ModelProfile>> {
        let endpoint = match &base_url {
            Some(url) => pinloom_providers::Endpoint::at(ProviderId::Ollama, url),
            None => pinloom_providers::Endpoint::new(ProviderId::Ollama),
        };
        let models = self
            .provider
            .ollama_models(&endpoint)
            .await
            .context("could not list the models installed on Ollama")?;
        Ok(models
            .into_iter()
            .map(|model| {
                let engine = model.profile();
                let mut profile = ModelProfile::new(
                    &shipped_name(ProviderId::Ollama, &model.name),
                    ProviderId::Ollama.name(),
                    &model.name,
                    i64::from(engine.context_window),
                    i64::from(engine.reserve),
                    model.tokenizer.name(),
                );
                profile.base_url = base_url.clone();
                profile.native_system = model.native_system;
                profile.completion_endpoint = model.completion;
                profile
            })
            .collect())
    }

    /// How a model is best counted, when Pinloom knows: the shipped entry's counter for a listed
    /// model, and for a model on a local server (Ollama, llama.cpp, vLLM, LM Studio) the exact
    /// counter of its family when Pinloom has its vocabulary (`llama3`, `qwen`, `o200k` for
    /// GPT-OSS). `None` otherwise, so a form leaves the person's choice alone.
    pub fn profile_counting(&self, provider: &str, model: &str) -> Option<String> {
        let provider = ProviderId::from_name(provider)?;
        if let Some(entry) = catalog::find(provider, model) {
            return Some(entry.tokenizer.name().to_owned());
        }
        let family = TokenizerFamily::for_open_model(model);
        (provider.is_local() && family != TokenizerFamily::Other).then(|| family.name().to_owned())
    }

    /// What a profile's fields may name: the providers, the token counters and the truncation
    /// strategies, so a form offers exactly what saving accepts.
    pub fn profile_choices(&self) -> ProfileChoices {
        ProfileChoices {
            providers: ProviderId::ALL.iter().map(|provider| provider.name().to_owned()).collect(),
            tokenizers: TokenizerFamily::ALL
                .iter()
                .map(|family| family.name().to_owned())
                .collect(),
            truncations: crate::base::profile_check::TRUNCATION_STRATEGIES
                .iter()
                .map(|name| (*name).to_owned())
                .collect(),
        }
    }

    /// Enables a model profile that came with an imported file: from now on it may be planned
    /// for, sent to and chosen as a default.
    pub async fn enable_model_profile(&self, name: String) -> anyhow::Result<ModelProfile> {
        let enabled = self
            .write("could not enable the model profile", move |store| {
                Ok(store.enable_profile(&name, now_ms())?)
            })
            .await?;
        Ok(enabled.into())
    }

    /// Deletes the profile named `name`; when it was the default, there is none after.
    pub async fn delete_model_profile(&self, name: String) -> anyhow::Result<()> {
        self.write("could not delete the model profile", move |store| {
            store.delete_profile(&name)?;
            if store.local_choice(LocalChoice::DefaultProfile)?.as_deref() == Some(name.as_str()) {
                store.set_local_choice(LocalChoice::DefaultProfile, None)?;
            }
            Ok(())
        })
        .await
    }

    /// A new profile named `name` for `model` at `provider` (at `base_url` when given), filled
    /// with what Pinloom knows of the model: its window, reply reserve, system role, whether it
    /// continues documents, and how its tokens are counted; for a local server, the window the
    /// server reports for it when it reports one and `ask_server` is set. Not saved: the caller
    /// changes what the person said otherwise and saves it.
    pub async fn profile_known(
        &self,
        name: String,
        provider: String,
        model: String,
        base_url: Option<String>,
        ask_server: bool,
    ) -> anyhow::Result<ModelProfile> {
        let id = crate::base::profile_check::provider_named(&provider)?;
        let engine = catalog::profile(id, &model);
        let counting = match catalog::find(id, &model) {
            Some(entry) => entry.tokenizer,
            None if id.is_local() => TokenizerFamily::for_open_model(&model),
            None => TokenizerFamily::Other,
        };
        let mut profile = ModelProfile::new(
            &name,
            id.name(),
            &model,
            i64::from(engine.context_window),
            i64::from(engine.reserve),
            counting.name(),
        );
        profile.native_system = engine.native_system;
        profile.completion_endpoint = catalog::completion_supported(id, &model);
        profile.base_url = base_url.filter(|url| !url.trim().is_empty());
        if id.is_local() && ask_server {
            let endpoint = match &profile.base_url {
                Some(url) => pinloom_providers::Endpoint::at(id, url),
                None => pinloom_providers::Endpoint::new(id),
            };
            let served = self.provider.served_models(&endpoint).await.unwrap_or_default();
            if let Some(window) =
                served.iter().find(|served| served.id == model).and_then(|m| m.context_window)
            {
                profile.context_window = i64::from(window);
                profile.reserve = profile.reserve.min(i64::from(window / 4).max(1));
            }
        }
        Ok(profile)
    }

    /// The profile a send answers with on this machine when none is named and its thread names
    /// none, if the person chose one (`pinloom models default`).
    pub async fn default_profile(&self) -> anyhow::Result<Option<String>> {
        self.read("could not read the default model", move |store| {
            Ok(store.local_choice(LocalChoice::DefaultProfile)?)
        })
        .await
    }

    /// Makes `name` the default profile on this machine: it must exist and be the person's (not
    /// one that came with a file and is not enabled yet).
    pub async fn set_default_profile(&self, name: String) -> anyhow::Result<ModelProfile> {
        self.write("could not choose the default model", move |store| {
            let Some(profile) = store.profiles()?.into_iter().find(|p| p.name == name) else {
                return Err(ApiError::not_found(format!(
                    "there is no model profile named {name:?}: `pinloom models` lists them"
                ))
                .into());
            };
            if let Some(file) = &profile.imported_from {
                return Err(ApiError::invalid_input(format!(
                    "{name} came with {file} and is not enabled: `pinloom models enable {name:?}` \
                     makes it yours first"
                ))
                .into());
            }
            store.set_local_choice(LocalChoice::DefaultProfile, Some(&name))?;
            Ok(profile.into())
        })
        .await
    }
}
