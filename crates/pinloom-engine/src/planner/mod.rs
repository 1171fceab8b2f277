//! From a snapshot to a context plan: ancestry, exclusion, system context, anchor, summaries by
//! depth budget, history under the truncation strategy, the priority table, role rules.

mod collect;
mod history;
mod listing;
mod picked;
mod select;

pub use crate::ancestry::{AncestorPath, ThreadSegment, ancestry};
pub use collect::{FUSE_INSTRUCTION, FUSE_SOURCE_FRAMING};
pub use listing::{excluded_from_listing, file_block, folder_listing, pdf_page_block};
pub use picked::{PICKED_FRAMING, PICKED_SUMMARY_FRAMING};

use crate::error::EngineError;
use crate::permitted;
use crate::plan::{
    AncestorEntry, ContextPlan, HistoryIndex, MissingSummary, Origin, Provenance, PruneReason,
    RoleFill, Slice, SliceKind, SliceStatus, SmallBudget, SourceId, StartGivenUp, StepCut,
    TruncationMarker,
};
use crate::profile::ModelProfile;
use crate::settings::Settings;
use crate::snapshot::{AttachmentScope, NodeId, NodeRecord, Snapshot, TreeInfo, TreeMode};
use crate::tokens::Tokenizer;

/// The reply limit: what the budget keeps free for the reply, which is also the most tokens a
/// request asks the reply to have. A tree's token buffer replaces the profile's reserve.
pub fn reply_limit(profile: &ModelProfile, tree: &TreeInfo) -> u32 {
    tree.token_buffer.unwrap_or(profile.reserve)
}

/// The budget: window minus the reply limit.
pub fn available_budget(profile: &ModelProfile, tree: &TreeInfo) -> u32 {
    profile.context_window.saturating_sub(reply_limit(profile, tree))
}

/// Makes the context plan.
pub fn plan(
    snapshot: &Snapshot,
    profile: &ModelProfile,
    settings: &Settings,
) -> Result<ContextPlan, EngineError> {
    let path = ancestry(snapshot, settings.max_thread_depth)?;
    let mut builder = Builder::new(snapshot, profile, settings);
    builder.collect(&path)?;
    builder.select()?;
    Ok(builder.finish())
}

/// How a candidate is treated by selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    /// Never pruned: system, anchor, prompt, protected recent nodes.
    Required,
    /// Prunable, under the priority table.
    Optional,
    /// Already decided (pruned before selection).
    Decided,
}

/// A history group: one node, or a tool call with all its results.
#[derive(Debug, Clone, Copy)]
struct Group {
    /// Range of slice indices.
    first: usize,
    last: usize,
    /// Nodes in the group.
    nodes: usize,
}

struct Builder<'a> {
    snapshot: &'a Snapshot,
    profile: &'a ModelProfile,
    settings: &'a Settings,
    tokenizer: Tokenizer,
    overhead: u32,
    available: u32,
    slices: Vec<Slice>,
    need: Vec<Need>,
    newly_counted: Vec<(NodeId, u32)>,
    missing: Vec<MissingSummary>,
    ancestors: Vec<AncestorEntry>,
    /// Messages of ancestor threads quoted whole in their excerpts, sorted: a search hit of one
    /// would send it twice.
    excerpted: Vec<NodeId>,
    /// What the truncation step cut that would have fitted.
    step_cut: Option<StepCut>,
    /// The history's room, when truncateMiddle found it under [`SMALL_HISTORY_ROOM`].
    small_room: Option<u64>,
    /// The thread's first turn given up, when it was.
    start_given_up: Option<StartGivenUp>,
    next_group: u32,
    /// History groups of the current thread, oldest first; the last is the prompt group.
    groups: Vec<Group>,
    /// How many leading groups are the kept start.
    start_groups: usize,
    marker: Option<TruncationMarker>,
    fills: Vec<RoleFill>,
    node_slices: Vec<usize>,
    /// Search results whose message is in the current thread's history. Whichever of the two
    /// is in the context, the message is sent once.
    twins: Twins,
    /// The first search slice: they are collected together, from here on.
    first_search: usize,
}

/// History slice → search slice pairs: at most one per retrieval candidate, looked up for every
/// history group while the budget is filled and for every search slice, so held in both orders
/// and searched by binary search, rather than hashing each slice of a 10,000-message history
/// (and a person's picks may be thousands).
#[derive(Debug, Default)]
struct Twins {
    by_history: Vec<(usize, usize)>,
    /// The same pairs as (search, history).
    by_search: Vec<(usize, usize)>,
}

impl Twins {
    fn new(mut pairs: Vec<(usize, usize)>) -> Twins {
        pairs.sort_unstable();
        let mut by_search: Vec<(usize, usize)> =
            pairs.iter().map(|&(history, search)| (search, history)).collect();
        by_search.sort_unstable();
        Twins { by_history: pairs, by_search }
    }

    fn is_empty(&self) -> bool {
        self.by_history.is_empty()
    }

    /// The search twin of history slice `history`.
    fn of(&self, history: usize) -> Option<usize> {
        let at = self.by_history.binary_search_by_key(&history, |&(h, _)| h).ok()?;
        Some(self.by_history[at].1)
    }

    /// The search twins of the history slices `first..=last`.
    fn in_range(&self, first: usize, last: usize) -> impl Iterator<Item = usize> + '_ {
        let from = self.by_history.partition_point(|&(h, _)| h < first);
        self.by_history[from..]
            .iter()
            .take_while(move |&&(h, _)| h <= last)
            .map(|&(_, search)| search)
    }

    /// The history slice whose twin is search slice `search`.
    fn history_of(&self, search: usize) -> Option<usize> {
        let at = self.by_search.binary_search_by_key(&search, |&(s, _)| s).ok()?;
        Some(self.by_search[at].1)
    }
}

impl<'a> Builder<'a> {
    fn new(snapshot: &'a Snapshot, profile: &'a ModelProfile, settings: &'a Settings) -> Self {
        let buffer = snapshot.tree.mode == TreeMode::Buffer;
        // At most one slice per message and per other input (a few framing slices aside): sized
        // once, the vectors of a long thread are not copied as they grow, which a long-running
        // process's allocator does by copying (its large blocks come from the heap by then).
        let slices = snapshot.nodes.len()
            + snapshot.attachments.len()
            + snapshot.retrieval.len()
            + snapshot.summaries.len()
            + snapshot.pins.len()
            + snapshot.tools.len()
            + 2 * snapshot.picked.len()
            + 8;
        Builder {
            snapshot,
            profile,
            settings,
            tokenizer: profile.tokenizer,
            // A buffer document has no per-message framing.
            overhead: if buffer { 0 } else { profile.message_overhead },
            available: available_budget(profile, &snapshot.tree),
            slices: Vec::with_capacity(slices),
            need: Vec::with_capacity(slices),
            newly_counted: Vec::new(),
            missing: Vec::new(),
            ancestors: Vec::new(),
            excerpted: Vec::new(),
            step_cut: None,
            small_room: None,
            start_given_up: None,
            next_group: 0,
            groups: Vec::new(),
            start_groups: 0,
            marker: None,
            fills: Vec::new(),
            node_slices: Vec::with_capacity(snapshot.nodes.len()),
            twins: Twins::default(),
            first_search: usize::MAX,
        }
    }

    fn count(&self, text: &str) -> u32 {
        self.tokenizer.count_u32(text).saturating_add(self.overhead)
    }

    fn push(&mut self, kind: SliceKind, source: SourceId, tokens: u32, origin: Origin, need: Need) {
        self.push_with(kind, source, tokens, origin, need, SliceStatus::Included, None);
    }

    #[allow(clippy::too_many_arguments)] // one private constructor, every field named at the call
    fn push_with(
        &mut self,
        kind: SliceKind,
        source: SourceId,
        tokens: u32,
        origin: Origin,
        need: Need,
        status: SliceStatus,
        score: Option<f64>,
    ) {
        let group = self.next_group;
        self.next_group += 1;
        self.slices.push(Slice {
            kind,
            source,
            priority: self.settings.priorities.of(kind),
            provenance: Provenance::of(kind, source),
            tokens,
            status,
            score,
            group,
            cut_from: None,
            origin,
        });
        self.need.push(need);
    }

    fn push_text(&mut self, kind: SliceKind, source: SourceId, text: String, need: Need) {
        let tokens = self.count(&text);
        self.push(kind, source, tokens, Origin::Text(text), need);
    }

    fn pruned_text(&mut self, kind: SliceKind, source: SourceId, text: String, why: PruneReason) {
        let tokens = self.count(&text);
        self.push_with(
            kind,
            source,
            tokens,
            Origin::Text(text),
            Need::Decided,
            SliceStatus::Pruned(why),
            None,
        );
    }

    fn node_tokens(&mut self, index: usize) -> u32 {
        let node = &self.snapshot.nodes[index];
        let id = self.tokenizer.id();
        let content = match node.cached(id) {
            Some(cached) => cached,
            None => {
                let counted: u64 =
                    node.parts.iter().map(|p| u64::from(self.tokenizer.count_u32(p.text()))).sum();
                let counted = u32::try_from(counted).unwrap_or(u32::MAX);
                self.newly_counted.push((node.id, counted));
                counted
            }
        };
        content.saturating_add(self.overhead)
    }

    fn on_path(&self, path: &AncestorPath, scope: AttachmentScope) -> bool {
        permitted::attachment_in_scope(self.snapshot, path, scope)
    }

    fn node_of(&self, slice: usize) -> &'a NodeRecord {
        match self.slices[slice].origin {
            Origin::Node(i) | Origin::Cut { node: i, .. } => &self.snapshot.nodes[i],
            Origin::Text(_) => unreachable!("history slices always come from nodes"),
        }
    }

    fn group_tokens(&self, group: &Group) -> u64 {
        (group.first..=group.last)
            .filter(|&slice_index| self.need[slice_index] != Need::Decided)
            .map(|slice_index| u64::from(self.slices[slice_index].tokens))
            .sum()
    }

    fn group_status(&mut self, group: &Group, status: SliceStatus) {
        for slice_index in group.first..=group.last {
            if self.need[slice_index] != Need::Decided {
                self.slices[slice_index].status = status;
            }
        }
    }

    fn total_used(&self) -> u64 {
        let slices: u64 = self
            .slices
            .iter()
            .filter(|slice_index| slice_index.is_included())
            .map(|slice_index| u64::from(slice_index.tokens))
            .sum();
        let fills: u64 = self.fills.iter().map(|f| u64::from(f.tokens)).sum();
        slices + fills + self.marker.as_ref().map_or(0, |m| u64::from(m.tokens))
    }

    fn fill_reserve(&self) -> u64 {
        if self.snapshot.tree.mode == TreeMode::Dialogue && self.profile.role_rules.first_user {
            u64::from(self.count(&self.settings.leading_user_placeholder))
        } else {
            0
        }
    }

    fn marker_text(&self, omitted: usize) -> String {
        self.settings.truncation_marker.replace("{count}", &omitted.to_string())
    }

    fn marker_reserve(&self) -> u64 {
        // The widest count the marker can show, plus slack: a smaller number never costs more
        // than two tokens over this in any BPE we ship.
        let digits = self.groups.iter().map(|group| group.nodes).sum::<usize>().to_string().len();
        let widest = "9".repeat(digits).parse().unwrap_or(u64::MAX);
        u64::from(self.count_marker(widest)) + 2
    }

    /// The marker's tokens when it stands for `omitted` messages, counted without the
    /// vocabulary when its words were counted before ([`Tokenizer::count_marker`]).
    fn count_marker(&self, omitted: u64) -> u32 {
        u32::try_from(self.tokenizer.count_marker(&self.settings.truncation_marker, omitted))
            .unwrap_or(u32::MAX)
            .saturating_add(self.overhead)
    }

    fn mark_group(&mut self, group: &Group, need: Need) {
        for slice_index in group.first..=group.last {
            if self.need[slice_index] != Need::Decided {
                self.need[slice_index] = need;
            }
        }
    }

    fn is_protected(&self, group_index: usize) -> bool {
        let after: usize = self.groups[group_index..].iter().map(|group| group.nodes).sum();
        let group = self.groups[group_index];
        after <= self.settings.minimum_recent_nodes
            || group_index == self.groups.len() - 1
            || (group.first..=group.last).any(|slice_index| self.slice_kept(slice_index))
    }

    /// Whether slice `s` is a node the user asked to keep.
    fn slice_kept(&self, slice_index: usize) -> bool {
        matches!(self.slices[slice_index].origin, Origin::Node(i) if self.snapshot.nodes[i].kept)
    }

    fn finish(self) -> ContextPlan {
        let used = clamp_u32(self.total_used());
        // `node_slices` is in slice order, so a group's place in it is found by binary search.
        let prompt_start = self
            .groups
            .last()
            .and_then(|group| self.node_slices.binary_search(&group.first).ok())
            .unwrap_or(0);
        let tail_start = self
            .groups
            .iter()
            .enumerate()
            .skip(self.start_groups)
            .find(|(_, group)| self.slices[group.first].is_included())
            .and_then(|(_, group)| self.node_slices.binary_search(&group.first).ok())
            .unwrap_or(prompt_start);
        let kept_start = self
            .groups
            .get(self.start_groups)
            .and_then(|group| self.node_slices.binary_search(&group.first).ok())
            .unwrap_or(0);
        // The kept start is worth a word only when truncation cut after it.
        let kept_start_included = if self.marker.is_some() {
            self.node_slices[..kept_start.min(self.node_slices.len())]
                .iter()
                .filter(|&&slice| self.slices[slice].is_included())
                .count()
        } else {
            0
        };
        let omitted = self.groups[..self.groups.len().saturating_sub(1)]
            .iter()
            .filter(|group| {
                self.slices[group.first].status == SliceStatus::Pruned(PruneReason::Truncated)
            })
            .map(|group| group.nodes)
            .sum::<usize>();
        let small_budget = self
            .small_room
            .filter(|_| omitted > 0)
            .map(|room| SmallBudget { room: clamp_u32(room), omitted });
        ContextPlan {
            reply_limit: reply_limit(self.profile, &self.snapshot.tree),
            kept_start: kept_start_included,
            step_cut: self.step_cut,
            small_budget,
            // Given up and then reached by the tail after all, the start is just history.
            start_given_up: self.start_given_up.filter(|_| {
                omitted > 0
                    && self.groups[..self.start_groups]
                        .iter()
                        .all(|group| !self.slices[group.first].is_included())
            }),
            ancestors: self.ancestors,
            available: self.available,
            used,
            tokenizer: self.tokenizer.id(),
            mode: self.snapshot.tree.mode,
            marker: self.marker,
            role_fills: self.fills,
            newly_counted: self.newly_counted,
            missing_summaries: self.missing,
            history: HistoryIndex {
                node_slices: self.node_slices,
                tail_start,
                kept_start,
                prompt_start,
                next_group: self.next_group,
            },
            slices: self.slices,
        }
    }
}

/// Below this history room, in tokens, truncateMiddle keeps no start, no marker and no step: a
/// provider caches no prompt shorter than 1,024 tokens (OpenAI's and Anthropic's least), so the
/// step buys nothing there, and a kept first turn or a marker costs as much as a recent turn.
pub(crate) const SMALL_HISTORY_ROOM: u64 = 1_024;

/// The most of the history's room a kept start may take, in percent.
pub(crate) const START_MAX_SHARE: u64 = 25;

/// A boundary cut shorter than this is not worth the notice that opens it.
const MIN_CUT_TOKENS: u64 = 32;

fn clamp_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// Orders instruction sources: tree scope first, then by position on the path.
fn scope_rank(path: &AncestorPath, snapshot: &Snapshot, scope: AttachmentScope) -> usize {
    match scope {
        AttachmentScope::Tree => 0,
        AttachmentScope::Thread(thread) => {
            1 + path
                .threads
                .iter()
                .position(|t| t.thread == thread)
                .map_or(0, |i| path.nodes.len().min(path.threads[i].start))
        }
        AttachmentScope::Node(id) => {
            2 + path.nodes.iter().position(|&i| snapshot.nodes[i].id == id).unwrap_or(0)
        }
    }
}
