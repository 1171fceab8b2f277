//! The models a person can use: their profiles (seeded from the catalog, then the person's),
//! the providers' keys and connection tests, and which models can answer now.

pub(crate) mod profiles;
pub(crate) mod providers;
pub(crate) mod readiness;
