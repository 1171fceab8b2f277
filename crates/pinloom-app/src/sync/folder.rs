//! The sync folder's layout, written and read. Every file is written once, under a name no other
//! file can have, and never edited, so a git merge of two folders only adds files. Format 2:
//!
//! ```text
//! format.json                      {"format": "pinloom-sync", "version": 2, "sealed": …}
//! keys/passphrase.age              a sealed folder's key, encrypted with the passphrase (scrypt)
//! packs/<device>/<pack id>.pack    what one sync added: records, field changes, shares
//! ```
//!
//! A pack (`packs.rs`) holds records written once, field changes stamped with a hybrid logical
//! clock and, in the person's own remote, the trees shared with teams; `pack_files.rs` writes and
//! reads them here. Format 1, which an earlier Pinloom wrote one file per record, is still read,
//! and converted into packs by the next sync that writes:
//!
//! ```text
//! records/<kind>/<last two hex digits>/<global id>.json   one immutable record each
//! ops/<device>/<clock>-<device>.json                      one field change each
//! shares/share-<tree>-<team>.json        a tree shared with a team (the person's own remote only)
//! ```
//!
//! `format.json`'s bytes never change within a version and a seal: two machines that start a
//! folder apart both add it, and git merges two identical additions without a conflict.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use pinloom_store::{RecordKind, SyncOp, SyncRecord};
use serde_json::{Value, json};

use crate::base::safe_files::{Links, open_regular, replace_unsynced};

/// The layout this build writes (and the newest it reads).
pub(in crate::sync) const FORMAT_VERSION: u64 = 2;

/// The largest record or operation file read: a message or attachment bigger than any Pinloom
/// writes (imports stop at 64 MiB of a whole document) is refused rather than read into memory.
pub(in crate::sync) const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

/// The most new files one sync reads: a first sync of a 100,000-message tree is well under it;
/// a remote holding more is read over several syncs, each saying so.
pub(in crate::sync) const MAX_FILES_PER_SYNC: usize = 400_000;

/// The most bytes one sync reads from new files, for the same reason.
pub(in crate::sync) const MAX_BYTES_PER_SYNC: u64 = 768 * 1024 * 1024;

/// The largest format.json read (Pinloom's is under 300 bytes).
const MAX_FORMAT_BYTES: u64 = 64 * 1024;

/// What can go wrong with the folder itself.
#[derive(Debug, thiserror::Error)]
pub(in crate::sync) enum FolderError {
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

/// What a folder's format.json says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::sync) struct Format {
    /// Its layout's version (1: a file per record; 2: packs).
    pub(in crate::sync) version: u64,
    /// Whether its packs are encrypted (a key in `keys/`).
    pub(in crate::sync) sealed: bool,
    /// Whether this sync wrote it, the folder being new.
    pub(in crate::sync) new: bool,
}

/// Checks the folder's format.json, writing one for a new folder (`sealed` when it is to be
/// encrypted). A format.json that is not a file of its own (a link a remote planted, to a device,
/// to another folder's, or to nothing) is never read through nor written through: it is replaced
/// by this build's.
pub(in crate::sync) fn check_format(folder: &Path, sealed: bool) -> Result<Format, FolderError> {
    let path = folder.join("format.json");
    let planted = fs::symlink_metadata(&path).is_ok_and(|meta| !meta.file_type().is_file());
    if planted {
        remove_planted(&path)?;
    }
    // Relative to the folder: a folder given as a relative path is not joined to itself.
    match read_bounded(folder, Path::new("format.json"), MAX_FORMAT_BYTES) {
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
            let sealed = value.get("sealed").and_then(Value::as_bool).unwrap_or(false);
            Ok(Format { version: found, sealed, new: false })
        }
        Err(Refused::Io(error)) if error.kind() == std::io::ErrorKind::NotFound => {
            write_format(folder, sealed)?;
            Ok(Format { version: FORMAT_VERSION, sealed, new: true })
        }
        Err(Refused::Io(error)) => Err(io("read", &path)(error)),
        Err(Refused::Said(_)) => Err(FolderError::NotOurs { path }),
    }
}

/// Writes this build's format.json (a new folder's, or a folder converted to packs).
pub(in crate::sync) fn write_format(folder: &Path, sealed: bool) -> Result<(), FolderError> {
    let text = format!(
        "{:#}\n",
        json!({
            "format": "pinloom-sync",
            "version": FORMAT_VERSION,
            "sealed": sealed,
            "about": "Pinloom's trees as packs of records written once and field changes stamped \
                      with a hybrid logical clock; see Pinloom's docs/sync.md."
        })
    );
    write_once(folder, Path::new("format.json"), text.as_bytes())
}

/// Removes what a remote put where Pinloom's layout has a file or a folder of its own: a link
/// (never followed), or a file where a folder belongs. Git commits the removal with the sync.
fn remove_planted(path: &Path) -> Result<(), FolderError> {
    fs::remove_file(path).or_else(|error| match error.kind() {
        std::io::ErrorKind::NotFound => Ok(()),
        _ => Err(io("remove", path)(error)),
    })
}

/// Removes what the repository holds as a link at `relative` (see `Git::links`): checked out as a
/// file holding the link's text, or as a link by an older build. Never anything outside the
/// folder: a path with `..` or a root is not one of the folder's.
pub(in crate::sync) fn remove_link(folder: &Path, relative: &Path) -> Result<(), FolderError> {
    if !relative.components().all(|step| matches!(step, std::path::Component::Normal(_))) {
        return Ok(());
    }
    // Every folder on the way is a real one, so the removal cannot reach through a link.
    let mut on_the_way = folder.to_owned();
    for step in relative.parent().into_iter().flat_map(Path::components) {
        on_the_way.push(step);
        if !fs::symlink_metadata(&on_the_way).is_ok_and(|meta| meta.file_type().is_dir()) {
            return Ok(());
        }
    }
    remove_planted(&folder.join(relative))
}

/// Makes `relative` (a folder path inside `folder`) a real folder at every step: a link or a
/// file on the way is removed first, so nothing is written through a link a remote planted.
fn real_folder(folder: &Path, relative: &Path) -> Result<PathBuf, FolderError> {
    let mut path = folder.to_owned();
    for step in relative.components() {
        path.push(step);
        loop {
            match fs::symlink_metadata(&path) {
                Ok(meta) if meta.file_type().is_dir() => break,
                Ok(_) => remove_planted(&path)?,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                    match fs::create_dir(&path) {
                        // Another writer made it in between: looked at again.
                        Ok(()) => break,
                        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
                        Err(error) => return Err(io("create", &path)(error)),
                    }
                }
                Err(error) => return Err(io("read", &path)(error)),
            }
        }
    }
    Ok(path)
}

/// Writes a file whose name no other content can have, at `relative` inside `folder`. One
/// already there with these very bytes is left as it is; anything else there (cut short by a
/// crash before the sync that wrote it committed, other bytes a remote put under this machine's
/// next name, a link) is replaced whole (`replace_unsynced`: a new file renamed over the name,
/// which replaces a link and never writes through one). Every folder on the way is a real one
/// ([`real_folder`]). Files are not synced to disk one by one (100,000
/// of them would take most of a first sync): the database stays the truth, and a file is marked
/// as in the folder only once git has committed it, so what a crash loses is written again.
pub(in crate::sync) fn write_once(
    folder: &Path,
    relative: &Path,
    bytes: &[u8],
) -> Result<(), FolderError> {
    let name = relative.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let dir = real_folder(folder, relative.parent().unwrap_or(Path::new("")))?;
    let path = dir.join(&name);
    if read_bounded(folder, relative, bytes.len() as u64).is_ok_and(|held| held == bytes) {
        return Ok(());
    }
    replace_unsynced(&path, bytes).map_err(io("write", &path))
}

/// A tree shared with a team, as the person's own remote carries it to their other machines, so
/// that each of them lets that team's folder speak for the tree (a team's folder speaks only for
/// trees shared with it, and which those are is the person's to say, never the team's). Shares
/// are never withdrawn, so each is a file written once: `shares/<id>.json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(in crate::sync) struct ShareFile {
    /// `share-`, the tree's global id and the team's target name.
    pub(in crate::sync) id: String,
    /// The team's target name (`team-` and its name).
    pub(in crate::sync) team: String,
    /// The team's remote, where the machine that shared it had joined it.
    pub(in crate::sync) remote: Option<String>,
    /// The tree, by global id.
    pub(in crate::sync) tree: String,
    /// Who shared it.
    pub(in crate::sync) shared_by: String,
    /// When.
    pub(in crate::sync) at_ms: i64,
}

impl ShareFile {
    pub(in crate::sync) fn id_of(tree: &str, team: &str) -> String {
        format!("share-{tree}-{team}")
    }
}

/// A pack read in this sync: its id, the ids of the lines it holds, and the packs it replaces.
/// Once the database holds every line, the pack (and what it replaces) is marked as held, and
/// is never read again; until then it is read again by each sync, for the lines that waited.
#[derive(Debug, Default, Clone)]
pub(in crate::sync) struct ArrivedPack {
    pub(in crate::sync) id: String,
    pub(in crate::sync) lines: Vec<String>,
    pub(in crate::sync) replaces: Vec<String>,
}

impl ArrivedPack {
    /// The ids to mark as held once `known` holds every line: the pack's and what it replaces.
    pub(in crate::sync) fn done(&self, known: &HashSet<String>) -> Option<Vec<String>> {
        self.lines.iter().all(|line| known.contains(line)).then(|| {
            std::iter::once(self.id.clone()).chain(self.replaces.iter().cloned()).collect()
        })
    }
}

/// What the folder holds that the database does not know it holds.
#[derive(Debug, Default)]
pub(in crate::sync) struct Arrived {
    pub(in crate::sync) records: Vec<SyncRecord>,
    pub(in crate::sync) ops: Vec<SyncOp>,
    /// Trees shared with teams (read only from the person's own remote).
    pub(in crate::sync) shares: Vec<ShareFile>,
    /// The packs read, to be marked as held once every line of theirs is.
    pub(in crate::sync) packs: Vec<ArrivedPack>,
    /// In a team's folder: the device whose signed pack brought each record, by record id.
    pub(in crate::sync) authors: std::collections::HashMap<String, String>,
    /// In a team's folder: packs written before this machine was a member (encrypted to the
    /// members then), passed by.
    pub(in crate::sync) before_joining: Vec<String>,
    /// Files refused, with why; their ids, to be marked as held (they will not read better later).
    pub(in crate::sync) damaged: Vec<(String, String)>,
    /// Files or lines of a kind this build does not know (a newer Pinloom's): reported, and read
    /// again by a build that knows them.
    pub(in crate::sync) unknown: Vec<String>,
    /// Links and other things that are not files where the layout has files or folders: never
    /// followed, reported.
    pub(in crate::sync) not_followed: Vec<String>,
    /// New files left for the next sync because this one read as many files or bytes as one
    /// sync reads ([`MAX_FILES_PER_SYNC`], [`MAX_BYTES_PER_SYNC`]).
    pub(in crate::sync) left_for_later: usize,
}

/// How much one reading has taken, against the per-sync bounds.
#[derive(Debug, Default)]
pub(in crate::sync) struct Taken {
    files: usize,
    pub(in crate::sync) bytes: u64,
    unbounded: bool,
}

impl Taken {
    /// A reading that takes all there is (a conversion of the folder's own old files).
    pub(in crate::sync) fn unbounded() -> Taken {
        Taken { unbounded: true, ..Taken::default() }
    }

    pub(in crate::sync) fn full(&self) -> bool {
        !self.unbounded && (self.files >= MAX_FILES_PER_SYNC || self.bytes >= MAX_BYTES_PER_SYNC)
    }
}

/// Reads format 1's files (`records/`, `ops/`, `shares/`) whose ids are not in `known` into
/// `arrived`; returns the files that read (relative to the folder).
pub(in crate::sync) fn read_old_layout(
    folder: &Path,
    known: &HashSet<String>,
    arrived: &mut Arrived,
    taken: &mut Taken,
) -> Result<Vec<PathBuf>, FolderError> {
    let mut read = Vec::new();
    for kind in folders_in(folder, Path::new("records"), arrived)? {
        let kind_name = kind.file_name().map(|name| name.to_string_lossy().into_owned());
        let known_kind = kind_name
            .as_deref()
            .is_some_and(|name| RecordKind::ALL.iter().any(|kind| kind.folder() == name));
        for fan in folders_in(folder, &kind, arrived)? {
            for file in files_in(folder, &fan, ".json", known, arrived)? {
                if !known_kind {
                    arrived.unknown.push(shown(&file));
                    continue;
                }
                if let Some(record) =
                    read_one(folder, file, taken, arrived, &mut read, |record: &SyncRecord| {
                        record.id().to_owned()
                    })
                {
                    arrived.records.push(record);
                }
            }
        }
    }
    for device in folders_in(folder, Path::new("ops"), arrived)? {
        for file in files_in(folder, &device, ".json", known, arrived)? {
            if let Some(op) =
                read_one(folder, file, taken, arrived, &mut read, |op: &SyncOp| op.id.clone())
            {
                arrived.ops.push(op);
            }
        }
    }
    if is_real_folder(folder, Path::new("shares"), arrived) {
        for file in files_in(folder, Path::new("shares"), ".json", known, arrived)? {
            if let Some(share) =
                read_one(folder, file, taken, arrived, &mut read, |share: &ShareFile| {
                    share.id.clone()
                })
            {
                arrived.shares.push(share);
            }
        }
    }
    Ok(read)
}

/// Reads one file of format 1 as a `T` whose id (`id`) must be its name; a refusal is noted as
/// damaged, a file past the sync's bounds left for later.
fn read_one<T: serde::de::DeserializeOwned>(
    folder: &Path,
    file: PathBuf,
    taken: &mut Taken,
    arrived: &mut Arrived,
    read: &mut Vec<PathBuf>,
    id: impl Fn(&T) -> String,
) -> Option<T> {
    let name = id_of(&file, ".json");
    if taken.full() {
        arrived.left_for_later += 1;
        return None;
    }
    match read_file::<T>(folder, &file, taken) {
        Ok(value) if id(&value) == name => {
            read.push(file);
            Some(value)
        }
        Ok(_) => {
            arrived.damaged.push((name, format!("{}: its id is not its name", shown(&file))));
            None
        }
        Err(why) => {
            arrived.damaged.push((name, format!("{}: {why}", shown(&file))));
            None
        }
    }
}

/// The id a file is named by (its name without `suffix`).
pub(in crate::sync) fn id_of(file: &Path, suffix: &str) -> String {
    let name =
        file.file_name().map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    name.strip_suffix(suffix).unwrap_or(&name).to_owned()
}

/// Removes a file of the folder (one converted into a pack, a pack compacted); one already gone
/// is not an error.
pub(in crate::sync) fn remove_file(path: &Path) -> Result<(), FolderError> {
    remove_planted(path)
}

/// The error of a writer thread that stopped without saying why.
pub(in crate::sync) fn stopped(folder: &Path) -> FolderError {
    FolderError::Io {
        doing: "write",
        path: folder.to_owned(),
        source: std::io::Error::other("a writer stopped"),
    }
}

/// A file of the folder that could not be read as one.
enum Refused {
    /// The system's refusal.
    Io(std::io::Error),
    /// Why it is not taken, in words.
    Said(String),
}

/// Reads `path` inside `folder` as [`crate::base::safe_files::open_regular`] opens an imported
/// file: not through a link, a regular file (never a FIFO or a device), really inside the
/// folder, and no longer than `limit` on its handle.
fn read_bounded(folder: &Path, path: &Path, limit: u64) -> Result<Vec<u8>, Refused> {
    let (file, size) = open_regular(&folder.join(path), Links::Refused, Some(folder)).map_err(
        |error| match error.kind() {
            std::io::ErrorKind::InvalidInput => Refused::Said(error.to_string()),
            _ => Refused::Io(error),
        },
    )?;
    if size > limit {
        return Err(Refused::Said(format!("{size} bytes, over the {limit}-byte limit")));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    // The size was read on the handle; a file growing since is cut at the limit and refused.
    std::io::Read::read_to_end(&mut std::io::Read::take(file, limit + 1), &mut bytes)
        .map_err(Refused::Io)?;
    if bytes.len() as u64 > limit {
        return Err(Refused::Said(format!("over the {limit}-byte limit")));
    }
    Ok(bytes)
}

fn read_file<T: serde::de::DeserializeOwned>(
    folder: &Path,
    file: &Path,
    taken: &mut Taken,
) -> Result<T, String> {
    let bytes = read_counted(folder, file, MAX_FILE_BYTES, taken)?;
    taken.bytes += bytes.len() as u64;
    serde_json::from_slice(&bytes)
        .map_err(|error| format!("not a record this Pinloom can read ({error})"))
}

/// Reads a file of the folder of at most `limit` bytes ([`read_bounded`]), counted as one file
/// of the sync's bound.
pub(in crate::sync) fn read_counted(
    folder: &Path,
    file: &Path,
    limit: u64,
    taken: &mut Taken,
) -> Result<Vec<u8>, String> {
    let bytes = read_bounded(folder, file, limit).map_err(|refused| match refused {
        Refused::Io(error) => error.to_string(),
        Refused::Said(why) => why,
    })?;
    taken.files += 1;
    Ok(bytes)
}

/// What one folder of the layout holds: its entries (relative to the sync folder), sorted, as
/// the directory says they are, links not followed. None when it does not exist.
fn listing(folder: &Path, dir: &Path) -> Result<Vec<(PathBuf, fs::FileType)>, FolderError> {
    let path = folder.join(dir);
    let listing = match fs::read_dir(&path) {
        Ok(listing) => listing,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(io("read", &path)(error)),
    };
    let mut found = Vec::new();
    for entry in listing {
        let entry = entry.map_err(io("read", &path))?;
        let kind = entry.file_type().map_err(io("read", &entry.path()))?;
        found.push((dir.join(entry.file_name()), kind));
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found)
}

/// The real folders inside `dir` (itself a real folder, or nothing is listed); links and files
/// where folders belong are noted as not followed.
pub(in crate::sync) fn folders_in(
    folder: &Path,
    dir: &Path,
    arrived: &mut Arrived,
) -> Result<Vec<PathBuf>, FolderError> {
    if !is_real_folder(folder, dir, arrived) {
        return Ok(Vec::new());
    }
    let mut folders = Vec::new();
    for (path, kind) in listing(folder, dir)? {
        if kind.is_dir() {
            folders.push(path);
        } else if kind.is_symlink() {
            arrived.not_followed.push(shown(&path));
        }
    }
    Ok(folders)
}

/// The files named `<id><suffix>` inside `dir` whose ids are not in `known`; a link named like
/// one is noted as not followed (and its id counted as damaged, so it is reported once).
pub(in crate::sync) fn files_in(
    folder: &Path,
    dir: &Path,
    suffix: &str,
    known: &HashSet<String>,
    arrived: &mut Arrived,
) -> Result<Vec<PathBuf>, FolderError> {
    let mut files = Vec::new();
    for (path, kind) in listing(folder, dir)? {
        let Some(name) = path.file_name().and_then(|name| name.to_str()) else { continue };
        let Some(id) = name.strip_suffix(suffix) else { continue };
        if name.starts_with('.') || known.contains(id) {
            continue;
        }
        if !id.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_') {
            // Ids are written back under their names (to another remote's folder): only names
            // Pinloom writes are taken, never one that could name another place.
            arrived.damaged.push((
                id.to_owned(),
                format!("{}: its name is not one Pinloom writes", shown(&path)),
            ));
        } else if kind.is_file() {
            files.push(path);
        } else {
            arrived.damaged.push((
                id.to_owned(),
                format!(
                    "{}: it is {}, which a sync folder never holds; not followed",
                    shown(&path),
                    if kind.is_symlink() { "a symbolic link" } else { "not a file" }
                ),
            ));
        }
    }
    Ok(files)
}

/// Whether `dir` (`packs`, `records`, `ops` or deeper) is a real folder; a link there is noted.
fn is_real_folder(folder: &Path, dir: &Path, arrived: &mut Arrived) -> bool {
    match fs::symlink_metadata(folder.join(dir)) {
        Ok(meta) if meta.file_type().is_dir() => true,
        Ok(_) => {
            arrived.not_followed.push(shown(dir));
            false
        }
        Err(_) => false,
    }
}

/// A path of the folder as a report names it: its place in the layout, the characters a remote
/// chose shown, not obeyed (a control character in a name could rewrite a terminal's screen).
pub(in crate::sync) fn shown(relative: &Path) -> String {
    let mut text = String::new();
    for c in relative.display().to_string().chars() {
        if c.is_control() {
            text.extend(c.escape_unicode());
        } else {
            text.push(c);
        }
    }
    text
}

#[cfg(test)]
pub(in crate::sync) mod tests {
    use std::os::unix::fs::symlink;

    use pinloom_store::TreeRecord;

    use super::*;

    /// A tree's record, as the folder's and the packs' tests write them.
    pub(in crate::sync) fn tree(id: &str) -> SyncRecord {
        SyncRecord::Tree(TreeRecord {
            id: id.to_owned(),
            title: "Rivers".into(),
            mode: "dialogue".into(),
            system_context: String::new(),
            buffer_includes_system: false,
            settings: json!({}),
            created_at_ms: 1,
            deleted_at_ms: None,
            shared_by: None,
        })
    }

    #[test]
    fn a_format_json_that_is_a_link_is_replaced_by_pinloom_s_own() {
        let root = tempfile::tempdir().unwrap();
        let folder = root.path().join("origin");
        fs::create_dir_all(&folder).unwrap();
        symlink(root.path().join("nowhere/format.json"), folder.join("format.json")).unwrap();
        check_format(&folder, false).unwrap();
        assert!(!root.path().join("nowhere").exists());
        let written = fs::read_to_string(folder.join("format.json")).unwrap();
        assert!(written.contains("pinloom-sync"), "{written}");
        // A device in its place is not read (a read of /dev/zero would never end).
        fs::remove_file(folder.join("format.json")).unwrap();
        symlink("/dev/zero", folder.join("format.json")).unwrap();
        check_format(&folder, false).unwrap();
        assert!(fs::symlink_metadata(folder.join("format.json")).unwrap().is_file());
    }
}
