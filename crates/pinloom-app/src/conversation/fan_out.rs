//! One prompt to several models at once, or to one model several times (samples). The person's
//! message is written once; each lane then plans its own context (budgets differ per model),
//! streams its reply as a sibling branch and keeps its own receipt, concurrently. A lane can be
//! stopped without the others, and a lane that fails (no key, a rate limit, a refusal) fails on
//! its own side only.

use futures_util::future::join_all;
use pinloom_store::NodeId;

use crate::base::pinloom::Pinloom;
use crate::error::ApiError;
use crate::json::{FanOut, FanOutLane, LaneAnswer, NodeView, SendTarget};

/// The fewest and the most answers one prompt asks for at once: one is an ordinary send, and
/// looms stop at eight, past which the alternatives are no longer read one by one.
pub const FAN_OUT_LANES: std::ops::RangeInclusive<usize> = 2..=8;

impl Pinloom {
    /// Sends `prompt` to every lane's model at once: the person's message (or the edit) is
    /// written once, or, answering again or continuing a document, the existing one is used;
    /// then each model plans, streams and writes its reply beside the others. `answered` hears
    /// of each lane as soon as it ends, before the slowest; the result lists them all. A profile
    /// named in several lanes answers that many times, each a sample of its own. Fails as a
    /// whole only when nothing could be sent: too few or too many lanes, an unknown profile, or
    /// a message that could not be written.
    pub async fn fan_out(
        &self,
        prompt: SendTarget,
        lanes: Vec<FanOutLane>,
        answered: impl Fn(&LaneAnswer) + Sync,
    ) -> anyhow::Result<FanOut> {
        if !FAN_OUT_LANES.contains(&lanes.len()) {
            return Err(ApiError::invalid_input(format!(
                "{} answers were asked for: ask for {} to {} at once, from several models or \
                 several samples of one (one is an ordinary send)",
                lanes.len(),
                FAN_OUT_LANES.start(),
                FAN_OUT_LANES.end()
            ))
            .into());
        }
        // Every profile is checked before the person's message is written, so a typo costs
        // nothing to undo.
        let mut names: Vec<String> = lanes.iter().map(|lane| lane.profile.clone()).collect();
        names.sort_unstable();
        names.dedup();
        let this = self.clone();
        self.read("could not send to the chosen models", move |_| {
            for name in &names {
                this.model_choice(name)?;
            }
            Ok(())
        })
        .await?;
        let profiles: Vec<String> = lanes.iter().map(|lane| lane.profile.clone()).collect();
        // A loom's continuations each have the length asked for; other answers the usual limit.
        let mut length = None;
        let prompt: NodeView = match prompt {
            SendTarget::Thread { tree_id, parent_id, text, images } => {
                let images = self.check_images(images, profiles).await?;
                let tree = pinloom_store::TreeId(tree_id);
                let node = self.append_human(tree, parent_id.map(NodeId), None, text).await?;
                self.attach_images(node.id, images).await?;
                node.into()
            }
            SendTarget::Pin { pin_id, parent_id, text, images } => {
                let images = self.check_images(images, profiles).await?;
                let node = self.append_in_pin(pin_id, parent_id, text).await?;
                self.attach_images(NodeId(node.message.id), images).await?;
                node
            }
            SendTarget::Edit { node_id, text } => self.edit_message(node_id, text).await?,
            SendTarget::OverPicked { picks, text } => {
                self.ask_over_picked(picks, text).await?.into()
            }
            SendTarget::Regenerate { node_id } => {
                let prompt = self.prompt_of(node_id).await?;
                self.read("could not answer again", move |store| Ok(store.node(prompt)?))
                    .await?
                    .into()
            }
            SendTarget::Fuse { .. } => {
                return Err(ApiError::invalid_input(
                    "a fused answer is written by one model: choose one model to fuse with",
                )
                .into());
            }
            // Several continuations of a document at once, as a loom weaves them: each lane
            // continues the same end, each continuation a sibling of the others.
            SendTarget::Continue { node_id, length: asked } => {
                length = asked;
                let end = self.document_end(node_id).await?;
                self.read("could not continue the document", move |store| Ok(store.node(end)?))
                    .await?
                    .into()
            }
        };
        let prompt_id = NodeId(prompt.message.id);
        let answered = &answered;
        let answers = join_all(lanes.iter().enumerate().map(|(lane, asked)| async move {
            let replied =
                self.reply(prompt_id, &asked.profile, length, &asked.events, &asked.cancel).await;
            let (exchange, error) = match replied {
                Ok(exchange) => (Some(exchange), None),
                Err(error) => (None, Some(ApiError::from(error))),
            };
            let answer = LaneAnswer {
                lane: u32::try_from(lane).unwrap_or(u32::MAX),
                profile: asked.profile.clone(),
                exchange,
                error,
            };
            answered(&answer);
            answer
        }))
        .await;
        Ok(FanOut { prompt, answers })
    }
}
