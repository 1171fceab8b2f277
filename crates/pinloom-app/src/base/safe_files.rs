//! Files opened and replaced safely, as every area that touches the person's files needs: opened
//! once and checked on the handle (so nothing is swapped in between a check and the open), and
//! replaced whole through a rename (so a failure halfway never leaves a cut file).

use std::io::Write;
use std::path::{Path, PathBuf};

/// Whether opening a file may follow a symbolic link at its last step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Links {
    /// A link is refused: the file must be the one at the path itself.
    Refused,
    /// A link is followed; where it leads is checked on what was opened.
    Followed,
}

/// Opens `path` for reading once and checks what was opened on its handle, so that nothing can
/// be swapped in between a check and the open: it must be a regular file (opening never waits
/// on a FIFO or a device: non-blocking), not one of the system's own (`/proc`, `/sys`, `/dev`,
/// where `/proc/self/environ` holds this process's keys) wherever a link led, with
/// `Links::Refused` not a link itself, and, given `inside`, within that folder as it really is.
/// Returns the file and its size; a refusal says "it is …" for the caller to name the path.
pub(crate) fn open_regular(
    path: &Path,
    links: Links,
    inside: Option<&Path>,
) -> std::io::Result<(std::fs::File, u64)> {
    let refuse = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, why);
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let no_follow = if links == Links::Refused { libc::O_NOFOLLOW } else { 0 };
        options.custom_flags(libc::O_NONBLOCK | no_follow);
    }
    let file = options.open(path).map_err(|error| {
        // O_NOFOLLOW on a link fails with ELOOP: said in words (asking the path again could
        // find a file swapped back in since).
        #[cfg(unix)]
        let link = error.raw_os_error() == Some(libc::ELOOP);
        #[cfg(not(unix))]
        let link = false;
        if links == Links::Refused && link {
            refuse("it is a symbolic link".to_owned())
        } else {
            error
        }
    })?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(refuse("it is not a file".to_owned()));
    }
    if let Some(real) = opened_path(&file) {
        if ["/proc", "/sys", "/dev"].iter().any(|system| real.starts_with(system)) {
            return Err(refuse(format!(
                "it is one of the system's own files ({}), not a document",
                real.display()
            )));
        }
        if let Some(folder) = inside {
            let folder = std::fs::canonicalize(folder)?;
            if !real.starts_with(&folder) {
                return Err(refuse(format!(
                    "it leads outside {} (to {})",
                    folder.display(),
                    real.display()
                )));
            }
        }
    }
    Ok((file, metadata.len()))
}

/// Where an open file really is, as the system says for its handle (Linux), which no later
/// change to the path can alter; `None` where the system does not say.
fn opened_path(file: &std::fs::File) -> Option<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        None
    }
}

/// Replaces the file at `path` (in a folder that exists) with `bytes` at once ([`replace_with`]).
pub(crate) fn replace_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_with(path, |file| file.write_all(bytes))
}

/// Replaces the file at `path` (in a folder that exists) with what `write` writes, at once: it
/// is written to a hidden file beside it, synced to disk and renamed over it, so `path` holds
/// either what it held or all that was written. The hidden file's name is new each time (process and moment)
/// and created only if nothing has it, so neither a stale left-over, another writer, nor a link
/// planted under a fixed name can redirect the write; it is removed if anything fails.
pub(crate) fn replace_with<T>(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<T>,
) -> std::io::Result<T> {
    replace_then(path, Durability::Synced, write)
}

/// Replaces the file at `path` with `bytes` as [`replace_whole`] does, without waiting for the
/// disk: for many small files whose truth is kept elsewhere (a sync folder's, which the database
/// writes again after a crash). A link at `path` is replaced, never written through.
pub(crate) fn replace_unsynced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_then(path, Durability::Unsynced, |file| file.write_all(bytes))
}

/// Whether a replacing file reaches the disk before it takes the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Durability {
    Synced,
    Unsynced,
}

fn replace_then<T>(
    path: &Path,
    durability: Durability,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<T>,
) -> std::io::Result<T> {
    let name =
        path.file_name().map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    let moment = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    let partial =
        path.with_file_name(format!(".{name}.{}-{moment}.pinloom-partial", std::process::id()));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&partial)?;
        let made = write(&mut file)?;
        if durability == Durability::Synced {
            file.sync_all()?;
        }
        std::fs::rename(&partial, path)?;
        Ok(made)
    })();
    if written.is_err() {
        // Nothing to keep of a part; the file it was to replace is untouched.
        drop(std::fs::remove_file(&partial));
    }
    written
}
