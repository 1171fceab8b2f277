//! Snapshots of built tables, kept in the user's cache folder so that a process after the first
//! reads an encoding's tables instead of building them (0.1–0.7 s each) again.
//!
//! The cache folder is not ours alone: any program the person runs can write there, and a synced
//! or copied folder can bring files in. So what is read from it is input to check, not our own
//! word: a file is read only if it is a regular file at the path itself (not a link, a FIFO or a
//! device) and no larger than such a file can be, and a snapshot's tables are then checked one
//! by one against the vocabulary by the C side (`check_tables` in `cpp/tokenizer_snapshots.cpp`)
//! before any is used.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::{env, fs, process};

/// The largest snapshot read: o200k's, the largest, is 26.4 MB.
const LARGEST: u64 = 64 << 20;

/// A snapshot file's kind, before its body (`crate::framing`).
pub(crate) const MAGIC: &[u8; 8] = b"PLQTSNP2";

/// `PINLOOM_TOKENIZER_CACHE` names the folder (empty: keep no snapshots); otherwise
/// `pinloom/tokenizers` in the user's cache folder.
pub(crate) fn folder() -> Option<PathBuf> {
    if let Some(chosen) = env::var_os("PINLOOM_TOKENIZER_CACHE") {
        return (!chosen.is_empty()).then(|| PathBuf::from(chosen));
    }
    Some(crate::cache_folder::user_cache_folder()?.join("pinloom").join("tokenizers"))
}

/// The snapshot of `encoding` for this build: its name carries a digest of the tokenizer
/// release and of the code that writes snapshots, so another build's file is never read.
pub(crate) fn file(folder: &Path, encoding: &str) -> PathBuf {
    folder.join(format!("{encoding}-{}.tables", env!("PINLOOM_QUICKTOK_SNAPSHOT_KEY")))
}

/// The snapshot in `file`, if there is one to check (see [`read_regular`]).
pub(crate) fn read(file: &Path) -> Option<Vec<u8>> {
    read_regular(file, LARGEST)
}

/// The bytes of `file` if it is a regular file of at most `largest` bytes, or `None`.
///
/// Checked on what was opened, so nothing can be swapped in between a check and the open:
/// a symbolic link at the path is not followed (`O_NOFOLLOW`; a reparse point on Windows),
/// the open does not wait for a FIFO's writer (`O_NONBLOCK`) and the handle must then be a
/// regular file, and its size is bounded before reading and again while reading (a file
/// growing meanwhile is refused, not read without end).
pub(crate) fn read_regular(file: &Path, largest: u64) -> Option<Vec<u8>> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        // FILE_FLAG_OPEN_REPARSE_POINT: a link is opened itself, then refused below.
        options.custom_flags(0x0020_0000);
    }
    let opened = options.open(file).ok()?;
    let metadata = opened.metadata().ok()?;
    #[cfg(windows)]
    {
        use std::os::windows::fs::MetadataExt;
        // FILE_ATTRIBUTE_REPARSE_POINT: a link or a junction.
        if metadata.file_attributes() & 0x400 != 0 {
            return None;
        }
    }
    if !metadata.is_file() || metadata.len() > largest {
        return None;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).ok()?);
    opened.take(largest + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= largest).then_some(bytes)
}

/// Written beside its place and renamed into it, so that a process reading at the same
/// moment sees the whole file or none. The file written first is new (created only if
/// nothing has its name, and its name is this process's and this moment's), so a link or a
/// FIFO planted under that name cannot redirect or stall the write; renaming replaces
/// whatever is at `file` itself (a link there is replaced, not followed).
pub(crate) fn write(file: &Path, snapshot: &[u8]) {
    use std::io::Write;
    let Some(folder) = file.parent() else { return };
    if fs::create_dir_all(folder).is_err() {
        return;
    }
    let moment = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    let partial = file.with_extension(format!("partial-{}-{moment}", process::id()));
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&partial)
        .and_then(|mut opened| opened.write_all(snapshot))
        .and_then(|()| fs::rename(&partial, file));
    if written.is_err() {
        let _ = fs::remove_file(&partial);
    }
}
