//! What a sync folder brings, admitted as an imported file's content is: a folder is written by
//! other machines and other people (a team's member, whoever controls a remote), so nothing in it
//! is believed that this machine can work out for itself, and nothing in it may decide where the
//! person's keys go.
//!
//! - Token counts are counted here from the message's own text, never taken from the record (a
//!   468 KB message claiming one token would be planned as nearly free).
//! - An image's kind and size are read from its bytes (a 40000 × 40000 PNG labelled 1 × 1, an
//!   SVG or an HTML page labelled as an image, are not sent as what they claim).
//! - A tree's settings pass the checks the window's settings pass, and may name as summariser only
//!   a profile the person has.
//! - Model profiles come only from the person's own remote, only when they chose to sync them,
//!   through the imported file's rules (an address a key could go to is dropped); a version that
//!   changes a profile's provider, address or system prompt arrives disabled until the person
//!   enables it.
//!
//! Which trees a folder may touch at all is the store's rule (`Store::sync_fold`).

use std::collections::HashSet;

use pinloom_store::{
    AttachmentRecord, MessageRecord, ModelProfile, ProfileRecord, Store, SyncOp, SyncRecord,
    TreeRecord,
};
use serde_json::Value;

use crate::base::engine_inputs::token_counts;
use crate::base::media::image_from_data_url;
use crate::base::untrusted;
use crate::json::TreeSettings;

/// What may be folded of what arrived, and what was refused.
#[derive(Debug, Default)]
pub(in crate::sync) struct Admitted {
    pub(in crate::sync) records: Vec<SyncRecord>,
    pub(in crate::sync) ops: Vec<SyncOp>,
    /// Refused, with why (by id): reported once, marked as held.
    pub(in crate::sync) refused: Vec<(String, String)>,
    /// What was changed on the way in, in words (each said once).
    pub(in crate::sync) notes: Vec<String>,
}

/// Admits what arrived from the folder of `remote`; `from_team` for a team's.
pub(in crate::sync) fn admit(
    store: &Store,
    remote: &str,
    records: Vec<SyncRecord>,
    ops: Vec<SyncOp>,
    from_team: bool,
) -> anyhow::Result<Admitted> {
    let mut admitted = Admitted::default();
    let here = store.profiles()?;
    let summarizers: HashSet<&str> = here.iter().map(|profile| profile.name.as_str()).collect();
    let profiles_chosen = store.sync_profiles()?;
    let mut messages = Vec::new();
    for mut record in records {
        if let SyncRecord::Tree(TreeRecord { settings, title, .. }) = &mut record
            && let Some(note) = admit_settings(settings, &summarizers)
        {
            admitted.notes.push(format!("The settings of {title:?} {note}."));
        }
        match record {
            SyncRecord::Profile(ProfileRecord { id, profile, updated_at_ms }) => {
                if from_team {
                    // Refused by the store, which says so.
                    admitted.records.push(SyncRecord::Profile(ProfileRecord {
                        id,
                        profile,
                        updated_at_ms,
                    }));
                } else if profiles_chosen {
                    if let Some(profile) = admit_profile(profile, &here, remote, &mut admitted) {
                        admitted.records.push(SyncRecord::Profile(ProfileRecord {
                            id,
                            profile,
                            updated_at_ms,
                        }));
                    } else {
                        admitted.refused.push((id, "its model profile was left out".to_owned()));
                    }
                }
                // Not chosen: left in the folder, unread, for the day the person chooses it.
            }
            SyncRecord::Message(_) => messages.push(record),
            SyncRecord::Attachment(AttachmentRecord { ref id, ref role, ref content, .. })
                if role == "image" =>
            {
                match image_from_data_url(content, "the image") {
                    Ok(stored) => {
                        if let SyncRecord::Attachment(AttachmentRecord { content, .. }) =
                            &mut record
                        {
                            *content = stored;
                        }
                        admitted.records.push(record);
                    }
                    Err(refusal) => admitted.refused.push((
                        id.clone(),
                        format!("its image is not one a model may be sent ({})", refusal.message),
                    )),
                }
            }
            other => admitted.records.push(other),
        }
    }
    admitted.records.extend(counted_here(messages));
    for op in ops {
        if op.kind == "tree" && op.field == "settings" {
            let mut settings = op.value.clone();
            if let Some(note) = admit_settings(&mut settings, &summarizers) {
                admitted.refused.push((op.id, format!("a change of a tree's settings {note}")));
                continue;
            }
        }
        admitted.ops.push(op);
    }
    Ok(admitted)
}

/// Messages with their token counts counted here, on every core (a first sync brings a whole
/// tree's).
fn counted_here(mut messages: Vec<SyncRecord>) -> Vec<SyncRecord> {
    if !messages.is_empty() {
        crate::base::engine_inputs::load_written_counters();
    }
    crate::runtime::on_every_core(&mut messages, |message| {
        if let SyncRecord::Message(MessageRecord { parts, token_counts: counts, .. }) = message {
            *counts = token_counts(parts).into_iter().collect();
        }
    });
    messages
}

/// A tree's settings from a folder, as far as they may be kept; what was done, in words, when
/// anything was. Settings that do not pass the window's checks are dropped whole (the tree uses
/// the defaults); a summariser the person has no profile of is removed.
fn admit_settings(settings: &mut Value, summarizers: &HashSet<&str>) -> Option<String> {
    let mut checked = match settings {
        Value::Object(object) => object.clone(),
        Value::Null => return None,
        _ => {
            *settings = Value::Object(serde_json::Map::new());
            return Some("were not settings; the tree uses the defaults".to_owned());
        }
    };
    // Search hits are global ids in a folder and row numbers here; the store turns them.
    checked.remove("searchHits");
    let read = serde_json::from_value::<TreeSettings>(Value::Object(checked))
        .map_err(|error| error.to_string())
        .and_then(|read| read.check().map(|()| read).map_err(|error| error.message));
    match read {
        Err(why) => {
            *settings = Value::Object(serde_json::Map::new());
            Some(format!("were left out ({why}); the tree uses the defaults"))
        }
        Ok(read) => {
            let name = read.summarizer?;
            if summarizers.contains(name.as_str()) {
                return None;
            }
            if let Some(object) = settings.as_object_mut() {
                object.remove("summarizer");
            }
            Some(format!(
                "named the summariser {name:?}, which is not one of your model profiles; it was \
                 left out"
            ))
        }
    }
}

/// A profile version from the person's own remote. One whose provider, address and system
/// prompt are those of the enabled profile of its name here stays enabled, its address kept (it
/// is this machine's already): prices, sampling and budgets may change. Any other goes through
/// the imported file's rules (an address a key could go to is dropped) and waits to be enabled.
fn admit_profile(
    profile: ModelProfile,
    here: &[ModelProfile],
    remote: &str,
    admitted: &mut Admitted,
) -> Option<ModelProfile> {
    let unchanged = here.iter().any(|mine| {
        mine.name == profile.name
            && mine.imported_from.is_none()
            && mine.provider == profile.provider
            && mine.base_url == profile.base_url
            && mine.agent_system_prompt == profile.agent_system_prompt
    });
    let address = profile.base_url.clone();
    let mut notes = Vec::new();
    let mut profile =
        untrusted::admit_profiles(vec![profile], here, &mut |note| notes.push(note)).pop()?;
    if unchanged {
        profile.base_url = address;
        return Some(profile);
    }
    for note in notes {
        admitted.notes.push(format!("From {remote}: {note}."));
    }
    profile.imported_from = Some(format!("your sync remote {remote}"));
    admitted.notes.push(format!(
        "The model profile {:?} arrived from {remote} with a provider, an address or a system \
         prompt this machine does not have: it is not enabled, and nothing is planned for or \
         sent to it until you enable it in Settings → Models from imported files.",
        profile.name
    ));
    Some(profile)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn proxy_profile(address: &str, window: u32) -> ModelProfile {
        ModelProfile {
            name: "GPT-4o (proxy)".into(),
            provider: "openai".into(),
            model_id: "gpt-4o".into(),
            base_url: Some(address.into()),
            context_window: window,
            reserve: 4_096,
            native_system: true,
            completion_endpoint: false,
            tokenizer: "o200k".into(),
            agent_system_prompt: String::new(),
            sampling_json: "{}".into(),
            settings_json: "{}".into(),
            prices_json: None,
            imported_from: None,
        }
    }

    #[test]
    fn a_profile_from_the_own_remote_stays_enabled_only_where_it_sends_where_it_did() {
        let here = [proxy_profile("https://proxy.example/v1", 128_000)];
        let mut admitted = Admitted::default();
        // A new version with a larger window, same provider, address and prompt: as it is.
        let newer = proxy_profile("https://proxy.example/v1", 200_000);
        let kept = admit_profile(newer, &here, "origin", &mut admitted).unwrap();
        assert_eq!(kept.imported_from, None);
        assert_eq!(kept.base_url.as_deref(), Some("https://proxy.example/v1"));
        assert_eq!(kept.context_window, 200_000);
        assert!(admitted.notes.is_empty(), "{:?}", admitted.notes);
        // Another address: dropped, and the version waits to be enabled.
        let moved = proxy_profile("https://collector.example/v1", 200_000);
        let waiting = admit_profile(moved, &here, "origin", &mut admitted).unwrap();
        assert_eq!(waiting.base_url, None);
        assert!(waiting.imported_from.is_some());
        assert!(admitted.notes.iter().any(|note| note.contains("not enabled")));
    }

    #[test]
    fn a_teams_tree_settings_pass_the_windows_checks_and_name_only_the_persons_summarisers() {
        let mine: HashSet<&str> = ["Local Llama"].into();
        let mut fine = json!({ "summarizer": "Local Llama", "searchHits": ["0190aaaa"] });
        assert_eq!(admit_settings(&mut fine, &mine), None);
        assert_eq!(fine["searchHits"], json!(["0190aaaa"]), "hits are the store's to turn");
        let mut foreign = json!({ "summarizer": "GPT-4o (OpenAI)", "tokenBuffer": 100 });
        let note = admit_settings(&mut foreign, &mine).unwrap();
        assert!(note.contains("not one of your model profiles"), "{note}");
        assert_eq!(foreign, json!({ "tokenBuffer": 100 }));
        let mut unusable = json!({ "depthBudgets": [0, 0, 0], "maxFileBytes": -1 });
        let note = admit_settings(&mut unusable, &mine).unwrap();
        assert!(note.contains("the tree uses the defaults"), "{note}");
        assert_eq!(unusable, json!({}));
    }
}
