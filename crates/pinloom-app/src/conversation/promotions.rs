//! Bringing a conclusion back: a passage of a pin's or another branch's message (or the whole
//! message) written into a thread as a new message that says where it came from and who wrote
//! it. The thread's later contexts carry it as an ordinary message and nothing else of the
//! branch: it is a node on the thread's own path, so a path still knows only its ancestry.

use pinloom_store::{self as store, NodeId, Store};

use crate::base::pinloom::Pinloom;
use crate::base::plan::model_choice_in;
use crate::error::ApiError;
use crate::json::{Message, Promotion};

impl Pinloom {
    /// What bringing `passage` of message `from_id` (all of it when absent) back after message
    /// `onto_id` would add, and its tokens under model profile `profile`: shown before it is
    /// added. Nothing is written.
    pub async fn promotion_preview(
        &self,
        from_id: i64,
        onto_id: i64,
        passage: Option<String>,
        profile: String,
    ) -> anyhow::Result<Promotion> {
        self.read("could not prepare what to bring back", move |store| {
            let onto = store.node(NodeId(onto_id))?;
            let text = promoted_text(store, NodeId(from_id), &onto, passage.as_deref())?;
            let choice = model_choice_in(store, &profile)?;
            let tokens = choice.engine.tokenizer.count_u32(&text);
            Ok(Promotion {
                tokens: tokens.saturating_add(choice.engine.message_overhead),
                counting: crate::base::plan::tokenizer_label(choice.engine.tokenizer.id()),
                text,
            })
        })
        .await
    }

    /// Writes what [`Pinloom::promotion_preview`] shows as a new message after `onto_id`, in
    /// `onto_id`'s thread.
    pub async fn promote(
        &self,
        from_id: i64,
        onto_id: i64,
        passage: Option<String>,
    ) -> anyhow::Result<Message> {
        let (text, onto) = self
            .read("could not bring the passage back", move |store| {
                let onto = store.node(NodeId(onto_id))?;
                Ok((promoted_text(store, NodeId(from_id), &onto, passage.as_deref())?, onto))
            })
            .await?;
        let written = self.append_human(onto.tree_id, Some(onto.id), onto.pin_id, text).await?;
        Ok(written.into())
    }
}

/// The message a promotion writes: where it came from (the pin by its title, or another branch
/// by its message), who wrote it (the model by name, or the person), then the passage.
fn promoted_text(
    store: &Store,
    from: NodeId,
    target: &store::Node,
    passage: Option<&str>,
) -> anyhow::Result<String> {
    let source = store.node(from)?;
    if source.tree_id != target.tree_id {
        return Err(refuse("that message is in another tree; bring back from this tree's pins"));
    }
    if store.ancestor_path(target.id)?.iter().any(|node| node.id == from) {
        return Err(refuse(
            "that message is already in this thread's context; bring back from a pin or another \
             branch",
        ));
    }
    let passage = match passage.map(str::trim) {
        None | Some("") => source.text.trim(),
        Some(passage) if source.text.contains(passage) => passage,
        Some(_) => {
            return Err(refuse(
                "the passage is not in that message's text; select it within one message",
            ));
        }
    };
    if passage.is_empty() {
        return Err(refuse("that message has no text to bring back"));
    }
    let origin = match source.pin_id {
        Some(pin) if source.pin_id != target.pin_id => {
            format!("the pin \u{201c}{}\u{201d}", store.pin(pin)?.title)
        }
        _ => format!("another branch (message #{})", source.id.0),
    };
    let author = match (source.author, &source.model) {
        (store::Author::Model, Some(model)) => format!("written by {model}"),
        (store::Author::Model, None) => "written by a model".to_owned(),
        (store::Author::Human, _) => "written by you".to_owned(),
        (store::Author::Tool, _) => "from a tool".to_owned(),
    };
    Ok(format!("Brought back from {origin}, {author}:\n\n{passage}"))
}

fn refuse(message: &str) -> anyhow::Error {
    ApiError::invalid_input(message).into()
}
