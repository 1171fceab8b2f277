//! The files the person chose in this session, and the dialogs they chose them with.
//!
//! The window's commands that read or write a file (import, export, attach) accept only a path
//! the person picked in one of these dialogs or dropped on the window since the app started. A
//! page that runs code it should not (a rendered answer that got past the sanitiser, a hostile
//! extension of the webview) can then not make Pinloom read `~/.ssh/id_ed25519` into a tree or
//! write an export over `~/.bashrc`: the paths it could name are only the ones the person
//! already handed over. The dialogs therefore run here, in the shell, not in the page: a path a
//! dialog returned to the page would be indistinguishable from one the page made up.

use std::path::PathBuf;

use pinloom_app::ApiError;
use pinloom_app::json::ExportFormat;
use tauri::{AppHandle, Runtime, State, WebviewWindow};
use tauri_plugin_dialog::{DialogExt, FileDialogBuilder, FilePath};

use crate::state::AppState;

/// A dialog over the window, titled.
fn dialog<R: Runtime>(
    app: &AppHandle<R>,
    window: &WebviewWindow<R>,
    title: &str,
) -> FileDialogBuilder<R> {
    app.dialog().file().set_parent(window).set_title(title)
}

/// What a dialog returned, as paths (a URI, which desktop dialogs do not return, is left out).
fn paths(picked: Option<Vec<FilePath>>) -> Vec<PathBuf> {
    picked.into_iter().flatten().filter_map(|path| path.into_path().ok()).collect()
}

/// Waits for a dialog's answer: the dialog answers on a thread of its own, through `answer`.
async fn answer_of(
    open: impl FnOnce(tokio::sync::oneshot::Sender<Option<Vec<FilePath>>>),
) -> Vec<PathBuf> {
    let (answer, answered) = tokio::sync::oneshot::channel();
    open(answer);
    // A dialog dropped without an answer chose nothing.
    paths(answered.await.unwrap_or(None))
}

/// Remembers what the person chose and hands it to the window as text.
fn chosen(state: &AppState, picked: Vec<PathBuf>) -> Vec<String> {
    let shown = picked.iter().map(|path| path.display().to_string()).collect();
    state.chosen.remember(picked);
    shown
}

/// Asks for files to import (Open Loom, socketteer/loom, or a history: ChatGPT, Claude, Open
/// WebUI, `llm`); none when the person cancels.
#[tauri::command]
#[specta::specta]
pub(crate) async fn choose_import_files(
    app: AppHandle,
    window: WebviewWindow,
    state: State<'_, AppState>,
) -> Result<Vec<String>, ApiError> {
    let picked = answer_of(|answer| {
        dialog(&app, &window, "Import trees")
            // What is read is told by the content; the filter only narrows what is shown.
            .add_filter(
                "Trees and chat histories (Open Loom, socketteer, ChatGPT, Claude, Open WebUI, llm)",
                &["json", "openloom", "zip", "db"],
            )
            .pick_files(move |picked| drop(answer.send(picked)));
    })
    .await;
    Ok(chosen(&state, picked))
}

/// Asks where to save an export, offering `file_name`; nothing when the person cancels.
#[tauri::command]
#[specta::specta]
pub(crate) async fn choose_export_path(
    app: AppHandle,
    window: WebviewWindow,
    state: State<'_, AppState>,
    title: String,
    file_name: String,
    format: ExportFormat,
) -> Result<Option<String>, ApiError> {
    let (kind, extension) = match format {
        ExportFormat::OpenLoom => ("Open Loom", "json"),
        ExportFormat::Markdown => ("Markdown", "md"),
    };
    let picked = answer_of(|answer| {
        dialog(&app, &window, &title)
            .set_file_name(file_name)
            .add_filter(kind, &[extension])
            .save_file(move |picked| drop(answer.send(picked.map(|path| vec![path]))));
    })
    .await;
    Ok(chosen(&state, picked).into_iter().next())
}

/// Asks for files, or one folder, to attach; none when the person cancels.
#[tauri::command]
#[specta::specta]
pub(crate) async fn choose_attachments(
    app: AppHandle,
    window: WebviewWindow,
    state: State<'_, AppState>,
    folder: bool,
) -> Result<Vec<String>, ApiError> {
    let picked = answer_of(|answer| {
        let asking = dialog(&app, &window, if folder { "Attach a folder" } else { "Attach files" });
        if folder {
            asking.pick_folder(move |picked| drop(answer.send(picked.map(|path| vec![path]))));
        } else {
            asking.pick_files(move |picked| drop(answer.send(picked)));
        }
    })
    .await;
    Ok(chosen(&state, picked))
}
