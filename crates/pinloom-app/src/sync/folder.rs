//! The sync folder's layout (format 1), written and read. Every file is written once, under a
//! name no other file can have, and never edited, so a git merge of two folders only adds files:
//!
//! ```text
//! format.json                              {"format": "pinloom-sync", "version": 1}
//! records/<kind>/<last two hex digits>/<global id>.json   one immutable record each
//! ops/<device>/<clock>-<device>.json                      one field change each
//! shares/share-<tree>-<team>.json        a tree shared with a team (the person's own remote only)
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

use pinloom_store::{RecordKind, SyncOp, SyncOutgoing, SyncRecord};
use serde_json::{Value, json};

use crate::base::safe_files::{Links, open_regular, replace_unsynced};

/// The layout this build writes and reads.
pub(in crate::sync) const FORMAT_VERSION: u64 = 1;

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

/// Checks the folder's format.json, writing it when the folder has none yet. A format.json that
/// is not a file of its own (a link a remote planted, to a device, to another folder's, or to
/// nothing) is never read through nor written through: it is replaced by this build's.
pub(in crate::sync) fn check_format(folder: &Path) -> Result<(), FolderError> {
    let path = folder.join("format.json");
    let planted = fs::symlink_metadata(&path).is_ok_and(|meta| !meta.file_type().is_file());
    if planted {
        remove_planted(&path)?;
    }
    match read_bounded(folder, &path, MAX_FORMAT_BYTES) {
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
        Err(Refused::Io(error)) if error.kind() == std::io::ErrorKind::NotFound => {
            let text = format!(
                "{:#}\n",
                json!({
                    "format": "pinloom-sync",
                    "version": FORMAT_VERSION,
                    "about": "Pinloom's trees as records written once and field changes stamped \
                              with a hybrid logical clock; see Pinloom's docs/sync.md."
                })
            );
            write_once(folder, Path::new("format.json"), text.as_bytes())
        }
        Err(Refused::Io(error)) => Err(io("read", &path)(error)),
        Err(Refused::Said(_)) => Err(FolderError::NotOurs { path }),
    }
}

/// Where a record lives in the folder, relative to it.
pub(in crate::sync) fn record_path(record: &SyncRecord) -> PathBuf {
    let id = record.id();
    let fan = &id[id.len().saturating_sub(2)..];
    Path::new("records").join(record.kind().folder()).join(fan).join(format!("{id}.json"))
}

/// Where an operation lives in the folder, relative to it.
pub(in crate::sync) fn op_path(op: &SyncOp) -> PathBuf {
    Path::new("ops").join(&op.device).join(format!("{}.json", op.id))
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
fn write_once(folder: &Path, relative: &Path, bytes: &[u8]) -> Result<(), FolderError> {
    let name = relative.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let dir = real_folder(folder, relative.parent().unwrap_or(Path::new("")))?;
    let path = dir.join(&name);
    if read_bounded(folder, &path, bytes.len() as u64).is_ok_and(|held| held == bytes) {
        return Ok(());
    }
    replace_unsynced(&path, bytes).map_err(io("write", &path))
}

/// Writes every outgoing record and operation; returns the ids written. A first sync writes a
/// file per message, so the files are written on every core: creating them is most of its time.
pub(in crate::sync) fn write_outgoing(
    folder: &Path,
    outgoing: &SyncOutgoing,
) -> Result<Vec<String>, FolderError> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let mut written = Vec::with_capacity(outgoing.records.len() + outgoing.ops.len());
    for record in &outgoing.records {
        files.push((record_path(record), serde_json::to_vec(record).unwrap_or_default()));
        written.push(record.id().to_owned());
    }
    for op in &outgoing.ops {
        files.push((op_path(op), serde_json::to_vec(op).unwrap_or_default()));
        written.push(op.id.clone());
    }
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let share = files.len().div_ceil(workers).max(1);
    std::thread::scope(|scope| {
        let running: Vec<_> = files
            .chunks(share)
            .map(|chunk| {
                scope.spawn(move || {
                    chunk.iter().try_for_each(|(path, bytes)| write_once(folder, path, bytes))
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

/// Writes the shares not written yet (by id, `known` aside); returns the ids written.
pub(in crate::sync) fn write_shares(
    folder: &Path,
    shares: &[ShareFile],
    known: &HashSet<String>,
) -> Result<Vec<String>, FolderError> {
    let mut written = Vec::new();
    for share in shares.iter().filter(|share| !known.contains(&share.id)) {
        let bytes = serde_json::to_vec(share).unwrap_or_default();
        write_once(folder, &Path::new("shares").join(format!("{}.json", share.id)), &bytes)?;
        written.push(share.id.clone());
    }
    Ok(written)
}

/// Reads the shares the database does not know the folder holds (the person's own remote's
/// only: a team's folder has no say in what is shared with it).
pub(in crate::sync) fn read_shares(
    folder: &Path,
    known: &HashSet<String>,
) -> Result<ArrivedShares, FolderError> {
    let mut arrived = Arrived::default();
    let mut shares = Vec::new();
    let mut taken = Taken::default();
    if is_real_folder(folder, Path::new("shares"), &mut arrived) {
        for file in files_in(folder, Path::new("shares"), known, &mut arrived)? {
            let id = id_of(&file);
            match read_file::<ShareFile>(folder, &file, &mut taken) {
                Ok(share) if share.id == id => shares.push(share),
                Ok(_) => {
                    arrived.damaged.push((id, format!("{}: its id is not its name", shown(&file))))
                }
                Err(why) => arrived.damaged.push((id, format!("{}: {why}", shown(&file)))),
            }
        }
    }
    Ok(ArrivedShares { shares, damaged: arrived.damaged })
}

/// The shares a folder holds that the database does not know it holds.
pub(in crate::sync) struct ArrivedShares {
    pub(in crate::sync) shares: Vec<ShareFile>,
    /// Files refused, with why (by id).
    pub(in crate::sync) damaged: Vec<(String, String)>,
}

/// What the folder holds that the database does not know it holds.
#[derive(Debug, Default)]
pub(in crate::sync) struct Arrived {
    pub(in crate::sync) records: Vec<SyncRecord>,
    pub(in crate::sync) ops: Vec<SyncOp>,
    /// Files refused, with why; their ids, to be marked as held (they will not read better later).
    pub(in crate::sync) damaged: Vec<(String, String)>,
    /// Files of a kind this build does not know (a newer Pinloom's): reported, and read again by
    /// a build that knows them.
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
struct Taken {
    files: usize,
    bytes: u64,
}

impl Taken {
    fn full(&self) -> bool {
        self.files >= MAX_FILES_PER_SYNC || self.bytes >= MAX_BYTES_PER_SYNC
    }
}

/// Reads every record and operation file whose id is not in `known`. Only real folders and
/// regular files are read: a link anywhere in the layout is reported and never followed, so a
/// remote cannot make this sync read another folder's records, a device or a secret.
pub(in crate::sync) fn read_new(
    folder: &Path,
    known: &HashSet<String>,
) -> Result<Arrived, FolderError> {
    let mut arrived = Arrived::default();
    let mut taken = Taken::default();
    for kind in folders_in(folder, Path::new("records"), &mut arrived)? {
        let kind_name = kind.file_name().map(|name| name.to_string_lossy().into_owned());
        let known_kind = kind_name
            .as_deref()
            .is_some_and(|name| RecordKind::ALL.iter().any(|kind| kind.folder() == name));
        for fan in folders_in(folder, &kind, &mut arrived)? {
            for file in files_in(folder, &fan, known, &mut arrived)? {
                let id = id_of(&file);
                if !known_kind {
                    arrived.unknown.push(shown(&file));
                    continue;
                }
                if taken.full() {
                    arrived.left_for_later += 1;
                    continue;
                }
                match read_file::<SyncRecord>(folder, &file, &mut taken) {
                    Ok(record) if record.id() == id => arrived.records.push(record),
                    Ok(_) => arrived
                        .damaged
                        .push((id, format!("{}: its id is not its name", shown(&file)))),
                    Err(why) => arrived.damaged.push((id, format!("{}: {why}", shown(&file)))),
                }
            }
        }
    }
    for device in folders_in(folder, Path::new("ops"), &mut arrived)? {
        for file in files_in(folder, &device, known, &mut arrived)? {
            let id = id_of(&file);
            if taken.full() {
                arrived.left_for_later += 1;
                continue;
            }
            match read_file::<SyncOp>(folder, &file, &mut taken) {
                Ok(op) if op.id == id => arrived.ops.push(op),
                Ok(_) => {
                    arrived.damaged.push((id, format!("{}: its id is not its name", shown(&file))))
                }
                Err(why) => arrived.damaged.push((id, format!("{}: {why}", shown(&file)))),
            }
        }
    }
    Ok(arrived)
}

/// The id a file is named by (its name without `.json`).
fn id_of(file: &Path) -> String {
    let name =
        file.file_name().map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    name.strip_suffix(".json").unwrap_or(&name).to_owned()
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
    let bytes = read_bounded(folder, file, MAX_FILE_BYTES).map_err(|refused| match refused {
        Refused::Io(error) => error.to_string(),
        Refused::Said(why) => why,
    })?;
    taken.files += 1;
    taken.bytes += bytes.len() as u64;
    serde_json::from_slice(&bytes)
        .map_err(|error| format!("not a record this Pinloom can read ({error})"))
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
fn folders_in(
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

/// The `.json` files inside `dir` whose ids are not in `known`; a link named like one is noted
/// as not followed (and its id counted as damaged, so it is reported once).
fn files_in(
    folder: &Path,
    dir: &Path,
    known: &HashSet<String>,
    arrived: &mut Arrived,
) -> Result<Vec<PathBuf>, FolderError> {
    let mut files = Vec::new();
    for (path, kind) in listing(folder, dir)? {
        let Some(name) = path.file_name().and_then(|name| name.to_str()) else { continue };
        let Some(id) = name.strip_suffix(".json") else { continue };
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

/// Whether `dir` (`records`, `ops` or deeper) is a real folder; a link there is noted.
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
mod tests {
    use std::os::unix::fs::symlink;

    use pinloom_store::TreeRecord;

    use super::*;

    fn tree(id: &str) -> SyncRecord {
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
    fn links_planted_where_files_go_are_replaced_never_written_or_read_through() {
        let root = tempfile::tempdir().unwrap();
        let folder = root.path().join("team-geo");
        let outside = root.path().join("outside");
        fs::create_dir_all(&folder).unwrap();
        fs::create_dir_all(&outside).unwrap();
        let victim = root.path().join("bashrc");
        fs::write(&victim, "precious").unwrap();
        let op = SyncOp {
            id: format!("{:016x}-0123456789abcdef", 5_i64 << 16),
            gid: "0190aaaa-0000-7000-8000-000000000001".into(),
            kind: "tree".into(),
            field: "title".into(),
            value: json!("Renamed"),
            clock: 5 << 16,
            device: "0123456789abcdef".into(),
        };
        // The next operation's very name, linked to a file of the person's; the records' folder
        // linked to a folder elsewhere.
        let op_file = folder.join(op_path(&op));
        fs::create_dir_all(op_file.parent().unwrap()).unwrap();
        symlink(&victim, &op_file).unwrap();
        symlink(&outside, folder.join("records")).unwrap();
        let record = tree("0190aaaa-0000-7000-8000-000000000001");
        let outgoing = SyncOutgoing { records: vec![record.clone()], ops: vec![op.clone()] };
        write_outgoing(&folder, &outgoing).unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
        assert!(fs::symlink_metadata(&op_file).unwrap().file_type().is_file());
        assert_eq!(fs::read(&op_file).unwrap(), serde_json::to_vec(&op).unwrap());
        assert!(fs::symlink_metadata(folder.join("records")).unwrap().is_dir());

        // A link named like a record, to the person's file, a device, or the terminal's input:
        // refused by name, never read.
        let fan = folder.join("records/trees/02");
        fs::create_dir_all(&fan).unwrap();
        for (n, target) in
            [(2, victim.as_path()), (3, Path::new("/dev/zero")), (4, Path::new("/dev/stdin"))]
        {
            symlink(target, fan.join(format!("0190aaaa-0000-7000-8000-00000000000{n}.json")))
                .unwrap();
        }
        let arrived = read_new(&folder, &HashSet::new()).unwrap();
        assert_eq!(arrived.records, vec![record]);
        assert_eq!(arrived.damaged.len(), 3, "{:?}", arrived.damaged);
        assert!(arrived.damaged.iter().all(|(_, why)| why.contains("symbolic link")));
        // A linked kind of record is not listed at all.
        symlink(&outside, folder.join("records/notes")).unwrap();
        let arrived = read_new(&folder, &HashSet::new()).unwrap();
        assert_eq!(arrived.not_followed, ["records/notes"]);
    }

    #[test]
    fn a_format_json_that_is_a_link_is_replaced_by_pinloom_s_own() {
        let root = tempfile::tempdir().unwrap();
        let folder = root.path().join("origin");
        fs::create_dir_all(&folder).unwrap();
        symlink(root.path().join("nowhere/format.json"), folder.join("format.json")).unwrap();
        check_format(&folder).unwrap();
        assert!(!root.path().join("nowhere").exists());
        let written = fs::read_to_string(folder.join("format.json")).unwrap();
        assert!(written.contains("pinloom-sync"), "{written}");
        // A device in its place is not read (a read of /dev/zero would never end).
        fs::remove_file(folder.join("format.json")).unwrap();
        symlink("/dev/zero", folder.join("format.json")).unwrap();
        check_format(&folder).unwrap();
        assert!(fs::symlink_metadata(folder.join("format.json")).unwrap().is_file());
    }
}
