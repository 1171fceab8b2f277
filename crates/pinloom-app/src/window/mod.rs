//! What the window shows of a tree beyond the conversation itself: the columns of a thread and
//! its pins, the map (as a picture and as an outline), notes, search and the tree as text, two messages compared, and the
//! trash. The command line and the MCP server read trees through the same calls.

pub(crate) mod columns;
pub(crate) mod compare;
pub(crate) mod map;
pub(crate) mod outline;
mod receipts;
pub(crate) mod trash;
