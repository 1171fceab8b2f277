//! Collection: every candidate slice of the path in the order a context is built (system
//! context, instructions and attachments, ancestor summaries or messages, pin results, search
//! results), each with its tokens and how selection may treat it.

use std::collections::HashSet;

use crate::error::EngineError;
use crate::permitted;
use crate::plan::{MissingSummary, Origin, PruneReason, SliceKind, SliceStatus, SourceId};
use crate::retrieval;
use crate::settings::{AssemblyStrategy, TaskFrameShares};
use crate::snapshot::{AttachmentKind, NodeId, Part, ThreadRef, TreeMode};

use super::{
    AncestorPath, Builder, Group, Need, ThreadSegment, Twins, choose_summary, file_block,
    folder_listing, scope_rank,
};

impl<'a> Builder<'a> {
    /// Builds every candidate slice in render order.
    pub(super) fn collect(&mut self, path: &AncestorPath) -> Result<(), EngineError> {
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
        system_parts.extend(instructions.into_iter().map(|(_, slice_index, t)| (slice_index, t)));
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
    pub(super) fn collect_retrieval(&mut self, path: &AncestorPath, current: ThreadSegment) {
        let snapshot = self.snapshot;
        self.first_search = self.slices.len();
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
        let mut twins = Vec::new();
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
                    twins.push((history, index));
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
        twins.retain(|&(_, search)| self.need[search] == Need::Optional);
        self.twins = Twins::new(twins);
    }

    /// The tokens the included search twins of a history group hold: what including the group
    /// gives back, since the message is then sent as history instead.
    pub(super) fn twin_refund(&self, group: &Group) -> u64 {
        if self.twins.is_empty() {
            return 0;
        }
        self.twins
            .in_range(group.first, group.last)
            .filter(|&search| self.slices[search].is_included())
            .map(|search| u64::from(self.slices[search].tokens))
            .sum()
    }

    /// The history now carries the group: its search twins leave the context.
    pub(super) fn retire_twins(&mut self, group: &Group) {
        if self.twins.is_empty() {
            return;
        }
        // Nearly always none: collecting them allocates nothing then.
        let twins: Vec<usize> = self.twins.in_range(group.first, group.last).collect();
        for search in twins {
            if self.slices[search].is_included() {
                self.decide(search, PruneReason::AlreadyInHistory);
            }
        }
    }

    pub(super) fn decide(&mut self, i: usize, why: PruneReason) {
        self.slices[i].status = SliceStatus::Pruned(why);
        self.need[i] = Need::Decided;
    }

    pub(super) fn collect_ancestors(&mut self, path: &AncestorPath, current: ThreadSegment) {
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
    pub(super) fn collect_pin_results(
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
}
