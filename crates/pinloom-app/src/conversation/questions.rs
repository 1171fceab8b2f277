//! A question written with what goes with it, as the terminal asks one: files for the model to
//! read (text, a PDF's pages, images for models that see), instruction and context files (seed
//! 002's edge roles), and a system text for the turn. Everything is read and checked before
//! anything is written, so a file that cannot go leaves no question, tree or pin behind; then
//! the question and its material are written, hung on the question, so they stand in every
//! request made from it and the messages that continue it (and in no sibling's).

use std::path::{Path, PathBuf};

use pinloom_store::{AttachmentRole, AttachmentScope, NodeId, TreeId};

use super::attachments::{read_attachable, stored_as};
use crate::base::pinloom::Pinloom;
use crate::error::ApiError;
use crate::json::{AttachAs, ImageInput, SendTarget, TreeSettings};
use crate::runtime::{blocking, now_ms};

/// What goes with a question, as paths given on a command line.
#[derive(Debug, Clone, Default)]
pub struct QuestionMaterial {
    /// Files for the model to read: text, PDFs (their pages' text), images.
    pub files: Vec<PathBuf>,
    /// Files whose text joins the system context (seed 002's Instruction role).
    pub instructions: Vec<PathBuf>,
    /// Files whose text is reference material before the conversation (the Context role).
    pub contexts: Vec<PathBuf>,
    /// This turn's system text (`-s`): joins the system context as an instruction does.
    pub system: Option<String>,
}

impl QuestionMaterial {
    /// Whether nothing goes with the question.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
            && self.instructions.is_empty()
            && self.contexts.is_empty()
            && self.system.as_deref().is_none_or(|text| text.trim().is_empty())
    }
}

/// Material read and checked, waiting to be written with its question.
#[derive(Debug, Default)]
pub struct ReadMaterial {
    pieces: Vec<Piece>,
}

#[derive(Debug)]
struct Piece {
    role: AttachmentRole,
    name: String,
    content: String,
}

impl ReadMaterial {
    /// The images it holds, as a message being written carries them.
    fn images(&self) -> Vec<ImageInput> {
        self.pieces
            .iter()
            .filter(|piece| piece.role == AttachmentRole::Image)
            .map(|piece| ImageInput { name: piece.name.clone(), data_url: piece.content.clone() })
            .collect()
    }
}

impl Pinloom {
    /// Reads every file of `material` for a question in tree `tree_id` (a new tree's when
    /// absent; its size limit for text applies), and checks that `profile` sees the images
    /// among them. Nothing is written: a file that is a folder, a FIFO or a device, a link out of
    /// the folder it sits in, over the limit, or not text, a PDF or an image is refused in words
    /// that name it.
    pub async fn read_material(
        &self,
        material: QuestionMaterial,
        tree_id: Option<i64>,
        profile: String,
    ) -> anyhow::Result<ReadMaterial> {
        let settings = match tree_id {
            Some(tree) => {
                self.read("could not read the tree's settings", move |store| {
                    Ok(TreeSettings::from_json(&store.tree_setup(TreeId(tree))?.settings_json))
                })
                .await?
            }
            None => TreeSettings::default(),
        };
        let limit = settings.max_file_bytes();
        let reader = self.pdf_reader.clone();
        let read = blocking(move || {
            let mut pieces = Vec::new();
            if let Some(system) = material.system.filter(|text| !text.trim().is_empty()) {
                pieces.push(Piece {
                    role: AttachmentRole::Instruction,
                    name: "system text".to_owned(),
                    content: system,
                });
            }
            let roles = [
                (AttachAs::Instruction, &material.instructions),
                (AttachAs::Context, &material.contexts),
                (AttachAs::File, &material.files),
            ];
            for (as_, paths) in roles {
                for path in paths {
                    pieces.push(read_piece(path, as_, limit, &reader)?);
                }
            }
            Ok(ReadMaterial { pieces })
        })
        .await?;
        let images = read.images();
        if !images.is_empty() {
            // Asks a local server whether its model sees, as the window's send does.
            self.check_images(images, vec![profile]).await?;
        }
        Ok(read)
    }

    /// Writes the person's question where `target` says (a thread of a tree, or a pin; its own
    /// images, if any, are refused: they come as material) and `material` hung on it. Returns
    /// the question's id, for [`Pinloom::answer`].
    pub async fn write_question(
        &self,
        target: SendTarget,
        material: ReadMaterial,
    ) -> anyhow::Result<i64> {
        let question = match target {
            SendTarget::Thread { tree_id, parent_id, text, images } if images.is_empty() => {
                self.append_human(TreeId(tree_id), parent_id.map(NodeId), None, text).await?.id
            }
            SendTarget::Pin { pin_id, parent_id, text, images } if images.is_empty() => {
                NodeId(self.append_in_pin(pin_id, parent_id, text).await?.message.id)
            }
            SendTarget::OverPicked { picks, text } => self.ask_over_picked(picks, text).await?.id,
            _ => {
                return Err(ApiError::invalid_input(
                    "a question is written in a thread, a pin or over picked messages, its images \
                     given as material",
                )
                .into());
            }
        };
        if material.pieces.is_empty() {
            return Ok(question.0);
        }
        self.write("could not keep the files with the question", move |store| {
            let tree = store.node(question)?.tree_id;
            for piece in &material.pieces {
                let scope = AttachmentScope::Node(question);
                store.add_attachment(
                    tree,
                    scope,
                    piece.role,
                    &piece.name,
                    &piece.content,
                    now_ms(),
                )?;
            }
            Ok(())
        })
        .await?;
        Ok(question.0)
    }
}

/// One file of the material, read as it stands `as_` says.
fn read_piece(
    path: &Path,
    as_: AttachAs,
    limit: u64,
    reader: &crate::base::pdf_reader::PdfReader,
) -> Result<Piece, ApiError> {
    let shown = path.display().to_string();
    if path.is_dir() {
        return Err(ApiError::invalid_input(format!(
            "{shown} is a folder: give the files in it one by one"
        )));
    }
    // A link is followed only while it stays in the folder it sits in: a file named in a folder
    // is that folder's, not a way to read what lies elsewhere.
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let read = read_attachable(path, Some(limit), reader, Some(&folder))?;
    let (role, content) = stored_as(read, as_, &shown)?;
    // An image goes by its file's name, as the window's composer names one.
    let name = match role {
        AttachmentRole::Image => {
            path.file_name().map_or(shown.clone(), |name| name.to_string_lossy().into_owned())
        }
        _ => shown,
    };
    Ok(Piece { role, name, content })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_refused_by_name() {
        let folder = tempfile::tempdir().unwrap();
        let refused = read_piece(
            folder.path(),
            AttachAs::File,
            1024,
            &crate::base::pdf_reader::PdfReader::ThisProcess,
        )
        .unwrap_err();
        assert!(refused.message.contains("is a folder"), "{}", refused.message);
    }
}
