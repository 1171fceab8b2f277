//! Pinloom's desktop shell: the only crate that knows Tauri.
//!
//! It resolves the data folder, opens the application layer, and exposes its use cases as typed
//! commands; each command is an adapter of a few lines. The TypeScript bindings in
//! `ui/src/lib/bindings.ts` are generated from [`specta_builder`].

mod chosen_files;
pub mod command_names;
mod commands;
mod conversation;
mod preferences;
mod provider_settings;
mod rendering;
mod state;
mod sync_commands;
mod tree_tools;

use std::path::PathBuf;

use pinloom_app::{ApiError, Pinloom};

use serde::Serialize;
use specta_typescript::Typescript;
use state::{AppState, LOG_FOLDER};
use tauri::Manager;

/// Where the committed bindings live, relative to the repository root.
pub const BINDINGS_PATH: &str = "ui/src/lib/bindings.ts";

/// The one description of the IPC surface: commands, events and their types.
pub fn specta_builder() -> tauri_specta::Builder<tauri::Wry> {
    let builder = tauri_specta::Builder::<tauri::Wry>::new()
        .commands(tauri_specta::collect_commands![
            commands::about,
            commands::tree_create,
            commands::tree_list,
            commands::tree_rename,
            commands::tree_trash,
            commands::tree_restore,
            commands::trash_list,
            commands::trash_empty,
            sync_commands::sync_status,
            sync_commands::sync_now,
            sync_commands::sync_automatic_set,
            sync_commands::sync_profiles_set,
            sync_commands::team_list,
            sync_commands::team_join,
            sync_commands::team_invitation,
            sync_commands::team_join_invitation,
            sync_commands::team_leave,
            sync_commands::team_remove_member,
            sync_commands::team_share_tree,
            commands::tree_open,
            commands::tree_import,
            commands::tree_export,
            chosen_files::choose_import_files,
            chosen_files::choose_export_path,
            chosen_files::choose_attachments,
            commands::message_append,
            commands::reply_edit,
            commands::reply_tokens,
            commands::reply_branch_at_token,
            commands::preferences_get,
            commands::preferences_set,
            conversation::counters_load_ahead,
            conversation::thread_view,
            conversation::pin_view,
            conversation::thread_page,
            conversation::reply_start,
            conversation::reply_fan_out,
            conversation::reply_stop,
            conversation::pin_create,
            conversation::pin_ancestry,
            conversation::summary_write,
            conversation::summary_regenerate,
            conversation::pin_close,
            conversation::pin_result_suggest,
            conversation::threads_deleted,
            conversation::thread_restore,
            conversation::node_mark,
            conversation::context_preview,
            conversation::context_request,
            conversation::context_slices,
            conversation::context_preview_unsaved,
            conversation::reply_receipt,
            conversation::request_diff,
            conversation::requests_list,
            conversation::tree_spending,
            conversation::request_read,
            conversation::thread_compact,
            conversation::compaction_undo,
            conversation::nodes_compare,
            conversation::profiles_list,
            conversation::profile_save,
            conversation::profile_delete,
            conversation::profile_enable,
            tree_tools::tree_outline,
            tree_tools::tree_map,
            tree_tools::notes_list,
            tree_tools::note_add,
            tree_tools::note_include,
            tree_tools::attach_path,
            tree_tools::image_read,
            tree_tools::attachments_list,
            tree_tools::attachment_remove,
            tree_tools::tree_settings_get,
            tree_tools::tree_settings_set,
            tree_tools::search_hit_set,
            tree_tools::promotion_preview,
            tree_tools::promote,
            tree_tools::system_context_set,
            tree_tools::tree_context_get,
            tree_tools::buffer_system_set,
            tree_tools::threadmind_export,
            tree_tools::tree_search,
            provider_settings::keys_status,
            provider_settings::key_save,
            provider_settings::key_forget,
            provider_settings::connection_check,
            provider_settings::ollama_models,
            provider_settings::models_ready,
            provider_settings::profile_choices,
            provider_settings::profile_counting,
        ])
        .events(tauri_specta::collect_events![
            commands::TreesChanged,
            commands::DatabaseChanged,
            commands::SummariesChanged
        ]);
    shared_types(builder)
}

/// What the window shares with the shell besides commands and events: the types and limits it
/// reads, and how numbers and optional fields cross.
fn shared_types(builder: tauri_specta::Builder<tauri::Wry>) -> tauri_specta::Builder<tauri::Wry> {
    builder
        // What the window is given at its creation (`window_start`).
        .typ::<WindowStart>()
        // Limits the window shares with the application layer, written in one place.
        .constant("THREAD_PAGE", pinloom_app::THREAD_PAGE)
        .constant("MOST_ANSWERS_AT_ONCE", *pinloom_app::FAN_OUT_LANES.end())
        .constant("MOST_PICKS", pinloom_app::MOST_PICKS)
        // Ids are SQLite row ids and timestamps are milliseconds: both stay far below 2^53, the
        // largest integer a JavaScript number holds exactly.
        .dangerously_cast_bigints_to_number()
        // One TypeScript type per Rust type: an optional field reads and writes the same way.
        .disable_serde_phases()
}

/// Writes the TypeScript bindings to `path`.
pub fn export_bindings(path: &std::path::Path) -> anyhow::Result<()> {
    specta_builder()
        .export(
            Typescript::default()
                .header("// Regenerate: PINLOOM_WRITE_BINDINGS=1 cargo test --test shell bindings"),
            path,
        )
        .map_err(|error| anyhow::anyhow!("could not export the bindings: {error}"))
}

/// Logs to standard error and to a file in the data folder (`logs/pinloom.YYYY-MM-DD.log`, a new
/// one each day, the last seven kept), at the level `PINLOOM_LOG` chooses (`warn,pinloom=info`
/// by default; `debug`, `pinloom_app=trace`, … as `tracing`'s filters read them). A log folder
/// that cannot be made leaves standard error alone, with a word there.
fn start_logging(data_dir: &std::path::Path) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;

    let filter = tracing_subscriber::EnvFilter::try_from_env("PINLOOM_LOG")
        .unwrap_or_else(|_| "warn,pinloom=info".into());
    // Made first: the appender looks for old files to prune before it creates the folder.
    let folder = data_dir.join(LOG_FOLDER);
    let file = std::fs::create_dir_all(&folder).map_err(|error| error.to_string()).and_then(|()| {
        tracing_appender::rolling::Builder::new()
            .rotation(tracing_appender::rolling::Rotation::DAILY)
            .filename_prefix("pinloom")
            .filename_suffix("log")
            .max_log_files(7)
            .build(&folder)
            .map_err(|error| error.to_string())
    });
    let to_stderr = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let registry = tracing_subscriber::registry().with(filter).with(to_stderr);
    let started = match file {
        Ok(file) => registry
            .with(tracing_subscriber::fmt::layer().with_ansi(false).with_writer(file))
            .try_init(),
        Err(error) => {
            eprintln!("pinloom: no log file in {}: {error}", data_dir.display());
            registry.try_init()
        }
    };
    // Started already (a second window of the same process): the first one's logging stays.
    drop(started);
}

/// What the window shows first, given to its page as it is made so that the page need not ask
/// for it: the list of trees and the remembered preferences. Asking cost the window about 85 ms
/// at start on a 2-core machine (the answer waits for the page's first layout), a third of
/// what it took beyond a bare window's start (`tests/perf/README.md`). The page asks again at
/// once in the background, so a reload never shows a list older than the reload.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WindowStart {
    /// Every tree, the most recently changed first (as `tree_list` answers).
    pub(crate) trees: Vec<pinloom_app::json::TreeSummary>,
    /// The remembered preferences (as `preferences_get` answers).
    pub(crate) preferences: preferences::UiPreferences,
}

/// The global the page reads [`WindowStart`] from (`ui/src/lib/workspace.svelte.ts`).
const WINDOW_START_GLOBAL: &str = "__PINLOOM_START__";

fn window_start(
    app: &tauri::AppHandle,
    trees: Result<Vec<pinloom_app::json::TreeSummary>, ApiError>,
    data_dir: &std::path::Path,
) -> Result<WindowStart, ApiError> {
    let preferences = preferences::load(app, data_dir)?;
    Ok(WindowStart { trees: trees?, preferences })
}

/// The application opened on a data folder, and its list of trees, or why either failed (kept,
/// not fatal: the window shows the person what went wrong).
struct Opened {
    pinloom: Result<Pinloom, ApiError>,
    trees: Result<Vec<pinloom_app::json::TreeSummary>, ApiError>,
}

fn open_with_trees(data_dir: &std::path::Path) -> Opened {
    let pinloom =
        tauri::async_runtime::block_on(Pinloom::open(data_dir.to_owned())).map_err(ApiError::from);
    let trees = match &pinloom {
        Ok(pinloom) => tauri::async_runtime::block_on(pinloom.list_trees()).map_err(ApiError::from),
        Err(error) => Err(error.clone()),
    };
    Opened { pinloom, trees }
}

/// [`Opened`] for the data folder the app will use.
struct EarlyOpen {
    data_dir: PathBuf,
    opened: Opened,
}

/// Opens the database and reads the list of trees on a thread of their own while Tauri and GTK
/// start (about 200 ms here), instead of after them, where the window waited 12-26 ms for it
/// before it could be made. The data folder is found as `setup` finds it, with the OS default as
/// Tauri makes it (`app_data_dir`: the OS's data folder joined with the app's identifier);
/// `setup` checks the folder is the same before using what was opened. `None` when no folder
/// can be found (then `setup` reports it).
fn open_early(identifier: String) -> std::thread::JoinHandle<Option<EarlyOpen>> {
    std::thread::spawn(move || {
        let data_dir = pinloom_app::resolve_data_dir(
            std::env::args_os().skip(1),
            std::env::var_os(pinloom_app::DATA_DIR_ENV),
            || dirs::data_dir().map(|folder| folder.join(&identifier)),
        )
        .ok()?;
        // Logging first, so what opening the database logs (replies recovered) is kept.
        start_logging(&data_dir);
        let opened = open_with_trees(&data_dir);
        Some(EarlyOpen { data_dir, opened })
    })
}

/// The main window, as `tauri.conf.json` describes it (made here rather than by Tauri, so that
/// its page is given `start`).
fn main_window(
    app: &tauri::App,
    start: Option<&WindowStart>,
) -> Result<tauri::WebviewWindow, Box<dyn std::error::Error>> {
    let config = app
        .config()
        .app
        .windows
        .iter()
        .find(|window| window.label == "main")
        .ok_or("tauri.conf.json describes no window labelled main")?;
    let mut window = tauri::WebviewWindowBuilder::from_config(app.handle(), config)?;
    if let Some(start) = start {
        // JSON is a JavaScript expression (ES2019 made it a strict subset), so the serialised
        // value is the script's literal as it stands.
        let value = serde_json::to_string(start)?;
        window = window.initialization_script(format!(
            "Object.defineProperty(window, \"{WINDOW_START_GLOBAL}\", {{ value: {value}, configurable: true }});"
        ));
    }
    Ok(window.build()?)
}

/// Starts the desktop app.
pub fn run() {
    let context = tauri::generate_context!();
    let early = open_early(context.config().identifier.clone());
    let builder = specta_builder();
    tauri::Builder::default()
        .plugin(tauri_plugin_store::Builder::new().build())
        .plugin(tauri_plugin_dialog::init())
        .invoke_handler(builder.invoke_handler())
        .on_window_event(|window, event| {
            // A drop is a choice: remembered here, synchronously, before the page that hears of
            // it can ask for the files.
            if let tauri::WindowEvent::DragDrop(tauri::DragDropEvent::Drop { paths, .. }) = event
                && let Some(state) = window.try_state::<AppState>()
            {
                state.chosen.remember(paths.iter().cloned());
            }
        })
        .setup(move |app| {
            builder.mount_events(app);
            let os_default = app.path().app_data_dir().ok();
            let data_dir = pinloom_app::resolve_data_dir(
                std::env::args_os().skip(1),
                std::env::var_os(pinloom_app::DATA_DIR_ENV),
                || os_default,
            )?;
            // What the early thread opened, if it found the same folder (it always does unless a
            // configuration moves the app's folders, which Pinloom's does not).
            let early = early.join().ok().flatten().filter(|early| early.data_dir == data_dir);
            // The early thread started logging in the same folder before it opened anything.
            if early.is_none() {
                start_logging(&data_dir);
            }
            let Opened { pinloom, trees } =
                early.map_or_else(|| open_with_trees(&data_dir), |early| early.opened);
            match &pinloom {
                Ok(pinloom) => {
                    tracing::info!(database = %pinloom.database_path().display(), "opened");
                    commands::watch_other_writers(app.handle().clone(), pinloom.clone());
                    commands::watch_summaries(app.handle().clone(), pinloom.clone());
                }
                Err(error) => tracing::error!(%error.message, "database unusable"),
            }
            let start = window_start(app.handle(), trees, &data_dir)
                .inspect_err(
                    |error| tracing::warn!(%error.message, "the window asks for its start itself"),
                )
                .ok();
            // Managed before the window exists, so no command of its page can find it missing.
            app.manage(AppState {
                pinloom,
                data_dir,
                streaming: Default::default(),
                chosen: Default::default(),
            });
            let window = main_window(app, start.as_ref())?;
            rendering::apply(&window)?;
            Ok(())
        })
        .run(context)
        .expect("the Tauri runtime failed to start; see the message above");
}
