//! The incremental path (seed 001's `updateContext`): appending one node to a plan already made
//! costs work proportional to that node, not to the thread.
//!
//! The fast path covers the common turn: a plain message continuing the prompt. It counts the new
//! node (or takes its cached count), demotes the old prompt to recent history and the message
//! that falls out of the recent window to old history, and, when the budget overflows, prunes the
//! oldest kept history (amortised: each node is pruned once). Anything the fast path cannot decide
//! locally (tool groups, Mistral or strict-alternation role fills, lower-priority slices that the
//! table says must go before history, a budget the protected nodes no longer fit) falls back to a
//! full [`plan`], so the result always obeys the same rules.

use crate::error::EngineError;
use crate::plan::{
    ContextPlan, Origin, PruneReason, Slice, SliceKind, SliceStatus, SourceId, TruncationMarker,
};
use crate::planner::{available_budget, plan};
use crate::profile::ModelProfile;
use crate::settings::{Settings, TruncationStrategy};
use crate::snapshot::{ParentEdge, Snapshot, TreeMode};

/// How an append was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppendPath {
    /// Work proportional to the new node (plus the nodes it pushed out).
    Incremental,
    /// The plan was made again from the snapshot.
    Replanned,
}

/// Updates `plan` for `snapshot`, which is the snapshot the plan was made from with one node
/// pushed at the end of `nodes` as the new active node.
pub fn append_node(
    plan_in: &mut ContextPlan,
    snapshot: &Snapshot,
    profile: &ModelProfile,
    settings: &Settings,
) -> Result<AppendPath, EngineError> {
    if let Some(done) = try_fast(plan_in, snapshot, profile, settings) {
        return Ok(done);
    }
    *plan_in = plan(snapshot, profile, settings)?;
    Ok(AppendPath::Replanned)
}

fn try_fast(
    p: &mut ContextPlan,
    snapshot: &Snapshot,
    profile: &ModelProfile,
    settings: &Settings,
) -> Option<AppendPath> {
    let (index, prompt_slice) = appendable(p, snapshot, profile, settings)?;
    let node = &snapshot.nodes[index];
    let overhead = profile.message_overhead;
    let tokens = match node.cached(p.tokenizer) {
        Some(c) => c,
        None => {
            let counted: u64 = node
                .parts
                .iter()
                .map(|part| u64::from(profile.tokenizer.count_u32(part.text())))
                .sum();
            let counted = u32::try_from(counted).unwrap_or(u32::MAX);
            p.newly_counted.push((node.id, counted));
            counted
        }
    }
    .saturating_add(overhead);

    // Demote the old prompt; the message leaving the recent window becomes old history.
    let demote = |s: &mut Slice, kind: SliceKind| {
        s.kind = kind;
        s.priority = settings.priorities.of(kind);
    };
    demote(&mut p.slices[prompt_slice], SliceKind::RecentHistory);
    let count = p.history.node_slices.len();
    if count > settings.recent_history_size {
        let leaving = p.history.node_slices[count - 1 - settings.recent_history_size];
        if p.slices[leaving].kind == SliceKind::RecentHistory {
            demote(&mut p.slices[leaving], SliceKind::OldHistory);
        }
    }
    let group = p.history.next_group;
    p.history.next_group += 1;
    p.history.node_slices.push(p.slices.len());
    p.history.prompt_start = p.history.node_slices.len() - 1;
    p.slices.push(Slice {
        kind: SliceKind::Prompt,
        source: SourceId::Node(node.id),
        priority: settings.priorities.of(SliceKind::Prompt),
        provenance: crate::plan::Provenance::Path,
        tokens,
        status: SliceStatus::Included,
        score: None,
        group,
        cut_from: None,
        origin: Origin::Node(index),
    });
    let used = u64::from(p.used) + u64::from(tokens);
    let available = u64::from(p.available);
    if used <= available {
        p.used = u32::try_from(used).ok()?;
        return Some(AppendPath::Incremental);
    }
    prune_for_append(p, profile, settings, used, available)
}

/// Whether the fast path may append `snapshot`'s newest node to `p`: a plain message continuing
/// the prompt, under rules that decide nothing far from it. Its index and the old prompt's slice.
fn appendable(
    p: &ContextPlan,
    snapshot: &Snapshot,
    profile: &ModelProfile,
    settings: &Settings,
) -> Option<(usize, usize)> {
    let rules = profile.role_rules;
    if rules.assistant_between_tool_and_user
        || rules.strict_alternation
        || !snapshot.fuse_sources.is_empty()
        || snapshot.compaction.is_some()
    {
        return None;
    }
    // A cut at the boundary depends on the whole budget's leftover: plan again.
    if settings.truncation == TruncationStrategy::StopAtLimit
        || settings.cut_boundary_message
        || available_budget(profile, &snapshot.tree) != p.available
        || profile.tokenizer.id() != p.tokenizer
    {
        return None;
    }
    // A message the user keeps changes what may be pruned anywhere in the thread: plan again.
    if snapshot.nodes.iter().any(|node| node.kept) {
        return None;
    }
    let index = snapshot.nodes.len().checked_sub(1)?;
    let node = &snapshot.nodes[index];
    if node.id != snapshot.active
        || node.excluded
        || node.pruned
        || node.has_tool_call()
        || node.has_tool_result()
    {
        return None;
    }
    let ParentEdge::Continuation(parent) = node.edge else { return None };
    let prompt_slice = *p.history.node_slices.last()?;
    let prompt = &p.slices[prompt_slice];
    if prompt.kind != SliceKind::Prompt || prompt.source != SourceId::Node(parent) {
        return None;
    }
    // The prompt group must be a single node (no tool group to keep whole).
    if p.history.prompt_start + 1 != p.history.node_slices.len() {
        return None;
    }
    // Nothing after the prompt (a working buffer) may move.
    if prompt_slice + 1 != p.slices.len() || snapshot.tree.mode != TreeMode::Dialogue {
        return None;
    }
    Some((index, prompt_slice))
}

/// The fast path's append that went over the budget: the oldest kept history is pruned until
/// the plan fits again, behind a marker; `None` when only the full planner may decide (under
/// truncateMiddle, with a lower-priority slice that must go first, when the protected messages
/// would be reached, or a tool group met).
fn prune_for_append(
    p: &mut ContextPlan,
    profile: &ModelProfile,
    settings: &Settings,
    mut used: u64,
    available: u64,
) -> Option<AppendPath> {
    let overhead = profile.message_overhead;
    // Over budget under truncateMiddle: where the tail starts, whether the start is kept and
    // whether the budget is small are the full planner's decisions (they depend on every
    // message's place and size in the thread).
    if settings.truncation == TruncationStrategy::TruncateMiddle {
        return None;
    }
    // Over budget: the table prunes higher priority numbers first; if any included non-history
    // slice outranks history for pruning, the full planner decides.
    let history_priority = settings.priorities.recent_history.min(settings.priorities.old_history);
    if p.slices.iter().any(|s| {
        s.is_included()
            && !s.kind.is_history()
            && s.kind != SliceKind::Prompt
            && s.priority > history_priority
            && !matches!(s.kind, SliceKind::System | SliceKind::Anchor)
    }) {
        return None;
    }
    // Make room for a marker if there is none yet.
    let mut omitted = p.marker.as_ref().map_or(0, |m| m.omitted);
    if p.marker.is_none() {
        used += 2
            + profile.tokenizer.count_remembered(&settings.truncation_marker)
            + u64::from(overhead)
            + 4;
    } else if let Some(m) = &p.marker {
        used -= u64::from(m.tokens);
        used += u64::from(m.tokens) + 2;
    }
    let protected_from =
        p.history.node_slices.len().saturating_sub(settings.minimum_recent_nodes.max(1));
    let mut cursor = p.history.tail_start;
    while used > available {
        if cursor >= protected_from {
            return None;
        }
        let s = p.history.node_slices[cursor];
        if p.slices[s].is_included() {
            // Only single-node groups are pruned here; a tool group needs the full planner.
            let g = p.slices[s].group;
            if p.slices.iter().filter(|x| x.group == g).count() > 1 {
                return None;
            }
            used -= u64::from(p.slices[s].tokens);
            p.slices[s].status = SliceStatus::Pruned(PruneReason::Truncated);
            omitted += 1;
        }
        cursor += 1;
    }
    p.history.tail_start = cursor;
    let before_slice = p.history.node_slices[cursor];
    let text = settings.truncation_marker.replace("{count}", &omitted.to_string());
    let marker_tokens =
        u32::try_from(profile.tokenizer.count_marker(&settings.truncation_marker, omitted as u64))
            .unwrap_or(u32::MAX)
            .saturating_add(overhead);
    // Swap the reservation for the real marker.
    let reserved = match &p.marker {
        None => {
            2 + profile.tokenizer.count_remembered(&settings.truncation_marker)
                + u64::from(overhead)
                + 4
        }
        Some(m) => u64::from(m.tokens) + 2,
    };
    used = used - reserved + u64::from(marker_tokens);
    if used > available
        || p.role_fills.iter().any(|f| f.before_slice >= before_slice) && p.marker.is_none()
    {
        return None;
    }
    p.marker = Some(TruncationMarker { before_slice, omitted, tokens: marker_tokens, text });
    p.used = u32::try_from(used).ok()?;
    Some(AppendPath::Incremental)
}
