//! The requests Pinloom makes on its own, kept where a person finds them: a summary or a
//! condensation is a request to a provider (possibly another than the conversation's, spending
//! the person's money, for a pin opened and never asked in), so each is kept with what it was
//! for, the model, the tokens planned and counted, the cost, the time, how it ended and its
//! body (`pinloom requests`). A reply keeps the same in its receipt.

use pinloom_providers::WireRequest;
use pinloom_store::{BackgroundRequest, NodeId, PinId, RequestKind, TreeId};

use crate::base::engine_inputs::ModelChoice;
use crate::conversation::summaries::SummaryJob;
use crate::json::BackgroundRequestView;
use crate::pinloom::Pinloom;
use crate::runtime::now_ms;

/// How many requests a list shows when not told otherwise.
pub const REQUESTS_SHOWN: usize = 50;

/// How a background request went.
pub(crate) struct Sent<'a> {
    /// The provider's reply, when there was one.
    pub(crate) reply: Option<&'a pinloom_providers::Reply>,
    /// Why it failed, when it did.
    pub(crate) failure: Option<String>,
    /// When it was sent.
    pub(crate) started_at_ms: i64,
    /// The tokens Pinloom counted in what it sent.
    pub(crate) planned: u64,
}

impl Pinloom {
    /// Keeps summary job `job`'s request to `summarizer`. Keeping it never fails the summary: a
    /// database that refuses is said in the log.
    pub(crate) async fn keep_request(
        &self,
        job: &SummaryJob,
        summarizer: &ModelChoice,
        wire: &WireRequest,
        sent: Sent<'_>,
    ) {
        let usage = sent.reply.map(|reply| reply.usage);
        let cost = match (&summarizer.prices, &usage) {
            (Some(prices), Some(usage)) => usage.input_tokens.and_then(|counted| {
                crate::base::receipts::cost(*prices, counted, usage, usage.output_tokens)
            }),
            _ => None,
        };
        let request = BackgroundRequest {
            id: 0,
            tree_id: job.tree,
            kind: if job.condense.is_some() {
                RequestKind::Condensation
            } else {
                RequestKind::Summary
            },
            model: summarizer.name.clone(),
            pin_id: job.thread,
            up_to: Some(job.up_to),
            planned_tokens: sent.planned,
            prompt_tokens: usage.as_ref().and_then(|usage| usage.input_tokens),
            reply_tokens: usage.as_ref().and_then(|usage| usage.output_tokens),
            cost_usd: cost.map(|cost| cost.total),
            started_at_ms: sent.started_at_ms,
            duration_ms: now_ms().saturating_sub(sent.started_at_ms),
            failure: sent.failure,
            body_json: wire.body.to_string(),
        };
        let kept = self
            .write("could not keep the request", move |store| {
                Ok(store.log_background_request(&request)?)
            })
            .await;
        if let Err(error) = kept {
            tracing::warn!("{error:#}");
        }
    }

    /// The requests Pinloom made on its own for tree `tree_id` (every tree's when absent),
    /// newest first, at most `limit`.
    pub async fn background_requests(
        &self,
        tree_id: Option<i64>,
        limit: usize,
    ) -> anyhow::Result<Vec<BackgroundRequestView>> {
        let requests = self
            .read("could not read the requests", move |store| {
                Ok(store.background_requests(tree_id.map(TreeId), limit)?)
            })
            .await?;
        Ok(requests.into_iter().map(BackgroundRequestView::from).collect())
    }
}

impl From<BackgroundRequest> for BackgroundRequestView {
    fn from(request: BackgroundRequest) -> BackgroundRequestView {
        BackgroundRequestView {
            id: request.id,
            tree_id: request.tree_id.0,
            kind: request.kind.as_str().to_owned(),
            model: request.model,
            pin_id: request.pin_id.map(|PinId(pin)| pin),
            up_to: request.up_to.map(|NodeId(node)| node),
            planned_tokens: request.planned_tokens,
            prompt_tokens: request.prompt_tokens,
            reply_tokens: request.reply_tokens,
            cost_usd: request.cost_usd,
            started_at_ms: request.started_at_ms,
            duration_ms: request.duration_ms,
            failure: request.failure,
            body: request.body_json,
        }
    }
}
