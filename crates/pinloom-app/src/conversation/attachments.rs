//! Attachments from disk: a file's text, a PDF's pages, an image, or a folder's listing, read
//! when attached and stored, so a context never depends on a file that changed later unless the
//! person attaches it again.

use std::path::{Path, PathBuf};

use pinloom_engine::planner::excluded_from_listing;
use pinloom_store::{AttachmentRole, AttachmentScope, NodeId, PinId, TreeId};

use crate::base::media::{self, MAX_IMAGE_BYTES, MAX_PDF_BYTES, PAGE_BREAK, Sniffed};
use crate::base::pdf_reader::{PdfReader, read_pdf};
use crate::base::pinloom::Pinloom;
use crate::base::safe_files::{Links, open_regular};
use crate::error::ApiError;
use crate::json::{AttachAs, AttachTo, AttachmentView, ImageInput, TreeSettings};
use crate::runtime::{blocking, now_ms};

/// Seed 004's folder listing limit.
pub const MAX_FOLDER_ENTRIES: usize = 100;

impl Pinloom {
    /// Attaches what is at `path`: a folder as its listing, a file as its text, its pages or its
    /// image (what a chosen path or a drop on the window means).
    pub async fn attach_path(
        &self,
        tree_id: i64,
        to: AttachTo,
        path: PathBuf,
    ) -> anyhow::Result<AttachmentView> {
        self.attach_path_as(tree_id, to, path, AttachAs::File).await
    }

    /// Attaches what is at `path` standing `as_` says: a file as it is, or its text as an
    /// instruction or a context (a folder only as its listing).
    pub async fn attach_path_as(
        &self,
        tree_id: i64,
        to: AttachTo,
        path: PathBuf,
        as_: AttachAs,
    ) -> anyhow::Result<AttachmentView> {
        match (path.is_dir(), as_) {
            (true, AttachAs::File) => self.attach_folder(tree_id, to, path).await,
            (true, _) => Err(ApiError::invalid_input(format!(
                "{} is a folder, attached only as its listing: choose files to attach as an \
                 instruction or a context",
                path.display()
            ))
            .into()),
            (false, as_) => self.attach_file_as(tree_id, to, path, as_).await,
        }
    }

    /// Reads the file at `path` and attaches it: a PDF as its pages' text, an image (PNG, JPEG,
    /// GIF, WebP) for models that see, anything else as UTF-8 text. A text file over the tree's
    /// size limit (100 KB unless changed), an image over 20 MB or a PDF over 64 MB is refused
    /// whole, never read in part.
    pub async fn attach_file(
        &self,
        tree_id: i64,
        to: AttachTo,
        path: PathBuf,
    ) -> anyhow::Result<AttachmentView> {
        self.attach_file_as(tree_id, to, path, AttachAs::File).await
    }

    /// [`Pinloom::attach_file`], the file standing `as_` says.
    async fn attach_file_as(
        &self,
        tree_id: i64,
        to: AttachTo,
        path: PathBuf,
        as_: AttachAs,
    ) -> anyhow::Result<AttachmentView> {
        let reader = self.pdf_reader.clone();
        self.write("could not attach the file", move |store| {
            let tree = store.tree_setup(TreeId(tree_id))?;
            let limit = TreeSettings::from_json(&tree.settings_json).max_file_bytes();
            let name = path.display().to_string();
            let read = read_attachable(&path, Some(limit), &reader, None)?;
            let (role, content) = stored_as(read, as_, &name)?;
            let attachment =
                store.add_attachment(tree.id, scope(to), role, &name, &content, now_ms())?;
            Ok(attachment.into())
        })
        .await
    }

    /// The image at `path`, read to go with a message being written (chosen in the composer's
    /// dialog): refused unless it is a PNG, JPEG, GIF or WebP of at most 20 MB.
    pub async fn image_from_file(&self, path: PathBuf) -> anyhow::Result<ImageInput> {
        blocking(move || {
            let shown = path.display().to_string();
            let data_url = match read_attachable(&path, None, &PdfReader::ThisProcess, None)? {
                Attachable::Image(data_url) => data_url,
                // Refused before reading: `read_attachable` wants only an image here.
                Attachable::Pdf(_) | Attachable::Text(_) => unreachable!("only an image is read"),
            };
            let name = path.file_name().map_or(shown, |name| name.to_string_lossy().into());
            Ok(ImageInput { name, data_url })
        })
        .await
    }

    /// Lists the folder at `path` (its files, relative, sorted, excluded folders and minified
    /// scripts left out, at most 100 entries) and attaches the listing.
    pub async fn attach_folder(
        &self,
        tree_id: i64,
        to: AttachTo,
        path: PathBuf,
    ) -> anyhow::Result<AttachmentView> {
        self.write("could not attach the folder", move |store| {
            let listing = list_folder(&path)?;
            let attachment = store.add_attachment(
                TreeId(tree_id),
                scope(to),
                AttachmentRole::Folder,
                &path.display().to_string(),
                &listing.join("\n"),
                now_ms(),
            )?;
            Ok(attachment.into())
        })
        .await
    }

    /// Attaches text written in the app: reference material (`instruction` false) placed before
    /// the conversation, or an instruction appended to the system context.
    pub async fn attach_text(
        &self,
        tree_id: i64,
        to: AttachTo,
        title: String,
        text: String,
        instruction: bool,
    ) -> anyhow::Result<AttachmentView> {
        if text.trim().is_empty() {
            return Err(
                ApiError::invalid_input("the attachment is empty: write its text first").into()
            );
        }
        self.write("could not attach the text", move |store| {
            let role =
                if instruction { AttachmentRole::Instruction } else { AttachmentRole::Context };
            Ok(store
                .add_attachment(TreeId(tree_id), scope(to), role, title.trim(), &text, now_ms())?
                .into())
        })
        .await
    }

    /// Every attachment of a tree.
    pub async fn attachments(&self, tree_id: i64) -> anyhow::Result<Vec<AttachmentView>> {
        let attachments = self
            .read("could not list the attachments", move |store| {
                Ok(store.attachments(TreeId(tree_id))?)
            })
            .await?;
        Ok(attachments.into_iter().map(AttachmentView::from).collect())
    }

    /// Removes an attachment.
    pub async fn detach(&self, attachment_id: i64) -> anyhow::Result<()> {
        self.write("could not remove the attachment", move |store| {
            Ok(store.remove_attachment(attachment_id)?)
        })
        .await
    }
}

fn scope(to: AttachTo) -> AttachmentScope {
    match to {
        AttachTo::Tree => AttachmentScope::Tree,
        AttachTo::Thread(pin) => AttachmentScope::Thread(pin.map(PinId)),
        AttachTo::Node(node) => AttachmentScope::Node(NodeId(node)),
    }
}

/// What a file read to attach is stored as, standing `as_` says: as it is, or its text (a PDF's
/// pages' text too) in an edge role; an image has no text to stand as one, and is refused.
pub(in crate::conversation) fn stored_as(
    read: Attachable,
    as_: AttachAs,
    shown: &str,
) -> Result<(AttachmentRole, String), ApiError> {
    let role = match as_ {
        AttachAs::File => None,
        AttachAs::Instruction => Some(AttachmentRole::Instruction),
        AttachAs::Context => Some(AttachmentRole::Context),
    };
    Ok(match (read, role) {
        (Attachable::Text(text), None) => (AttachmentRole::File, text),
        (Attachable::Pdf(pages), None) => {
            (AttachmentRole::Pdf, pages.join(&PAGE_BREAK.to_string()))
        }
        (Attachable::Image(data_url), None) => (AttachmentRole::Image, data_url),
        (Attachable::Text(text), Some(role)) => (role, text),
        (Attachable::Pdf(pages), Some(role)) => (role, pages.join("\n\n")),
        (Attachable::Image(_), Some(_)) => {
            return Err(ApiError::invalid_input(format!(
                "{shown} is an image: an instruction or a context is text; attach it as a file"
            )));
        }
    })
}

/// What a file read to attach turned out to be.
pub(in crate::conversation) enum Attachable {
    Text(String),
    /// Each page's text.
    Pdf(Vec<String>),
    /// Its stored `data:` URL.
    Image(String),
}

/// Reads the file at `path` once, deciding from its first bytes what it is: a PDF, an image, or
/// text of at most `text_limit` bytes. With no limit only an image is wanted: anything else is
/// refused unread. Given `inside`, a link that leads out of that folder is refused.
pub(in crate::conversation) fn read_attachable(
    path: &Path,
    text_limit: Option<u64>,
    reader: &PdfReader,
    inside: Option<&Path>,
) -> Result<Attachable, ApiError> {
    let shown = path.display();
    if path.is_dir() {
        return Err(ApiError::invalid_input(format!(
            "{shown} is not a file; attach a folder as a folder"
        )));
    }
    // Opened once and checked on the handle: a regular file, not the kernel's own
    // (`/proc/self/environ` holds this process's keys) wherever a link leads, and nothing
    // swapped in between a check and the read.
    let (file, size) = open_regular(path, Links::Followed, inside).map_err(|error| {
        let advice = if error.kind() == std::io::ErrorKind::InvalidInput {
            "; attach a copy of what you need instead"
        } else {
            ""
        };
        ApiError::invalid_input(format!("cannot read {shown}: {error}{advice}"))
    })?;
    let unreadable =
        |error: std::io::Error| ApiError::invalid_input(format!("cannot read {shown}: {error}"));
    let mut file = std::io::BufReader::new(file);
    let head = std::io::BufRead::fill_buf(&mut file).map_err(unreadable)?;
    let kind = media::sniff(head);
    let (limit, what) = match (kind, text_limit) {
        (Sniffed::Image(_) | Sniffed::OtherImage(_), _) => (MAX_IMAGE_BYTES, "images"),
        (Sniffed::Pdf, Some(_)) => (MAX_PDF_BYTES, "PDFs"),
        (Sniffed::Other, Some(limit)) => (limit, "attached files"),
        (Sniffed::Pdf | Sniffed::Other, None) => {
            return Err(ApiError::invalid_input(format!(
                "{shown} is not an image models take (PNG, JPEG, GIF or WebP); attach it to the \
                 tree instead (Attach files)"
            )));
        }
    };
    let over = |size: u64| {
        let advice = if kind == Sniffed::Other {
            "attach a smaller file, or raise the limit in the tree's settings"
        } else {
            "attach a smaller one"
        };
        ApiError::invalid_input(format!(
            "{shown} is {} KB, over the {} KB limit for {what}; {advice}",
            size.div_ceil(1024),
            limit / 1024
        ))
    };
    if size > limit {
        return Err(over(size));
    }
    // Read no further than the limit: the file may have grown since, or say less than it holds.
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, limit + 1), &mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > limit {
        return Err(over(bytes.len() as u64));
    }
    let shown = shown.to_string();
    match kind {
        Sniffed::Pdf => Ok(Attachable::Pdf(read_pdf(reader, &bytes, &shown)?)),
        Sniffed::Image(_) | Sniffed::OtherImage(_) => {
            Ok(Attachable::Image(media::image_data_url(&bytes, &shown)?))
        }
        Sniffed::Other => String::from_utf8(bytes).map(Attachable::Text).map_err(|_| {
            ApiError::invalid_input(format!(
                "{shown} is not UTF-8 text, an image or a PDF (a binary file?); only those \
                 can be attached"
            ))
        }),
    }
}

fn list_folder(root: &Path) -> Result<Vec<String>, ApiError> {
    let shown = root.display();
    if !root.is_dir() {
        return Err(ApiError::invalid_input(format!("{shown} is not a folder")));
    }
    let exclusions = pinloom_engine::settings::Settings::default().folder_exclude;
    let mut entries = Vec::new();
    let mut pending = vec![PathBuf::new()];
    // Breadth first, sorted within each folder, so the shallow structure is listed before the
    // limit is reached.
    while let Some(relative) = pending.first().cloned() {
        pending.remove(0);
        let folder = root.join(&relative);
        let mut names: Vec<(String, bool)> = std::fs::read_dir(&folder)
            .map_err(|error| {
                ApiError::invalid_input(format!("cannot list {}: {error}", folder.display()))
            })?
            .filter_map(Result::ok)
            .map(|entry| {
                let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
                (entry.file_name().to_string_lossy().into_owned(), is_dir)
            })
            .collect();
        names.sort();
        for (name, is_dir) in names {
            let path = relative.join(&name);
            let text = path.to_string_lossy().replace('\\', "/");
            // The engine's exclusions (seed 004's: node_modules, .git, dist, *.min.js), so what is
            // walked here and what a context lists never disagree.
            let shown = if is_dir { format!("{text}/") } else { text };
            if excluded_from_listing(&exclusions, &shown) {
                continue;
            }
            entries.push(shown);
            if is_dir {
                pending.push(path);
            }
            if entries.len() >= MAX_FOLDER_ENTRIES {
                return Ok(entries);
            }
        }
    }
    Ok(entries)
}
