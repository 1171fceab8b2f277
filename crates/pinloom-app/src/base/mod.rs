//! The layer below the areas: what every area needs and none owns. The engine's inputs read from
//! the store, a tree's settings, the plan of a send and the snapshot cache it is made from, the
//! receipt a reply keeps, files opened and replaced safely, and what content from elsewhere (an
//! imported file, a sync folder) may not decide.

pub(crate) mod compaction_due;
pub(crate) mod cost;
pub(crate) mod engine_inputs;
pub(crate) mod media;
pub(crate) mod pdf_reader;
pub(crate) mod plan;
pub(crate) mod receipts;
pub(crate) mod safe_files;
pub(crate) mod snapshot_cache;
pub(crate) mod tree_settings;
pub(crate) mod untrusted;
