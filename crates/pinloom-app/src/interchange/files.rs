//! Imports and exports through files, as the window and the command line do them: the file is
//! read or written here, with progress for a bar, and an export replaces its file only once it is
//! whole, so a failure halfway never leaves a cut document where a good one was.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use pinloom_store::TreeId;

use crate::base::pinloom::Pinloom;
use crate::base::safe_files::{Links, open_regular, replace_with};
use crate::error::ApiError;
use crate::interchange;
use crate::interchange::histories;
use crate::json::{
    ExportDone, ExportFormat, ExportOptions, ExportRequest, ImportReport, ImportReportView,
    ImportedTreeView, TransferProgress,
};
use crate::runtime::{blocking, now_ms};

/// The largest file an import reads. A document is parsed whole in memory (about five times its
/// size), so this keeps a mistaken pick (a disk image, `/dev/zero`) from exhausting memory; an
/// Open Loom export of 100,000 messages is well under a tenth of it.
pub const MAX_IMPORT_BYTES: u64 = 512 * 1024 * 1024;

/// How much of a file is read between two progress reports.
const READ_CHUNK: usize = 4 * 1024 * 1024;

impl Pinloom {
    /// Imports the Open Loom document or socketteer tree in the file at `path` (named after the
    /// file where the document leaves a tree untitled), telling `progress` how far it is. A file
    /// that cannot be read, is not a regular file, is too large or is not a document Pinloom
    /// reads is refused with what to do, and nothing is written.
    pub async fn import_file(
        &self,
        path: PathBuf,
        mut progress: impl FnMut(TransferProgress) + Send + 'static,
    ) -> anyhow::Result<ImportReport> {
        let source =
            path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        // Another tool's history is read as a stream, a conversation at a time, and written in
        // batches; what it is, its first bytes say.
        let head_of = path.clone();
        if let Some(history) = blocking(move || Ok(history_of(&head_of))).await? {
            return self
                .write("the import stopped", move |store| {
                    histories::import(store, &path, history, &source, &mut progress, now_ms())
                })
                .await;
        }
        // Read on the blocking pool, which hands `progress` back for the writing.
        let (text, hint, progress) = blocking(move || {
            let (text, hint) = read_file(&path, &mut progress)?;
            Ok((text, hint, progress))
        })
        .await?;
        self.import_document_reporting(text, hint, source, progress).await
    }

    /// Exports a tree to the file the request names, in Open Loom or Markdown, telling
    /// `progress` how far it is. The file is written beside its final place and renamed over it
    /// once whole.
    pub async fn export_file(
        &self,
        request: ExportRequest,
        mut progress: impl FnMut(TransferProgress) + Send + 'static,
    ) -> anyhow::Result<ExportDone> {
        self.read("could not export the tree", move |store| {
            let path = PathBuf::from(&request.path);
            if request.path.trim().is_empty() {
                anyhow::bail!(ApiError::invalid_input("choose a file to export to"));
            }
            let tree = store.tree(TreeId(request.tree_id))?;
            let total = tree.node_count;
            progress(TransferProgress::Collecting { messages: 0, total });
            let mut counted = 0;
            let mut collected = |messages: usize| {
                counted = messages as u64;
                progress(TransferProgress::Collecting { messages: counted, total });
            };
            let bytes = write_whole(&path, |out| match request.format {
                ExportFormat::OpenLoom => {
                    let options = ExportOptions {
                        system_prompts: !request.without_system_prompts,
                        raw_responses: !request.without_raw_responses,
                    };
                    // Written to the file as it is made: a 100,000-message tree is never held
                    // whole as text.
                    let buffered = std::io::BufWriter::with_capacity(1 << 16, out);
                    interchange::write_open_loom(
                        store,
                        &[tree.id.0],
                        options,
                        &mut collected,
                        buffered,
                    )
                }
                ExportFormat::Markdown => {
                    let text = crate::interchange::markdown::tree_markdown_text(
                        store,
                        tree.id,
                        &mut collected,
                    )?;
                    Ok(out.write_all(text.as_bytes())?)
                }
            })?;
            progress(TransferProgress::Saving { bytes });
            Ok(ExportDone { path: request.path, bytes, messages: counted })
        })
        .await
    }
}

/// The file's text and the title a tree it leaves untitled gets (the file's name).
fn read_file(
    path: &Path,
    report: &mut impl FnMut(TransferProgress),
) -> anyhow::Result<(String, String)> {
    let cannot = |error: &dyn std::fmt::Display| {
        ApiError::invalid_input(format!("cannot read {}: {error}", path.display()))
    };
    // Opened once, never waiting on a FIFO, and checked on the handle: a path swapped for
    // something else after a check cannot be read instead.
    let (file, total) = open_regular(path, Links::Followed, None).map_err(|error| {
        cannot(&format!("{error}; choose an Open Loom (.json) or socketteer file"))
    })?;
    if total > MAX_IMPORT_BYTES {
        anyhow::bail!(cannot(&format!(
            "it is {} MB, more than the {} MB an import reads; split the document into several",
            total / (1024 * 1024),
            MAX_IMPORT_BYTES / (1024 * 1024)
        )));
    }
    // `take` as well: a file that grows while it is read still stops at the limit.
    let mut reader = file.take(MAX_IMPORT_BYTES + 1);
    let mut bytes = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
    let mut chunk = vec![0; READ_CHUNK];
    report(TransferProgress::Reading { bytes: 0, total });
    loop {
        let read = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => anyhow::bail!(cannot(&error)),
        };
        bytes.extend_from_slice(&chunk[..read]);
        report(TransferProgress::Reading { bytes: bytes.len() as u64, total });
    }
    if bytes.len() as u64 > MAX_IMPORT_BYTES {
        anyhow::bail!(cannot(&"it grew past the size an import reads while it was read"));
    }
    let text = String::from_utf8(bytes).map_err(|error| {
        cannot(&format!(
            "it is not UTF-8 text (byte {} is not); an Open Loom or socketteer file is JSON",
            error.utf8_error().valid_up_to()
        ))
    })?;
    let hint = path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
    Ok((text, hint))
}

/// The history the file at `path` holds, if its first bytes say it is one; a file that cannot be
/// read is left to the document reader, which says why.
fn history_of(path: &Path) -> Option<histories::History> {
    let (file, _) = open_regular(path, Links::Followed, None).ok()?;
    let mut head = Vec::with_capacity(HEAD_BYTES);
    file.take(HEAD_BYTES as u64).read_to_end(&mut head).ok()?;
    histories::recognise(&head)
}

/// How much of a file is read to tell what it holds.
const HEAD_BYTES: usize = 64 * 1024;

/// Writes `bytes` to a new file beside `path` and renames it over `path`, so that `path` holds
/// either what it held before or the whole new content, never a part.
/// Writes the file at `path` whole through `write` ([`replace_with`]), and says how many bytes
/// it holds.
fn write_whole(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<u64> {
    let cannot = |error: &dyn std::fmt::Display| {
        ApiError::invalid_input(format!("cannot write {}: {error}", path.display()))
    };
    let Some(name) = path.file_name() else {
        anyhow::bail!(cannot(&"it names a folder, not a file"));
    };
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if path.is_dir() {
        anyhow::bail!(cannot(&"it is a folder; choose a file name"));
    }
    let mut failed_to_make = None;
    let written = replace_with(&folder.join(name), |file| {
        let mut counted = CountedWrites { inner: file, bytes: 0 };
        match write(&mut counted) {
            Ok(()) => Ok(counted.bytes),
            Err(error) => {
                // Not a failure to write: the text could not be made; said as it is.
                let io = std::io::Error::other(format!("{error:#}"));
                failed_to_make = Some(error);
                Err(io)
            }
        }
    });
    match (written, failed_to_make) {
        (Ok(bytes), _) => Ok(bytes),
        (Err(_), Some(error)) => Err(error),
        (Err(error), None) => Err(cannot(&error).into()),
    }
}

/// A writer that counts what passes through it.
struct CountedWrites<'a> {
    inner: &'a mut dyn Write,
    bytes: u64,
}

impl Write for CountedWrites<'_> {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        let written = self.inner.write(buffer)?;
        self.bytes += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl From<&ImportReport> for ImportReportView {
    fn from(report: &ImportReport) -> ImportReportView {
        ImportReportView {
            trees: report
                .trees
                .iter()
                .map(|tree| ImportedTreeView {
                    id: tree.id,
                    title: tree.title.clone(),
                    messages: tree.messages as u64,
                    threads: tree.threads as u64,
                })
                .collect(),
            notes: report.notes.clone(),
            text: report.text(),
        }
    }
}
