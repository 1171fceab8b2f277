//! Attachments from disk: a file's text or a folder's listing, read when attached and stored, so a
//! context never depends on a file that changed later unless the person attaches it again.

use std::path::{Path, PathBuf};

use pinloom_engine::planner::excluded_from_listing;
use pinloom_store::{AttachmentRole, AttachmentScope, NodeId, PinId, TreeId};

use crate::ApiError;
use crate::base::safe_files::{Links, open_regular};
use crate::json::{AttachTo, AttachmentView, TreeSettings};
use crate::pinloom::Pinloom;
use crate::runtime::now_ms;

/// Seed 004's folder listing limit.
pub const MAX_FOLDER_ENTRIES: usize = 100;

impl Pinloom {
    /// Attaches what is at `path`: a folder as its listing, anything else as a file's text (what a
    /// typed path or a drop on the window means).
    pub async fn attach_path(
        &self,
        tree_id: i64,
        to: AttachTo,
        path: PathBuf,
    ) -> anyhow::Result<AttachmentView> {
        if path.is_dir() {
            self.attach_folder(tree_id, to, path).await
        } else {
            self.attach_file(tree_id, to, path).await
        }
    }

    /// Reads the text file at `path` and attaches it. A file over the tree's size limit (100 KB
    /// unless changed) or not UTF-8 text is refused whole, never read in part.
    pub async fn attach_file(
        &self,
        tree_id: i64,
        to: AttachTo,
        path: PathBuf,
    ) -> anyhow::Result<AttachmentView> {
        self.write("could not attach the file", move |store| {
            let tree = store.tree_setup(TreeId(tree_id))?;
            let limit = TreeSettings::from_json(&tree.settings_json).max_file_bytes();
            let content = read_text_file(&path, limit)?;
            let attachment = store.add_attachment(
                tree.id,
                scope(to),
                AttachmentRole::File,
                &path.display().to_string(),
                &content,
                now_ms(),
            )?;
            Ok(attachment.into())
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

fn read_text_file(path: &Path, limit: u64) -> Result<String, ApiError> {
    let shown = path.display();
    if path.is_dir() {
        return Err(ApiError::invalid_input(format!(
            "{shown} is not a file; attach a folder as a folder"
        )));
    }
    // Opened once and checked on the handle: a regular file, not the kernel's own
    // (`/proc/self/environ` holds this process's keys) wherever a link leads, and nothing
    // swapped in between a check and the read.
    let (file, size) = open_regular(path, Links::Followed, None).map_err(|error| {
        let advice = if error.kind() == std::io::ErrorKind::InvalidInput {
            "; attach a copy of what you need instead"
        } else {
            ""
        };
        ApiError::invalid_input(format!("cannot read {shown}: {error}{advice}"))
    })?;
    if size > limit {
        return Err(ApiError::invalid_input(format!(
            "{shown} is {} KB, over the {} KB limit for attached files; attach a smaller file, or \
             raise the limit in the tree's settings",
            size.div_ceil(1024),
            limit / 1024
        )));
    }
    // Read no further than the limit: the file may have grown since, or say less than it holds.
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, limit + 1), &mut bytes)
        .map_err(|error| ApiError::invalid_input(format!("cannot read {shown}: {error}")))?;
    if bytes.len() as u64 > limit {
        return Err(ApiError::invalid_input(format!(
            "{shown} holds more than the {} KB limit for attached files (more than it said when \
             asked); attach a smaller file, or raise the limit in the tree's settings",
            limit / 1024
        )));
    }
    String::from_utf8(bytes).map_err(|_| {
        ApiError::invalid_input(format!(
            "{shown} is not UTF-8 text (a binary file?); only text files can be attached"
        ))
    })
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
