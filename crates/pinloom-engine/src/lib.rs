//! Pinloom's context engine.
//!
//! Everything here is a pure function of its inputs: no files, no SQL, no network, no clock that
//! was not handed in. That is what lets the assembly rules be tested exhaustively and what lets
//! the desktop app, the command-line program and the MCP server produce byte-identical contexts
//! from the same snapshot.
//!
//! The crate grows into the full context planner (see the Context engine issue); today it holds
//! the token heuristics that the seeds name.

#![deny(missing_docs)]

pub mod tokens;
