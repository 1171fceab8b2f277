//! Selection: what fits the budget. Required slices first, then the truncation strategy over
//! the history, then optional slices by the priority table; under stopAtLimit, a refusal that
//! names what to exclude instead.

use crate::error::EngineError;
use crate::plan::{Origin, PruneReason, SliceKind, SliceStatus, SourceId, StartGivenUp, StepCut};
use crate::settings::TruncationStrategy;
use crate::snapshot::{NodeId, Part};

use super::{Builder, Group, MIN_CUT_TOKENS, Need, SMALL_HISTORY_ROOM, START_MAX_SHARE, clamp_u32};

impl<'a> Builder<'a> {
    /// Applies the budget.
    pub(super) fn select(&mut self) -> Result<(), EngineError> {
        let available = u64::from(self.available);
        // One pass for the three totals: a long thread's slices are read once, not three times.
        let (mut system, mut required, mut optional) = (0_u64, 0_u64, 0_u64);
        for (slice, need) in self.slices.iter().zip(&self.need) {
            let tokens = u64::from(slice.tokens);
            match need {
                Need::Required if slice.kind == SliceKind::System => {
                    system += tokens;
                    required += tokens;
                }
                Need::Required => required += tokens,
                Need::Optional => optional += tokens,
                Need::Decided => {}
            }
        }
        if system > available {
            return Err(EngineError::SystemContextOverBudget {
                system: clamp_u32(system),
                available: self.available,
            });
        }
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
            // The history's room: the budget beside what is never cut. Under a small one,
            // truncateMiddle gives up its start, marker and step before any recent turn.
            let room = available.saturating_sub(used);
            if self.settings.truncation == TruncationStrategy::TruncateMiddle
                && history_total > 0
                && room < SMALL_HISTORY_ROOM
            {
                self.small_room = Some(room);
            }
            let marker_reserve = if history_total > 0 && self.small_room.is_none() {
                self.marker_reserve()
            } else {
                0
            };
            used += marker_reserve;
            self.fill_by_priority(&mut used, available);
            if self.small_room.is_none() {
                self.step_the_tail(&mut used, available);
            }
        }
        // Whatever fitted, a message goes once: as history when the history carries it. A hit
        // the share or the budget left out says so too, which is the more useful reason.
        let sent_as_history = self.search_hits_sent_as_history();
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

    /// The search slices whose message the context sends as history or as the prompt, among
    /// those included or left out for space: the history's slices are scanned only when there
    /// are some, and each is looked for among them by binary search (an imported tree's picks may
    /// be thousands; a thread's history is as long as the thread).
    fn search_hits_sent_as_history(&self) -> Vec<usize> {
        let mut searched: Vec<(NodeId, usize)> = (self.first_search.min(self.slices.len())
            ..self.slices.len())
            .filter_map(|i| {
                let slice = &self.slices[i];
                let (SourceId::Retrieval(id) | SourceId::AddedSearchHit(id)) = slice.source else {
                    return None;
                };
                matches!(
                    slice.status,
                    SliceStatus::Included
                        | SliceStatus::Pruned(PruneReason::OutsideShare | PruneReason::OverBudget)
                )
                .then_some((id, i))
            })
            .collect();
        if searched.is_empty() {
            return Vec::new();
        }
        searched.sort_unstable();
        let mut sent = Vec::new();
        // The history and the prompt: the current thread's message slices.
        for &history in &self.node_slices {
            let slice = &self.slices[history];
            let SourceId::Node(id) = slice.source else { continue };
            if !slice.is_included() {
                continue;
            }
            let from = searched.partition_point(|&(searched_id, _)| searched_id < id);
            sent.extend(
                searched[from..].iter().take_while(|&&(other, _)| other == id).map(|&(_, i)| i),
            );
        }
        sent.sort_unstable();
        sent.dedup();
        sent
    }

    /// Fills what the budget has left with the end of the newest message truncation dropped, cut
    /// at a token boundary. It is the only text a plan tokenizes beyond cached counts. Nothing
    /// changes unless the result fits: the marker and role fills are placed again and checked.
    pub(super) fn cut_boundary(&mut self, available: u64) {
        if self.settings.truncation == TruncationStrategy::StopAtLimit {
            return;
        }
        let Some(group_index) =
            (0..self.groups.len().saturating_sub(1)).rev().find(|&group_index| {
                self.slices[self.groups[group_index].first].status
                    == SliceStatus::Pruned(PruneReason::Truncated)
            })
        else {
            return;
        };
        let group = self.groups[group_index];
        // A message the search slice carries whole is not sent a second time in part.
        if self
            .twins
            .in_range(group.first, group.last)
            .any(|search| self.slices[search].is_included())
        {
            return;
        }
        // Tool calls and results are never cut: only a one-node group of one text part.
        let Origin::Node(n) = self.slices[group.first].origin else { return };
        let node = &self.snapshot.nodes[n];
        let [Part::Text(whole)] = node.parts.as_slice() else { return };
        if group.first != group.last {
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
        if tokens >= self.slices[group.first].tokens {
            return;
        }
        let before = (self.slices[group.first].clone(), self.marker.clone(), self.fills.clone());
        let slice = &mut self.slices[group.first];
        slice.cut_from = Some(slice.tokens);
        slice.tokens = tokens;
        slice.status = SliceStatus::Included;
        slice.origin = Origin::Cut { node: n, text };
        self.finalize_history();
        if self.total_used() > available {
            (self.slices[group.first], self.marker, self.fills) = before;
        }
    }

    /// The stopAtLimit error: the prunable items, in pruning order, whose removal makes it fit.
    pub(super) fn stop_at_limit(&self, needed: u64) -> EngineError {
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

    pub(super) fn fill_by_priority(&mut self, used: &mut u64, available: u64) {
        // Pools: non-history kinds item by item; history by the truncation strategy. Each pool
        // is listed once, ordered by priority (a priority is a byte, so the history's thousands
        // of groups are placed by counting, not sorted): a slice only ever leaves the optional
        // ones while the budget is filled, so each is checked again when its turn comes.
        let mut present = [false; 256];
        let mut items: Vec<(u8, usize)> = Vec::new();
        for (i, (slice, need)) in self.slices.iter().zip(&self.need).enumerate() {
            if *need != Need::Optional {
                continue;
            }
            present[usize::from(slice.priority)] = true;
            if !slice.kind.is_history() {
                items.push((slice.priority, i));
            }
        }
        items.sort_by_key(|&(priority, _)| priority);
        let optional_groups = || {
            (0..self.groups.len().saturating_sub(1))
                .filter(|&group_index| self.need[self.groups[group_index].first] == Need::Optional)
        };
        // starts[p]..starts[p + 1]: the groups of priority p in `history`, oldest first.
        let mut starts = [0_usize; 257];
        for group_index in optional_groups() {
            starts[usize::from(self.slices[self.groups[group_index].first].priority) + 1] += 1;
        }
        for p in 1..starts.len() {
            starts[p] += starts[p - 1];
        }
        let mut history = vec![0_usize; starts[256]];
        let mut placed = starts;
        for group_index in optional_groups() {
            let p = usize::from(self.slices[self.groups[group_index].first].priority);
            history[placed[p]] = group_index;
            placed[p] += 1;
        }
        let mut tail_open = true;
        let mut start_done = false;
        let mut next_item = 0;
        let mut cut_pdfs: Vec<u64> = Vec::new();
        for priority in (0..=u8::MAX).filter(|&p| present[usize::from(p)]) {
            while next_item < items.len() && items[next_item].0 <= priority {
                let i = items[next_item].1;
                next_item += 1;
                if self.need[i] != Need::Optional {
                    continue;
                }
                if self.twin_in_history(i) {
                    self.decide(i, PruneReason::AlreadyInHistory);
                    continue;
                }
                // A PDF is kept from its first page on: once a page is cut, so are the rest,
                // rather than a later, shorter page filling the gap out of order.
                let pdf = match self.slices[i].source {
                    SourceId::PdfPage { attachment, .. } => Some(attachment),
                    _ => None,
                };
                if let Some(attachment) = pdf
                    && cut_pdfs.contains(&attachment)
                {
                    self.slices[i].status = SliceStatus::Pruned(PruneReason::AfterCutPage);
                    continue;
                }
                let t = u64::from(self.slices[i].tokens);
                if *used + t <= available {
                    *used += t;
                } else {
                    self.slices[i].status = SliceStatus::Pruned(PruneReason::OverBudget);
                    cut_pdfs.extend(pdf);
                }
            }
            let at = usize::from(priority);
            let history_here: Vec<usize> = history[starts[at]..starts[at + 1]]
                .iter()
                .copied()
                .filter(|&group_index| self.need[self.groups[group_index].first] == Need::Optional)
                .collect();
            if history_here.is_empty() {
                continue;
            }
            // truncateMiddle keeps the start first, when it can.
            if !start_done {
                start_done = true;
                self.keep_or_give_up_start(used, available);
            }
            self.fill_tail(&history_here, used, available, &mut tail_open);
        }
    }

    /// The history groups of one priority, newest first, into the tail while it is open; once
    /// one does not fit the tail closes, and every older group is cut without weighing it.
    fn fill_tail(&mut self, groups: &[usize], used: &mut u64, available: u64, open: &mut bool) {
        for &group_index in groups.iter().rev() {
            let group = self.groups[group_index];
            if self.need[group.first] != Need::Optional {
                continue;
            }
            if *open {
                let t = self.group_tokens(&group);
                let refund = self.twin_refund(&group);
                if *used + t <= available + refund {
                    *used = *used + t - refund;
                    self.retire_twins(&group);
                    continue;
                }
                *open = false;
            }
            self.group_status(&group, SliceStatus::Pruned(PruneReason::Truncated));
        }
    }

    /// truncateMiddle's kept start, a whole turn or nothing: its groups are kept together when
    /// they fit, the budget is not small and they take at most [`START_MAX_SHARE`] % of the
    /// history's room; otherwise they are old history like the rest (the tail reaches them
    /// only if everything after them fits), and the plan says what keeping them would have cost.
    fn keep_or_give_up_start(&mut self, used: &mut u64, available: u64) {
        let start: Vec<Group> = self.groups[..self.start_groups]
            .iter()
            .copied()
            .filter(|group| self.need[group.first] == Need::Optional)
            .collect();
        if start.is_empty() {
            return;
        }
        let tokens: u64 = start.iter().map(|group| self.group_tokens(group)).sum();
        let refund: u64 = start.iter().map(|group| self.twin_refund(group)).sum();
        let room = available.saturating_sub(*used);
        let keep = self.small_room.is_none()
            && *used + tokens <= available + refund
            && tokens * 100 <= room * START_MAX_SHARE;
        if keep {
            for group in &start {
                self.retire_twins(group);
                self.mark_group(group, Need::Required);
            }
            *used = *used + tokens - refund;
        } else {
            self.start_given_up =
                Some(StartGivenUp { tokens: clamp_u32(tokens), room: clamp_u32(room) });
        }
    }

    /// truncateMiddle's steps (`Settings::truncation_step_percent`): when truncation cut the
    /// history, the kept tail starts at a step boundary rather than at the oldest message that
    /// fits. Boundaries are counted in tokens from the thread's start, so they stay where they
    /// are as the thread grows; the tail's start, the marker and everything before them then
    /// stay byte-identical from one request to the next until the tail outgrows its room.
    pub(super) fn step_the_tail(&mut self, used: &mut u64, available: u64) {
        let percent = self.settings.truncation_step_percent;
        if percent == 0 || self.settings.truncation != TruncationStrategy::TruncateMiddle {
            return;
        }
        let prompt = self.groups.len().saturating_sub(1);
        let truncated = SliceStatus::Pruned(PruneReason::Truncated);
        if !(self.start_groups..prompt)
            .any(|group_index| self.slices[self.groups[group_index].first].status == truncated)
        {
            return;
        }
        let Some(oldest) = (self.start_groups..prompt).find(|&group_index| {
            let first = self.groups[group_index].first;
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
                .filter(|&group_index| self.slices[self.groups[group_index].first].is_included())
                .map(|group_index| self.group_tokens(&self.groups[group_index]))
                .sum::<u64>();
        let step = (available.saturating_sub(stable) * u64::from(percent) / 100).max(1);
        // A group starts a block when the tokens before it reach a block its predecessor's
        // start did not.
        let mut before = 0u64;
        let mut previous_block = None;
        let mut boundary = prompt;
        for group_index in 0..prompt {
            let block = before / step;
            if group_index >= oldest && previous_block != Some(block) {
                boundary = group_index;
                break;
            }
            previous_block = Some(block);
            before += self.group_tokens(&self.groups[group_index]).max(1);
        }
        let mut cut = StepCut { messages: 0, tokens: 0, step_tokens: clamp_u32(step) };
        for group_index in oldest..boundary {
            let group = self.groups[group_index];
            if self.need[group.first] != Need::Optional || !self.slices[group.first].is_included() {
                continue;
            }
            let tokens = self.group_tokens(&group);
            *used = used.saturating_sub(tokens);
            cut.messages += group.nodes;
            cut.tokens = cut.tokens.saturating_add(clamp_u32(tokens));
            self.group_status(&group, truncated);
            // Its search twin may carry the message again if it still fits.
            for slice_index in group.first..=group.last {
                if let Some(search) = self.twins.of(slice_index)
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
        if cut.messages > 0 {
            self.step_cut = Some(cut);
        }
    }
}
