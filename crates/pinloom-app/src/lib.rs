//! Pinloom's application layer: the use cases every front end calls.
//!
//! The desktop shell, the command-line program and the MCP server hold no logic of their own; they
//! translate their transport into calls here. Each use case is a plain async function: store work
//! runs on a blocking thread (SQLite may wait on another process's lock), so callers on an async
//! executor are never stalled.
//!
//! Errors are `anyhow` with context inside; at the boundary they become an [`ApiError`] with a
//! closed [`ErrorCode`] a front end can branch on and a message a person can act on.

#![deny(missing_docs)]

mod base;
mod conversation;
mod data_dir;
mod error;
mod interchange;
pub mod json;
mod models;
mod open;
mod runtime;
mod sync;
mod threadmind;
mod window;

pub use base::local_servers::LOCAL_SERVERS_VARIABLE;
pub use conversation::attachments::MAX_FOLDER_ENTRIES;
pub use conversation::fan_out::FAN_OUT_LANES;
pub use conversation::fusing::FUSE_ANSWERS;
pub use conversation::questions::{QuestionMaterial, ReadMaterial};
pub use conversation::requests::REQUESTS_SHOWN;
pub use conversation::summaries::CUT_SUMMARY_NOTE;
pub use data_dir::{
    APP_IDENTIFIER, DATA_DIR_ENV, DATA_DIR_FLAG, DATABASE_FILE_NAME, resolve_data_dir,
};
pub use error::{ApiError, ErrorCode};
// The handle, and where attached PDFs are read: one of the connections a front end chooses,
// served by the front end's own program.
#[cfg(feature = "test-seams")]
pub use base::pdf_reader::pdf_fuzz_case;
pub use base::pdf_reader::{PdfReader, READ_PDF_ARGUMENT, serve_pdf_reader_if_asked};
pub use base::pinloom::{Connections, KEYRING_SERVICE, OutsideWrites, Pinloom};
// The boundary types every front end names, where they have always been named from.
pub use interchange::files::MAX_IMPORT_BYTES;
#[cfg(feature = "test-seams")]
pub use interchange::histories::{FuzzedHistory, history_fuzz_case};
#[cfg(feature = "test-seams")]
pub use interchange::{FuzzedImporter, import_fuzz_case};
pub use json::{
    Cost, DiffEntry, ExportOptions, FanOutLane, ImportReport, ImportedTreeSummary, KindTokens,
    NodeAction, PlanFormat, Prices, PromptState, Receipt, RequestDiff, ResourceText, SentSlice,
    ThreadMindReport, Verdict,
};
pub use pinloom_engine::threadmind::thousands;
pub use pinloom_providers::ReplyEvent;
/// The most messages a question over several branches is asked over.
pub use pinloom_store::MAX_PICKS as MOST_PICKS;
pub use pinloom_store::SCHEMA_VERSION;
pub use sync::OWN_REMOTE;
#[cfg(feature = "test-seams")]
pub use sync::{pack_fuzz_case, sync_fuzz_case};
pub use threadmind::ThreadMindSession;
pub use tokio_util::sync::CancellationToken;
pub use window::columns::THREAD_PAGE;
