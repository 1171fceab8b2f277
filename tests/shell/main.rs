//! Tests of the desktop shell that need no window: the committed bindings are fresh, and every
//! command the bindings expose is granted to the window and nothing else is.

// Test helpers unwrap too: a panic carrying the error is the failure report.
#![allow(clippy::unwrap_used)]

mod bindings;
mod grants;

use std::path::PathBuf;

fn repo_root() -> PathBuf {
    PathBuf::from(
        std::env::var("CARGO_MANIFEST_DIR").expect("cargo runs tests with CARGO_MANIFEST_DIR set"),
    )
}
