//! One send, in four phases: **plan** the context (writing the ancestor summaries it lacks),
//! **stream** the reply through the provider (saving drafts as it arrives), **account** for it
//! (its receipt against the requests before it, what it teaches the calibration, the counts the
//! plan made), and **write** it with all it taught in one transaction. A reply that broke off is
//! written marked incomplete, never dropped; one that brought nothing is not written.

use std::time::Duration;

use anyhow::Context;
use pinloom_engine::plan::SourceId;
use pinloom_engine::render::slice_text;
use pinloom_engine::settings::TruncationStrategy;
use pinloom_engine::snapshot::FuseSource;
use pinloom_engine::tokens::Tokenizer;
use pinloom_providers::{ProviderError, Reply, ReplyEvent};
use pinloom_store::{self as store, Author, NewNode, NodeId, ReplyLearned, Store, StoreError};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::reply_drafts::Drafting;
use super::tokens::kept_token;
use crate::base::engine_inputs::{ANNOTATION_ID_BASE, exact_family, stored_counts, token_counts};
use crate::base::pinloom::Pinloom;
use crate::base::plan::{
    Planned, ProfileRef, earlier_replies, plan_view, tokenizer_label, wire_request,
};
use crate::base::receipts::{Sending, receipt};
use crate::error::ApiError;
use crate::json::{
    Exchange, PlanView, Receipt, ReplySettings, SamplingSettings, SendTarget, Verdict,
};
use crate::runtime::{blocking, now_ms};

/// A streamed reply with text to write, and the draft it replaces.
struct Streamed {
    reply: Reply,
    draft: Option<i64>,
}

/// What accounting found: the receipt to keep with the reply, and what the reply teaches.
struct Accounted {
    receipt: Receipt,
    /// The calibration corrected by the provider's count, when the count was of the whole prompt.
    calibration: Option<u32>,
}

impl Pinloom {
    /// Answers `target` with the model profile `profile`, streaming each piece of the reply to
    /// `events` as it arrives: a new message of the person's (in a thread or a pin), an edit of
    /// one, a message answered again, a buffer document continued, or answers fused into one.
    /// What every front end's "send" comes down to. `cancel` stops the reply; what arrived is
    /// kept, marked incomplete.
    pub async fn reply_to(
        &self,
        target: SendTarget,
        profile: String,
        events: UnboundedSender<ReplyEvent>,
        cancel: CancellationToken,
    ) -> anyhow::Result<Exchange> {
        let (prompt, written) = match target {
            SendTarget::Thread { tree_id, parent_id, text, images } => {
                let images = self.check_images(images, vec![profile.clone()]).await?;
                let tree = store::TreeId(tree_id);
                let node = self.append_human(tree, parent_id.map(NodeId), None, text).await?;
                self.attach_images(node.id, images).await?;
                (node.id, Some(node.into()))
            }
            SendTarget::Pin { pin_id, parent_id, text, images } => {
                let images = self.check_images(images, vec![profile.clone()]).await?;
                let node = self.append_in_pin(pin_id, parent_id, text).await?;
                self.attach_images(NodeId(node.message.id), images).await?;
                (NodeId(node.message.id), Some(node))
            }
            SendTarget::Edit { node_id, text } => {
                let edited = self.edit_message(node_id, text).await?;
                (NodeId(edited.message.id), Some(edited))
            }
            SendTarget::OverPicked { picks, text } => {
                let node = self.ask_over_picked(picks, text).await?;
                (node.id, Some(node.into()))
            }
            SendTarget::Regenerate { node_id } => (self.prompt_of(node_id).await?, None),
            SendTarget::Continue { node_id, length } => {
                let end = self.document_end(node_id).await?;
                return self.reply(end, &profile, length, &events, &cancel).await;
            }
            SendTarget::Fuse { node_ids } => {
                let (prompt, sources) = self.fuse_sources(node_ids).await?;
                let profile = ProfileRef::Stored(profile);
                return self.reply_fusing(prompt, &profile, &sources, &events, &cancel).await;
            }
        };
        let mut exchange = self.reply(prompt, &profile, None, &events, &cancel).await?;
        exchange.prompt = written;
        Ok(exchange)
    }

    /// Answers message `node_id` (a reply's prompt, given a reply) with `profile`, this send's
    /// `sampling` over the profile's (what `pinloom ask -o` sets; the reply's settings record
    /// what was asked for). A question written beforehand (`write_question`) is answered so.
    pub async fn answer(
        &self,
        node_id: i64,
        profile: String,
        sampling: SamplingSettings,
        events: UnboundedSender<ReplyEvent>,
        cancel: CancellationToken,
    ) -> anyhow::Result<Exchange> {
        let prompt = self.prompt_of(node_id).await?;
        let profile = if sampling == SamplingSettings::default() {
            ProfileRef::Stored(profile)
        } else {
            ProfileRef::Tuned { name: profile, sampling }
        };
        self.reply_fusing(prompt, &profile, &[], &events, &cancel).await
    }

    /// Message `node_id` as the end of a buffer document to continue; a dialogue is refused.
    pub(in crate::conversation) async fn document_end(
        &self,
        node_id: i64,
    ) -> anyhow::Result<NodeId> {
        let mode = self
            .read("could not continue the document", move |store| {
                let node = store.node(NodeId(node_id))?;
                Ok(store.tree_setup(node.tree_id)?.mode)
            })
            .await?;
        if mode != store::TreeMode::Buffer {
            return Err(ApiError::invalid_input(
                "this tree is a dialogue: send a message instead of continuing a document",
            )
            .into());
        }
        Ok(NodeId(node_id))
    }

    /// Plans, streams, accounts for and writes a reply to `prompt`, of at most `length` tokens
    /// when given (a loom's continuation), else of the tree's token buffer or the model's reserve.
    pub(in crate::conversation) async fn reply(
        &self,
        prompt: NodeId,
        profile: &str,
        length: Option<u32>,
        events: &UnboundedSender<ReplyEvent>,
        cancel: &CancellationToken,
    ) -> anyhow::Result<Exchange> {
        let profile = match length {
            Some(0) => {
                return Err(ApiError::invalid_input(
                    "a continuation of 0 tokens writes nothing: give a length of at least 1",
                )
                .into());
            }
            Some(length) => ProfileRef::Sized { name: profile.to_owned(), length },
            None => ProfileRef::Stored(profile.to_owned()),
        };
        self.reply_fusing(prompt, &profile, &[], events, cancel).await
    }

    /// A reply to `prompt` written from the answers `fuse` (none: an ordinary reply).
    async fn reply_fusing(
        &self,
        prompt: NodeId,
        profile: &ProfileRef,
        fuse: &[FuseSource],
        events: &UnboundedSender<ReplyEvent>,
        cancel: &CancellationToken,
    ) -> anyhow::Result<Exchange> {
        let planned = self
            .plan_writing_summaries(prompt, profile, fuse, cancel)
            .await
            .context("could not plan the context")?;
        let planned = self
            .compact_when_due(planned, prompt, profile, fuse, cancel)
            .await
            .context("could not plan the context")?;
        let view = plan_view(&planned)?;
        let streamed = self.stream(&planned, prompt, events, cancel).await?;
        let accounted = self.account(&planned, prompt, &streamed.reply).await?;
        self.write_reply(planned, prompt, streamed, accounted, view).await
    }

    /// Streams the planned request's reply, saving drafts as it arrives. A reply that failed, or
    /// stopped before any text, is an error and leaves no draft behind.
    async fn stream(
        &self,
        planned: &Planned,
        prompt: NodeId,
        events: &UnboundedSender<ReplyEvent>,
        cancel: &CancellationToken,
    ) -> anyhow::Result<Streamed> {
        let wire = wire_request(planned).map_err(anyhow::Error::new)?;
        let key = self.key_for(planned.choice.provider).await?;
        let name = &planned.choice.name;
        let drafting = Drafting { tree: planned.tree.id, parent: prompt, model: name.clone() };
        let (streamed, draft) =
            self.stream_saving_drafts(&wire, key.as_ref(), events, cancel, drafting).await;
        let failure = match streamed {
            Ok(reply) if !reply.text.is_empty() || reply.interruption.is_none() => {
                return Ok(Streamed { reply, draft });
            }
            Ok(reply) => anyhow::Error::new(reply.interruption.expect("checked above"))
                .context(format!("{name} sent nothing before it stopped")),
            Err(error) => anyhow::Error::new(error).context(format!("{name} did not answer")),
        };
        self.discard_draft(draft).await?;
        Err(failure)
    }

    /// The reply's receipt, set against the requests its earlier siblings and ancestors sent,
    /// and the calibration it teaches when the provider counted the whole prompt.
    async fn account(
        &self,
        planned: &Planned,
        prompt: NodeId,
        reply: &Reply,
    ) -> anyhow::Result<Accounted> {
        let earlier = earlier_replies(&planned.path, prompt);
        let earlier_receipts = self
            .read("could not read the earlier replies' receipts", move |store| {
                // Earlier answers to the same message were sent the very same request.
                let mut earlier = earlier;
                earlier.extend(
                    store
                        .children(prompt, store::Deleted::Left)?
                        .into_iter()
                        .filter(|child| child.author == Author::Model)
                        .map(|child| child.id),
                );
                let found = store.receipts(&earlier)?;
                Ok(found
                    .values()
                    .filter_map(|stored| Receipt::read(stored).ok())
                    .collect::<Vec<_>>())
            })
            .await?;
        let choice = &planned.choice;
        let sending = Sending {
            profile: &choice.name,
            model: &choice.engine.model,
            provider: choice.provider,
            tokenizer: tokenizer_label(planned.plan.tokenizer),
            exact_counts: exact_family(choice.engine.tokenizer).is_some(),
            prices: choice.prices,
        };
        let receipt =
            receipt(&planned.plan, &planned.path.snapshot, &sending, reply, &earlier_receipts);
        // Calibration learns only from a count of the whole prompt: not one the provider cut,
        // nor one a local server reduced by what its cache kept.
        let whole_prompt = receipt.verdict == Verdict::Matched
            && receipt.expected_at_least == u64::from(receipt.planned);
        let calibration = match (choice.engine.tokenizer, reply.usage.input_tokens, whole_prompt) {
            (Tokenizer::Estimate(calibration), Some(reported), true) => {
                Some(calibration.corrected(sent_units(planned), reported).milli_chars_per_token)
            }
            _ => None,
        };
        Ok(Accounted { receipt, calibration })
    }

    /// Writes the reply with its receipt, the counts its plan made and the calibration it taught
    /// in one transaction, and extends the cached path by it.
    async fn write_reply(
        &self,
        planned: Planned,
        prompt: NodeId,
        streamed: Streamed,
        accounted: Accounted,
        view: PlanView,
    ) -> anyhow::Result<Exchange> {
        let Streamed { mut reply, draft } = streamed;
        let tokens = std::mem::take(&mut reply.tokens);
        let Accounted { receipt, calibration } = accounted;
        let mut node =
            NewNode::text(planned.tree.id, Some(prompt), Author::Model, reply.text, now_ms());
        node.model = Some(planned.choice.name.clone());
        node.usage_json = Some(serde_json::to_string(&reply.usage)?);
        node.generation_json = Some(serde_json::to_string(&reply_settings(&planned))?);
        node.incomplete = reply.interruption.is_some();
        node.token_counts = token_counts(&node.parts);
        node.receipt = Some(store::Receipt {
            json: serde_json::to_string(&receipt)?,
            provider_cut: receipt.verdict == Verdict::ProviderCut,
        });
        node.replaces_draft = draft;
        node.reply_tokens = tokens.into_iter().map(kept_token).collect();
        let store = self.store.clone();
        let snapshot_cache = self.snapshot_cache.clone();
        let written = blocking(move || {
            let Planned { plan, mut path, choice, .. } = planned;
            let tokenizer = choice.engine.tokenizer;
            let family = exact_family(tokenizer);
            // Counts the engine had to make (nodes written before counting existed) are stored,
            // and kept on the path in memory, so they are made once.
            let counted: Vec<(NodeId, u64)> = plan
                .newly_counted
                .iter()
                .filter(|(id, _)| id.0 < ANNOTATION_ID_BASE)
                .filter_map(|(id, tokens)| {
                    i64::try_from(id.0).ok().map(|row| (NodeId(row), u64::from(*tokens)))
                })
                .collect();
            let learned = ReplyLearned {
                family_counts: family.map(|family| (family, counted.as_slice())),
                calibration: calibration.map(|milli| (choice.name.as_str(), milli)),
            };
            let written = append_reply(&store, &node, &learned)?;
            if family.is_some() {
                path.remember_counts(tokenizer, &plan.newly_counted);
            }
            if let Err(error) = path.extend(&store, &written, &stored_counts(&node.token_counts)) {
                path.discard();
                return Err(error.into());
            }
            snapshot_cache.forget_plans();
            Ok(written)
        })
        .await
        .context("could not save the reply")?;
        Ok(Exchange {
            prompt: None,
            reply: written.into(),
            interruption: reply.interruption.map(provider_api_error),
            plan: view,
            receipt: Some(receipt),
        })
    }
}

/// The settings a reply to `planned` is made with, as the reply keeps them.
fn reply_settings(planned: &Planned) -> ReplySettings {
    let choice = &planned.choice;
    let truncation = planned.settings.engine(0, &choice.assembly).truncation;
    ReplySettings {
        profile: choice.name.clone(),
        model_id: choice.engine.model.clone(),
        provider: choice.provider.name().to_owned(),
        temperature: choice.sampling.temperature,
        top_p: choice.sampling.top_p,
        max_tokens: planned.plan.reply_limit,
        context_window: choice.engine.context_window,
        truncation: match truncation {
            TruncationStrategy::TruncateMiddle => "truncateMiddle",
            TruncationStrategy::RollingWindow => "rollingWindow",
            TruncationStrategy::StopAtLimit => "stopAtLimit",
        }
        .to_owned(),
        summarizer: planned.settings.summarizer.clone().unwrap_or_else(|| choice.name.clone()),
        fused_from: planned
            .plan
            .included()
            .filter_map(|slice| match slice.source {
                SourceId::FuseSource(node) => i64::try_from(node.0).ok(),
                _ => None,
            })
            .collect(),
    }
}

/// The UTF-16 units of everything a plan sends: what the provider's reported input tokens are
/// set against to learn the model's characters per token.
fn sent_units(planned: &Planned) -> u64 {
    planned
        .plan
        .included()
        .map(|slice| slice_text(slice, &planned.path.snapshot).encode_utf16().count() as u64)
        .sum()
}

/// A provider failure as it crosses to a front end.
pub(in crate::conversation) fn provider_api_error(error: ProviderError) -> ApiError {
    ApiError::from(anyhow::Error::new(error))
}

/// Writes a finished reply, trying twice more when another process held the database past the
/// busy timeout (a long import in another window, say): the text is what the person waited for.
fn append_reply(
    store: &Store,
    node: &NewNode,
    learned: &ReplyLearned<'_>,
) -> Result<store::Node, StoreError> {
    let mut waits = [Duration::from_millis(500), Duration::from_secs(2)].into_iter();
    loop {
        match store.append_reply(node, learned) {
            Err(error) if error.is_busy() => match waits.next() {
                Some(wait) => std::thread::sleep(wait),
                None => return Err(error),
            },
            written => return written,
        }
    }
}
