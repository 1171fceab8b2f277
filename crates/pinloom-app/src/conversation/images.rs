//! Images that go with a message the person writes: checked before the message is written (each
//! a PNG, JPEG, GIF or WebP within the limit, and every model it goes to one that sees), then
//! stored as attachments of that message, so its requests and every later one on its branch
//! carry them with it.

use pinloom_store::{AttachmentRole, AttachmentScope, NodeId};

use crate::ApiError;
use crate::base::media::image_from_data_url;
use crate::json::ImageInput;
use crate::pinloom::Pinloom;
use crate::runtime::now_ms;

/// Images checked and in their stored form: (name, stored data URL).
pub(crate) struct CheckedImages(Vec<(String, String)>);

impl Pinloom {
    /// Checks `images` for a message to the models `profiles`: a model that does not see is
    /// refused by name, with what to do, before anything is written.
    pub(crate) async fn check_images(
        &self,
        images: Vec<ImageInput>,
        profiles: Vec<String>,
    ) -> anyhow::Result<CheckedImages> {
        if images.is_empty() {
            return Ok(CheckedImages(Vec::new()));
        }
        let this = self.clone();
        self.read("could not send the images", move |_| {
            for name in &profiles {
                let choice = this.model_choice(name)?;
                if !choice.engine.sees_images {
                    return Err(ApiError::invalid_input(format!(
                        "{name} ({}) does not see images: choose a model that does (GPT-4o, \
                         Claude, Gemini, or a local vision model such as LLaVA or Gemma 3), or \
                         take the {} off the message; if this model does see, say so in its \
                         budget panel (Budget → Sees images)",
                        choice.engine.model,
                        if images.len() == 1 { "image" } else { "images" }
                    ))
                    .into());
                }
            }
            let stored = images
                .into_iter()
                .map(|image| {
                    let data_url = image_from_data_url(&image.data_url, &image.name)?;
                    Ok((image.name, data_url))
                })
                .collect::<Result<Vec<_>, ApiError>>()?;
            Ok(CheckedImages(stored))
        })
        .await
    }

    /// Stores `images` as attachments of the message `node`.
    pub(crate) async fn attach_images(
        &self,
        node: NodeId,
        images: CheckedImages,
    ) -> anyhow::Result<()> {
        if images.0.is_empty() {
            return Ok(());
        }
        self.write("could not keep the images with the message", move |store| {
            let tree = store.node(node)?.tree_id;
            for (name, data_url) in &images.0 {
                let scope = AttachmentScope::Node(node);
                store.add_attachment(
                    tree,
                    scope,
                    AttachmentRole::Image,
                    name,
                    data_url,
                    now_ms(),
                )?;
            }
            Ok(())
        })
        .await
    }
}
