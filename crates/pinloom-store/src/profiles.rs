//! Model profiles: domain data, so the app, the CLI and the MCP server see the same ones.

use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::error::StoreError;
use crate::model::ModelProfile;
use crate::store::Store;

pub(crate) const PROFILE_COLUMNS: &str = "name, provider, model_id, base_url, context_window, reserve,
    native_system, completion_endpoint, tokenizer, agent_system_prompt, sampling_json, settings_json,
    prices_json, imported_from";

impl Store {
    /// Creates the profile, or replaces the one with the same name.
    pub fn put_profile(
        &self,
        profile: &ModelProfile,
        updated_at_ms: i64,
    ) -> Result<ModelProfile, StoreError> {
        validate(profile)?;
        self.write(|tx| insert_profile(tx, profile, true, updated_at_ms))?;
        self.profile(profile.name.trim())
    }

    /// Every profile, by name.
    pub fn profiles(&self) -> Result<Vec<ModelProfile>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(&format!(
            "SELECT {PROFILE_COLUMNS} FROM model_profiles ORDER BY name"
        ))?;
        let profiles = statement.query_map([], profile_from_row)?.collect::<Result<_, _>>()?;
        Ok(profiles)
    }

    /// The profile named `name`.
    pub fn profile(&self, name: &str) -> Result<ModelProfile, StoreError> {
        self.conn()
            .prepare_cached(&format!(
                "SELECT {PROFILE_COLUMNS} FROM model_profiles WHERE name = ?1"
            ))?
            .query_row([name], profile_from_row)
            .optional()?
            .ok_or_else(|| StoreError::NoSuchProfile(name.to_owned()))
    }

    /// Enables a profile that came with an imported file: it may be planned for and sent to from
    /// now on. Returns it.
    pub fn enable_profile(
        &self,
        name: &str,
        updated_at_ms: i64,
    ) -> Result<ModelProfile, StoreError> {
        self.write(|tx| {
            let changed = tx.execute(
                "UPDATE model_profiles SET imported_from = NULL, updated_at_ms = ?2 WHERE name = ?1",
                params![name, updated_at_ms],
            )?;
            if changed == 0 {
                return Err(StoreError::NoSuchProfile(name.to_owned()));
            }
            Ok(())
        })?;
        self.profile(name)
    }

    /// Deletes the profile named `name`.
    pub fn delete_profile(&self, name: &str) -> Result<(), StoreError> {
        self.write(|tx| {
            if tx.execute("DELETE FROM model_profiles WHERE name = ?1", [name])? == 0 {
                return Err(StoreError::NoSuchProfile(name.to_owned()));
            }
            Ok(())
        })
    }
}

/// Writes a profile; an existing one of the same name is replaced when `replace`, else left as
/// it is. Returns whether it was written.
pub(crate) fn insert_profile(
    conn: &rusqlite::Connection,
    profile: &ModelProfile,
    replace: bool,
    updated_at_ms: i64,
) -> Result<bool, StoreError> {
    // Replacing keeps the stored mark of a profile that came with a file: editing it is not
    // accepting it (`enable_profile` is).
    let on_conflict = if replace {
        "DO UPDATE SET provider = excluded.provider,
             model_id = excluded.model_id, base_url = excluded.base_url,
             context_window = excluded.context_window, reserve = excluded.reserve,
             native_system = excluded.native_system,
             completion_endpoint = excluded.completion_endpoint,
             tokenizer = excluded.tokenizer,
             agent_system_prompt = excluded.agent_system_prompt,
             sampling_json = excluded.sampling_json, settings_json = excluded.settings_json,
             prices_json = excluded.prices_json, updated_at_ms = excluded.updated_at_ms"
    } else {
        "DO NOTHING"
    };
    let written = conn.execute(
        &format!(
            "INSERT INTO model_profiles (name, provider, model_id, base_url, context_window,
                 reserve, native_system, completion_endpoint, tokenizer, agent_system_prompt,
                 sampling_json, settings_json, updated_at_ms, prices_json, imported_from)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
             ON CONFLICT (name) {on_conflict}"
        ),
        params![
            profile.name.trim(),
            profile.provider,
            profile.model_id,
            profile.base_url,
            profile.context_window,
            profile.reserve,
            profile.native_system,
            profile.completion_endpoint,
            profile.tokenizer,
            profile.agent_system_prompt,
            profile.sampling_json,
            profile.settings_json,
            updated_at_ms,
            profile.prices_json,
            profile.imported_from
        ],
    )?;
    Ok(written > 0)
}

pub(crate) fn validate(profile: &ModelProfile) -> Result<(), StoreError> {
    let refuse = |message: String| Err(StoreError::InvalidInput(message));
    if profile.name.trim().is_empty() {
        return refuse("a model profile needs a name".into());
    }
    if let Some(hidden) = invisible_character(&profile.name) {
        return refuse(format!(
            "the model profile name {:?} holds an invisible character (U+{:04X}), so it could pass \
             for another profile: remove it",
            profile.name, hidden as u32
        ));
    }
    if profile.context_window == 0 {
        return refuse(format!("{}: the context window must be at least 1 token", profile.name));
    }
    if profile.reserve >= profile.context_window {
        return refuse(format!(
            "{}: the reply reserve ({}) must be smaller than the context window ({}), or nothing is left for the context",
            profile.name, profile.reserve, profile.context_window
        ));
    }
    Ok(())
}

/// The first character of `text` that shows nothing or changes how the rest reads: controls,
/// zero-width and joining characters, direction marks and overrides, variation selectors, tags,
/// fillers. A name holding one can look exactly like another name.
pub fn invisible_character(text: &str) -> Option<char> {
    text.chars().find(|&c| {
        c.is_control()
            || matches!(
                c,
                '\u{00AD}'
                    | '\u{034F}'
                    | '\u{0600}'..='\u{0605}'
                    | '\u{061C}'
                    | '\u{06DD}'
                    | '\u{070F}'
                    | '\u{0890}'..='\u{0891}'
                    | '\u{08E2}'
                    | '\u{115F}'..='\u{1160}'
                    | '\u{17B4}'..='\u{17B5}'
                    | '\u{180B}'..='\u{180F}'
                    | '\u{200B}'..='\u{200F}'
                    | '\u{2028}'..='\u{202E}'
                    | '\u{2060}'..='\u{206F}'
                    // The braille blank and the Hangul fillers draw nothing.
                    | '\u{2800}'
                    | '\u{3164}'
                    | '\u{FE00}'..='\u{FE0F}'
                    | '\u{FEFF}'
                    | '\u{FFA0}'
                    | '\u{FFF0}'..='\u{FFFB}'
                    | '\u{110BD}'
                    | '\u{110CD}'
                    // Egyptian hieroglyph format controls, shorthand format controls.
                    | '\u{13430}'..='\u{1343F}'
                    | '\u{1BCA0}'..='\u{1BCA3}'
                    | '\u{1D173}'..='\u{1D17A}'
                    | '\u{E0000}'..='\u{E0FFF}'
            )
    })
}

pub(crate) fn profile_from_row(row: &Row<'_>) -> rusqlite::Result<ModelProfile> {
    Ok(ModelProfile {
        name: row.get(0)?,
        provider: row.get(1)?,
        model_id: row.get(2)?,
        base_url: row.get(3)?,
        context_window: row.get(4)?,
        reserve: row.get(5)?,
        native_system: row.get(6)?,
        completion_endpoint: row.get(7)?,
        tokenizer: row.get(8)?,
        agent_system_prompt: row.get(9)?,
        sampling_json: row.get(10)?,
        settings_json: row.get(11)?,
        prices_json: row.get(12)?,
        imported_from: row.get(13)?,
    })
}

impl Store {
    /// The learned characters-per-token ratio of a profile's model (thousandths) and how many
    /// replies taught it, if any reply has.
    pub fn calibration(&self, profile_name: &str) -> Result<Option<(u32, u64)>, StoreError> {
        let row: Option<(i64, i64)> = self
            .conn()
            .prepare_cached(
                "SELECT milli_chars_per_token, samples FROM calibrations WHERE profile_name = ?1",
            )?
            .query_row([profile_name], |row| Ok((row.get(0)?, row.get(1)?)))
            .optional()?;
        Ok(row.map(|(milli, samples)| {
            (u32::try_from(milli).unwrap_or(u32::MAX), crate::codec::count(samples))
        }))
    }

    /// Records a profile's corrected ratio, counting one more reply that taught it.
    pub fn record_calibration(
        &self,
        profile_name: &str,
        milli_chars_per_token: u32,
        at_ms: i64,
    ) -> Result<(), StoreError> {
        self.write(|tx| write_calibration(tx, profile_name, milli_chars_per_token, at_ms))
    }
}

/// Records a profile's corrected ratio inside a transaction under way.
pub(crate) fn write_calibration(
    conn: &Connection,
    profile_name: &str,
    milli_chars_per_token: u32,
    at_ms: i64,
) -> Result<(), StoreError> {
    if milli_chars_per_token == 0 {
        return Err(StoreError::InvalidInput(
            "a calibration of 0 characters a token is not a ratio".into(),
        ));
    }
    conn.execute(
        "INSERT INTO calibrations (profile_name, milli_chars_per_token, samples,
             updated_at_ms) VALUES (?1, ?2, 1, ?3)
         ON CONFLICT (profile_name) DO UPDATE SET
             milli_chars_per_token = excluded.milli_chars_per_token,
             samples = samples + 1, updated_at_ms = excluded.updated_at_ms",
        params![profile_name, milli_chars_per_token, at_ms],
    )?;
    Ok(())
}
