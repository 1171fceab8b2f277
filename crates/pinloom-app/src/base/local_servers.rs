//! Where local model servers are looked for before a first send: the handle keeps the list its
//! front end chose, and the models room asks each place whether something answers.

use pinloom_providers::{Endpoint, ProviderId};

/// The local servers looked for, each at its default address.
const LOCAL_SERVERS: [ProviderId; 4] =
    [ProviderId::Ollama, ProviderId::LlamaCpp, ProviderId::LmStudio, ProviderId::Vllm];

/// Where to look instead of the usual ports: `provider=address` pairs separated by commas
/// (`llamacpp=http://127.0.0.1:9000/v1`), for a machine whose servers listen elsewhere.
pub const LOCAL_SERVERS_VARIABLE: &str = "PINLOOM_LOCAL_SERVERS";

/// The addresses to look at: [`LOCAL_SERVERS_VARIABLE`]'s when it is set, the usual ones
/// otherwise. A pair that names no provider is passed over.
pub(crate) fn places_to_look() -> Vec<Endpoint> {
    match std::env::var(LOCAL_SERVERS_VARIABLE) {
        Ok(listed) if !listed.trim().is_empty() => listed
            .split(',')
            .filter_map(|pair| {
                let (name, address) = pair.split_once('=')?;
                let provider = ProviderId::from_name(name.trim())?;
                Some(Endpoint::at(provider, address.trim()))
            })
            .collect(),
        _ => LOCAL_SERVERS.iter().map(|provider| Endpoint::new(*provider)).collect(),
    }
}
