//! The floor Pinloom's start-up is measured against (`tests/perf/startup.mjs`): the same Tauri and
//! WebKitGTK, built with the same profile, opening one window of the same size on an empty page,
//! with nothing of Pinloom's (no database, no UI bundle loaded, no commands). Built only for the
//! measurement: `cargo build --release --features perf-floor --bin bare-window`.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use tauri::{WebviewUrl, WebviewWindowBuilder};

// The floor draws as Pinloom's window does (composited or painted directly, by the same rule), so
// the two differ only in what they show.
#[path = "../rendering.rs"]
mod rendering;

/// The page: empty (a `data:` page would need a Tauri feature Pinloom's build does not have). The
/// measurement waits for it to be loaded, as it waits for Pinloom's tree list.
const EMPTY_PAGE: &str = "about:blank";

fn main() {
    let mut context = tauri::generate_context!();
    // Pinloom's own window would load its UI; the floor opens its own instead.
    context.config_mut().app.windows.clear();
    tauri::Builder::default()
        .setup(|app| {
            let url =
                EMPTY_PAGE.parse().map_err(|error| format!("the empty page's address: {error}"))?;
            let window = WebviewWindowBuilder::new(app, "main", WebviewUrl::External(url))
                .title("bare window")
                .inner_size(1200.0, 780.0)
                .build()?;
            rendering::apply(&window)?;
            Ok(())
        })
        .run(context)
        .expect("the Tauri runtime failed to start; see the message above");
}
