//! Seed 001's retrieval scoring: recency, relevance and salience, weighted per strategy, chosen
//! greedily within the slice's share of the budget.

use crate::settings::{RetrievalFilters, RetrievalWeights};
use crate::snapshot::RetrievalCandidate;

const MS_PER_HOUR: f64 = 3_600_000.0;

/// Recency: 1 now, halving every 24 hours. A candidate from the future (clock skew between
/// machines) counts as now rather than above 1.
pub fn recency(created_at_ms: i64, now_ms: i64) -> f64 {
    let age_hours = (now_ms.saturating_sub(created_at_ms)).max(0) as f64 / MS_PER_HOUR;
    0.5_f64.powf(age_hours / 24.0)
}

/// Salience: seed 001 gives ordinary items 0.5; a bookmark or a pin made in the node each lift it
/// by a quarter, so a node that is both scores 1.
pub fn salience(bookmarked: bool, pinned: bool) -> f64 {
    0.5 + if bookmarked { 0.25 } else { 0.0 } + if pinned { 0.25 } else { 0.0 }
}

/// Relevance: the candidate's bm25 over the best bm25 among the candidates, so the best is 1.
/// A non-positive best (no match signal at all) gives every candidate 0.
pub fn relevance(bm25: f64, best_bm25: f64) -> f64 {
    if best_bm25 > 0.0 { (bm25 / best_bm25).clamp(0.0, 1.0) } else { 0.0 }
}

/// The weighted score of one candidate.
pub fn score(
    candidate: &RetrievalCandidate,
    best_bm25: f64,
    now_ms: i64,
    weights: RetrievalWeights,
) -> f64 {
    recency(candidate.created_at_ms, now_ms) * weights.recency
        + relevance(candidate.bm25, best_bm25) * weights.relevance
        + salience(candidate.bookmarked, candidate.pinned) * weights.salience
}

/// Whether the filters let a candidate through.
pub fn passes(candidate: &RetrievalCandidate, filters: &RetrievalFilters) -> bool {
    if filters.since_ms.is_some_and(|since| candidate.created_at_ms < since) {
        return false;
    }
    if filters.authors.as_ref().is_some_and(|authors| !authors.contains(&candidate.author)) {
        return false;
    }
    !filters.exclude.contains(&candidate.node)
}

/// Seed 001's greedy selection: in score order, take each item that still fits. Returns, per
/// item (by index into `tokens`), whether it was taken; ties keep the input order.
pub fn select_greedy(scores: &[f64], tokens: &[u32], budget: u64) -> Vec<bool> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let mut taken = vec![false; scores.len()];
    let mut used = 0u64;
    for i in order {
        let cost = u64::from(tokens[i]);
        if used + cost <= budget {
            used += cost;
            taken[i] = true;
        }
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{Author, NodeId};

    fn candidate(node: u64, at: i64, bm25: f64) -> RetrievalCandidate {
        RetrievalCandidate {
            node: NodeId(node),
            text: String::new(),
            author: Author::Model,
            created_at_ms: at,
            bm25,
            bookmarked: false,
            pinned: false,
            added: false,
        }
    }

    #[test]
    fn recency_halves_every_24_hours_seed_001() {
        let day = 24 * 3_600_000;
        assert!((recency(0, 0) - 1.0).abs() < 1e-12);
        assert!((recency(0, day) - 0.5).abs() < 1e-12);
        assert!((recency(0, 2 * day) - 0.25).abs() < 1e-12);
        assert!((recency(day, 0) - 1.0).abs() < 1e-12, "future counts as now");
    }

    #[test]
    fn relevance_is_bm25_normalised_to_the_best_seed_001() {
        assert!((relevance(5.0, 10.0) - 0.5).abs() < 1e-12);
        assert!((relevance(10.0, 10.0) - 1.0).abs() < 1e-12);
        assert_eq!(relevance(3.0, 0.0), 0.0);
    }

    #[test]
    fn bookmarked_and_pinned_nodes_score_higher_seed_001() {
        assert!(salience(true, false) > salience(false, false));
        assert!(salience(false, true) > salience(false, false));
        assert!((salience(true, true) - 1.0).abs() < 1e-12);
        let w = RetrievalWeights::default();
        let plain = candidate(1, 0, 1.0);
        let mut marked = plain.clone();
        marked.bookmarked = true;
        assert!(score(&marked, 1.0, 0, w) > score(&plain, 1.0, 0, w));
    }

    #[test]
    fn filters_since_author_and_excluded_ids_seed_001() {
        let c = candidate(7, 1_000, 1.0);
        let mut f = RetrievalFilters::default();
        assert!(passes(&c, &f));
        f.since_ms = Some(2_000);
        assert!(!passes(&c, &f));
        f.since_ms = None;
        f.authors = Some(vec![Author::Human]);
        assert!(!passes(&c, &f));
        f.authors = None;
        f.exclude = vec![NodeId(7)];
        assert!(!passes(&c, &f));
    }

    #[test]
    fn greedy_selection_takes_best_scores_that_fit_seed_001() {
        // The best (0.9) is too big; the next ones fit in score order.
        let taken = select_greedy(&[0.9, 0.8, 0.7, 0.1], &[50, 20, 20, 5], 45);
        assert_eq!(taken, vec![false, true, true, true]);
    }
}
