//! ThreadMind on Pinloom's database: a project is a tree, a thread is a pin (the root thread is
//! `main`), a summary_update is a summary of the whole thread written by hand, and each working
//! folder has its active project and thread, as ThreadMind keeps one per project folder.
//!
//! Every use case returns the text ThreadMind v0.4.1 returns for the same data, byte for byte
//! (the MCP server passes it on as the tool's result). A refusal is an [`ApiError`] whose message
//! is ThreadMind's own (the server prefixes `Error: `). Where ThreadMind reports a missing file
//! with Node's `ENOENT` text and a path, Pinloom, which has no such files, says what is missing
//! the way ThreadMind says it for its tree (`Thread "x" not found`).

mod additions;
mod chain;
mod instructions;
mod session;

pub(in crate::threadmind) use chain::{chain, thread_list};
pub use session::ThreadMindSession;
