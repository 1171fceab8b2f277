//! Pinloom's tree store: trees of immutable nodes in one SQLite file.
//!
//! This is the only crate that knows SQL. Its calls are synchronous and short; callers that live
//! on an async executor run them on a blocking thread (the application layer does), because a
//! SQLite call may wait on another process's lock for up to the busy timeout.
//!
//! The file is opened in WAL mode with foreign keys on, so that the desktop app and a second
//! process (the MCP server) can share it: readers never block the writer, and a writer waits
//! for another instead of failing at once.

#![deny(missing_docs)]

mod error;
mod migrations;
mod store;

pub use error::StoreError;
pub use migrations::SCHEMA_VERSION;
pub use store::{Author, NewNode, Node, NodeId, Store, Tree, TreeId, TreeMode};
