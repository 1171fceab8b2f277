//! API keys: kept only in the OS keyring (Secret Service on Linux desktops, Keychain on macOS,
//! Credential Manager on Windows), or read from one environment variable per provider where no
//! keyring is available. Never written to a file by Pinloom, never printed: [`ApiKey`]'s `Debug`
//! hides it and error details blank it when a provider echoes it back.
//!
//! Keyring calls block, and on a Linux machine without an unlocked keyring they can wait on an
//! unlock prompt: callers run them off the async executor with a timeout.

use crate::error::ProviderError;
use crate::wire::ProviderId;

/// An API key. Its text is only handed to the HTTP client and the keyring.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(hidden)")
    }
}

impl ApiKey {
    /// A key as pasted: surrounding whitespace is dropped; `None` when nothing is left or the
    /// text has spaces or control characters inside, which no provider's key has (a paste that
    /// caught a neighbouring word or a line break).
    pub fn new(text: &str) -> Option<ApiKey> {
        let key = text.trim();
        let plausible =
            !key.is_empty() && !key.chars().any(|c| c.is_whitespace() || c.is_control());
        plausible.then(|| ApiKey(key.to_owned()))
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

/// Which keyring holds the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyringBackend {
    /// The platform's keyring: Secret Service on Linux, Keychain, Credential Manager.
    Platform,
    /// Linux's kernel keyring (keyutils). It is lost at reboot, so it only suits machines with
    /// no desktop session, such as CI; `PINLOOM_KEYRING=kernel` chooses it.
    Kernel,
}

impl KeyringBackend {
    /// The backend `PINLOOM_KEYRING` names (`kernel` or `platform`), else the platform's.
    pub fn from_environment() -> KeyringBackend {
        match std::env::var("PINLOOM_KEYRING").as_deref() {
            Ok("kernel") => KeyringBackend::Kernel,
            _ => KeyringBackend::Platform,
        }
    }
}

/// The keys of one installation: entries named by `service`, one per provider.
#[derive(Debug, Clone)]
pub struct Keyring {
    service: String,
    backend: KeyringBackend,
}

impl Keyring {
    /// Keys under `service` (the app's identifier) in `backend`.
    pub fn new(service: &str, backend: KeyringBackend) -> Keyring {
        Keyring { service: service.to_owned(), backend }
    }

    fn entry(&self, provider: ProviderId) -> Result<keyring::Entry, ProviderError> {
        let user = provider.name();
        let entry = match self.backend {
            KeyringBackend::Platform => keyring::Entry::new(&self.service, user),
            KeyringBackend::Kernel => kernel_entry(&self.service, user),
        };
        entry.map_err(|error| unavailable(provider, &error))
    }

    /// Stores `key` for `provider`, replacing any earlier one.
    pub fn save(&self, provider: ProviderId, key: &ApiKey) -> Result<(), ProviderError> {
        self.entry(provider)?
            .set_password(key.expose())
            .map_err(|error| unavailable(provider, &error))
    }

    /// The stored key for `provider`, if there is one.
    pub fn load(&self, provider: ProviderId) -> Result<Option<ApiKey>, ProviderError> {
        match self.entry(provider)?.get_password() {
            Ok(text) => Ok(ApiKey::new(&text)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(error) => Err(unavailable(provider, &error)),
        }
    }

    /// Forgets the key for `provider`; forgetting one that is not there is not an error.
    pub fn delete(&self, provider: ProviderId) -> Result<(), ProviderError> {
        match self.entry(provider)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(error) => Err(unavailable(provider, &error)),
        }
    }

    /// The key to use for `provider`: its environment variable when set (a deliberate choice for
    /// this run, and the way in where no keyring exists), else the keyring's. `None` for local
    /// servers, which need none, and when no key is set anywhere.
    pub fn find(&self, provider: ProviderId) -> Result<Option<ApiKey>, ProviderError> {
        if provider.key_variable().is_none() {
            return Ok(None);
        }
        if let Some(key) = key_from_environment(provider) {
            return Ok(Some(key));
        }
        self.load(provider)
    }
}

/// The key `provider`'s environment variable holds, when it is set to something key-like.
pub fn key_from_environment(provider: ProviderId) -> Option<ApiKey> {
    let variable = provider.key_variable()?;
    std::env::var(variable).ok().as_deref().and_then(ApiKey::new)
}

/// A secret of Pinloom's own kept beside the providers' keys (a sync folder's key): its entry's
/// name, and what to do where no keyring answers.
impl Keyring {
    fn secret_entry(&self, name: &str) -> Result<keyring::Entry, ProviderError> {
        let entry = match self.backend {
            KeyringBackend::Platform => keyring::Entry::new(&self.service, name),
            KeyringBackend::Kernel => kernel_entry(&self.service, name),
        };
        entry.map_err(|error| secret_unavailable(&error))
    }

    /// Keeps `secret` under `name`, replacing any earlier one.
    pub fn save_secret(&self, name: &str, secret: &str) -> Result<(), ProviderError> {
        self.secret_entry(name)?.set_password(secret).map_err(|error| secret_unavailable(&error))
    }

    /// The secret kept under `name`, if there is one.
    pub fn load_secret(&self, name: &str) -> Result<Option<String>, ProviderError> {
        match self.secret_entry(name)?.get_password() {
            Ok(text) => Ok(Some(text)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(error) => Err(secret_unavailable(&error)),
        }
    }
}

fn secret_unavailable(error: &keyring::Error) -> ProviderError {
    ProviderError::KeyringUnavailable {
        detail: error.to_string(),
        alternative: "Give the sync passphrase on each sync instead; on Linux, a running and \
                      unlocked Secret Service (GNOME Keyring or KWallet) lets Pinloom keep the \
                      folder's key."
            .into(),
    }
}

impl Keyring {
    /// Whether a key for `provider` is in the keyring, without reading it out of this crate.
    pub fn has_key(&self, provider: ProviderId) -> Result<bool, ProviderError> {
        Ok(self.load(provider)?.is_some())
    }
}

#[cfg(target_os = "linux")]
fn kernel_entry(service: &str, user: &str) -> keyring::Result<keyring::Entry> {
    let credential = keyring::keyutils::KeyutilsCredential::new_with_target(None, service, user)?;
    Ok(keyring::Entry::new_with_credential(Box::new(credential)))
}

#[cfg(not(target_os = "linux"))]
fn kernel_entry(service: &str, user: &str) -> keyring::Result<keyring::Entry> {
    keyring::Entry::new(service, user)
}

fn unavailable(provider: ProviderId, error: &keyring::Error) -> ProviderError {
    let alternative = match provider.key_variable() {
        Some(variable) => format!(
            "Set {variable} in the environment Pinloom starts from instead; on Linux, a running \
             and unlocked Secret Service (GNOME Keyring or KWallet) lets Pinloom keep the key."
        ),
        None => format!("{} needs no key.", provider.display_name()),
    };
    ProviderError::KeyringUnavailable { detail: error.to_string(), alternative }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keyring_failure_names_the_environment_variable_to_use_instead() {
        let failure =
            keyring::Error::PlatformFailure("org.freedesktop.DBus.Error.ServiceUnknown".into());
        let error = unavailable(ProviderId::Gemini, &failure);
        assert_eq!(error.code(), "keyringUnavailable");
        let message = error.to_string();
        assert!(
            message.contains("ServiceUnknown") && message.contains("GEMINI_API_KEY"),
            "{message}"
        );
        assert!(!message.contains("file"), "never a plaintext file: {message}");
    }
}
