//! Commands for what surrounds a conversation: the tree map, notes, attachments, a tree's
//! settings and system context, and the ThreadMind export. Each adapts one use case.

use pinloom_app::ApiError;
use pinloom_app::json::{
    AttachAs, AttachTo, AttachmentView, ImageInput, Message, NoteView, OutlineEntry, Promotion,
    SearchResult, TreeContext, TreeMapView, TreeSettings,
};
use tauri::State;

use crate::state::AppState;
use crate::state::Use;

#[tauri::command]
#[specta::specta]
pub(crate) async fn tree_outline(
    state: State<'_, AppState>,
    tree_id: i64,
    after: Option<i64>,
    limit: u32,
) -> Result<Vec<OutlineEntry>, ApiError> {
    Ok(state.pinloom()?.tree_outline(tree_id, after, limit).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn tree_map(
    state: State<'_, AppState>,
    tree_id: i64,
) -> Result<TreeMapView, ApiError> {
    Ok(state.pinloom()?.tree_map(tree_id).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn notes_list(
    state: State<'_, AppState>,
    node_id: i64,
) -> Result<Vec<NoteView>, ApiError> {
    Ok(state.pinloom()?.notes(node_id).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn note_add(
    state: State<'_, AppState>,
    node_id: i64,
    text: String,
    included: bool,
) -> Result<i64, ApiError> {
    Ok(state.pinloom()?.annotate(node_id, text, included).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn note_include(
    state: State<'_, AppState>,
    note_id: i64,
    included: bool,
) -> Result<(), ApiError> {
    Ok(state.pinloom()?.include_annotation(note_id, included).await?)
}

/// Attaches a chosen file or folder: a file as it is, or its text as an instruction or a
/// context (`stands_as`).
#[tauri::command]
#[specta::specta]
pub(crate) async fn attach_path(
    state: State<'_, AppState>,
    tree_id: i64,
    to: AttachTo,
    path: String,
    stands_as: AttachAs,
) -> Result<AttachmentView, ApiError> {
    let path = state.chosen.check(&path, Use::Attach)?;
    Ok(state.pinloom()?.attach_path_as(tree_id, to, path, stands_as).await?)
}

/// The image at a chosen `path`, read to go with the message being written.
#[tauri::command]
#[specta::specta]
pub(crate) async fn image_read(
    state: State<'_, AppState>,
    path: String,
) -> Result<ImageInput, ApiError> {
    let path = state.chosen.check(&path, Use::Attach)?;
    Ok(state.pinloom()?.image_from_file(path).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn attachments_list(
    state: State<'_, AppState>,
    tree_id: i64,
) -> Result<Vec<AttachmentView>, ApiError> {
    Ok(state.pinloom()?.attachments(tree_id).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn attachment_remove(
    state: State<'_, AppState>,
    attachment_id: i64,
) -> Result<(), ApiError> {
    Ok(state.pinloom()?.detach(attachment_id).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn tree_settings_get(
    state: State<'_, AppState>,
    tree_id: i64,
) -> Result<TreeSettings, ApiError> {
    Ok(state.pinloom()?.tree_settings(tree_id).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn tree_settings_set(
    state: State<'_, AppState>,
    tree_id: i64,
    settings: TreeSettings,
) -> Result<TreeSettings, ApiError> {
    Ok(state.pinloom()?.set_tree_settings(tree_id, settings).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn promotion_preview(
    state: State<'_, AppState>,
    from_id: i64,
    onto_id: i64,
    passage: Option<String>,
    profile: String,
) -> Result<Promotion, ApiError> {
    Ok(state.pinloom()?.promotion_preview(from_id, onto_id, passage, profile).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn promote(
    state: State<'_, AppState>,
    from_id: i64,
    onto_id: i64,
    passage: Option<String>,
) -> Result<Message, ApiError> {
    Ok(state.pinloom()?.promote(from_id, onto_id, passage).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn search_hit_set(
    state: State<'_, AppState>,
    tree_id: i64,
    node_id: i64,
    picked: bool,
) -> Result<TreeSettings, ApiError> {
    Ok(state.pinloom()?.set_search_hit(tree_id, node_id, picked).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn tree_context_get(
    state: State<'_, AppState>,
    tree_id: i64,
) -> Result<TreeContext, ApiError> {
    Ok(state.pinloom()?.tree_context(tree_id).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn buffer_system_set(
    state: State<'_, AppState>,
    tree_id: i64,
    included: bool,
) -> Result<(), ApiError> {
    Ok(state.pinloom()?.set_buffer_includes_system(tree_id, included).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn system_context_set(
    state: State<'_, AppState>,
    tree_id: i64,
    text: String,
) -> Result<(), ApiError> {
    Ok(state.pinloom()?.set_system_context(tree_id, text).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn threadmind_export(
    state: State<'_, AppState>,
    node_id: i64,
) -> Result<String, ApiError> {
    Ok(state.pinloom()?.threadmind_markdown(node_id).await?)
}

#[tauri::command]
#[specta::specta]
pub(crate) async fn tree_search(
    state: State<'_, AppState>,
    tree_id: i64,
    query: String,
) -> Result<Vec<SearchResult>, ApiError> {
    Ok(state.pinloom()?.search(tree_id, query).await?)
}
