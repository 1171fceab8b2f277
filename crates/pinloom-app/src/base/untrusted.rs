//! What an imported document or a sync folder may not decide. A tree file comes from anyone, and
//! so does a sync folder's content (a team's member, whoever controls a remote): it must not
//! choose where the person's API keys go, nor pass a profile off as one of theirs. Model profiles keep
//! their address only when it is a local server's that takes no key; a profile named like one of
//! the person's (invisible characters, look-alike letters) is held back; a tree's settings may
//! name a summariser only among the profiles the person already had, or a local one the file
//! brings. Each thing held back is said in the import report.

use std::collections::HashSet;
use std::net::IpAddr;

use pinloom_providers::ProviderId;
use pinloom_store as store;
use serde_json::Value;
use unicode_security::confusable_detection::skeleton;

use crate::json::TreeSettings;

/// The imported profiles that may be written, with what a document may not set taken out.
/// `here` are the profiles already in the database.
pub(crate) fn admit_profiles(
    profiles: Vec<store::ModelProfile>,
    here: &[store::ModelProfile],
    notes: &mut dyn FnMut(String),
) -> Vec<store::ModelProfile> {
    let mut seen: Vec<(String, String)> =
        here.iter().map(|profile| (profile.name.clone(), look(&profile.name))).collect();
    let mut admitted = Vec::with_capacity(profiles.len());
    for mut profile in profiles {
        if let Some(hidden) = store::invisible_character(&profile.name) {
            notes(format!(
                "model profile {:?} was left out: its name holds an invisible character \
                 (U+{:04X}), so it could pass for another",
                profile.name, hidden as u32
            ));
            continue;
        }
        let looks = look(&profile.name);
        if let Some((twin, _)) =
            seen.iter().find(|(name, skeleton)| *name != profile.name && *skeleton == looks)
        {
            notes(format!(
                "model profile {:?} was left out: it looks like the profile {twin:?} but is \
                 spelled with other characters",
                profile.name
            ));
            continue;
        }
        // Every number as the budget panel checks it: a price from the file that is not a
        // number of dollars costs the file its prices; anything else wrong, the profile.
        if let Err(refusal) = crate::base::profile_check::check(&profile.clone().into()) {
            let without_prices = store::ModelProfile { prices_json: None, ..profile.clone() };
            if profile.prices_json.is_some()
                && crate::base::profile_check::check(&without_prices.clone().into()).is_ok()
            {
                notes(format!(
                    "model profile {:?}: its prices were not imported ({})",
                    profile.name, refusal.message
                ));
                profile = without_prices;
            } else {
                notes(format!(
                    "model profile {:?} was left out: {}",
                    profile.name, refusal.message
                ));
                continue;
            }
        }
        // Stored as Pinloom writes it: what of its sampling, settings and prices was read, and
        // nothing else of the file's.
        profile = crate::json::ModelProfile::from(profile).into_record();
        if let Some(address) = profile.base_url.take() {
            match ProviderId::from_name(&profile.provider) {
                Some(provider)
                    if provider.key_variable().is_none()
                        && is_loopback(&address)
                        && is_server_root(&address, provider) =>
                {
                    profile.base_url = Some(address);
                }
                provider => notes(format!(
                    "model profile {:?}: its address {address:?} was not imported, so no key of \
                     yours can be sent there; it uses {}'s own address (set another in the \
                     budget panel if you trust it)",
                    profile.name,
                    provider.map_or("its provider", ProviderId::display_name)
                )),
            }
        }
        seen.push((profile.name.clone(), looks));
        admitted.push(profile);
    }
    admitted
}

/// The profiles an imported tree's settings may name as summariser: the person's own, and the
/// imported ones that take no key (their address, kept or default, is this machine's). A
/// summariser is used without being chosen in the window: an imported one with a provider's key
/// would spend the person's money on a model the file picked.
pub(crate) fn possible_summarizers<'a>(
    here: &'a [store::ModelProfile],
    admitted: &'a [store::ModelProfile],
) -> HashSet<&'a str> {
    let keyless = admitted.iter().filter(|profile| {
        ProviderId::from_name(&profile.provider)
            .is_some_and(|provider| provider.key_variable().is_none())
    });
    here.iter().chain(keyless).map(|profile| profile.name.as_str()).collect()
}

/// A tree's imported settings as far as they may be kept: unreadable or unusable settings are
/// dropped whole, and a summariser outside `summarizers` is removed.
pub(crate) fn admit_settings(
    settings: &mut Option<Value>,
    summarizers: &HashSet<&str>,
    title: &str,
    notes: &mut dyn FnMut(String),
) {
    let Some(value) = settings.as_mut() else { return };
    let read = match serde_json::from_value::<TreeSettings>(value.clone()) {
        Ok(read) => read.check().map(|()| read).map_err(|error| error.message),
        Err(error) => Err(error.to_string()),
    };
    let read = match read {
        Ok(read) => read,
        Err(why) => {
            notes(format!(
                "the settings of {title:?} were left out ({why}); the tree uses the defaults"
            ));
            *settings = None;
            return;
        }
    };
    if let Some(name) = read.summarizer
        && !summarizers.contains(name.as_str())
    {
        notes(format!(
            "the summariser {name:?} of {title:?} was not preserved: an imported tree may name only a \
             model profile you already had, or a local one; choose one in the tree's settings"
        ));
        if let Some(object) = value.as_object_mut() {
            object.remove("summarizer");
        }
    }
}

/// What a name looks like: its confusable skeleton (UTS #39), case folded, with every run of
/// spaces of any width (a doubled space, a hair or a thin space) read as one space.
fn look(name: &str) -> String {
    let spaced: String = name.split_whitespace().collect::<Vec<_>>().join(" ");
    skeleton(&spaced).collect::<String>().to_lowercase()
}

/// Whether `address` is a local server's root as `provider` is addressed: no query or fragment
/// (a fragment would swallow the path Pinloom appends, a query ride along with every request)
/// and no path but the one its API lives under (`/v1` for the OpenAI-compatible servers, none for
/// Ollama). A file's `http://127.0.0.1:11434/api/pull#` would otherwise turn a summary request
/// into a model download.
fn is_server_root(address: &str, provider: ProviderId) -> bool {
    if address.contains(['?', '#']) {
        return false;
    }
    let rest = address.split_once("://").map_or("", |(_, rest)| rest);
    let path = rest.find('/').map_or("", |at| &rest[at..]).trim_end_matches('/');
    match provider {
        ProviderId::Ollama => path.is_empty(),
        _ => path.is_empty() || path == "/v1",
    }
}

/// Whether `address` names this machine (`localhost`, `127.0.0.0/8`, `::1`) over HTTP(S), with
/// nothing that could make it mean another host (user info, a backslash).
fn is_loopback(address: &str) -> bool {
    let Some(rest) = address.strip_prefix("http://").or_else(|| address.strip_prefix("https://"))
    else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains(['@', '\\']) {
        return false;
    }
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or(""),
        None => authority.rsplit_once(':').map_or(authority, |(host, _port)| host),
    };
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_address_is_only_a_servers_root() {
        assert!(is_server_root("http://127.0.0.1:11434", ProviderId::Ollama));
        assert!(is_server_root("http://127.0.0.1:11434/", ProviderId::Ollama));
        assert!(is_server_root("http://localhost:8000/v1", ProviderId::Vllm));
        for (address, provider) in [
            ("http://127.0.0.1:11434/api/pull#", ProviderId::Ollama),
            ("http://127.0.0.1:11434/api", ProviderId::Ollama),
            ("http://127.0.0.1:11434/v1", ProviderId::Ollama),
            ("http://127.0.0.1:8000/v1?key=x", ProviderId::Vllm),
            ("http://127.0.0.1:8000/v1/../admin", ProviderId::Vllm),
            ("http://127.0.0.1:8000/x", ProviderId::LlamaCpp),
        ] {
            assert!(!is_server_root(address, provider), "{address}");
        }
    }

    #[test]
    fn only_this_machine_is_loopback() {
        for address in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434",
            "https://127.9.9.9/v1",
            "http://[::1]:1234/v1",
        ] {
            assert!(is_loopback(address), "{address}");
        }
        for address in [
            "http://127.0.0.1.evil.example/v1",
            "http://127.0.0.1@evil.example/v1",
            "http://evil.example/127.0.0.1",
            "http://localhost.evil.example:80",
            "http://127.0.0.1\\@evil.example",
            "ftp://127.0.0.1/",
            "http://[::2]:80/",
            "10.0.0.1",
        ] {
            assert!(!is_loopback(address), "{address}");
        }
    }

    #[test]
    fn look_alike_names_share_a_skeleton() {
        assert_eq!(look("GPT-4o (OpenAI)"), look("GPT-4о (ОpenAI)"));
        assert_ne!(look("GPT-4o (OpenAI)"), look("GPT-4.1 (OpenAI)"));
    }
}
