//! What an imported document may not decide. A tree file comes from anyone: it must not choose
//! where the person's API keys go, nor pass a profile off as one of theirs. Model profiles keep
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

use super::open_loom_import::Notes;
use crate::conversation::settings::TreeSettings;

/// The imported profiles that may be written, with what a document may not set taken out.
/// `here` are the profiles already in the database.
pub(super) fn admit_profiles(
    profiles: Vec<store::ModelProfile>,
    here: &[store::ModelProfile],
    notes: &mut Notes,
) -> Vec<store::ModelProfile> {
    let mut seen: Vec<(String, String)> =
        here.iter().map(|profile| (profile.name.clone(), look(&profile.name))).collect();
    let mut admitted = Vec::with_capacity(profiles.len());
    for mut profile in profiles {
        if let Some(hidden) = store::invisible_character(&profile.name) {
            notes.add(format!(
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
            notes.add(format!(
                "model profile {:?} was left out: it looks like the profile {twin:?} but is \
                 spelled with other characters",
                profile.name
            ));
            continue;
        }
        if let Some(address) = profile.base_url.take() {
            match ProviderId::from_name(&profile.provider) {
                Some(provider) if provider.key_variable().is_none() && is_loopback(&address) => {
                    profile.base_url = Some(address);
                }
                provider => notes.add(format!(
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
pub(super) fn possible_summarizers<'a>(
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
pub(super) fn admit_settings(
    settings: &mut Option<Value>,
    summarizers: &HashSet<&str>,
    title: &str,
    notes: &mut Notes,
) {
    let Some(value) = settings.as_mut() else { return };
    let read = match serde_json::from_value::<TreeSettings>(value.clone()) {
        Ok(read) => read.check().map(|()| read).map_err(|error| error.message),
        Err(error) => Err(error.to_string()),
    };
    let read = match read {
        Ok(read) => read,
        Err(why) => {
            notes.add(format!(
                "the settings of {title:?} were left out ({why}); the tree uses the defaults"
            ));
            *settings = None;
            return;
        }
    };
    if let Some(name) = read.summarizer
        && !summarizers.contains(name.as_str())
    {
        notes.add(format!(
            "the summariser {name:?} of {title:?} was not kept: an imported tree may name only a \
             model profile you already had, or a local one; choose one in the tree's settings"
        ));
        if let Some(object) = value.as_object_mut() {
            object.remove("summarizer");
        }
    }
}

/// What a name looks like: its confusable skeleton (UTS #39), case folded.
fn look(name: &str) -> String {
    skeleton(name.trim()).collect::<String>().to_lowercase()
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
