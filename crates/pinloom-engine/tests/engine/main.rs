//! The context engine's rules, each named after the rule and the seed it comes from, plus
//! property tests of the invariants and snapshot tests of the renderings.

// Helper functions here build fixtures; an unwrap in them is a test's assertion, which clippy's
// allow-unwrap-in-tests does not see outside #[test] functions.
#![allow(clippy::unwrap_used)]

mod fixtures;
mod media;
mod permitted;
mod properties;
mod renderings;
mod rules;
