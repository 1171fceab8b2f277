//! The commands the window calls. Each adapts one application-layer use case; none holds logic.

use pinloom_app::ApiError;
use pinloom_app::json::{
    EmptiedTrashView, ExportDone, ExportRequest, ImportReportView, Message, NodeView, ReplyTokens,
    TransferProgress, TrashView, TreeMode, TreeSummary,
};
use serde::{Deserialize, Serialize};
use tauri::ipc::Channel;
use tauri::{AppHandle, State};
use tauri_specta::Event;

use crate::preferences::{self, UiPreferences};
use crate::state::AppState;
use crate::state::Use;

/// Sent after any change to the list of trees or their contents, so every window refreshes.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TreesChanged {
    /// The tree that changed.
    pub(crate) tree_id: i64,
}

/// Sent when another process (the MCP server, the command-line program, a second app) wrote to
/// the database, so the window reads again what it shows.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DatabaseChanged {}

/// Sent when an ancestor summary of a tree is written or being written, or failed, in this
/// process (they are written in the background), so the window shows it as it lands.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SummariesChanged {
    /// The tree.
    pub(crate) tree_id: i64,
}

/// Tells the window of every summary this process writes in the background.
pub(crate) fn watch_summaries(app: AppHandle, pinloom: pinloom_app::Pinloom) {
    let mut landed = pinloom.summaries_landed();
    tauri::async_runtime::spawn(async move {
        loop {
            match landed.recv().await {
                Ok(tree_id) => {
                    if let Err(error) = (SummariesChanged { tree_id }).emit(&app) {
                        tracing::warn!(%error, "could not announce a summary");
                    }
                }
                // Missed some: the window rereads whatever it shows.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    let _ = (DatabaseChanged {}).emit(&app);
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    });
}

/// How often the database is asked whether another process wrote to it: one cheap pragma, and
/// a second is as soon as a person switching from an agent's terminal looks.
const WATCH_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Tells the window whenever another process writes to the database.
pub(crate) fn watch_other_writers(app: AppHandle, pinloom: pinloom_app::Pinloom) {
    tauri::async_runtime::spawn(async move {
        let mut writes = pinloom.outside_writes(WATCH_EVERY).await;
        loop {
            writes.changed().await;
            if let Err(error) = (DatabaseChanged {}).emit(&app) {
                tracing::warn!(%error, "could not announce another writer's change");
            }
        }
    });
}

fn announce(app: &AppHandle, tree_id: i64) {
    // A window that misses the event still shows correct data after its next call; losing it is
    // not worth failing the write that already succeeded.
    if let Err(error) = (TreesChanged { tree_id }).emit(app) {
        tracing::warn!(%error, "could not announce a change");
    }
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn tree_create(
    app: AppHandle,
    state: State<'_, AppState>,
    title: String,
    mode: TreeMode,
) -> Result<TreeSummary, ApiError> {
    let tree = state.pinloom()?.create_tree(title, mode).await?;
    announce(&app, tree.id);
    Ok(tree)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn tree_rename(
    app: AppHandle,
    state: State<'_, AppState>,
    tree_id: i64,
    title: String,
) -> Result<TreeSummary, ApiError> {
    let tree = state.pinloom()?.rename_tree(tree_id, title).await?;
    announce(&app, tree.id);
    Ok(tree)
}

/// Puts a tree in the trash (nothing is erased until the trash is emptied).
#[tauri::command]
#[specta::specta]
pub(crate) async fn tree_trash(
    app: AppHandle,
    state: State<'_, AppState>,
    tree_id: i64,
) -> Result<TreeSummary, ApiError> {
    let tree = state.pinloom()?.trash_tree(tree_id).await?;
    announce(&app, tree.id);
    Ok(tree)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn tree_restore(
    app: AppHandle,
    state: State<'_, AppState>,
    tree_id: i64,
) -> Result<TreeSummary, ApiError> {
    let tree = state.pinloom()?.restore_tree(tree_id).await?;
    announce(&app, tree.id);
    Ok(tree)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn trash_list(state: State<'_, AppState>) -> Result<TrashView, ApiError> {
    Ok(state.pinloom()?.trash().await?)
}

/// Erases what is in the trash for good.
#[tauri::command]
#[specta::specta]
pub(crate) async fn trash_empty(state: State<'_, AppState>) -> Result<EmptiedTrashView, ApiError> {
    Ok(state.pinloom()?.empty_trash().await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn tree_list(state: State<'_, AppState>) -> Result<Vec<TreeSummary>, ApiError> {
    Ok(state.pinloom()?.list_trees().await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn tree_open(
    state: State<'_, AppState>,
    tree_id: i64,
) -> Result<TreeSummary, ApiError> {
    Ok(state.pinloom()?.tree_summary(tree_id).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn message_append(
    app: AppHandle,
    state: State<'_, AppState>,
    tree_id: i64,
    parent_id: Option<i64>,
    text: String,
) -> Result<Message, ApiError> {
    let message = state.pinloom()?.append_message(tree_id, parent_id, text).await?;
    announce(&app, tree_id);
    Ok(message)
}

/// Saves the person's rewrite of a model's reply as a new reply beside it; nothing is sent.
#[tauri::command]
#[specta::specta]
pub(crate) async fn reply_edit(
    state: State<'_, AppState>,
    node_id: i64,
    text: String,
) -> Result<NodeView, ApiError> {
    Ok(state.pinloom()?.edit_reply(node_id, text).await?)
}

/// The tokens a continuation was generated as, with their probabilities and alternatives; none
/// when its provider reported none.
#[tauri::command]
#[specta::specta]
pub(crate) async fn reply_tokens(
    state: State<'_, AppState>,
    node_id: i64,
) -> Result<ReplyTokens, ApiError> {
    Ok(state.pinloom()?.reply_tokens(node_id).await?)
}

/// Branches a continuation at its token `index` with `alternative` in its place, as a new
/// sibling; nothing is sent (the window continues it).
#[tauri::command]
#[specta::specta]
pub(crate) async fn reply_branch_at_token(
    state: State<'_, AppState>,
    node_id: i64,
    index: u32,
    alternative: String,
) -> Result<NodeView, ApiError> {
    Ok(state.pinloom()?.branch_at_token(node_id, index, alternative).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn preferences_get(
    app: AppHandle,
    state: State<'_, AppState>,
) -> Result<UiPreferences, ApiError> {
    preferences::load(&app, &state.data_dir)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn preferences_set(
    app: AppHandle,
    state: State<'_, AppState>,
    preferences: UiPreferences,
) -> Result<(), ApiError> {
    preferences::save(&app, &state.data_dir, &preferences)
}

/// What the About section shows: which Pinloom this is and where it keeps things.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub(crate) struct About {
    /// The app's version.
    pub(crate) version: String,
    /// The data folder: the database, the settings file and the logs.
    pub(crate) data_folder: String,
    /// The database file.
    pub(crate) database: String,
    /// The folder of the log files (a new file each day, the last seven kept).
    pub(crate) log_folder: String,
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn about(state: State<'_, AppState>) -> Result<About, ApiError> {
    let data_dir = &state.data_dir;
    Ok(About {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        data_folder: data_dir.display().to_string(),
        database: data_dir.join(pinloom_app::DATABASE_FILE_NAME).display().to_string(),
        log_folder: data_dir.join(crate::state::LOG_FOLDER).display().to_string(),
    })
}

/// Sends an import's or export's progress to the window; a window that stopped listening misses
/// the bar, not the work.
fn progress_to(channel: Channel<TransferProgress>) -> impl FnMut(TransferProgress) + Send {
    move |step| drop(channel.send(step))
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn tree_import(
    app: AppHandle,
    state: State<'_, AppState>,
    path: String,
    on_progress: Channel<TransferProgress>,
) -> Result<ImportReportView, ApiError> {
    let path = state.chosen.check(&path, Use::Import)?;
    let pinloom = state.pinloom()?;
    let report = pinloom.import_file(path, progress_to(on_progress)).await?;
    for tree in &report.trees {
        announce(&app, tree.id);
    }
    Ok(ImportReportView::from(&report))
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn tree_export(
    state: State<'_, AppState>,
    request: ExportRequest,
    on_progress: Channel<TransferProgress>,
) -> Result<ExportDone, ApiError> {
    state.chosen.check(&request.path, Use::Export)?;
    Ok(state.pinloom()?.export_file(request, progress_to(on_progress)).await?)
}
