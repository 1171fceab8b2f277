//! Commands for Settings → Sync: the remote, Sync now, syncing on its own, teams. Each adapts
//! one use case.

use pinloom_app::ApiError;
use pinloom_app::json::{SyncReport, SyncStatus, TeamView};
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

/// The teams this database has joined.
#[tauri::command]
#[specta::specta]
pub(crate) async fn team_list(state: State<'_, AppState>) -> Result<Vec<TeamView>, ApiError> {
    Ok(state.pinloom()?.teams().await?)
}

/// Creates or joins the team `team` whose trees are shared through `remote` (an empty
/// repository makes a new team).
#[tauri::command]
#[specta::specta]
pub(crate) async fn team_join(
    state: State<'_, AppState>,
    team: String,
    remote: String,
    your_name: Option<String>,
) -> Result<SyncReport, ApiError> {
    Ok(state.pinloom()?.join_team(team, remote, your_name).await?)
}

/// The invitation to a team: text holding its name and remote, for a colleague to paste.
#[tauri::command]
#[specta::specta]
pub(crate) async fn team_invitation(
    state: State<'_, AppState>,
    team: String,
) -> Result<String, ApiError> {
    Ok(state.pinloom()?.team_invitation(team).await?)
}

/// Joins the team an invitation names.
#[tauri::command]
#[specta::specta]
pub(crate) async fn team_join_invitation(
    state: State<'_, AppState>,
    invitation: String,
    your_name: Option<String>,
) -> Result<SyncReport, ApiError> {
    Ok(state.pinloom()?.join_by_invitation(invitation, your_name).await?)
}

/// Removes a member from a team this machine owns, and syncs the team.
#[tauri::command]
#[specta::specta]
pub(crate) async fn team_remove_member(
    state: State<'_, AppState>,
    team: String,
    member: String,
) -> Result<SyncReport, ApiError> {
    Ok(state.pinloom()?.remove_team_member(team, member).await?)
}

/// Leaves a team; the trees that came through it stay here.
#[tauri::command]
#[specta::specta]
pub(crate) async fn team_leave(
    state: State<'_, AppState>,
    team: String,
) -> Result<Vec<TeamView>, ApiError> {
    Ok(state.pinloom()?.leave_team(team).await?)
}

/// Shares tree `tree_id` with a team joined here, as `shared_by` (git's user name when absent),
/// and syncs the team.
#[tauri::command]
#[specta::specta]
pub(crate) async fn team_share_tree(
    state: State<'_, AppState>,
    tree_id: i64,
    team: String,
    shared_by: Option<String>,
) -> Result<SyncReport, ApiError> {
    Ok(state.pinloom()?.share_tree(tree_id, team, None, shared_by).await?)
}
