//! Commands for providers: keys in the OS keyring, a connection test, Ollama's local models.

use pinloom_app::ApiError;
use pinloom_app::json::{ConnectionCheck, KeyStatus, ModelProfile, ModelsReady, ProfileChoices};
use tauri::State;

use crate::state::AppState;

#[tauri::command]
#[specta::specta]
pub(crate) async fn keys_status(state: State<'_, AppState>) -> Result<Vec<KeyStatus>, ApiError> {
    Ok(state.pinloom()?.key_status().await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn key_save(
    state: State<'_, AppState>,
    provider: String,
    key: String,
) -> Result<(), ApiError> {
    Ok(state.pinloom()?.save_api_key(provider, key).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn key_forget(
    state: State<'_, AppState>,
    provider: String,
) -> Result<(), ApiError> {
    Ok(state.pinloom()?.forget_api_key(provider).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn connection_check(
    state: State<'_, AppState>,
    profile: String,
) -> Result<ConnectionCheck, ApiError> {
    Ok(state.pinloom()?.check_connection(profile).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn ollama_models(
    state: State<'_, AppState>,
    base_url: Option<String>,
) -> Result<Vec<ModelProfile>, ApiError> {
    Ok(state.pinloom()?.discover_ollama_models(base_url).await?)
}

/// Which models can answer now, and the models of local servers found on their usual ports.
#[tauri::command]
#[specta::specta]
pub(crate) async fn models_ready(state: State<'_, AppState>) -> Result<ModelsReady, ApiError> {
    Ok(state.pinloom()?.models_ready().await?)
}

/// How the model `model_id` at `provider` is best counted, when Pinloom knows (the budget form
/// sets it as the person types a model's id).
#[tauri::command]
#[specta::specta]
pub(crate) async fn profile_counting(
    state: State<'_, AppState>,
    provider: String,
    model_id: String,
) -> Result<Option<String>, ApiError> {
    Ok(state.pinloom()?.profile_counting(&provider, &model_id))
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn profile_choices(
    state: State<'_, AppState>,
) -> Result<ProfileChoices, ApiError> {
    Ok(state.pinloom()?.profile_choices())
}
