//! Comparing two messages: where their branches part, both branches, a word-level diff of the two
//! messages, and the context each would send.

use pinloom_store::NodeId;
use similar::{ChangeTag, TextDiff};

use crate::conversation::{MissingSummaries, Refusals};
use crate::json::{Comparison, DiffSpan, Message};
use crate::pinloom::Pinloom;

impl Pinloom {
    /// Compares messages `left` and `right` (usually two answers to one prompt, or the ends of
    /// two branches), counting each side's context under the model profile `profile`.
    pub async fn compare(
        &self,
        left: i64,
        right: i64,
        profile: String,
    ) -> anyhow::Result<Comparison> {
        let (left_path, right_path) = self
            .read("could not compare the messages", move |store| {
                Ok((store.ancestor_path(NodeId(left))?, store.ancestor_path(NodeId(right))?))
            })
            .await?;
        let shared = left_path.iter().zip(&right_path).take_while(|(a, b)| a.id == b.id).count();
        let common_ancestor = shared.checked_sub(1).map(|index| left_path[index].id.0);
        let left_text = left_path.last().map(|node| node.text.clone()).unwrap_or_default();
        let right_text = right_path.last().map(|node| node.text.clone()).unwrap_or_default();
        let diff = word_diff(&left_text, &right_text);
        let left_model = left_path.last().and_then(|node| node.model.clone());
        let right_model = right_path.last().and_then(|node| node.model.clone());
        let profile = crate::conversation::ProfileRef::Stored(profile);
        let left_plan = self
            .plan_for(NodeId(left), &profile, None, MissingSummaries::Counted, Refusals::Fail)
            .await?;
        let left_plan = self.keep_path(left_plan)?;
        let right_plan = self
            .plan_for(NodeId(right), &profile, None, MissingSummaries::Counted, Refusals::Fail)
            .await?;
        let right_plan = self.keep_path(right_plan)?;
        Ok(Comparison {
            common_ancestor,
            left: left_path.into_iter().skip(shared).map(Message::from).collect(),
            right: right_path.into_iter().skip(shared).map(Message::from).collect(),
            diff,
            left_model,
            right_model,
            left_context_tokens: left_plan.used,
            right_context_tokens: right_plan.used,
        })
    }
}

/// The word-level difference of two texts, as runs of the same side.
pub(crate) fn word_diff(left: &str, right: &str) -> Vec<DiffSpan> {
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
    use super::word_diff;

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
}
