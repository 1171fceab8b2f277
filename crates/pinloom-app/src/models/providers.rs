//! Providers as the person manages them: keys in the OS keyring, whether one is set and where
//! from, and a test of a profile's connection.

use anyhow::Context;
use pinloom_engine::render::single_turn;
use pinloom_providers::keys::key_from_environment;
use pinloom_providers::wire::{Task, build};
use pinloom_providers::{ApiKey, ProviderId, Sampling};
use tokio_util::sync::CancellationToken;

use crate::base::one_shot::Answer;
use crate::base::pinloom::Pinloom;
use crate::base::profile_check::provider_named;
use crate::error::ApiError;
use crate::json::{ConnectionCheck, KeyStatus};
use crate::runtime::blocking;

impl Pinloom {
    /// Whether each provider that takes a key has one, and where it comes from. Keys themselves
    /// never leave the keyring through here.
    pub async fn key_status(&self) -> anyhow::Result<Vec<KeyStatus>> {
        let keyring = self.keyring.clone();
        let lookup = tokio::task::spawn_blocking(move || {
            ProviderId::ALL
                .into_iter()
                .filter_map(|provider| provider.key_variable().map(|variable| (provider, variable)))
                .map(|(provider, variable)| {
                    let from_environment = key_from_environment(provider).is_some();
                    let (in_keyring, problem) = match keyring.has_key(provider) {
                        Ok(found) => (found, None),
                        Err(error) => (false, Some(error.to_string())),
                    };
                    KeyStatus {
                        provider: provider.name().to_owned(),
                        display_name: provider.display_name().to_owned(),
                        variable: variable.to_owned(),
                        from_environment,
                        in_keyring,
                        problem,
                    }
                })
                .collect::<Vec<_>>()
        });
        tokio::time::timeout(std::time::Duration::from_secs(10), lookup)
            .await
            .map_err(|_| {
                ApiError::invalid_input("the keyring did not answer within 10 s; is it locked?")
            })?
            .context("the keyring lookup stopped unexpectedly")
    }

    /// Stores `key` for `provider` in the OS keyring, replacing any earlier one.
    pub async fn save_api_key(&self, provider: String, key: String) -> anyhow::Result<()> {
        let provider = provider_named(&provider)?;
        if provider.key_variable().is_none() {
            return Err(ApiError::invalid_input(format!(
                "{} needs no key",
                provider.display_name()
            ))
            .into());
        }
        let key = ApiKey::new(&key).ok_or_else(|| {
            ApiError::invalid_input("that is not a key: paste it whole, without spaces inside")
        })?;
        let keyring = self.keyring.clone();
        blocking(move || Ok(keyring.save(provider, &key)?)).await.context("could not store the key")
    }

    /// Removes `provider`'s key from the OS keyring.
    pub async fn forget_api_key(&self, provider: String) -> anyhow::Result<()> {
        let provider = provider_named(&provider)?;
        let keyring = self.keyring.clone();
        blocking(move || Ok(keyring.delete(provider)?)).await.context("could not remove the key")
    }

    /// Sends the model profile `profile` a one-line request and reports what came back: the
    /// "test connection" button. The person's trees are not touched.
    pub async fn check_connection(&self, profile: String) -> anyhow::Result<ConnectionCheck> {
        let this = self.clone();
        let choice = blocking(move || this.model_choice(&profile)).await?;
        let key = self.key_for(choice.provider).await?;
        let request = single_turn("", "Reply with the single word: ready", &choice.engine);
        let sampling = Sampling { max_output_tokens: Some(16), ..choice.sampling };
        let wire = build(
            &choice.endpoint,
            &choice.engine,
            sampling,
            Task::Chat { request: &request, tools: &[] },
        )?;
        let started = std::time::Instant::now();
        let asked = self.ask_once(&wire, key.as_ref(), &CancellationToken::new()).await;
        let reply = match asked.answer() {
            Answer::Failed(error) => {
                return Err(anyhow::Error::new(error.clone())
                    .context(format!("{} did not answer", choice.name)));
            }
            Answer::BrokenOff(error) => {
                return Err(
                    anyhow::Error::new(error.clone()).context(format!("{} broke off", choice.name))
                );
            }
            // An empty answer still shows the connection works.
            Answer::Empty => "",
            Answer::Text(text) => text,
        };
        Ok(ConnectionCheck {
            reply: reply.chars().take(200).collect(),
            milliseconds: u32::try_from(started.elapsed().as_millis()).unwrap_or(u32::MAX),
        })
    }
}
