//! The current thread's history: its messages grouped (a tool call with its results is one
//! group), the protected start and tail, and after selection the truncation marker and the
//! history index an incremental plan extends.

use crate::error::EngineError;
use crate::plan::{
    Origin, Provenance, PruneReason, Role, RoleFill, SliceKind, SliceStatus, SourceId,
    TruncationMarker,
};
use crate::settings::TruncationStrategy;
use crate::snapshot::{Author, ParentEdge, Part, TreeMode};

use super::{AncestorPath, Builder, Group, Need, ThreadSegment};

impl<'a> Builder<'a> {
    pub(super) fn collect_history(
        &mut self,
        path: &AncestorPath,
        current: ThreadSegment,
    ) -> Result<(), EngineError> {
        let compacted = self.collect_compaction(path, current);
        let (kept, plain_and_held) = self.push_history_nodes(path, current, compacted);
        let (groups, held) = self.group_tool_rounds(&kept, &plain_and_held);
        let Some(prompt) = groups.last().copied() else {
            return Err(EngineError::NoMessages);
        };
        self.protect_recent(&groups, &held, prompt, compacted);
        self.groups = groups;
        Ok(())
    }

    /// Each message of the current thread as a slice, those left out (compacted, excluded,
    /// soft-deleted, a note not asked for) decided at once: the slice indices of the kept ones,
    /// and for each whether it is a plain message (one text part by a person or a model: a group
    /// of its own) and whether the person keeps it, read here while the record is at hand.
    fn push_history_nodes(
        &mut self,
        path: &AncestorPath,
        current: ThreadSegment,
        compacted: usize,
    ) -> (Vec<usize>, Vec<(bool, bool)>) {
        let snapshot = self.snapshot;
        let mut kept: Vec<usize> = Vec::with_capacity(current.end - current.start);
        let mut plain_and_held: Vec<(bool, bool)> = Vec::with_capacity(current.end - current.start);
        for (position, &node_index) in path.nodes[current.start..current.end].iter().enumerate() {
            let node = &snapshot.nodes[node_index];
            let tokens = self.node_tokens(node_index);
            let why = if position < compacted {
                Some(PruneReason::Compacted)
            } else if node.excluded {
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
                    plain_and_held.push((
                        node.author != Author::Tool
                            && matches!(node.parts.as_slice(), [Part::Text(_)]),
                        node.kept,
                    ));
                }
            }
            if matches!(node.edge, ParentEdge::Annotation(_)) {
                // A note enters only when the person includes it: it is theirs, not the path's.
                self.slices[slice].provenance = Provenance::AddedByPerson;
            }
        }
        (kept, plain_and_held)
    }

    /// Tool rounds: a call and every one of its results form one group, kept or dropped
    /// together; a result without its call, or a call without all its results, is left out. The
    /// groups, and for each whether the person keeps a message of it.
    fn group_tool_rounds(
        &mut self,
        kept: &[usize],
        plain_and_held: &[(bool, bool)],
    ) -> (Vec<Group>, Vec<bool>) {
        let mut groups: Vec<Group> = Vec::with_capacity(kept.len());
        // Whether the person keeps a message of the group, for each group.
        let mut held: Vec<bool> = Vec::with_capacity(kept.len());
        let mut k = 0;
        while k < kept.len() {
            let slice = kept[k];
            if let (true, kept_by_person) = plain_and_held[k] {
                groups.push(Group { first: slice, last: slice, nodes: 1 });
                held.push(kept_by_person);
                k += 1;
                continue;
            }
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
                    for &slice_index in &kept[k..j] {
                        self.decide(slice_index, PruneReason::OrphanToolCall);
                    }
                    k = j;
                    continue;
                }
                let group = self.slices[slice].group;
                for &slice_index in &kept[k..j] {
                    self.slices[slice_index].group = group;
                }
                let group = Group { first: slice, last: kept[j - 1], nodes: j - k };
                groups.push(group);
                held.push((group.first..=group.last).any(|index| self.slice_kept(index)));
                k = j;
                continue;
            }
            groups.push(Group { first: slice, last: slice, nodes: 1 });
            held.push(node.kept);
            k += 1;
        }
        (groups, held)
    }

    /// The prompt, recent and old history by place; the prompt, the last N nodes and what the
    /// person keeps are required; truncateMiddle's kept start is marked (a thread whose start is
    /// compacted has it in the compaction).
    fn protect_recent(&mut self, groups: &[Group], held: &[bool], prompt: Group, compacted: usize) {
        let mut from_end_nodes = 0usize; // kept nodes after this group, prompt included
        let min_recent = self.settings.minimum_recent_nodes;
        let strategy_protects = self.settings.truncation != TruncationStrategy::StopAtLimit;
        for (group_index, group) in groups.iter().enumerate().rev() {
            let is_prompt = group_index == groups.len() - 1;
            let nodes_before_prompt_end = from_end_nodes.saturating_sub(prompt.nodes);
            let kind = if is_prompt {
                SliceKind::Prompt
            } else if nodes_before_prompt_end < self.settings.recent_history_size {
                SliceKind::RecentHistory
            } else {
                SliceKind::OldHistory
            };
            let protected = is_prompt
                || held[group_index]
                || (strategy_protects && from_end_nodes < min_recent);
            for slice_index in group.first..=group.last {
                if self.need[slice_index] == Need::Decided {
                    continue;
                }
                self.slices[slice_index].kind = kind;
                self.slices[slice_index].priority = self.settings.priorities.of(kind);
                if protected {
                    self.need[slice_index] = Need::Required;
                }
            }
            from_end_nodes += group.nodes;
        }
        // truncateMiddle's kept start: groups holding the first keep_start_nodes nodes; a thread
        // whose start is compacted has it in the compaction.
        if self.settings.truncation == TruncationStrategy::TruncateMiddle && compacted == 0 {
            let mut nodes = 0;
            for group in &groups[..groups.len() - 1] {
                if nodes >= self.settings.keep_start_nodes {
                    break;
                }
                nodes += group.nodes;
                self.start_groups += 1;
            }
        }
    }

    /// The slice of the current thread's compaction, when the snapshot has one whose last
    /// message is on the path before the prompt; returns how many of the thread's messages it
    /// stands for (0 when none, or when it no longer holds: its slice then says so).
    fn collect_compaction(&mut self, path: &AncestorPath, current: ThreadSegment) -> usize {
        let Some(compaction) = &self.snapshot.compaction else { return 0 };
        let nodes = &path.nodes[current.start..current.end];
        // The prompt is never compacted: a compaction ending at it or off the path does nothing.
        let Some(last) = nodes[..nodes.len().saturating_sub(1)]
            .iter()
            .position(|&index| self.snapshot.nodes[index].id == compaction.up_to)
        else {
            return 0;
        };
        let count = last + 1;
        let text = self
            .settings
            .compaction_framing
            .replace("{count}", &count.to_string())
            .replace("{text}", &compaction.text);
        let tokens = self.count(&text);
        let source = SourceId::Summary(current.thread);
        if compaction.stale.is_some() {
            self.push_with(
                SliceKind::Compaction,
                source,
                tokens,
                Origin::Text(text),
                Need::Decided,
                SliceStatus::Pruned(PruneReason::StaleCompaction),
                None,
            );
            return 0;
        }
        self.push(SliceKind::Compaction, source, tokens, Origin::Text(text), Need::Optional);
        count
    }

    /// Whether slice `i` is a search result whose message the history already carries.
    pub(super) fn twin_in_history(&self, i: usize) -> bool {
        // History of a lower priority number was decided before this slice's turn came; the
        // rest still reads as included only because nothing has been decided for it yet.
        self.slices[i].kind == SliceKind::SearchResult
            && self.twins.history_of(i).is_some_and(|history| {
                self.slices[history].is_included()
                    && (self.need[history] == Need::Required
                        || self.slices[history].priority < self.slices[i].priority)
            })
    }

    /// Places the marker at the first gap and the role fills the provider needs.
    pub(super) fn finalize_history(&mut self) {
        self.marker = None;
        self.fills.clear();
        let history = &self.groups;
        let mut omitted = 0usize;
        let mut gap_before: Option<usize> = None;
        let mut in_gap = false;
        for group in history {
            let included = self.slices[group.first].is_included();
            let truncated = matches!(
                self.slices[group.first].status,
                SliceStatus::Pruned(PruneReason::Truncated | PruneReason::ProviderRoleRule)
            );
            if truncated {
                omitted += group.nodes;
                in_gap = true;
            } else if included && in_gap && gap_before.is_none() {
                gap_before = Some(group.first);
                in_gap = false;
            }
        }
        // Under a small budget no marker is sent: it would cost a recent turn's room.
        if omitted > 0
            && let Some(before) = gap_before
            && self.settings.truncation != TruncationStrategy::StopAtLimit
            && self.small_room.is_none()
        {
            let text = self.marker_text(omitted);
            let tokens = self.count_marker(omitted as u64);
            self.marker = Some(TruncationMarker { before_slice: before, omitted, tokens, text });
        }
        if self.snapshot.tree.mode != TreeMode::Dialogue {
            return;
        }
        let rules = self.profile.role_rules;
        let mut previous: Option<Role> = None;
        let mut fills = Vec::new();
        for group in &self.groups {
            if !self.slices[group.first].is_included() {
                continue;
            }
            let marker_here = self.marker.as_ref().is_some_and(|m| m.before_slice == group.first);
            let node = self.node_of(group.first);
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
                fills.push((
                    group.first,
                    Role::Assistant,
                    self.settings.tool_to_user_bridge.clone(),
                ));
            }
            if marker_here {
                previous = Some(Role::User);
            }
            if previous.is_none() && rules.first_user && role != Role::User {
                fills.push((
                    group.first,
                    Role::User,
                    self.settings.leading_user_placeholder.clone(),
                ));
            }
            previous = Some(if group.nodes > 1 { Role::Tool } else { role });
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

    pub(super) fn prune_oldest_history(&mut self) -> bool {
        for group_index in 0..self.groups.len().saturating_sub(1) {
            let group = self.groups[group_index];
            if self.slices[group.first].is_included() && self.need[group.first] != Need::Required {
                self.group_status(&group, SliceStatus::Pruned(PruneReason::Truncated));
                return true;
            }
        }
        // The kept start is pruned last.
        for group_index in 0..self.start_groups.min(self.groups.len().saturating_sub(1)) {
            let group = self.groups[group_index];
            if self.slices[group.first].is_included()
                && self.need[group.first] == Need::Required
                && !self.is_protected(group_index)
            {
                self.group_status(&group, SliceStatus::Pruned(PruneReason::Truncated));
                return true;
            }
        }
        false
    }
}
