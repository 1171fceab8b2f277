//! From a snapshot to a context plan: ancestry, exclusion, system context, anchor, summaries by
//! depth budget, history under the truncation strategy, the priority table, role rules.

use std::collections::{HashMap, HashSet};

use crate::error::EngineError;
use crate::permitted;
use crate::plan::{
    ContextPlan, HistoryIndex, MissingSummary, Origin, Provenance, PruneReason, Role, RoleFill,
    Slice, SliceKind, SliceStatus, SourceId, TruncationMarker,
};
use crate::profile::ModelProfile;
use crate::retrieval;
use crate::settings::{AssemblyStrategy, Settings, TaskFrameShares, TruncationStrategy};
use crate::snapshot::{
    AttachmentKind, AttachmentScope, Author, NodeId, NodeRecord, ParentEdge, Part, Snapshot,
    ThreadRef, TreeInfo, TreeMode,
};
use crate::tokens::Tokenizer;

/// The root-first path from the tree's root to the active node, split into threads at pin edges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AncestorPath {
    /// Snapshot indices of the path's nodes, root first.
    pub nodes: Vec<usize>,
    /// The threads on the chain, root first; the last is the active node's thread.
    pub threads: Vec<ThreadSegment>,
}

/// One thread's stretch of the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadSegment {
    /// The thread.
    pub thread: ThreadRef,
    /// First position in [`AncestorPath::nodes`].
    pub start: usize,
    /// One past the last position.
    pub end: usize,
}

/// Walks from the active node up to the root and returns the path root-first.
///
/// The store usually hands the path already root-first, so each parent is looked for first just
/// before its child (no index built); anything else falls back to a hash index built once. A walk
/// longer than the node count must have revisited a node: that is the cycle check, in O(1) memory.
pub fn ancestry(snapshot: &Snapshot, max_thread_depth: usize) -> Result<AncestorPath, EngineError> {
    let nodes = &snapshot.nodes;
    let active = match nodes.last() {
        Some(last) if last.id == snapshot.active => nodes.len() - 1,
        _ => nodes
            .iter()
            .position(|n| n.id == snapshot.active)
            .ok_or(EngineError::ActiveNodeMissing(snapshot.active))?,
    };
    let mut index: Option<HashMap<NodeId, usize>> = None;
    let mut reversed = vec![active];
    let mut current = active;
    let mut pin_edges = 0usize;
    while let Some(parent) = nodes[current].edge.parent() {
        if let ParentEdge::Pin { .. } = nodes[current].edge {
            pin_edges += 1;
            if pin_edges + 1 > max_thread_depth {
                return Err(EngineError::DepthExceeded {
                    depth: pin_edges + 1,
                    limit: max_thread_depth,
                });
            }
        }
        if reversed.len() >= nodes.len() {
            return Err(EngineError::Cycle { at: parent });
        }
        let next = if current > 0 && nodes[current - 1].id == parent {
            current - 1
        } else {
            let index = index
                .get_or_insert_with(|| nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect());
            *index
                .get(&parent)
                .ok_or(EngineError::ParentMissing { node: nodes[current].id, parent })?
        };
        reversed.push(next);
        current = next;
    }
    reversed.reverse();
    let mut threads =
        vec![ThreadSegment { thread: ThreadRef::Root, start: 0, end: reversed.len() }];
    for (position, &i) in reversed.iter().enumerate() {
        if let ParentEdge::Pin { pin, .. } = nodes[i].edge {
            if let Some(last) = threads.last_mut() {
                last.end = position;
            }
            threads.push(ThreadSegment {
                thread: ThreadRef::Pin(pin),
                start: position,
                end: reversed.len(),
            });
        }
    }
    Ok(AncestorPath { nodes: reversed, threads })
}

/// The budget: window minus the reserve for the reply; a tree's token buffer replaces the reserve.
pub fn available_budget(profile: &ModelProfile, tree: &TreeInfo) -> u32 {
    let reserve = tree.token_buffer.unwrap_or(profile.reserve);
    profile.context_window.saturating_sub(reserve)
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
    next_group: u32,
    /// History groups of the current thread, oldest first; the last is the prompt group.
    groups: Vec<Group>,
    /// How many leading groups are the kept start.
    start_groups: usize,
    marker: Option<TruncationMarker>,
    fills: Vec<RoleFill>,
    node_slices: Vec<usize>,
    /// Search results whose message is in the current thread's history: history slice →
    /// search slice. Whichever of the two is in the context, the message is sent once.
    twins: HashMap<usize, usize>,
}

impl<'a> Builder<'a> {
    fn new(snapshot: &'a Snapshot, profile: &'a ModelProfile, settings: &'a Settings) -> Self {
        let buffer = snapshot.tree.mode == TreeMode::Buffer;
        Builder {
            snapshot,
            profile,
            settings,
            tokenizer: profile.tokenizer,
            // A buffer document has no per-message framing.
            overhead: if buffer { 0 } else { profile.message_overhead },
            available: available_budget(profile, &snapshot.tree),
            slices: Vec::new(),
            need: Vec::new(),
            newly_counted: Vec::new(),
            missing: Vec::new(),
            next_group: 0,
            groups: Vec::new(),
            start_groups: 0,
            marker: None,
            fills: Vec::new(),
            node_slices: Vec::new(),
            twins: HashMap::new(),
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

    /// Builds every candidate slice in render order.
    fn collect(&mut self, path: &AncestorPath) -> Result<(), EngineError> {
        let snapshot = self.snapshot;
        let settings = self.settings;
        let dialogue = snapshot.tree.mode == TreeMode::Dialogue;
        let system_on = dialogue || snapshot.tree.buffer_mode_system_context;
        let current = path.threads[path.threads.len() - 1];

        // System context: agent, then tree, then instruction sources (tree, thread, node scope in
        // path order). Never truncated.
        let mut system_parts: Vec<(SourceId, String)> = Vec::new();
        if !self.profile.system_prompt.is_empty() {
            system_parts.push((SourceId::AgentPrompt, self.profile.system_prompt.clone()));
        }
        if !snapshot.tree.system_context.is_empty() {
            system_parts.push((SourceId::TreeSystemContext, snapshot.tree.system_context.clone()));
        }
        let mut instructions: Vec<(usize, SourceId, String)> = Vec::new();
        for a in &snapshot.attachments {
            if let AttachmentKind::Instruction(text) = &a.kind
                && self.on_path(path, a.scope)
            {
                instructions.push((
                    scope_rank(path, snapshot, a.scope),
                    SourceId::Attachment(a.id),
                    text.clone(),
                ));
            }
        }
        instructions.sort_by_key(|(rank, ..)| *rank);
        system_parts.extend(instructions.into_iter().map(|(_, s, t)| (s, t)));
        for (source, text) in system_parts {
            if system_on {
                self.push_text(SliceKind::System, source, text, Need::Required);
            } else {
                self.pruned_text(
                    SliceKind::System,
                    source,
                    text,
                    PruneReason::BufferModeSystemContextOff,
                );
            }
        }

        if dialogue {
            for (i, tool) in snapshot.tools.iter().enumerate() {
                let text = format!("{}\n{}\n{}", tool.name, tool.description, tool.parameters);
                self.push_text(SliceKind::ToolDefinition, SourceId::Tool(i), text, Need::Optional);
            }
        }

        // Reference material: context sources, files, folders.
        for a in &snapshot.attachments {
            if !self.on_path(path, a.scope) {
                continue;
            }
            match &a.kind {
                AttachmentKind::Instruction(_) => {}
                AttachmentKind::Context { text, .. } => {
                    self.push_text(
                        SliceKind::ContextSource,
                        SourceId::Attachment(a.id),
                        text.clone(),
                        Need::Optional,
                    );
                }
                AttachmentKind::File { path: file, content, size_bytes } => {
                    let block = file_block(file, content);
                    if *size_bytes > settings.max_file_bytes {
                        self.pruned_text(
                            SliceKind::File,
                            SourceId::Attachment(a.id),
                            block,
                            PruneReason::FileTooLarge,
                        );
                    } else {
                        self.push_text(
                            SliceKind::File,
                            SourceId::Attachment(a.id),
                            block,
                            Need::Optional,
                        );
                    }
                }
                AttachmentKind::Folder { .. } => {}
            }
        }
        for a in &snapshot.attachments {
            if let AttachmentKind::Folder { path: folder, entries } = &a.kind
                && self.on_path(path, a.scope)
            {
                let listing = folder_listing(folder, entries, settings);
                self.push_text(
                    SliceKind::FolderListing,
                    SourceId::Attachment(a.id),
                    listing,
                    Need::Optional,
                );
            }
        }

        // Ancestor threads: by summary under depth budgets (task frames: root goal, path
        // summaries, sibling results, each within its share).
        self.collect_ancestors(path, current);

        // The current pin's anchor, verbatim, framed; none for a pin opened without a highlight.
        if let ThreadRef::Pin(pin_id) = current.thread
            && let Some(pin) = snapshot.pin(pin_id)
            && let Some(anchor) = &pin.anchor
        {
            let framed = settings.anchor_framing.replace("{anchor}", &anchor.text);
            self.push_text(SliceKind::Anchor, SourceId::Anchor(pin_id), framed, Need::Required);
        }

        self.collect_history(path, current)?;

        if !dialogue && !snapshot.working_buffer.is_empty() {
            let text = snapshot.working_buffer.clone();
            self.push_text(SliceKind::WorkingBuffer, SourceId::WorkingBuffer, text, Need::Required);
        }

        // Retrieval last: it knows the history, so a hit the history already carries is not
        // sent twice, and it renders right before the prompt (see `ContextPlan::slices`).
        self.collect_retrieval(path, current);
        Ok(())
    }

    /// The retrieval slice: candidates checked against the path (the rule of
    /// [`crate::permitted`]), filtered, scored, and chosen greedily within the slice's share,
    /// best first. A hit in the current thread's history is that message's *twin*: it competes
    /// for budget only while the history does not carry the message.
    fn collect_retrieval(&mut self, path: &AncestorPath, current: ThreadSegment) {
        let snapshot = self.snapshot;
        if snapshot.retrieval.is_empty() {
            return;
        }
        let settings = &self.settings.retrieval;
        let ids: Vec<NodeId> = snapshot.retrieval.iter().map(|c| c.node).collect();
        let positions = permitted::path_positions(snapshot, path, &ids);
        let best = snapshot.retrieval.iter().map(|c| c.bm25).fold(0.0_f64, f64::max);
        let scores: Vec<f64> = snapshot
            .retrieval
            .iter()
            .map(|c| retrieval::score(c, best, self.settings.now_ms, settings.weights))
            .collect();
        // Rendered best first; ties keep the store's order.
        let mut order: Vec<usize> = (0..snapshot.retrieval.len()).collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        let mut eligible = Vec::new();
        // A message offered twice (found by the search and added by the person) is weighed
        // once, at its best score.
        let mut offered = HashSet::new();
        for candidate_index in order {
            let candidate = &snapshot.retrieval[candidate_index];
            if !offered.insert(candidate.node) {
                continue;
            }
            let source = if candidate.added {
                SourceId::AddedSearchHit(candidate.node)
            } else {
                SourceId::Retrieval(candidate.node)
            };
            let position = positions[candidate_index];
            let on_path_node = position.map(|p| &snapshot.nodes[path.nodes[p]]);
            // The history slice of a hit in the current thread.
            let twin = position
                .filter(|&p| p >= current.start && p < current.end)
                .and_then(|p| self.node_slices.get(p - current.start).copied());
            let status = if position.is_none() && !candidate.added {
                SliceStatus::Pruned(PruneReason::OffPath)
            } else if position.is_some_and(|p| p < current.start) && !candidate.added {
                SliceStatus::Pruned(PruneReason::InAncestorThread)
            } else if on_path_node.is_some_and(|node| node.excluded) {
                SliceStatus::Pruned(PruneReason::Excluded)
            } else if on_path_node.is_some_and(|node| node.pruned) {
                SliceStatus::Pruned(PruneReason::SoftDeleted)
            } else if let Some(history) = twin
                && (self.need[history] == Need::Required || !self.slices[history].is_included())
            {
                match self.slices[history].status {
                    // Kept out of the history for what it is (excluded, an orphan tool part):
                    // the same holds for the search slice.
                    SliceStatus::Pruned(reason) => SliceStatus::Pruned(reason),
                    SliceStatus::Included => SliceStatus::Pruned(PruneReason::AlreadyInHistory),
                }
            } else if !candidate.added && !retrieval::passes(candidate, &settings.filters) {
                SliceStatus::Pruned(PruneReason::Filtered)
            } else {
                SliceStatus::Included
            };
            let text = self.settings.search_result_framing.replace("{text}", &candidate.text);
            let tokens = self.count(&text);
            let index = self.slices.len();
            let need = if status == SliceStatus::Included { Need::Optional } else { Need::Decided };
            self.push_with(
                SliceKind::SearchResult,
                source,
                tokens,
                Origin::Text(text),
                need,
                status,
                Some(scores[candidate_index]),
            );
            if status == SliceStatus::Included {
                eligible.push(index);
                if let Some(history) = twin {
                    self.twins.insert(history, index);
                }
            }
        }
        let share = u64::from(self.available) * u64::from(settings.share_percent) / 100;
        let scores: Vec<f64> =
            eligible.iter().map(|&i| self.slices[i].score.unwrap_or(0.0)).collect();
        let tokens: Vec<u32> = eligible.iter().map(|&i| self.slices[i].tokens).collect();
        let taken = retrieval::select_greedy(&scores, &tokens, share);
        for (k, &i) in eligible.iter().enumerate() {
            if !taken[k] {
                self.decide(i, PruneReason::OutsideShare);
            }
        }
        self.twins.retain(|_, search| self.need[*search] == Need::Optional);
    }

    /// The tokens the included search twins of a history group hold: what including the group
    /// gives back, since the message is then sent as history instead.
    fn twin_refund(&self, g: &Group) -> u64 {
        if self.twins.is_empty() {
            return 0;
        }
        (g.first..=g.last)
            .filter_map(|s| self.twins.get(&s))
            .filter(|&&search| self.slices[search].is_included())
            .map(|&search| u64::from(self.slices[search].tokens))
            .sum()
    }

    /// The history now carries group `g`: its search twins leave the context.
    fn retire_twins(&mut self, g: &Group) {
        if self.twins.is_empty() {
            return;
        }
        for s in g.first..=g.last {
            if let Some(&search) = self.twins.get(&s)
                && self.slices[search].is_included()
            {
                self.decide(search, PruneReason::AlreadyInHistory);
            }
        }
    }

    fn decide(&mut self, i: usize, why: PruneReason) {
        self.slices[i].status = SliceStatus::Pruned(why);
        self.need[i] = Need::Decided;
    }

    fn collect_ancestors(&mut self, path: &AncestorPath, current: ThreadSegment) {
        let snapshot = self.snapshot;
        let settings = self.settings;
        let ancestors = &path.threads[..path.threads.len() - 1];
        let frames = match settings.assembly {
            AssemblyStrategy::TaskFrames(shares) => Some(shares),
            AssemblyStrategy::Standard => None,
        };
        let available = self.available;
        let share_of = move |percent: u32| u64::from(available) * u64::from(percent) / 100;

        let mut summary_slices = Vec::new();
        for (i, seg) in ancestors.iter().enumerate() {
            let distance = ancestors.len() - i;
            let budget = settings.depth_budget(distance);
            let up_to = snapshot.nodes[path.nodes[seg.end - 1]].id;
            if frames.is_some() && seg.thread == ThreadRef::Root {
                // Task frames: the root thread contributes its goal, its first message.
                let goal = snapshot.nodes[path.nodes[seg.start]]
                    .parts
                    .iter()
                    .map(Part::text)
                    .collect::<Vec<_>>()
                    .join("\n");
                let start = self.slices.len();
                self.push_text(
                    SliceKind::RootGoal,
                    SourceId::Node(snapshot.nodes[path.nodes[seg.start]].id),
                    goal,
                    Need::Optional,
                );
                if let Some(shares) = frames
                    && u64::from(self.slices[start].tokens) > share_of(shares.root_goal)
                {
                    self.decide(start, PruneReason::OutsideShare);
                }
                continue;
            }
            let Some(summary) = choose_summary(snapshot, seg.thread, up_to, budget) else {
                self.missing.push(MissingSummary { thread: seg.thread, up_to, budget });
                continue;
            };
            let text = summary.text.clone();
            let source = SourceId::Summary(seg.thread);
            if text.trim().is_empty() {
                self.pruned_text(
                    SliceKind::AncestorSummary,
                    source,
                    text,
                    PruneReason::EmptySummary,
                );
                continue;
            }
            let index = self.slices.len();
            self.push_text(SliceKind::AncestorSummary, source, text, Need::Optional);
            // The depth budget bounds the summary's content; framing overhead is not the
            // summary's fault.
            if self.slices[index].tokens.saturating_sub(self.overhead) > budget {
                self.decide(index, PruneReason::OverDepthBudget);
            } else {
                summary_slices.push(index);
            }
        }
        if let Some(shares) = frames {
            // Path summaries within their share, nearest first.
            let mut used = 0u64;
            for &i in summary_slices.iter().rev() {
                let t = u64::from(self.slices[i].tokens);
                if used + t <= share_of(shares.path_summaries) {
                    used += t;
                } else {
                    self.decide(i, PruneReason::OutsideShare);
                }
            }
        }
        self.collect_pin_results(path, current, frames);
    }

    /// Results of closed pins that the path may carry: siblings of the current pin (the person
    /// opted in; within their share under task frames), and pins closed on the current thread's
    /// own path, whose results come back to the thread they were opened from.
    fn collect_pin_results(
        &mut self,
        path: &AncestorPath,
        current: ThreadSegment,
        frames: Option<TaskFrameShares>,
    ) {
        let snapshot = self.snapshot;
        let settings = self.settings;
        let available = self.available;
        let share_of = move |percent: u32| u64::from(available) * u64::from(percent) / 100;
        if let ThreadRef::Pin(current_pin) = current.thread
            && let Some(parent) = snapshot.pin(current_pin).map(|p| p.parent_thread)
        {
            let mut used = 0u64;
            for pin in &snapshot.pins {
                if pin.id == current_pin || pin.parent_thread != parent || !pin.closed {
                    continue;
                }
                let Some(result) = &pin.result else { continue };
                let source = SourceId::PinResult(pin.id);
                if !settings.include_closed_sibling_results {
                    self.pruned_text(
                        SliceKind::SiblingResult,
                        source,
                        result.clone(),
                        PruneReason::NotOptedIn,
                    );
                    continue;
                }
                let index = self.slices.len();
                self.push_text(SliceKind::SiblingResult, source, result.clone(), Need::Optional);
                if let Some(shares) = frames {
                    let t = u64::from(self.slices[index].tokens);
                    if used + t <= share_of(shares.sibling_results) {
                        used += t;
                    } else {
                        self.decide(index, PruneReason::OutsideShare);
                    }
                }
            }
        }
        let own = &path.nodes[current.start..current.end];
        for pin in &snapshot.pins {
            if pin.parent_thread != current.thread || !pin.closed {
                continue;
            }
            let (Some(result), Some(hangs_off)) = (&pin.result, pin.hangs_off) else { continue };
            if !own.iter().any(|&index| snapshot.nodes[index].id == hangs_off) {
                continue;
            }
            // Named by its title: the passage it was opened on is in the message on the path.
            let text = format!("Result of the sub-thread \"{}\":\n{result}", pin.title);
            self.push_text(SliceKind::PinResult, SourceId::PinResult(pin.id), text, Need::Optional);
        }
    }

    fn collect_history(
        &mut self,
        path: &AncestorPath,
        current: ThreadSegment,
    ) -> Result<(), EngineError> {
        let snapshot = self.snapshot;
        // Exclusion first: excluded, soft-deleted, annotations not asked for.
        let mut kept: Vec<usize> = Vec::new(); // slice indices of kept nodes
        for &node_index in &path.nodes[current.start..current.end] {
            let node = &snapshot.nodes[node_index];
            let tokens = self.node_tokens(node_index);
            let why = if node.excluded {
                Some(PruneReason::Excluded)
            } else if node.pruned {
                Some(PruneReason::SoftDeleted)
            } else if matches!(node.edge, ParentEdge::Annotation(_)) && !node.include_annotation {
                Some(PruneReason::Annotation)
            } else {
                None
            };
            let slice = self.slices.len();
            self.node_slices.push(slice);
            match why {
                Some(reason) => self.push_with(
                    SliceKind::OldHistory,
                    SourceId::Node(node.id),
                    tokens,
                    Origin::Node(node_index),
                    Need::Decided,
                    SliceStatus::Pruned(reason),
                    None,
                ),
                None => {
                    self.push(
                        SliceKind::OldHistory,
                        SourceId::Node(node.id),
                        tokens,
                        Origin::Node(node_index),
                        Need::Optional,
                    );
                    kept.push(slice);
                }
            }
            if matches!(node.edge, ParentEdge::Annotation(_)) {
                // A note enters only when the person includes it: it is theirs, not the path's.
                self.slices[slice].provenance = Provenance::AddedByPerson;
            }
        }
        // Tool groups: a call and every one of its results, kept or dropped together.
        let mut groups: Vec<Group> = Vec::new();
        let mut k = 0;
        while k < kept.len() {
            let slice = kept[k];
            let node = self.node_of(slice);
            if node.has_tool_result() || node.author == Author::Tool {
                self.decide(slice, PruneReason::OrphanToolResult);
                k += 1;
                continue;
            }
            if node.has_tool_call() {
                let mut pending: Vec<&str> = node
                    .parts
                    .iter()
                    .filter_map(|p| match p {
                        Part::ToolCall { id, .. } => Some(id.as_str()),
                        _ => None,
                    })
                    .collect();
                let mut j = k + 1;
                while j < kept.len() && !pending.is_empty() {
                    let next = self.node_of(kept[j]);
                    let answers: Vec<&str> = next
                        .parts
                        .iter()
                        .filter_map(|p| match p {
                            Part::ToolResult { call_id, .. } => Some(call_id.as_str()),
                            _ => None,
                        })
                        .collect();
                    if answers.is_empty() || !answers.iter().all(|a| pending.contains(a)) {
                        break;
                    }
                    pending.retain(|p| !answers.contains(p));
                    j += 1;
                }
                if !pending.is_empty() {
                    for &s in &kept[k..j] {
                        self.decide(s, PruneReason::OrphanToolCall);
                    }
                    k = j;
                    continue;
                }
                let group = self.slices[slice].group;
                for &s in &kept[k..j] {
                    self.slices[s].group = group;
                }
                groups.push(Group { first: slice, last: kept[j - 1], nodes: j - k });
                k = j;
                continue;
            }
            groups.push(Group { first: slice, last: slice, nodes: 1 });
            k += 1;
        }
        let Some(prompt) = groups.last().copied() else {
            return Err(EngineError::NoMessages);
        };
        // Prompt, recent and old history; the last N nodes and the prompt are required.
        let mut from_end_nodes = 0usize; // kept nodes after this group, prompt included
        let min_recent = self.settings.minimum_recent_nodes;
        let strategy_protects = self.settings.truncation != TruncationStrategy::StopAtLimit;
        for (gi, g) in groups.iter().enumerate().rev() {
            let is_prompt = gi == groups.len() - 1;
            let nodes_before_prompt_end = from_end_nodes.saturating_sub(prompt.nodes);
            let kind = if is_prompt {
                SliceKind::Prompt
            } else if nodes_before_prompt_end < self.settings.recent_history_size {
                SliceKind::RecentHistory
            } else {
                SliceKind::OldHistory
            };
            let kept = (g.first..=g.last).any(|s| self.slice_kept(s));
            let protected = is_prompt || kept || (strategy_protects && from_end_nodes < min_recent);
            for s in g.first..=g.last {
                if self.need[s] == Need::Decided {
                    continue;
                }
                self.slices[s].kind = kind;
                self.slices[s].priority = self.settings.priorities.of(kind);
                if protected {
                    self.need[s] = Need::Required;
                }
            }
            from_end_nodes += g.nodes;
        }
        // truncateMiddle's kept start: groups holding the first keep_start_nodes nodes.
        if self.settings.truncation == TruncationStrategy::TruncateMiddle {
            let mut nodes = 0;
            for g in &groups[..groups.len() - 1] {
                if nodes >= self.settings.keep_start_nodes {
                    break;
                }
                nodes += g.nodes;
                self.start_groups += 1;
            }
        }
        self.groups = groups;
        Ok(())
    }

    fn node_of(&self, slice: usize) -> &'a NodeRecord {
        match self.slices[slice].origin {
            Origin::Node(i) | Origin::Cut { node: i, .. } => &self.snapshot.nodes[i],
            Origin::Text(_) => unreachable!("history slices always come from nodes"),
        }
    }

    fn group_tokens(&self, g: &Group) -> u64 {
        (g.first..=g.last)
            .filter(|&s| self.need[s] != Need::Decided)
            .map(|s| u64::from(self.slices[s].tokens))
            .sum()
    }

    fn group_status(&mut self, g: &Group, status: SliceStatus) {
        for s in g.first..=g.last {
            if self.need[s] != Need::Decided {
                self.slices[s].status = status;
            }
        }
    }

    /// Applies the budget.
    fn select(&mut self) -> Result<(), EngineError> {
        let available = u64::from(self.available);
        let system: u64 =
            self.sum(|b, i| b.slices[i].kind == SliceKind::System && b.need[i] == Need::Required);
        if system > available {
            return Err(EngineError::SystemContextOverBudget {
                system: clamp_u32(system),
                available: self.available,
            });
        }
        let required: u64 = self.sum(|b, i| b.need[i] == Need::Required);
        let optional: u64 = self.sum(|b, i| b.need[i] == Need::Optional);
        // A leading user fill may be needed whatever is kept; reserve it with the required part.
        let fill_reserve = self.fill_reserve();
        // What may never be cut is checked first: when it alone does not fit, no exclusion of
        // the rest would help, so a stop-at-the-limit refusal naming some would mislead.
        if required + fill_reserve > available {
            return Err(EngineError::RequiredOverBudget {
                required: clamp_u32(required + fill_reserve),
                available: self.available,
                minimum_recent: self.settings.minimum_recent_nodes,
            });
        }
        if self.settings.truncation == TruncationStrategy::StopAtLimit
            && required + optional + fill_reserve > available
        {
            return Err(self.stop_at_limit(required + optional + fill_reserve));
        }
        let mut used = required + fill_reserve;
        if used + optional > available {
            let history_total = self.groups.len().saturating_sub(1);
            let marker_reserve = if history_total > 0 { self.marker_reserve() } else { 0 };
            used += marker_reserve;
            self.fill_by_priority(&mut used, available);
            self.step_the_tail(&mut used, available);
        }
        // Whatever fitted, a message goes once: as history when the history carries it. A hit
        // the share or the budget left out says so too, which is the more useful reason.
        let carried: HashSet<NodeId> = self
            .slices
            .iter()
            .filter(|slice| {
                slice.is_included() && (slice.kind.is_history() || slice.kind == SliceKind::Prompt)
            })
            .filter_map(|slice| match slice.source {
                SourceId::Node(id) => Some(id),
                _ => None,
            })
            .collect();
        let sent_as_history: Vec<usize> = (0..self.slices.len())
            .filter(|&i| {
                let slice = &self.slices[i];
                let (SourceId::Retrieval(id) | SourceId::AddedSearchHit(id)) = slice.source else {
                    return false;
                };
                carried.contains(&id)
                    && matches!(
                        slice.status,
                        SliceStatus::Included
                            | SliceStatus::Pruned(
                                PruneReason::OutsideShare | PruneReason::OverBudget
                            )
                    )
            })
            .collect();
        for search in sent_as_history {
            self.decide(search, PruneReason::AlreadyInHistory);
        }
        self.finalize_history();
        // Role fills and the final marker can differ from their reservations: prune the oldest
        // kept history until the total fits (nearly always a no-op).
        while self.total_used() > available {
            if !self.prune_oldest_history() {
                return Err(EngineError::RequiredOverBudget {
                    required: clamp_u32(self.total_used()),
                    available: self.available,
                    minimum_recent: self.settings.minimum_recent_nodes,
                });
            }
            self.finalize_history();
        }
        if self.settings.cut_boundary_message {
            self.cut_boundary(available);
        }
        Ok(())
    }

    /// Fills what the budget has left with the end of the newest message truncation dropped, cut
    /// at a token boundary. It is the only text a plan tokenizes beyond cached counts. Nothing
    /// changes unless the result fits: the marker and role fills are placed again and checked.
    fn cut_boundary(&mut self, available: u64) {
        if self.settings.truncation == TruncationStrategy::StopAtLimit {
            return;
        }
        let Some(gi) = (0..self.groups.len().saturating_sub(1)).rev().find(|&gi| {
            self.slices[self.groups[gi].first].status == SliceStatus::Pruned(PruneReason::Truncated)
        }) else {
            return;
        };
        let g = self.groups[gi];
        // A message the search slice carries whole is not sent a second time in part.
        if (g.first..=g.last)
            .any(|s| self.twins.get(&s).is_some_and(|&search| self.slices[search].is_included()))
        {
            return;
        }
        // Tool calls and results are never cut: only a one-node group of one text part.
        let Origin::Node(n) = self.slices[g.first].origin else { return };
        let node = &self.snapshot.nodes[n];
        let [Part::Text(whole)] = node.parts.as_slice() else { return };
        if g.first != g.last {
            return;
        }
        let notice = &self.settings.cut_message_notice;
        let spare = available.saturating_sub(self.total_used());
        let room = spare
            .saturating_sub(u64::from(self.overhead))
            .saturating_sub(u64::from(self.tokenizer.count_u32(notice)));
        if room < MIN_CUT_TOKENS {
            return;
        }
        let tail = self.tokenizer.tail_within(whole, room);
        if tail.trim().is_empty() || tail.len() == whole.len() {
            return;
        }
        let text = format!("{notice}{tail}");
        let tokens = self.count(&text);
        // With its notice, the end of a short message can cost as much as the whole.
        if tokens >= self.slices[g.first].tokens {
            return;
        }
        let before = (self.slices[g.first].clone(), self.marker.clone(), self.fills.clone());
        let slice = &mut self.slices[g.first];
        slice.cut_from = Some(slice.tokens);
        slice.tokens = tokens;
        slice.status = SliceStatus::Included;
        slice.origin = Origin::Cut { node: n, text };
        self.finalize_history();
        if self.total_used() > available {
            (self.slices[g.first], self.marker, self.fills) = before;
        }
    }

    fn sum(&self, pick: impl Fn(&Self, usize) -> bool) -> u64 {
        (0..self.slices.len())
            .filter(|&i| pick(self, i))
            .map(|i| u64::from(self.slices[i].tokens))
            .sum()
    }

    fn total_used(&self) -> u64 {
        let slices: u64 =
            self.slices.iter().filter(|s| s.is_included()).map(|s| u64::from(s.tokens)).sum();
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
        let widest =
            "9".repeat(self.groups.iter().map(|g| g.nodes).sum::<usize>().to_string().len());
        let text = self.settings.truncation_marker.replace("{count}", &widest);
        u64::from(self.count(&text)) + 2
    }

    /// The stopAtLimit error: the prunable items, in pruning order, whose removal makes it fit.
    fn stop_at_limit(&self, needed: u64) -> EngineError {
        let available = u64::from(self.available);
        let mut order: Vec<usize> =
            (0..self.slices.len()).filter(|&i| self.need[i] == Need::Optional).collect();
        // Highest priority number first; oldest first within history.
        order.sort_by(|&a, &b| {
            self.slices[b].priority.cmp(&self.slices[a].priority).then(a.cmp(&b))
        });
        let mut exclude = Vec::new();
        let mut remaining = needed;
        for i in order {
            if remaining <= available {
                break;
            }
            remaining -= u64::from(self.slices[i].tokens);
            exclude.push(self.slices[i].source);
        }
        EngineError::StopAtLimit { needed: clamp_u32(needed), available: self.available, exclude }
    }

    fn fill_by_priority(&mut self, used: &mut u64, available: u64) {
        // Pools: non-history kinds item by item; history by the truncation strategy.
        let mut priorities: Vec<u8> = (0..self.slices.len())
            .filter(|&i| self.need[i] == Need::Optional)
            .map(|i| self.slices[i].priority)
            .collect();
        priorities.sort_unstable();
        priorities.dedup();
        let mut tail_open = true;
        let mut start_done = false;
        for priority in priorities {
            for i in 0..self.slices.len() {
                if self.need[i] != Need::Optional
                    || self.slices[i].priority != priority
                    || self.slices[i].kind.is_history()
                {
                    continue;
                }
                if self.twin_in_history(i) {
                    self.decide(i, PruneReason::AlreadyInHistory);
                    continue;
                }
                let t = u64::from(self.slices[i].tokens);
                if *used + t <= available {
                    *used += t;
                } else {
                    self.slices[i].status = SliceStatus::Pruned(PruneReason::OverBudget);
                }
            }
            let history_here: Vec<usize> = (0..self.groups.len().saturating_sub(1))
                .filter(|&gi| {
                    let g = self.groups[gi];
                    self.need[g.first] == Need::Optional
                        && self.slices[g.first].priority == priority
                })
                .collect();
            if history_here.is_empty() {
                continue;
            }
            // truncateMiddle keeps the start first, when it can.
            if !start_done {
                start_done = true;
                for gi in 0..self.start_groups {
                    let g = self.groups[gi];
                    if self.need[g.first] != Need::Optional {
                        continue;
                    }
                    let t = self.group_tokens(&g);
                    let refund = self.twin_refund(&g);
                    if *used + t <= available + refund {
                        *used = *used + t - refund;
                        self.retire_twins(&g);
                        self.mark_group(&g, Need::Required);
                    } else {
                        self.group_status(&g, SliceStatus::Pruned(PruneReason::Truncated));
                        self.mark_group(&g, Need::Decided);
                    }
                }
            }
            for &gi in history_here.iter().rev() {
                let g = self.groups[gi];
                if self.need[g.first] != Need::Optional {
                    continue;
                }
                let t = self.group_tokens(&g);
                let refund = self.twin_refund(&g);
                if tail_open && *used + t <= available + refund {
                    *used = *used + t - refund;
                    self.retire_twins(&g);
                } else {
                    tail_open = false;
                    self.group_status(&g, SliceStatus::Pruned(PruneReason::Truncated));
                }
            }
        }
    }

    /// Whether slice `i` is a search result whose message the history already carries.
    fn twin_in_history(&self, i: usize) -> bool {
        // History of a lower priority number was decided before this slice's turn came; the
        // rest still reads as included only because nothing has been decided for it yet.
        self.slices[i].kind == SliceKind::SearchResult
            && self.twins.iter().any(|(&history, &search)| {
                search == i
                    && self.slices[history].is_included()
                    && (self.need[history] == Need::Required
                        || self.slices[history].priority < self.slices[i].priority)
            })
    }

    /// truncateMiddle's steps (`Settings::truncation_step_percent`): when truncation cut the
    /// history, the kept tail starts at a step boundary rather than at the oldest message that
    /// fits. Boundaries are counted in tokens from the thread's start, so they stay where they
    /// are as the thread grows; the tail's start, the marker and everything before them then
    /// stay byte-identical from one request to the next until the tail outgrows its room.
    fn step_the_tail(&mut self, used: &mut u64, available: u64) {
        let percent = self.settings.truncation_step_percent;
        if percent == 0 || self.settings.truncation != TruncationStrategy::TruncateMiddle {
            return;
        }
        let prompt = self.groups.len().saturating_sub(1);
        let truncated = SliceStatus::Pruned(PruneReason::Truncated);
        if !(self.start_groups..prompt)
            .any(|gi| self.slices[self.groups[gi].first].status == truncated)
        {
            return;
        }
        let Some(oldest) = (self.start_groups..prompt).find(|&gi| {
            let first = self.groups[gi].first;
            self.slices[first].is_included() && self.need[first] == Need::Optional
        }) else {
            return;
        };
        // The room history has beside what stays put from one request to the next (system,
        // attachments, summaries, anchor, the kept start); search results change every turn
        // and are not counted, or the boundaries would move with them.
        let stable: u64 = (0..self.slices.len())
            .filter(|&i| {
                let slice = &self.slices[i];
                slice.is_included()
                    && !slice.kind.is_history()
                    && !matches!(slice.kind, SliceKind::Prompt | SliceKind::SearchResult)
            })
            .map(|i| u64::from(self.slices[i].tokens))
            .sum::<u64>()
            + (0..self.start_groups)
                .filter(|&gi| self.slices[self.groups[gi].first].is_included())
                .map(|gi| self.group_tokens(&self.groups[gi]))
                .sum::<u64>();
        let step = (available.saturating_sub(stable) * u64::from(percent) / 100).max(1);
        // A group starts a block when the tokens before it reach a block its predecessor's
        // start did not.
        let mut before = 0u64;
        let mut previous_block = None;
        let mut boundary = prompt;
        for gi in 0..prompt {
            let block = before / step;
            if gi >= oldest && previous_block != Some(block) {
                boundary = gi;
                break;
            }
            previous_block = Some(block);
            before += self.group_tokens(&self.groups[gi]).max(1);
        }
        for gi in oldest..boundary {
            let g = self.groups[gi];
            if self.need[g.first] != Need::Optional || !self.slices[g.first].is_included() {
                continue;
            }
            *used = used.saturating_sub(self.group_tokens(&g));
            self.group_status(&g, truncated);
            // Its search twin may carry the message again if it still fits.
            for s in g.first..=g.last {
                if let Some(&search) = self.twins.get(&s)
                    && self.slices[search].status
                        == SliceStatus::Pruned(PruneReason::AlreadyInHistory)
                {
                    let tokens = u64::from(self.slices[search].tokens);
                    if *used + tokens <= available {
                        *used += tokens;
                        self.slices[search].status = SliceStatus::Included;
                        self.need[search] = Need::Optional;
                    }
                }
            }
        }
    }

    fn mark_group(&mut self, g: &Group, need: Need) {
        for s in g.first..=g.last {
            if self.need[s] != Need::Decided {
                self.need[s] = need;
            }
        }
    }

    /// Places the marker at the first gap and the role fills the provider needs.
    fn finalize_history(&mut self) {
        self.marker = None;
        self.fills.clear();
        let history = &self.groups;
        let mut omitted = 0usize;
        let mut gap_before: Option<usize> = None;
        let mut in_gap = false;
        for g in history {
            let included = self.slices[g.first].is_included();
            let truncated = matches!(
                self.slices[g.first].status,
                SliceStatus::Pruned(PruneReason::Truncated | PruneReason::ProviderRoleRule)
            );
            if truncated {
                omitted += g.nodes;
                in_gap = true;
            } else if included && in_gap && gap_before.is_none() {
                gap_before = Some(g.first);
                in_gap = false;
            }
        }
        if omitted > 0
            && let Some(before) = gap_before
            && self.settings.truncation != TruncationStrategy::StopAtLimit
        {
            let text = self.marker_text(omitted);
            let tokens = self.count(&text);
            self.marker = Some(TruncationMarker { before_slice: before, omitted, tokens, text });
        }
        if self.snapshot.tree.mode != TreeMode::Dialogue {
            return;
        }
        let rules = self.profile.role_rules;
        let mut previous: Option<Role> = None;
        let mut fills = Vec::new();
        for g in &self.groups {
            if !self.slices[g.first].is_included() {
                continue;
            }
            let marker_here = self.marker.as_ref().is_some_and(|m| m.before_slice == g.first);
            let node = self.node_of(g.first);
            let mut role = match node.author {
                Author::Human => Role::User,
                Author::Model => Role::Assistant,
                Author::Tool => Role::Tool,
            };
            if rules.strict_alternation && role == Role::Tool {
                role = Role::User;
            }
            if rules.assistant_between_tool_and_user
                && previous == Some(Role::Tool)
                && (role == Role::User || marker_here)
            {
                fills.push((g.first, Role::Assistant, self.settings.tool_to_user_bridge.clone()));
            }
            if marker_here {
                previous = Some(Role::User);
            }
            if previous.is_none() && rules.first_user && role != Role::User {
                fills.push((g.first, Role::User, self.settings.leading_user_placeholder.clone()));
            }
            previous = Some(if g.nodes > 1 { Role::Tool } else { role });
            if rules.strict_alternation && previous == Some(Role::Tool) {
                previous = Some(Role::User);
            }
        }
        self.fills = fills
            .into_iter()
            .map(|(before_slice, role, text)| {
                let tokens = self.count(&text);
                RoleFill { before_slice, role, text, tokens }
            })
            .collect();
    }

    fn prune_oldest_history(&mut self) -> bool {
        for gi in 0..self.groups.len().saturating_sub(1) {
            let g = self.groups[gi];
            if self.slices[g.first].is_included() && self.need[g.first] != Need::Required {
                self.group_status(&g, SliceStatus::Pruned(PruneReason::Truncated));
                return true;
            }
        }
        // The kept start is pruned last.
        for gi in 0..self.start_groups.min(self.groups.len().saturating_sub(1)) {
            let g = self.groups[gi];
            if self.slices[g.first].is_included()
                && self.need[g.first] == Need::Required
                && !self.is_protected(gi)
            {
                self.group_status(&g, SliceStatus::Pruned(PruneReason::Truncated));
                return true;
            }
        }
        false
    }

    fn is_protected(&self, gi: usize) -> bool {
        let after: usize = self.groups[gi..].iter().map(|g| g.nodes).sum();
        let g = self.groups[gi];
        after <= self.settings.minimum_recent_nodes
            || gi == self.groups.len() - 1
            || (g.first..=g.last).any(|s| self.slice_kept(s))
    }

    /// Whether slice `s` is a node the user asked to keep.
    fn slice_kept(&self, s: usize) -> bool {
        matches!(self.slices[s].origin, Origin::Node(i) if self.snapshot.nodes[i].kept)
    }

    fn finish(self) -> ContextPlan {
        let used = clamp_u32(self.total_used());
        let prompt_start = self
            .groups
            .last()
            .and_then(|g| self.node_slices.iter().position(|&s| s == g.first))
            .unwrap_or(0);
        let tail_start = self
            .groups
            .iter()
            .enumerate()
            .skip(self.start_groups)
            .find(|(_, g)| self.slices[g.first].is_included())
            .and_then(|(_, g)| self.node_slices.iter().position(|&s| s == g.first))
            .unwrap_or(prompt_start);
        let kept_start = self
            .groups
            .get(self.start_groups)
            .and_then(|g| self.node_slices.iter().position(|&s| s == g.first))
            .unwrap_or(0);
        ContextPlan {
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

/// Picks the summary of `thread` ending at `up_to` for a depth budget: one written for exactly
/// that budget, else the newest written by hand, else the largest written for a smaller budget.
/// A summary that ends elsewhere covers nodes that are not ancestors and is never used.
fn choose_summary(
    snapshot: &Snapshot,
    thread: ThreadRef,
    up_to: NodeId,
    budget: u32,
) -> Option<&crate::snapshot::SummaryRecord> {
    let mut matching = snapshot.summaries.iter().filter(|s| s.thread == thread && s.up_to == up_to);
    let all: Vec<_> = matching.by_ref().collect();
    all.iter()
        .rev()
        .find(|s| s.budget == Some(budget))
        .or_else(|| all.iter().rev().find(|s| s.budget.is_none()))
        .or_else(|| {
            all.iter().filter(|s| s.budget.is_some_and(|b| b < budget)).max_by_key(|s| s.budget)
        })
        .copied()
}

/// Seed 004's file block.
pub fn file_block(path: &str, content: &str) -> String {
    format!("--- file: {path} ---\n{content}")
}

/// A folder listing: at most `max_folder_entries` entries, excluded patterns left out.
pub fn folder_listing(folder: &str, entries: &[String], settings: &Settings) -> String {
    let mut out = format!("--- folder: {folder} ---");
    let shown = entries
        .iter()
        .filter(|entry| !excluded_from_listing(&settings.folder_exclude, entry))
        .take(settings.max_folder_entries);
    for entry in shown {
        out.push('\n');
        out.push_str(entry);
    }
    out
}

/// Whether `path` (relative, `/`-separated; a folder's ends with `/`) is left out of a folder
/// listing by `patterns`: the one rule for both walking a folder when it is attached and showing
/// its listing in a context.
pub fn excluded_from_listing(patterns: &[String], path: &str) -> bool {
    patterns.iter().any(|pattern| glob_matches(pattern, path))
}

/// The two glob shapes seed 004's exclusions use: `**/name/**` (a path component) and `**/*.ext`
/// (a file-name suffix); anything else matches the whole path literally.
fn glob_matches(pattern: &str, path: &str) -> bool {
    if let Some(name) = pattern.strip_prefix("**/").and_then(|p| p.strip_suffix("/**")) {
        return path.split('/').any(|c| c == name);
    }
    if let Some(suffix) = pattern.strip_prefix("**/*") {
        return path.rsplit('/').next().is_some_and(|f| f.ends_with(suffix));
    }
    pattern == path
}
