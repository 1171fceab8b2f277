//! The requests Pinloom makes on its own, kept where a person finds them: a summary, a
//! condensation, a compaction's summary or a suggested pin result is a request to a provider (possibly another than the conversation's, spending
//! the person's money, for a pin opened and never asked in), so each is kept with what it was
//! for, the model, the tokens planned and counted, the cost, the time, how it ended and its
//! body (`pinloom requests`; kept by `conversation/summaries.rs`, which makes them). A reply keeps
//! the same in its receipt.

use pinloom_store::{BackgroundRequest, NodeId, PinId, TreeId};

use crate::base::pinloom::Pinloom;
use crate::error::ApiError;
use crate::json::{BackgroundRequestView, Cost, LoggedExchange, TreeSpending};

/// How many requests a list shows when not told otherwise.
pub const REQUESTS_SHOWN: usize = 50;

impl Pinloom {
    /// What tree `tree_id` cost: its replies' receipts, and the requests made on their own.
    pub async fn tree_spending(&self, tree_id: i64) -> anyhow::Result<TreeSpending> {
        self.read("could not add up what the tree cost", move |store| {
            let tree = TreeId(tree_id);
            store.tree_setup(tree)?;
            let receipts = store.tree_receipts(tree)?;
            let costs: Vec<f64> = receipts
                .iter()
                .filter_map(|receipt| serde_json::from_str::<Priced>(&receipt.json).ok()?.cost)
                .map(|cost| cost.total)
                .collect();
            let (background, background_priced, background_usd) =
                store.background_spending(tree)?;
            let replies_usd: f64 = costs.iter().sum();
            let count = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
            Ok(TreeSpending {
                replies: count(receipts.len() as u64),
                replies_priced: count(costs.len() as u64),
                replies_usd,
                background: count(background),
                background_priced: count(background_priced),
                background_usd,
                total_usd: replies_usd + background_usd,
            })
        })
        .await
    }

    /// The requests Pinloom made on its own for tree `tree_id` (every tree's when absent),
    /// newest first, at most `limit`; with their bodies only when `bodies` is set (a list in the
    /// window reads one body when it is opened, `background_request`).
    pub async fn background_requests(
        &self,
        tree_id: Option<i64>,
        limit: usize,
        bodies: bool,
    ) -> anyhow::Result<Vec<BackgroundRequestView>> {
        let requests = self
            .read("could not read the requests", move |store| {
                Ok(store.background_requests(tree_id.map(TreeId), limit, bodies)?)
            })
            .await?;
        Ok(requests.into_iter().map(BackgroundRequestView::from).collect())
    }

    /// Background request `id`, its body included.
    pub async fn background_request(&self, id: i64) -> anyhow::Result<BackgroundRequestView> {
        let request = self
            .read("could not read the request", move |store| {
                Ok(store.background_request(id)?.ok_or_else(|| {
                    ApiError::not_found(format!(
                        "request {id} is not kept: list a tree's requests to find one"
                    ))
                })?)
            })
            .await?;
        Ok(request.into())
    }
}

impl Pinloom {
    /// The newest `limit` exchanges across every tree, newest first: each reply with a receipt,
    /// the question it answers, and what its receipt says it took.
    pub async fn recent_exchanges(&self, limit: u32) -> anyhow::Result<Vec<LoggedExchange>> {
        self.read("could not read the recent exchanges", move |store| {
            let replies = store.recent_replies(limit)?;
            let receipts = store.receipts(&replies)?;
            let mut titles = std::collections::HashMap::new();
            let mut logged = Vec::with_capacity(replies.len());
            for reply in store.nodes(&replies)? {
                let Some(receipt) = receipts.get(&reply.id) else { continue };
                let Ok(read) = serde_json::from_str::<Logged>(&receipt.json) else { continue };
                let question = match reply.parent_id {
                    Some(parent) => Some(store.node(parent)?),
                    None => None,
                };
                let tree_title = match titles.get(&reply.tree_id) {
                    Some(title) => Clone::clone(title),
                    None => {
                        let title = store.tree(reply.tree_id)?.title;
                        titles.insert(reply.tree_id, title.clone());
                        title
                    }
                };
                logged.push(LoggedExchange {
                    reply_id: reply.id.0,
                    tree_id: reply.tree_id.0,
                    tree_title,
                    question_id: question.as_ref().map(|question| question.id.0),
                    question: question.map(|question| question.text).unwrap_or_default(),
                    profile: read.profile,
                    asked_by: reply.written_by.clone(),
                    prompt_tokens: read.counted.unwrap_or(u64::from(read.planned)),
                    reply_tokens: read.output,
                    cost_usd: read.cost.map(|cost| cost.total),
                    at_ms: reply.created_at_ms,
                });
            }
            Ok(logged)
        })
        .await
    }
}

/// What the log reads of a receipt.
#[derive(serde::Deserialize)]
struct Logged {
    profile: String,
    planned: u32,
    counted: Option<u64>,
    output: Option<u64>,
    cost: Option<Cost>,
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

/// What a receipt says of its cost: all a tree's spending reads of it.
#[derive(serde::Deserialize)]
struct Priced {
    cost: Option<Cost>,
}
