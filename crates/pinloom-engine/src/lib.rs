//! Pinloom's context engine.
//!
//! Everything here is a pure function of its inputs: no files, no SQL, no network, no clock that
//! was not handed in. That is what lets the assembly rules be tested exhaustively and what lets
//! the desktop app, the command-line program and the MCP server produce byte-identical contexts
//! from the same snapshot.
//!
//! The flow: a [`snapshot::Snapshot`] (what the store holds around the active node), a
//! [`profile::ModelProfile`] and [`settings::Settings`] go into [`planner::plan`], which returns a
//! [`plan::ContextPlan`] (every candidate slice, included or pruned with the reason) or an
//! [`error::EngineError`]. The renderings turn a plan into provider request bodies
//! ([`render`]), the buffer-mode document, or ThreadMind's markdown ([`threadmind`]).

#![deny(missing_docs)]

mod ancestry;
pub mod error;
pub mod family;
pub mod incremental;
pub mod permitted;
pub mod plan;
pub mod planner;
pub mod profile;
pub mod render;
pub mod retrieval;
pub mod settings;
pub mod snapshot;
pub mod threadmind;
pub mod tokens;

pub use error::EngineError;
pub use plan::ContextPlan;
pub use planner::plan;
