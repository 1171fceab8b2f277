//! The sync folder's layout (format 1), written and read. Every file is written once, under a
//! name no other file can have, and never edited, so a git merge of two folders only adds files:
//!
//! ```text
//! format.json                              {"format": "pinloom-sync", "version": 1}
//! records/<kind>/<last two hex digits>/<global id>.json   one immutable record each
//! ops/<device>/<clock>-<device>.json                      one field change each
//! ```
//!
//! `<kind>` is `trees`, `messages`, `pins`, `attachments`, `notes`, `receipts`, `summaries` or
//! `profiles` (only when the person chose to sync their model profiles and prices). Records fan out
//! by the last two digits of their id (UUIDv7's random end), so no folder holds more than a few
//! hundred files of a 100,000-message tree.
//!
//! `format.json`'s bytes never change within a version: two machines that start a folder apart
//! both add it, and git merges two identical additions without a conflict.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use pinloom_store::{SYNC_RECORD_KINDS, SyncOp, SyncOutgoing, SyncRecord};
use serde_json::{Value, json};

/// The layout this build writes and reads.
pub(crate) const FORMAT_VERSION: u64 = 1;

/// The largest record or operation file read: a message or attachment bigger than any Pinloom
/// writes (imports stop at 64 MiB of a whole document) is refused rather than read into memory.
pub(crate) const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

/// What can go wrong with the folder itself.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FolderError {
    /// A newer Pinloom wrote the folder; writing into it could mix layouts.
    #[error(
        "the sync folder {path} was written by a newer Pinloom (layout {found}, this one knows {FORMAT_VERSION}); update Pinloom on this machine to sync with it"
    )]
    Newer {
        /// The folder.
        path: PathBuf,
        /// The version its format.json names.
        found: u64,
    },
    /// The folder's format.json is not one.
    #[error(
        "{path} is not a Pinloom sync folder's format.json; the remote holds something else: choose another remote"
    )]
    NotOurs {
        /// The file.
        path: PathBuf,
    },
    /// The disk refused.
    #[error("could not {doing} {path}: {source}")]
    Io {
        /// What was being done.
        doing: &'static str,
        /// Where.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

fn io<'a>(doing: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> FolderError + 'a {
    move |source| FolderError::Io { doing, path: path.to_owned(), source }
}

/// Checks the folder's format.json, writing it when the folder has none yet.
pub(crate) fn check_format(folder: &Path) -> Result<(), FolderError> {
    let path = folder.join("format.json");
    match fs::read(&path) {
        Ok(bytes) => {
            let value: Value = serde_json::from_slice(&bytes)
                .map_err(|_| FolderError::NotOurs { path: path.clone() })?;
            if value.get("format").and_then(Value::as_str) != Some("pinloom-sync") {
                return Err(FolderError::NotOurs { path });
            }
            let found = value.get("version").and_then(Value::as_u64).unwrap_or(0);
            if found > FORMAT_VERSION {
                return Err(FolderError::Newer { path: folder.to_owned(), found });
            }
            Ok(())
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            let text = format!(
                "{:#}\n",
                json!({
                    "format": "pinloom-sync",
                    "version": FORMAT_VERSION,
                    "about": "Pinloom's trees as records written once and field changes stamped \
                              with a hybrid logical clock; see Pinloom's README, Sync."
                })
            );
            write_once(&path, text.as_bytes())
        }
        Err(error) => Err(io("read", &path)(error)),
    }
}

/// Where a record lives in the folder.
pub(crate) fn record_path(folder: &Path, record: &SyncRecord) -> PathBuf {
    let id = record.id();
    let fan = &id[id.len().saturating_sub(2)..];
    folder.join("records").join(record.folder()).join(fan).join(format!("{id}.json"))
}

/// Where an operation lives in the folder.
pub(crate) fn op_path(folder: &Path, op: &SyncOp) -> PathBuf {
    folder.join("ops").join(&op.device).join(format!("{}.json", op.id))
}

/// Writes a file whose name no other content can have. One already there whole is left as it
/// is; one of another length (cut short by a crash or a power cut before the sync that wrote it
/// committed) is written again. Files are not synced to disk one by one (100,000 of them would
/// take most of a first sync): the database stays the truth, and a file is marked as in the
/// folder only once git has committed it, so what a crash loses is written again.
fn write_once(path: &Path, bytes: &[u8]) -> Result<(), FolderError> {
    if fs::metadata(path).is_ok_and(|meta| meta.len() == bytes.len() as u64) {
        return Ok(());
    }
    let parent = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(io("create", parent))?;
    fs::write(path, bytes).map_err(io("write", path))
}

/// Writes every outgoing record and operation; returns the ids written. A first sync writes a
/// file per message, so the files are written on every core: creating them is most of its time.
pub(crate) fn write_outgoing(
    folder: &Path,
    outgoing: &SyncOutgoing,
) -> Result<Vec<String>, FolderError> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let mut written = Vec::with_capacity(outgoing.records.len() + outgoing.ops.len());
    for record in &outgoing.records {
        files.push((record_path(folder, record), serde_json::to_vec(record).unwrap_or_default()));
        written.push(record.id().to_owned());
    }
    for op in &outgoing.ops {
        files.push((op_path(folder, op), serde_json::to_vec(op).unwrap_or_default()));
        written.push(op.id.clone());
    }
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let share = files.len().div_ceil(workers).max(1);
    std::thread::scope(|scope| {
        let running: Vec<_> = files
            .chunks(share)
            .map(|chunk| {
                scope.spawn(move || {
                    chunk.iter().try_for_each(|(path, bytes)| write_once(path, bytes))
                })
            })
            .collect();
        running.into_iter().try_for_each(|worker| {
            worker.join().unwrap_or_else(|_| {
                Err(FolderError::Io {
                    doing: "write",
                    path: folder.to_owned(),
                    source: std::io::Error::other("a writer stopped"),
                })
            })
        })
    })?;
    Ok(written)
}

/// What the folder holds that the database does not know it holds.
#[derive(Debug, Default)]
pub(crate) struct Arrived {
    pub(crate) records: Vec<SyncRecord>,
    pub(crate) ops: Vec<SyncOp>,
    /// Files refused, with why; their ids, to be marked as held (they will not read better later).
    pub(crate) damaged: Vec<(String, String)>,
    /// Files of a kind this build does not know (a newer Pinloom's): reported, and read again by
    /// a build that knows them.
    pub(crate) unknown: Vec<String>,
}

/// Reads every record and operation file whose id is not in `known`.
pub(crate) fn read_new(folder: &Path, known: &HashSet<String>) -> Result<Arrived, FolderError> {
    let mut arrived = Arrived::default();
    let records = folder.join("records");
    for kind in entries(&records)? {
        let kind_name = kind.file_name().map(|name| name.to_string_lossy().into_owned());
        let known_kind = kind_name
            .as_deref()
            .is_some_and(|name| SYNC_RECORD_KINDS.iter().any(|(_, folder, _)| *folder == name));
        for fan in entries(&kind)? {
            for file in entries(&fan)? {
                let Some(id) = new_id(&file, known) else { continue };
                if !known_kind {
                    arrived.unknown.push(shown(folder, &file));
                    continue;
                }
                match read_file::<SyncRecord>(&file) {
                    Ok(record) if record.id() == id => arrived.records.push(record),
                    Ok(_) => arrived
                        .damaged
                        .push((id, format!("{}: its id is not its name", shown(folder, &file)))),
                    Err(why) => {
                        arrived.damaged.push((id, format!("{}: {why}", shown(folder, &file))))
                    }
                }
            }
        }
    }
    for device in entries(&folder.join("ops"))? {
        for file in entries(&device)? {
            let Some(id) = new_id(&file, known) else { continue };
            match read_file::<SyncOp>(&file) {
                Ok(op) if op.id == id => arrived.ops.push(op),
                Ok(_) => arrived
                    .damaged
                    .push((id, format!("{}: its id is not its name", shown(folder, &file)))),
                Err(why) => arrived.damaged.push((id, format!("{}: {why}", shown(folder, &file)))),
            }
        }
    }
    Ok(arrived)
}

/// The id a file is named by, when it is a `.json` file not known yet.
fn new_id(file: &Path, known: &HashSet<String>) -> Option<String> {
    let name = file.file_name()?.to_str()?;
    let id = name.strip_suffix(".json")?;
    (!name.starts_with('.') && !known.contains(id)).then(|| id.to_owned())
}

fn read_file<T: serde::de::DeserializeOwned>(file: &Path) -> Result<T, String> {
    let size = fs::metadata(file).map_err(|error| error.to_string())?.len();
    if size > MAX_FILE_BYTES {
        return Err(format!("{size} bytes, over the {MAX_FILE_BYTES}-byte limit for one record"));
    }
    let bytes = fs::read(file).map_err(|error| error.to_string())?;
    serde_json::from_slice(&bytes)
        .map_err(|error| format!("not a record this Pinloom can read ({error})"))
}

/// The entries of a folder, sorted; none when it does not exist.
fn entries(dir: &Path) -> Result<Vec<PathBuf>, FolderError> {
    let listing = match fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(io("read", dir)(error)),
    };
    let mut found: Vec<PathBuf> = listing
        .collect::<Result<Vec<_>, _>>()
        .map_err(io("read", dir))?
        .into_iter()
        .map(|entry| entry.path())
        .collect();
    found.sort();
    Ok(found)
}

fn shown(folder: &Path, file: &Path) -> String {
    file.strip_prefix(folder).unwrap_or(file).display().to_string()
}
