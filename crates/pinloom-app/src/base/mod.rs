//! The layer below the areas: what every area needs and none owns. The engine's inputs read from
//! the store, a tree's settings, the plan of a send and the snapshot cache it is made from, the
//! receipt a reply keeps, and files opened and replaced safely.

pub(crate) mod engine_inputs;
pub(crate) mod media;
pub(crate) mod plan;
pub(crate) mod receipts;
pub(crate) mod safe_files;
pub(crate) mod snapshot_cache;
pub(crate) mod tree_settings;
