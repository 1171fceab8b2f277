//! Model profiles: stored in the database so the app, the command line and the MCP server see the
//! same ones; seeded from the providers' catalog into an empty database, then the person's to
//! edit, extend and delete.

use anyhow::Context;
use pinloom_providers::ProviderId;
use pinloom_providers::catalog::{self, SHIPPED, TokenizerFamily};
use pinloom_store::{Store, StoreError};

use crate::ApiError;
use crate::json::{ModelProfile, ProfileChoices};
use crate::pinloom::Pinloom;
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

/// The checks the store cannot make, since it does not know providers and tokenizers.
pub(crate) fn check(profile: &ModelProfile) -> Result<(), ApiError> {
    let name = profile.name.trim();
    crate::providers::provider_named(&profile.provider)
        .map_err(|refusal| ApiError::invalid_input(format!("{name}: {}", refusal.message)))?;
    if profile.model_id.trim().is_empty() {
        return Err(ApiError::invalid_input(format!(
            "{name}: the model id is empty; enter it as the provider names it (for example \
             gpt-4o or llama3.2)"
        )));
    }
    if TokenizerFamily::from_name(&profile.tokenizer).is_none() {
        let known: Vec<&str> = TokenizerFamily::ALL.iter().map(|t| t.name()).collect();
        return Err(ApiError::invalid_input(format!(
            "{name}: unknown tokenizer \"{}\"; choose one of {}",
            profile.tokenizer,
            known.join(", ")
        )));
    }
    for (what, value) in
        [("context window", profile.context_window), ("reply reserve", profile.reserve)]
    {
        if value < 0 {
            return Err(ApiError::invalid_input(format!(
                "{name}: the {what} cannot be negative ({value}); enter a number of tokens"
            )));
        }
        if u32::try_from(value).is_err() {
            return Err(ApiError::invalid_input(format!(
                "{name}: the {what} of {value} tokens is beyond any model; enter the model's \
                 real number"
            )));
        }
    }
    if profile.context_window == 0 {
        return Err(ApiError::invalid_input(format!(
            "{name}: the context window must be at least 1 token"
        )));
    }
    if profile.reserve >= profile.context_window {
        return Err(ApiError::invalid_input(format!(
            "{name}: the reply reserve ({}) must be smaller than the context window ({}), \
             or nothing is left for the context",
            profile.reserve, profile.context_window
        )));
    }
    check_sampling_and_assembly(name, profile)?;
    if let Some(url) = &profile.base_url
        && !(url.starts_with("http://") || url.starts_with("https://"))
    {
        return Err(ApiError::invalid_input(format!(
            "{name}: the address \"{url}\" must start with http:// or https://"
        )));
    }
    Ok(())
}

/// The highest price per million tokens a profile may carry, in US dollars: far above any
/// model's, and low enough that no reply's cost overflows.
pub(crate) const MAX_PRICE: f64 = 10_000.0;

/// The names of the truncation strategies a profile may choose.
pub(crate) const TRUNCATION_STRATEGIES: [&str; 3] =
    ["truncateMiddle", "rollingWindow", "stopAtLimit"];

fn check_sampling_and_assembly(name: &str, profile: &ModelProfile) -> Result<(), ApiError> {
    let refuse = |message: String| Err(ApiError::invalid_input(format!("{name}: {message}")));
    let sampling = profile.sampling;
    if let Some(temperature) = sampling.temperature
        && !(0.0..=2.0).contains(&temperature)
    {
        return refuse(format!("a temperature of {temperature} is outside 0 to 2"));
    }
    if let Some(top_p) = sampling.top_p
        && !(0.0..=1.0).contains(&top_p)
    {
        return refuse(format!("a top-p of {top_p} is outside 0 to 1"));
    }
    if let Some(max) = sampling.max_output_tokens
        && (max < 1 || max >= profile.context_window)
    {
        return refuse(format!(
            "a reply of at most {max} tokens must be at least 1 and less than the window ({})",
            profile.context_window
        ));
    }
    let assembly = &profile.assembly;
    if let Some(truncation) = &assembly.truncation
        && !TRUNCATION_STRATEGIES.contains(&truncation.as_str())
    {
        return refuse(format!(
            "unknown truncation \"{truncation}\"; choose one of {}",
            TRUNCATION_STRATEGIES.join(", ")
        ));
    }
    if let Some(budgets) = &assembly.depth_budgets
        && (budgets.is_empty() || budgets.iter().any(|b| *b < 1 || *b >= profile.context_window))
    {
        return refuse(format!(
            "summary budgets must be one or more token counts from 1 to below the window ({}), \
             nearest thread first",
            profile.context_window
        ));
    }
    if let Some(recent) = assembly.minimum_recent_nodes
        && !(0..=10_000).contains(&recent)
    {
        return refuse(format!(
            "keeping the last {recent} messages is not possible; use 0 to 10,000"
        ));
    }
    if let Some(percent) = assembly.truncation_step_percent
        && !(0..=100).contains(&percent)
    {
        return refuse(format!(
            "a truncation step of {percent} % is not possible; use 0 (message by message) to 100"
        ));
    }
    if let Some(prices) = &profile.prices {
        let all = [
            Some(prices.input_per_million),
            Some(prices.output_per_million),
            prices.cache_read_per_million,
            prices.cache_write_per_million,
        ];
        if all.into_iter().flatten().any(|price| !(0.0..=MAX_PRICE).contains(&price)) {
            return refuse(format!(
                "prices are US dollars per million tokens, from 0 to {MAX_PRICE}; clear them for \
                 a model without a price"
            ));
        }
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
        check(&profile)?;
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
            truncations: TRUNCATION_STRATEGIES.iter().map(|name| (*name).to_owned()).collect(),
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

    /// Deletes the profile named `name`.
    pub async fn delete_model_profile(&self, name: String) -> anyhow::Result<()> {
        self.write("could not delete the model profile", move |store| {
            Ok(store.delete_profile(&name)?)
        })
        .await
    }
}
