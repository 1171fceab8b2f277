use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use pinloom_providers::keys::{Keyring, KeyringBackend};
use pinloom_providers::retry::RetryPolicy;
use pinloom_providers::{Provider, Timeouts};
use pinloom_store::Store;

use crate::base::snapshot_cache::SnapshotCache;
use crate::base::summary_jobs::SummaryJobs;
use crate::runtime::blocking;

use crate::base::pdf_reader::PdfReader;

/// The keyring service Pinloom's keys are filed under: the app's identifier.
pub const KEYRING_SERVICE: &str = "dev.pinloom.app";

/// How a [`Pinloom`] reaches providers and keys; the defaults suit the installed app.
#[derive(Debug, Clone)]
pub struct Connections {
    /// Which keyring holds the API keys.
    pub keyring: KeyringBackend,
    /// The service name keys are filed under (tests use their own).
    pub keyring_service: String,
    /// How long to wait for providers.
    pub timeouts: Timeouts,
    /// Which failures are tried again, and how often.
    pub retry: RetryPolicy,
    /// Where local model servers are looked for before a first send: the usual ports of
    /// Ollama, llama.cpp, LM Studio and vLLM, or what `PINLOOM_LOCAL_SERVERS` lists.
    pub local_servers: Vec<pinloom_providers::Endpoint>,
    /// Where attached PDFs are read: this program started again as a reader, by default.
    pub pdf_reader: PdfReader,
}

impl Default for Connections {
    fn default() -> Connections {
        Connections {
            keyring: KeyringBackend::from_environment(),
            keyring_service: KEYRING_SERVICE.to_owned(),
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            local_servers: crate::base::local_servers::places_to_look(),
            pdf_reader: PdfReader::default(),
        }
    }
}

/// Pinloom's use cases over one open database.
///
/// Cheap to clone; clones share the database, the provider client and the caches.
#[derive(Debug, Clone)]
pub struct Pinloom {
    pub(crate) store: Arc<Store>,
    pub(crate) provider: Provider,
    pub(crate) keyring: Keyring,
    pub(crate) snapshot_cache: Arc<SnapshotCache>,
    pub(crate) summary_jobs: Arc<SummaryJobs>,
    pub(crate) local_servers: Arc<[pinloom_providers::Endpoint]>,
    pub(crate) pdf_reader: Arc<PdfReader>,
}

impl Pinloom {
    /// A watch for other processes' writes to the database (the desktop app, the MCP server,
    /// the command line), asked every `every`: what long-running front ends refresh on.
    pub async fn outside_writes(&self, every: std::time::Duration) -> OutsideWrites {
        let seen = self.data_version().await.ok();
        OutsideWrites { pinloom: self.clone(), seen, every }
    }

    /// A number that changes whenever another process commits to the database (SQLite's
    /// `data_version`): how a long-running front end notices the app's writes.
    pub async fn data_version(&self) -> anyhow::Result<i64> {
        self.read("could not read the database's version", |store| Ok(store.data_version()?)).await
    }

    /// Loads the vocabularies every written message is counted with (o200k and cl100k, 66 MB
    /// together) on threads of their own, once, so that the message being written does not
    /// wait for them at its send (0.5 s the first time on a machine, before their table
    /// snapshots exist; tens of milliseconds after). The window calls it when the person starts
    /// writing, not at start: a window that is only read holds neither, and a plan loads the
    /// one its model counts with when it needs it; the command line, as a send that writes a
    /// question starts. Later calls do nothing.
    pub fn load_counters_ahead(&self) {
        load_written_counters_ahead();
    }

    /// The database file in use.
    pub fn database_path(&self) -> &Path {
        self.store.path()
    }
}

impl Pinloom {
    /// Runs a read on a blocking thread; a failure says what was being done (`doing`).
    pub(crate) async fn read<T: Send + 'static>(
        &self,
        doing: &'static str,
        work: impl FnOnce(&Store) -> anyhow::Result<T> + Send + 'static,
    ) -> anyhow::Result<T> {
        let store = self.store.clone();
        blocking(move || work(&store)).await.context(doing)
    }

    /// Runs a write on a blocking thread and drops this process's caches after it, since any
    /// write may change a cached path or plan.
    pub(crate) async fn write<T: Send + 'static>(
        &self,
        doing: &'static str,
        work: impl FnOnce(&Store) -> anyhow::Result<T> + Send + 'static,
    ) -> anyhow::Result<T> {
        let store = self.store.clone();
        let snapshot_cache = self.snapshot_cache.clone();
        blocking(move || {
            let result = work(&store);
            snapshot_cache.forget();
            result
        })
        .await
        .context(doing)
    }
}

/// Notices other processes' commits to the database through SQLite's `data_version`, which this
/// process's own writes leave alone.
pub struct OutsideWrites {
    pinloom: Pinloom,
    seen: Option<i64>,
    every: std::time::Duration,
}

impl OutsideWrites {
    /// Waits until another process has committed since the last call (or since the watch began).
    pub async fn changed(&mut self) {
        loop {
            tokio::time::sleep(self.every).await;
            match self.pinloom.data_version().await {
                Ok(now) if self.seen != Some(now) => {
                    self.seen = Some(now);
                    return;
                }
                Ok(_) => {}
                // Asked again next time: a busy or briefly unreadable file is no change.
                Err(error) => {
                    tracing::warn!(error = %format!("{error:#}"), "could not check for other writers")
                }
            }
        }
    }
}

/// Loads the vocabularies every written message is counted with, each on a thread of its own
/// (most of a load is checking its table snapshot, which two cores do side by side), once per
/// process: see [`Pinloom::load_counters_ahead`].
fn load_written_counters_ahead() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        for (_, tokenizer) in crate::base::engine_inputs::COUNTED_WHEN_WRITTEN {
            std::thread::spawn(move || {
                if let Err(error) = tokenizer.load_ahead() {
                    tracing::warn!("{error}; its counts fall back to one token a byte");
                }
            });
        }
    });
}
