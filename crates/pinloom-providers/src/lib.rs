//! Pinloom's provider adapters: the only crate that talks to the network.
//!
//! One adapter per wire family (OpenAI-compatible chat and completions, Anthropic Messages,
//! Gemini `streamGenerateContent`, Ollama's NDJSON API). The engine hands over a finished
//! provider-neutral request and its wire body ([`pinloom_engine::family::wire_body`]); this crate
//! adds the transport (URL, headers, streaming flags, sampling), sends it with retries, decodes the
//! stream into [`ReplyEvent`]s and turns every failure into a [`ProviderError`] a person can act
//! on. Nothing here knows the store.
//!
//! - `family/`: a file per wire family: its URLs and headers, where its key and sampling go, how
//!   its reply's frames read; behind one trait and one table.
//! - [`wire`]: pure request building over the families; [`request`]: what a request is made of.
//! - [`decode`]: pure stream decoding over the families; fuzzed (see docs/developing.md).
//! - [`error`]: the provider's error bodies classified into actionable errors.
//! - [`retry`]: backoff with jitter, `Retry-After`, which failures are worth another try.
//! - [`client`]: the HTTP client: retries, timeouts, cancel, the partial reply kept.
//! - [`keys`]: API keys in the OS keyring, or an environment variable per provider.
//! - [`catalog`]: shipped model defaults; [`ollama`]: discovery of local models.
//! - [`summary`]: asking a model for a thread's summary at a token budget.

#![deny(missing_docs)]

pub mod catalog;
pub mod client;
pub mod decode;
mod decoder;
pub mod endpoint;
pub mod error;
mod family;
pub mod keys;
pub mod local_servers;
pub mod ollama;
pub mod request;
pub mod retry;
pub mod summary;
pub mod wire;

pub use client::{MAX_EVENT_BYTES, MAX_REPLY_BYTES, Provider, Reply, Timeouts};
pub use decode::{MAX_TOKEN_CHOICES, ReplyEvent, TokenChoice, Usage};
pub use error::ProviderError;
pub use keys::ApiKey;
pub use wire::{Endpoint, ProviderId, Sampling, Task, WireRequest};
