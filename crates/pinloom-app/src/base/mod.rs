//! The layer below the rooms: what every room needs and none owns. The [`Pinloom`] handle
//! itself, with the summaries being written and the keys a send uses; the engine's inputs read
//! from the store, a tree's settings, the plan of a send, its preview and the snapshot cache it
//! is made from; the profile check and where local servers are looked for; the receipt a reply
//! keeps, files opened and replaced safely, and what content from elsewhere (an imported file, a
//! sync folder) may not decide. Nothing here names a room.
//!
//! [`Pinloom`]: pinloom::Pinloom

pub(crate) mod compaction_due;
pub(crate) mod cost;
pub(crate) mod engine_inputs;
mod keys;
pub(crate) mod local_servers;
pub(crate) mod media;
pub(crate) mod one_shot;
pub(crate) mod pdf_reader;
pub(crate) mod picked;
pub(crate) mod pinloom;
pub(crate) mod plan;
mod preview;
pub(crate) mod profile_check;
pub(crate) mod receipts;
pub(crate) mod safe_files;
pub(crate) mod snapshot_cache;
pub(crate) mod summary_jobs;
pub(crate) mod tree_settings;
pub(crate) mod untrusted;
pub(crate) mod words;
