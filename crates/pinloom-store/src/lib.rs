//! Pinloom's tree store: trees of immutable nodes, their pins, summaries, attachments and the
//! model profiles, in one SQLite file.
//!
//! This is the only crate that knows SQL. Its calls are synchronous and short; callers that live
//! on an async executor run them on a blocking thread (the application layer does), because a
//! SQLite call may wait on another process's lock for up to the busy timeout. Every write is one
//! transaction that takes the write lock first.
//!
//! The file is opened in WAL mode with foreign keys on, so that the desktop app and a second
//! process (the MCP server) can share it: readers never block the writer, a writer waits for
//! another instead of failing at once, and [`Store::data_version`] tells a reader that the other
//! process changed something.

#![deny(missing_docs)]

mod attachments;
mod codec;
mod compactions;
mod drafts;
mod error;
mod foreign;
mod interchange;
mod local_choices;
mod migrations;
mod model;
mod node_rows;
mod node_writes;
mod nodes;
mod picks;
mod pins;
mod profiles;
mod receipts;
mod reply_tokens;
mod requests;
mod search;
mod slugs;
mod stale_summaries;
mod store;
mod summaries;
mod sync;
mod threads;
mod token_counts;
mod trees;

pub use compactions::Compaction;
pub use error::StoreError;
pub use foreign::{LlmConversation, LlmResponse, is_sqlite, read_llm_log};
pub use interchange::{
    AnnotationImport, AttachmentImport, ImportScope, ImportedTree, NodeImport, PROGRESS_EVERY,
    PinImport, Preserved, PreservedInterchange, SummaryImport, TreeImport, is_global_id,
    is_made_here,
};
pub use local_choices::LocalChoice;
pub use migrations::SCHEMA_VERSION;
pub use model::{
    Anchor, Annotation, Attachment, AttachmentRole, AttachmentScope, Author, Deleted,
    MAX_PIN_DEPTH, MAX_THREADS_ON_A_CHAIN, ModelProfile, NewNode, Node, NodeId, OutlineRow, Part,
    PathStep, Pin, PinId, Receipt, ReplyLearned, ReplyToken, SearchHit, ShapeRow, Sharing,
    StepContent, Summary, SummaryAuthor, SummaryKey, SummaryWrite, Tree, TreeId, TreeMode,
    TreeSetup, Workspace,
};
pub use nodes::check_tree_links;
pub use picks::{MAX_PICKS, Pick, Picked};
pub use profiles::invisible_character;
pub use requests::{BackgroundRequest, RequestKind};
pub use search::{COMMON_TERM_MIN_NODES, MAX_QUERY_TERMS};
pub use slugs::{ROOT_THREAD_SLUG, slugify, unique_slug};
pub use store::{APPLICATION_ID, Store};
pub use summaries::SummaryUpdate;
pub use sync::authors::{SyncAuthor, SyncAuthors};
pub use sync::clock::{CLOCK_AHEAD_LIMIT_MS, clock_ms, is_device_id};
pub use sync::fold::SyncFolded;
pub use sync::records::{
    AttachmentRecord, MessageRecord, NoteRecord, PickedRecord, PinRecord, ProfileRecord,
    ReceiptRecord, ReceiptRef, RecordKind, SummaryRecord, SyncAnchor, SyncClosed, SyncOp,
    SyncRecord, SyncedField, TreeRecord, TurnReceipt,
};
pub use sync::{SyncOutgoing, SyncShare, SyncTarget};
pub use trees::{EmptiedTrash, NewTree};
