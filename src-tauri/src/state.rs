//! What every command reaches through Tauri's state: the open application (or why it could not
//! be opened), the replies streaming now, and the files the person chose. Below the commands,
//! which all use it.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use pinloom_app::{ApiError, CancellationToken, Pinloom};

/// The folder in the data folder that holds the log files.
pub(crate) const LOG_FOLDER: &str = "logs";

/// What every command reaches through Tauri's state.
pub(crate) struct AppState {
    /// The open application, or why it could not be opened. A failure is kept, not fatal, so the
    /// window can show the person what went wrong and what to do.
    pub(crate) pinloom: Result<Pinloom, ApiError>,
    pub(crate) data_dir: PathBuf,
    /// The replies streaming now, so the window can stop one.
    pub(crate) streaming: Streaming,
    /// The files the person chose with a dialog or a drop: the only ones the window may name.
    pub(crate) chosen: ChosenFiles,
}

impl AppState {
    pub(crate) fn pinloom(&self) -> Result<&Pinloom, ApiError> {
        self.pinloom.as_ref().map_err(Clone::clone)
    }
}

/// The replies streaming now, by the window's request id, so the window can stop one.
#[derive(Debug, Default)]
pub(crate) struct Streaming {
    replies: Mutex<HashMap<u32, CancellationToken>>,
}

impl Streaming {
    pub(crate) fn start(&self, request_id: u32) -> Result<CancellationToken, ApiError> {
        Ok(self.start_all(&[request_id])?.remove(0))
    }

    /// Tokens for replies under these request ids, all or none: an id already streaming, or
    /// given twice, is refused, since only one reply could then be stopped by it.
    pub(crate) fn start_all(
        &self,
        request_ids: &[u32],
    ) -> Result<Vec<CancellationToken>, ApiError> {
        let mut replies = self.lock();
        for (at, id) in request_ids.iter().enumerate() {
            if replies.contains_key(id) || request_ids[..at].contains(id) {
                return Err(ApiError::invalid_input(format!(
                    "request id {id} is already streaming a reply; each reply needs an id of its \
                     own to be stopped by"
                )));
            }
        }
        Ok(request_ids
            .iter()
            .map(|id| {
                let token = CancellationToken::new();
                replies.insert(*id, token.clone());
                token
            })
            .collect())
    }

    pub(crate) fn finish(&self, request_id: u32) {
        self.lock().remove(&request_id);
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u32, CancellationToken>> {
        // A token map cannot be left half-written; a poisoned lock is safe to keep using.
        self.replies.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// What the person chose with a dialog or a drop since the app started.
#[derive(Debug, Default)]
pub(crate) struct ChosenFiles {
    paths: Mutex<HashSet<PathBuf>>,
}

/// What a chosen path is for, to say in a refusal what to do instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Use {
    Import,
    Export,
    Attach,
}

impl ChosenFiles {
    /// Remembers paths the person chose, as the dialog or the drop gave them.
    pub(crate) fn remember(&self, paths: impl IntoIterator<Item = PathBuf>) {
        let mut chosen = self.paths.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        chosen.extend(paths);
    }

    /// The path itself if the person chose it in this session, else a refusal saying how to
    /// choose it. Compared as given: the window hands back exactly what it was handed.
    pub(crate) fn check(&self, path: &str, to: Use) -> Result<PathBuf, ApiError> {
        let path = Path::new(path);
        let chosen = self.paths.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if chosen.contains(path) {
            return Ok(path.to_owned());
        }
        let how = match to {
            Use::Import => "choose it with Import… or drop it on the tree list",
            Use::Export => "choose where to save with Export…",
            Use::Attach => "choose it with Files… or Folder…, or drop it on the conversation",
        };
        Err(ApiError::invalid_input(format!(
            "{} was not chosen in this window: Pinloom reads and writes only the files you pick \
             in its dialogs or drop on it; {how}",
            path.display()
        )))
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::{ChosenFiles, Streaming, Use};

    #[test]
    fn a_request_id_streams_one_reply_at_a_time() {
        let streaming = Streaming::default();
        let first = streaming.start(1).unwrap();
        assert!(streaming.start(1).is_err(), "a second reply under a streaming id");
        assert!(streaming.start_all(&[2, 2]).is_err(), "one id twice in a fan-out");
        assert!(streaming.start_all(&[3, 1]).is_err(), "an id already streaming");
        assert!(streaming.start(3).is_ok(), "a refused fan-out started nothing");
        streaming.finish(1);
        assert!(!first.is_cancelled());
        assert!(streaming.start(1).is_ok(), "a finished id is free again");
    }

    #[test]
    fn only_a_path_the_person_chose_is_accepted() {
        let chosen = ChosenFiles::default();
        let refused = chosen.check("/home/someone/.ssh/id_ed25519", Use::Attach).unwrap_err();
        assert_eq!(
            refused.message,
            "/home/someone/.ssh/id_ed25519 was not chosen in this window: Pinloom reads and \
             writes only the files you pick in its dialogs or drop on it; choose it with Files… \
             or Folder…, or drop it on the conversation"
        );
        chosen.remember([PathBuf::from("/home/someone/notes.md")]);
        assert_eq!(
            chosen.check("/home/someone/notes.md", Use::Attach).unwrap(),
            PathBuf::from("/home/someone/notes.md")
        );
        // Not its folder, a path through it or a prefix of it.
        for other in ["/home/someone", "/home/someone/notes.md/..", "/home/someone/notes"] {
            assert!(chosen.check(other, Use::Export).is_err(), "{other}");
        }
    }
}
