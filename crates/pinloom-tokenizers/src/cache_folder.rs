//! Where the person's cache folder is: one rule for everything Pinloom keeps there (the token
//! counter's source release that `./dev` fetches and `build.rs` reads, the tables' snapshots and
//! remembered counts, the tests' llama.cpp server). `build.rs` and `pinloom-test-server` include
//! this file as it is; `dev` says the same rule in shell.
//!
//! `XDG_CACHE_HOME` when set (and not empty), then Windows' `LOCALAPPDATA`, then the home
//! folder's usual place: `Library/Caches` on macOS, `.cache` elsewhere.

use std::env;
use std::path::PathBuf;

/// The person's cache folder, or `None` when nothing says where it is.
pub(crate) fn user_cache_folder() -> Option<PathBuf> {
    let named = |variable: &str| env::var_os(variable).filter(|value| !value.is_empty());
    named("XDG_CACHE_HOME").or_else(|| named("LOCALAPPDATA")).map(PathBuf::from).or_else(|| {
        let home = PathBuf::from(named("HOME")?);
        Some(if cfg!(target_os = "macos") {
            home.join("Library/Caches")
        } else {
            home.join(".cache")
        })
    })
}
