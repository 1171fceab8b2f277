//! A reply's receipt and how its request differs from the one before it, as the window shows them.

use anyhow::Context;
use pinloom_store::{self as store, NodeId};

use crate::base::pinloom::Pinloom;
use crate::base::receipts::diff;
use crate::json::{Receipt, RequestDiff};

impl Pinloom {
    /// The receipt of reply `node_id`: what its request was planned to hold and what was sent,
    /// beside what the provider counted. `None` for a message without one (the person's, or a
    /// reply written before receipts).
    pub async fn receipt(&self, node_id: i64) -> anyhow::Result<Option<Receipt>> {
        self.read("could not read the receipt", move |store| {
            let Some(stored) = store.receipt(NodeId(node_id))? else { return Ok(None) };
            let receipt = Receipt::read(&stored)
                .with_context(|| format!("the receipt of message {node_id} is unreadable"))?;
            Ok(Some(receipt))
        })
        .await
    }

    /// How reply `node_id`'s request differs from the request before it on its path (the
    /// nearest earlier reply that has a receipt): which slices came, went or changed.
    pub async fn request_diff(&self, node_id: i64) -> anyhow::Result<RequestDiff> {
        self.read("could not compare the requests", move |store| {
            let later_id = NodeId(node_id);
            let later = store.receipt(later_id)?.ok_or_else(|| {
                crate::error::ApiError::invalid_input(format!(
                    "message {node_id} has no receipt: only replies written by this version of \
                     Pinloom have one"
                ))
            })?;
            let later = Receipt::read(&later)?;
            let path = store.ancestor_path(later_id)?;
            let earlier_ids: Vec<NodeId> = path
                .iter()
                .rev()
                .skip(1)
                .filter(|node| node.author == store::Author::Model)
                .map(|node| node.id)
                .collect();
            let receipts = store.receipts(&earlier_ids)?;
            let earlier = earlier_ids.iter().find_map(|id| receipts.get(id).map(|r| (*id, r)));
            let Some((earlier_id, earlier)) = earlier else {
                return Ok(RequestDiff {
                    later: node_id,
                    earlier: None,
                    came: Vec::new(),
                    went: Vec::new(),
                    changed: Vec::new(),
                    unchanged: 0,
                });
            };
            let earlier = Receipt::read(earlier)?;
            // The later request's path holds the earlier one's.
            let compared = diff(&later.sent, &path, &earlier.sent, &path);
            Ok(RequestDiff {
                later: node_id,
                earlier: Some(earlier_id.0),
                came: compared.only_now,
                went: compared.only_before,
                changed: compared.changed,
                unchanged: compared.unchanged,
            })
        })
        .await
        .context("could not compare the requests")
    }
}
