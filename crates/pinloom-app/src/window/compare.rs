//! Comparing two branches: where their paths part, both branches below that point aligned row by
//! row with a word-level diff of each pair, what each side's replies took and cost, and which
//! slices the two sides' requests did not share.

use std::collections::HashMap;

use pinloom_store::{self as store, Author, NodeId, Store};
use similar::{ChangeTag, TextDiff};

use crate::base::pinloom::Pinloom;
use crate::base::plan::{ProfileRef, Refusals};
use crate::base::receipts::{diff, sent};
use crate::error::ApiError;
use crate::json::{
    CompareReach, ComparedRow, ComparedSide, Comparison, ContextDiff, ContextSource, DiffSpan,
    NodeView, Receipt, ReplySettings, SentSlice,
};

/// What one read of the store gives a comparison.
struct Branches {
    left: Vec<store::Node>,
    right: Vec<store::Node>,
    /// How many messages the two paths share from the root.
    shared: usize,
    /// The receipts of the replies below the common ancestor, on either side.
    receipts: HashMap<NodeId, Receipt>,
}

/// The request a side's context figures describe, and what it sent.
struct SideRequest {
    source: ContextSource,
    sent: Vec<SentSlice>,
    tokens: u32,
    available: u32,
    profile: String,
}

impl Pinloom {
    /// Compares the branches ending at messages `left` and `right` (with
    /// [`CompareReach::Branches`], going on from each down its newest continuation). Each side's
    /// context is the request that wrote its last message when that is a reply with a receipt,
    /// else the request a send from it would make under the model profile `profile`.
    pub async fn compare(
        &self,
        left: i64,
        right: i64,
        profile: String,
        reach: CompareReach,
    ) -> anyhow::Result<Comparison> {
        if left == right {
            return Err(ApiError::invalid_input(
                "that is the same message twice: pick two different messages to compare",
            )
            .into());
        }
        let branches = self
            .read("could not compare the branches", move |store| {
                read_branches(store, NodeId(left), NodeId(right), reach)
            })
            .await?;
        let left_request = self.side_request(&branches.left, &branches.receipts, &profile).await?;
        let right_request =
            self.side_request(&branches.right, &branches.receipts, &profile).await?;
        let compared =
            diff(&right_request.sent, &branches.right, &left_request.sent, &branches.left);
        let context = ContextDiff {
            left_only: compared.only_before,
            right_only: compared.only_now,
            changed: compared.changed,
            shared: compared.unchanged,
        };
        let shared = branches.shared;
        let left_side = side(&branches.left[shared..], &branches.receipts, left_request);
        let right_side = side(&branches.right[shared..], &branches.receipts, right_request);
        let rows = rows(&branches.left[shared..], &branches.right[shared..]);
        let common_ancestor =
            shared.checked_sub(1).map(|at| NodeView::from(branches.left[at].clone()));
        let settings_differ = match (&left_side.settings, &right_side.settings) {
            (Some(left), Some(right)) => left.differences(right),
            _ => Vec::new(),
        };
        Ok(Comparison {
            common_ancestor,
            shared: u32::try_from(shared).unwrap_or(u32::MAX),
            rows,
            left: left_side,
            right: right_side,
            context,
            settings_differ,
        })
    }

    /// The request whose contents a side's context figures describe.
    async fn side_request(
        &self,
        path: &[store::Node],
        receipts: &HashMap<NodeId, Receipt>,
        profile: &str,
    ) -> anyhow::Result<SideRequest> {
        let end = path.last().expect("a branch read from the store ends somewhere");
        if let Some(receipt) = receipts.get(&end.id) {
            return Ok(SideRequest {
                source: ContextSource::Sent,
                sent: receipt.sent.clone(),
                tokens: receipt.planned,
                available: receipt.available,
                profile: receipt.profile.clone(),
            });
        }
        let planned = self
            .plan_for(
                end.id,
                &ProfileRef::Stored(profile.to_owned()),
                None,
                // A profile that stops at the limit is still compared, as truncation would
                // plan it; the inspector says what to exclude.
                Refusals::Show,
            )
            .await?;
        let request = SideRequest {
            source: ContextSource::Planned,
            sent: sent(&planned.plan, &planned.path.snapshot),
            tokens: planned.plan.used,
            available: planned.plan.available,
            profile: planned.choice.name.clone(),
        };
        Ok(request)
    }
}

fn read_branches(
    store: &Store,
    left: NodeId,
    right: NodeId,
    reach: CompareReach,
) -> anyhow::Result<Branches> {
    let end = |picked: NodeId| -> anyhow::Result<NodeId> {
        match reach {
            CompareReach::Picked => Ok(picked),
            CompareReach::Branches => {
                let thread = store.node(picked)?.pin_id;
                Ok(store.newest_continuation(picked, thread)?.unwrap_or(picked))
            }
        }
    };
    let left = store.ancestor_path(end(left)?)?;
    let right = store.ancestor_path(end(right)?)?;
    let (Some(left_first), Some(right_first)) = (left.first(), right.first()) else {
        anyhow::bail!("a message's path came back empty");
    };
    if left_first.tree_id != right_first.tree_id {
        return Err(ApiError::invalid_input(
            "the two messages are in different trees: pick two messages of one tree to compare",
        )
        .into());
    }
    let shared = left.iter().zip(&right).take_while(|(a, b)| a.id == b.id).count();
    let replies: Vec<NodeId> = left[shared..]
        .iter()
        .chain(&right[shared..])
        .filter(|node| node.author == Author::Model)
        .map(|node| node.id)
        .collect();
    let mut receipts = HashMap::new();
    for (id, stored) in store.receipts(&replies)? {
        // An unreadable receipt costs its figures, not the comparison.
        if let Ok(receipt) = Receipt::read(&stored) {
            receipts.insert(id, receipt);
        }
    }
    Ok(Branches { left, right, shared, receipts })
}

/// A side's figures: its last reply's model, tokens and time, what its replies cost, and the
/// request its context figures describe.
fn side(
    below: &[store::Node],
    receipts: &HashMap<NodeId, Receipt>,
    request: SideRequest,
) -> ComparedSide {
    let replies: Vec<&store::Node> =
        below.iter().filter(|node| node.author == Author::Model).collect();
    let last = replies.last();
    let last_receipt = last.and_then(|node| receipts.get(&node.id));
    let costs: Vec<f64> = replies
        .iter()
        .filter_map(|node| receipts.get(&node.id)?.cost.map(|cost| cost.total))
        .collect();
    ComparedSide {
        end: below.last().map_or(0, |node| node.id.0),
        model: last.and_then(|node| node.model.clone()),
        context_source: request.source,
        context_tokens: request.tokens,
        context_available: request.available,
        context_profile: request.profile,
        reply_tokens: last_receipt.and_then(|receipt| receipt.output),
        first_text_ms: last_receipt.and_then(|receipt| receipt.first_text_ms),
        took_ms: last_receipt.map(|receipt| receipt.took_ms),
        cost: (!costs.is_empty()).then(|| costs.iter().sum()),
        priced_replies: u32::try_from(costs.len()).unwrap_or(u32::MAX),
        replies: u32::try_from(replies.len()).unwrap_or(u32::MAX),
        settings: last.and_then(|node| node.generation_json.as_deref()).and_then(|json| {
            // Imported replies may carry other apps' parameters: those are not compared.
            serde_json::from_str::<ReplySettings>(json).ok()
        }),
    }
}

/// The two branches below the common ancestor as rows, paired by [`align`].
fn rows(left: &[store::Node], right: &[store::Node]) -> Vec<ComparedRow> {
    let left_authors: Vec<Author> = left.iter().map(|node| node.author).collect();
    let right_authors: Vec<Author> = right.iter().map(|node| node.author).collect();
    align(&left_authors, &right_authors)
        .into_iter()
        .map(|(l, r)| {
            let left = l.map(|index| &left[index]);
            let right = r.map(|index| &right[index]);
            let (diff, differs) = match (left, right) {
                (Some(left), Some(right)) => {
                    (word_diff(&left.text, &right.text), left.text != right.text)
                }
                _ => (Vec::new(), true),
            };
            ComparedRow {
                left: left.cloned().map(NodeView::from),
                right: right.cloned().map(NodeView::from),
                diff,
                differs,
            }
        })
        .collect()
}

/// Pairs two branches' messages step by step: messages of the same author at the same step pair
/// up; where the authors differ, the side with more messages left shows one alone (on a tie, the
/// left), so that what follows can pair again. Both sides are kept in order and whole.
pub(in crate::window) fn align(
    left: &[Author],
    right: &[Author],
) -> Vec<(Option<usize>, Option<usize>)> {
    let (mut l, mut r) = (0, 0);
    let mut rows = Vec::with_capacity(left.len().max(right.len()));
    while l < left.len() || r < right.len() {
        match (left.get(l), right.get(r)) {
            (Some(a), Some(b)) if a == b => {
                rows.push((Some(l), Some(r)));
                l += 1;
                r += 1;
            }
            (Some(_), Some(_)) if left.len() - l >= right.len() - r => {
                rows.push((Some(l), None));
                l += 1;
            }
            (Some(_), None) => {
                rows.push((Some(l), None));
                l += 1;
            }
            _ => {
                rows.push((None, Some(r)));
                r += 1;
            }
        }
    }
    rows
}

/// The word-level difference of two texts, as runs of the same side.
pub(in crate::window) fn word_diff(left: &str, right: &str) -> Vec<DiffSpan> {
    let diff = TextDiff::from_words(left, right);
    let mut spans: Vec<DiffSpan> = Vec::new();
    for change in diff.iter_all_changes() {
        let side = match change.tag() {
            ChangeTag::Equal => "same",
            ChangeTag::Delete => "left",
            ChangeTag::Insert => "right",
        };
        match spans.last_mut() {
            Some(last) if last.side == side => last.text.push_str(change.value()),
            _ => spans.push(DiffSpan { side: side.to_owned(), text: change.value().to_owned() }),
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use pinloom_store::Author::{Human, Model, Tool};
    use proptest::prelude::*;

    use super::{align, word_diff};

    #[test]
    fn words_are_compared_and_runs_joined() {
        let spans = word_diff("rivers meander slowly to the sea", "rivers wander slowly to a lake");
        let flat: Vec<(&str, &str)> =
            spans.iter().map(|span| (span.side.as_str(), span.text.as_str())).collect();
        assert_eq!(
            flat,
            [
                ("same", "rivers "),
                ("left", "meander"),
                ("right", "wander"),
                ("same", " slowly to "),
                ("left", "the"),
                ("right", "a"),
                ("same", " "),
                ("left", "sea"),
                ("right", "lake"),
            ]
        );
        let left: String =
            spans.iter().filter(|s| s.side != "right").map(|s| s.text.as_str()).collect();
        assert_eq!(left, "rivers meander slowly to the sea", "the left side reassembles");
        assert!(word_diff("", "").is_empty());
    }

    #[test]
    fn branches_align_by_author_and_step() {
        // Two answers to one question, then one side went on.
        assert_eq!(
            align(&[Model], &[Model, Human, Model]),
            [(Some(0), Some(0)), (None, Some(1)), (None, Some(2))]
        );
        // An edit against the original: both start with the person's message.
        assert_eq!(
            align(&[Human, Model], &[Human, Model]),
            [(Some(0), Some(0)), (Some(1), Some(1))]
        );
        // A tool call on one side only: it stands alone and the reply after it pairs again.
        assert_eq!(
            align(&[Model, Tool, Model], &[Model]),
            [(Some(0), Some(0)), (Some(1), None), (Some(2), None)]
        );
        assert_eq!(
            align(&[Tool, Model], &[Model]),
            [(Some(0), None), (Some(1), Some(0))],
            "the longer side shows its extra message first, so the replies pair"
        );
        assert!(align(&[], &[]).is_empty());
    }

    fn author() -> impl Strategy<Value = pinloom_store::Author> {
        prop_oneof![Just(Human), Just(Model), Just(Tool)]
    }

    proptest! {
        /// Every message of both sides appears once, in order, and a pair always has one author.
        #[test]
        fn alignment_keeps_both_sides_whole_and_in_order(
            left in prop::collection::vec(author(), 0..12),
            right in prop::collection::vec(author(), 0..12),
        ) {
            let rows = align(&left, &right);
            let lefts: Vec<usize> = rows.iter().filter_map(|row| row.0).collect();
            let rights: Vec<usize> = rows.iter().filter_map(|row| row.1).collect();
            prop_assert_eq!(lefts, (0..left.len()).collect::<Vec<_>>());
            prop_assert_eq!(rights, (0..right.len()).collect::<Vec<_>>());
            for row in &rows {
                prop_assert!(row.0.is_some() || row.1.is_some());
                if let (Some(l), Some(r)) = row {
                    prop_assert_eq!(left[*l], right[*r]);
                }
            }
            // Equal sides pair completely.
            if left == right {
                prop_assert!(rows.iter().all(|row| row.0.is_some() && row.1.is_some()));
            }
        }
    }
}
