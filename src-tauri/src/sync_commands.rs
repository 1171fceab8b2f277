//! Commands for Settings → Sync: the remote, Sync now, syncing on its own. Each adapts one use
//! case.

use pinloom_app::ApiError;
use pinloom_app::json::{SyncReport, SyncStatus};
use tauri::State;

use crate::state::AppState;

/// Where this database syncs, whether on its own, the last result and what waits.
#[tauri::command]
#[specta::specta]
pub(crate) async fn sync_status(state: State<'_, AppState>) -> Result<SyncStatus, ApiError> {
    Ok(state.pinloom()?.sync_status().await?)
}

/// Syncs now: with `remote` when given (remembered for this database), else the one it has;
/// with `passphrase` when the person typed one (it encrypts a new remote, opens an encrypted one).
#[tauri::command]
#[specta::specta]
pub(crate) async fn sync_now(
    state: State<'_, AppState>,
    remote: Option<String>,
    passphrase: Option<String>,
) -> Result<SyncReport, ApiError> {
    Ok(state.pinloom()?.sync_unlocking(remote, passphrase).await?)
}

/// Syncs after each reply and every few minutes, or stops doing so.
#[tauri::command]
#[specta::specta]
pub(crate) async fn sync_automatic_set(
    state: State<'_, AppState>,
    on: bool,
) -> Result<SyncStatus, ApiError> {
    Ok(state.pinloom()?.set_sync_automatic(on).await?)
}

/// Syncs model profiles and prices to the person's own remote too, or stops doing so.
#[tauri::command]
#[specta::specta]
pub(crate) async fn sync_profiles_set(
    state: State<'_, AppState>,
    on: bool,
) -> Result<SyncStatus, ApiError> {
    Ok(state.pinloom()?.set_sync_profiles(on).await?)
}
