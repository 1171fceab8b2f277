//! Images that go with a message the person writes: checked before the message is written (each
//! a PNG, JPEG, GIF or WebP within the limit, and every model it goes to one that sees, by its
//! name, its profile, or its local server's word), then
//! stored as attachments of that message, so its requests and every later one on its branch
//! carry them with it.

use pinloom_store::{AttachmentRole, AttachmentScope, NodeId};

use crate::base::media::image_from_data_url;
use crate::base::pinloom::Pinloom;
use crate::error::ApiError;
use crate::json::{ImageInput, ModelProfile};
use crate::runtime::{blocking, now_ms};

/// Images checked and in their stored form: (name, stored data URL).
pub(in crate::conversation) struct CheckedImages(Vec<(String, String)>);

impl Pinloom {
    /// Checks `images` for a message to the models `profiles`: a model that does not see is
    /// refused by name, with what to do, before anything is written. A local model whose name
    /// does not tell is asked of its server (Ollama's capabilities, llama.cpp's modalities); one
    /// its server says sees is remembered in its profile (Budget → Sees images), so its plans
    /// carry the images.
    pub(in crate::conversation) async fn check_images(
        &self,
        images: Vec<ImageInput>,
        profiles: Vec<String>,
    ) -> anyhow::Result<CheckedImages> {
        if images.is_empty() {
            return Ok(CheckedImages(Vec::new()));
        }
        let this = self.clone();
        let choices = self
            .read("could not send the images", move |_| {
                profiles
                    .iter()
                    .map(|name| this.model_choice(name))
                    .collect::<anyhow::Result<Vec<_>>>()
            })
            .await?;
        for choice in choices {
            if choice.engine.sees_images {
                continue;
            }
            let unsaid = choice.assembly.sees_images.is_none();
            let asked = if unsaid {
                self.provider.server_sees_images(&choice.endpoint, &choice.engine.model).await
            } else {
                None
            };
            if asked == Some(true) {
                self.remember_sight(choice.name.clone()).await?;
                continue;
            }
            return Err(ApiError::invalid_input(format!(
                "{} ({}) does not see images: choose a model that does (GPT-4o, Claude, Gemini, \
                 or a local vision model such as LLaVA or Gemma 3), or take the {} off the \
                 message; if this model does see, say so in its budget panel (Budget → Sees \
                 images)",
                choice.name,
                choice.engine.model,
                if images.len() == 1 { "image" } else { "images" }
            ))
            .into());
        }
        let stored = blocking(move || {
            let stored = images
                .into_iter()
                .map(|image| {
                    let data_url = image_from_data_url(&image.data_url, &image.name)?;
                    Ok((image.name, data_url))
                })
                .collect::<Result<Vec<_>, ApiError>>()?;
            Ok(stored)
        })
        .await?;
        Ok(CheckedImages(stored))
    }

    /// Marks profile `name` as seeing images, as its server said.
    async fn remember_sight(&self, name: String) -> anyhow::Result<()> {
        self.write("could not note that the model sees images", move |store| {
            // Through the profile's own conversions, which alone know its stored JSON.
            let mut profile = ModelProfile::from(store.profile(&name)?);
            profile.assembly.sees_images = Some(true);
            store.put_profile(&profile.into_record(), now_ms())?;
            Ok(())
        })
        .await
    }

    /// Stores `images` as attachments of the message `node`.
    pub(in crate::conversation) async fn attach_images(
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
