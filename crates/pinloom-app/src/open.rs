//! Opening the application: the database, its first profiles and the replies a stopped process
//! left unfinished. It stands above the rooms, since opening asks the models room for the
//! catalog's profiles and the conversation room to recover replies; the handle it makes
//! ([`Pinloom`]) stands below them all.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use pinloom_providers::Provider;
use pinloom_providers::keys::Keyring;
use pinloom_store::Store;

use crate::base::pinloom::{Connections, Pinloom};
use crate::data_dir::DATABASE_FILE_NAME;
use crate::error::{ApiError, ErrorCode};
use crate::runtime::blocking;

impl Pinloom {
    /// Opens (creating if needed) the database in `data_dir`, creating the folder too, with the
    /// default connections.
    pub async fn open(data_dir: PathBuf) -> anyhow::Result<Pinloom> {
        Pinloom::open_with(data_dir, Connections::default()).await
    }

    /// Opens (creating if needed) the database file at `path`, as the command line's `--db`
    /// chooses it; its folder must exist. Like [`Pinloom::open_with`], it loads no vocabulary
    /// ahead: a command loads one only when it counts with it (in milliseconds from its table
    /// snapshot, see `pinloom-tokenizers`), and most commands never do.
    pub async fn open_database(path: PathBuf, connections: Connections) -> anyhow::Result<Pinloom> {
        Pinloom::open_file(connections, move || Ok(path)).await
    }

    /// Opens (creating if needed) the database in `data_dir` with these connections.
    pub async fn open_with(data_dir: PathBuf, connections: Connections) -> anyhow::Result<Pinloom> {
        Pinloom::open_file(connections, move || {
            std::fs::create_dir_all(&data_dir).map_err(|error| ApiError {
                code: ErrorCode::DatabaseUnusable,
                message: format!(
                    "cannot create the data folder {}: {error}; choose another with --data-dir",
                    data_dir.display()
                ),
            })?;
            Ok(data_dir.join(DATABASE_FILE_NAME))
        })
        .await
    }

    /// Opens the database file `place` names (on a blocking thread, as it may make a folder),
    /// seeds an empty one with the catalog's profiles and recovers the replies a stopped process
    /// left unfinished.
    async fn open_file(
        connections: Connections,
        place: impl FnOnce() -> anyhow::Result<PathBuf> + Send + 'static,
    ) -> anyhow::Result<Pinloom> {
        let provider = Provider::new(connections.timeouts, connections.retry)
            .context("could not set up the HTTP client")?;
        let keyring = Keyring::new(&connections.keyring_service, connections.keyring);
        let store = blocking(move || {
            let store = Store::open(&place()?)?;
            crate::models::profiles::seed_from_catalog(&store)?;
            crate::conversation::recover_replies(&store)?;
            Ok(store)
        })
        .await
        .context("could not open Pinloom's database")?;
        Ok(Pinloom::over(store, provider, keyring, connections))
    }

    /// A handle on an open store, with empty caches.
    fn over(
        store: Store,
        provider: Provider,
        keyring: Keyring,
        connections: Connections,
    ) -> Pinloom {
        Pinloom {
            local_servers: connections.local_servers.into(),
            pdf_reader: Arc::new(connections.pdf_reader),
            store: Arc::new(store),
            provider,
            keyring,
            snapshot_cache: Arc::default(),
            summary_jobs: Arc::default(),
        }
    }
}
