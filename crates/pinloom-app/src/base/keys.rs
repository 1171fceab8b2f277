//! The provider keys a send uses, from the environment or the keyring, never waiting on a keyring
//! for ever.

use std::time::Duration;

use anyhow::Context;
use pinloom_providers::{ApiKey, ProviderError, ProviderId};

use crate::base::pinloom::Pinloom;

/// How long a keyring may take to answer: a locked Secret Service can prompt, or hang on a broken
/// session bus, and a send must not wait on it for ever.
const KEYRING_TIMEOUT: Duration = Duration::from_secs(10);

impl Pinloom {
    /// The key for `provider` from its environment variable or the keyring, on a blocking thread
    /// and within a time limit.
    pub(crate) async fn key_for(&self, provider: ProviderId) -> anyhow::Result<Option<ApiKey>> {
        let keyring = self.keyring.clone();
        let lookup = tokio::task::spawn_blocking(move || keyring.find(provider));
        match tokio::time::timeout(KEYRING_TIMEOUT, lookup).await {
            Ok(found) => Ok(found.context("the keyring lookup stopped unexpectedly")??),
            Err(_) => Err(anyhow::Error::new(ProviderError::KeyringUnavailable {
                detail: format!("it did not answer within {} s", KEYRING_TIMEOUT.as_secs()),
                alternative: match provider.key_variable() {
                    Some(variable) => {
                        format!("Set {variable} in the environment Pinloom starts from instead.")
                    }
                    None => String::new(),
                },
            })),
        }
    }
}
