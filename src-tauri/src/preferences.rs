//! UI preferences (not domain data) in the settings file that tauri-plugin-store keeps beside the
//! database. Domain data such as model profiles lives in the database, where the CLI and the MCP
//! server see it too.

use std::path::{Path, PathBuf};

use pinloom_app::{ApiError, ErrorCode};
use serde::{Deserialize, Serialize};
use tauri::AppHandle;
use tauri_plugin_store::StoreExt;

const SETTINGS_FILE_NAME: &str = "settings.json";
const KEY: &str = "ui";

/// What the window remembers between runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct UiPreferences {
    /// The tree that was open when the app last ran.
    pub(crate) last_tree_id: Option<i64>,
    /// The model profile chosen last.
    pub(crate) default_model: Option<String>,
    /// `light`, `dark`, or absent to follow the system.
    pub(crate) theme: Option<String>,
    /// Whether the context inspector is hidden (it is shown unless the person hid it).
    pub(crate) inspector_hidden: Option<bool>,
}

fn settings_path(data_dir: &Path) -> PathBuf {
    data_dir.join(SETTINGS_FILE_NAME)
}

fn settings_error(path: &Path, what: &str, error: impl std::fmt::Display) -> ApiError {
    ApiError {
        code: ErrorCode::Internal,
        message: format!("could not {what} the settings file {}: {error}", path.display()),
    }
}

pub(crate) fn load(app: &AppHandle, data_dir: &Path) -> Result<UiPreferences, ApiError> {
    let path = settings_path(data_dir);
    let store = app.store(&path).map_err(|error| settings_error(&path, "read", error))?;
    // A settings file from another version, or edited by hand into a shape we do not know, falls
    // back to defaults: preferences are conveniences, never worth refusing to start over.
    Ok(store.get(KEY).and_then(|value| serde_json::from_value(value).ok()).unwrap_or_default())
}

pub(crate) fn save(
    app: &AppHandle,
    data_dir: &Path,
    preferences: &UiPreferences,
) -> Result<(), ApiError> {
    let path = settings_path(data_dir);
    let store = app.store(&path).map_err(|error| settings_error(&path, "open", error))?;
    let value = serde_json::to_value(preferences)
        .map_err(|error| settings_error(&path, "encode", error))?;
    store.set(KEY, value);
    store.save().map_err(|error| settings_error(&path, "write", error))
}
