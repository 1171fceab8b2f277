//! The conversation loop: writing the person's messages, planning a context for any message under
//! any model profile, streaming a reply into a new message, answering again, editing, and
//! continuing a buffer; summaries, pins, attachments and fan-outs around it.

mod asking;
pub(crate) mod attachments;
mod compactions;
pub(crate) mod fan_out;
pub(crate) mod fusing;
mod images;
mod marks;
mod messages;
mod over_picked;
mod pins;
mod promotions;
pub(crate) mod questions;
mod reply_drafts;
pub(crate) mod requests;
mod send;
mod settings;
pub(crate) mod summaries;
mod tokens;
mod trees;

pub(crate) use reply_drafts::recover_replies;
