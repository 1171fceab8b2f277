//! Trees in and out of Pinloom: Open Loom v2 (Aspen Grove's interchange format for loom trees)
//! both ways, socketteer/loom's saved trees and ChatGPT's export in (each mapped to Open Loom),
//! Markdown out, and the files all of these are read from and written to, with progress.
//!
//! Pinloom's own data (threads and their anchors, summaries and their log, attachments, notes'
//! inclusion, model profiles, flags) travels in the `pinloom` extension namespace, so that
//! export → import → export gives the same document but for the export time. An import is one
//! transaction: a document that cannot be read writes nothing.

mod branching;
mod chatgpt;
mod claude;
mod documents;
pub(crate) mod files;
pub(crate) mod histories;
mod llm_log;
pub(crate) mod markdown;
mod merging;
mod open_loom_export;
mod open_loom_import;
mod open_loom_records;
mod open_webui;
mod skim;
mod socketteer;
mod times;

pub(in crate::interchange) use documents::write_open_loom;
#[cfg(feature = "test-seams")]
pub use documents::{FuzzedImporter, import_fuzz_case};
pub(in crate::interchange) use open_loom_records::PINLOOM;
pub(in crate::interchange) use times::{iso, parse_time};
