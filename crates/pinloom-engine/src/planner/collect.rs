//! Collection: every candidate slice of the path in the order a context is built (system
//! context, instructions and attachments, ancestor summaries or messages, pin results, search
//! results), each with its tokens and how selection may treat it.

use std::collections::HashSet;

use crate::error::EngineError;
use crate::permitted;
use crate::plan::{
    AfterStale, AncestorContent, AncestorEntry, ExcerptReason, MissingSummary, Origin, PruneReason,
    SliceKind, SliceStatus, SourceId,
};
use crate::retrieval;
use crate::settings::{AssemblyStrategy, TaskFrameShares};
use crate::snapshot::{
    AttachmentKind, Author, NodeId, ParentEdge, Part, SummaryState, ThreadRef, TreeMode,
};

use super::{
    AncestorPath, Builder, Group, Need, ThreadSegment, Twins, file_block, folder_listing,
    pdf_page_block, scope_rank,
};

/// How an answer chosen to be fused is framed: `{number}` (from 1), `{label}` (the model that
/// wrote it), `{text}`.
pub const FUSE_SOURCE_FRAMING: &str = "Answer [{number}], by {label}:\n{text}";

/// What the model is asked to do with the answers chosen to be fused; `{count}` is how many.
pub const FUSE_INSTRUCTION: &str = "Above are {count} answers to my question. Write one answer \
    from them: keep what each gets right, settle where they disagree, say each point \
    once, and mark every point with the number of the answer it comes from, as [1] or [1][2].";

impl<'a> Builder<'a> {
    /// Builds every candidate slice in render order.
    pub(super) fn collect(&mut self, path: &AncestorPath) -> Result<(), EngineError> {
        let snapshot = self.snapshot;
        let settings = self.settings;
        let dialogue = snapshot.tree.mode == TreeMode::Dialogue;
        let system_on = dialogue || snapshot.tree.buffer_mode_system_context;
        let current = path.threads[path.threads.len() - 1];

        self.collect_system(path, system_on);

        if dialogue {
            for (i, tool) in snapshot.tools.iter().enumerate() {
                let text = format!("{}\n{}\n{}", tool.name, tool.description, tool.parameters);
                self.push_text(SliceKind::ToolDefinition, SourceId::Tool(i), text, Need::Optional);
            }
        }

        self.collect_references(path);

        self.collect_images(path, dialogue);

        // Ancestor threads: by summary under depth budgets (task frames: root goal, path
        // summaries, sibling results, each within its share).
        self.collect_ancestors(path, current);

        // Messages picked from other branches for the question this thread started with.
        self.collect_picked(path);

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
        self.collect_fuse_sources();
        Ok(())
    }

    /// System context: agent, then tree, then instruction sources (tree, thread, node scope in
    /// path order). Never truncated; in a buffer document left out unless the tree turns it on.
    fn collect_system(&mut self, path: &AncestorPath, system_on: bool) {
        let snapshot = self.snapshot;
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
    }

    /// Reference material on the path: context sources, files, PDFs, then folder listings.
    fn collect_references(&mut self, path: &AncestorPath) {
        let snapshot = self.snapshot;
        let settings = self.settings;
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
                AttachmentKind::Pdf { path: file, pages } => self.collect_pdf(a.id, file, pages),
                AttachmentKind::Folder { .. } | AttachmentKind::Image { .. } => {}
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
    }

    /// A PDF, page by page, each page framed with its number: pages past the file size limit
    /// (counted over the pages' text, since a PDF's bytes on disk are mostly not text) are left
    /// out as too large; the rest may be cut for the budget, from the last page back.
    fn collect_pdf(&mut self, attachment: u64, file: &str, pages: &[String]) {
        let of = pages.len();
        let mut bytes = 0_u64;
        for (index, text) in pages.iter().enumerate() {
            let page = u32::try_from(index + 1).unwrap_or(u32::MAX);
            let block = pdf_page_block(file, index + 1, of, text);
            let source = SourceId::PdfPage { attachment, page };
            bytes += text.len() as u64;
            if bytes > self.settings.max_file_bytes {
                self.pruned_text(SliceKind::File, source, block, PruneReason::FileTooLarge);
            } else {
                self.push_text(SliceKind::File, source, block, Need::Optional);
            }
        }
    }

    /// Images in scope, each counted by the provider's own image rule. A model that does not
    /// see gets none, and neither does a buffer document (text to continue): they are left out
    /// with that reason, so the inspector shows what was not sent and why.
    fn collect_images(&mut self, path: &AncestorPath, dialogue: bool) {
        let snapshot = self.snapshot;
        for a in &snapshot.attachments {
            let AttachmentKind::Image { name, media_type, width, height, .. } = &a.kind else {
                continue;
            };
            if !self.on_path(path, a.scope) {
                continue;
            }
            let label = format!("[image: {name}, {width}×{height}, {media_type}]");
            let tokens = self
                .profile
                .family
                .rules()
                .image_tokens(*width, *height)
                .saturating_add(self.overhead);
            let source = SourceId::Attachment(a.id);
            if dialogue && self.profile.sees_images {
                self.push(SliceKind::Image, source, tokens, Origin::Text(label), Need::Optional);
            } else {
                let why = SliceStatus::Pruned(PruneReason::ImageNotSeen);
                let (text, need) = (Origin::Text(label), Need::Decided);
                self.push_with(SliceKind::Image, source, tokens, text, need, why, None);
            }
        }
    }

    /// The answers chosen to be fused (rule 7 of [`crate::permitted`]), whole and numbered in
    /// the order chosen, then the instruction. Only a model's answer to the message being
    /// answered may come: anything else is left out as off the path, a deleted one as deleted.
    /// They are required: a fused answer that silently lost a source would misattribute.
    fn collect_fuse_sources(&mut self) {
        let snapshot = self.snapshot;
        let mut number = 0;
        for source in &snapshot.fuse_sources {
            let framed = |number: usize| {
                FUSE_SOURCE_FRAMING
                    .replace("{number}", &number.to_string())
                    .replace("{label}", &source.label)
                    .replace("{text}", &source.text)
            };
            let why = if source.answers != Some(snapshot.active) || source.author != Author::Model {
                Some(PruneReason::OffPath)
            } else if source.deleted {
                Some(PruneReason::SoftDeleted)
            } else {
                None
            };
            let kind = SliceKind::FuseSource;
            match why {
                Some(reason) => {
                    self.pruned_text(kind, SourceId::FuseSource(source.node), framed(0), reason)
                }
                None => {
                    number += 1;
                    let text = framed(number);
                    self.push_text(kind, SourceId::FuseSource(source.node), text, Need::Required);
                }
            }
        }
        if number > 0 {
            let instruction = FUSE_INSTRUCTION.replace("{count}", &number.to_string());
            self.push_text(
                SliceKind::FuseSource,
                SourceId::FuseInstruction,
                instruction,
                Need::Required,
            );
        }
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
            // A hit in an ancestor thread lies before its anchor: the path holds nothing later.
            let status = if position.is_none() && !candidate.added {
                SliceStatus::Pruned(PruneReason::OffPath)
            } else if self.excerpted.binary_search(&candidate.node).is_ok() {
                // Quoted whole with its ancestor thread's last messages: sent once.
                SliceStatus::Pruned(PruneReason::AlreadyInAncestry)
            } else if on_path_node.is_some_and(|node| node.excluded) {
                SliceStatus::Pruned(PruneReason::Excluded)
            } else if on_path_node.is_some_and(|node| node.pruned) {
                SliceStatus::Pruned(PruneReason::SoftDeleted)
            } else if let Some(history) = twin
                && (self.need[history] == Need::Required || !self.slices[history].is_included())
                && !matches!(
                    self.slices[history].status,
                    SliceStatus::Pruned(reason) if !reason.keeps_out_of_search()
                )
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

    /// One slice for every ancestor thread, root first, and its [`AncestorEntry`]: the summary
    /// that serves it (written on purpose first, fitted or cut when longer than its depth
    /// budget), else its last messages before the branching point. None is left out without
    /// its slice saying why.
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
            let slice = self.slices.len();
            let entry = |content, text| AncestorEntry {
                thread: seg.thread,
                distance,
                up_to,
                budget,
                slice,
                content,
                text,
            };
            if frames.is_some() && seg.thread == ThreadRef::Root {
                // Task frames: the root thread contributes its goal, its first message.
                let goal = snapshot.nodes[path.nodes[seg.start]]
                    .parts
                    .iter()
                    .map(Part::text)
                    .collect::<Vec<_>>()
                    .join("\n");
                self.push_text(
                    SliceKind::RootGoal,
                    SourceId::Node(snapshot.nodes[path.nodes[seg.start]].id),
                    goal.clone(),
                    Need::Optional,
                );
                if let Some(shares) = frames
                    && u64::from(self.slices[slice].tokens) > share_of(shares.root_goal)
                {
                    self.decide(slice, PruneReason::OutsideShare);
                }
                self.ancestors.push(entry(AncestorContent::RootGoal, goal));
                continue;
            }
            let (text, content) = self.ancestor_content(path, *seg, up_to, budget);
            let title = self.thread_title(seg.thread);
            let framed = match &content {
                AncestorContent::Excerpt { reason, .. } => fill(
                    &settings.excerpt_framing,
                    &[("{title}", title), ("{reason}", &reason.describe()), ("{text}", &text)],
                ),
                _ => fill(&settings.summary_framing, &[("{title}", title), ("{text}", &text)]),
            };
            self.push_text(
                SliceKind::AncestorSummary,
                SourceId::Summary(seg.thread),
                framed,
                Need::Optional,
            );
            if budget == 0 || text.trim().is_empty() {
                // A depth budget of 0 asks for the thread to be left out; an excerpt of a
                // thread whose messages are all excluded has nothing to carry.
                self.decide(slice, PruneReason::OverDepthBudget);
            } else {
                summary_slices.push(slice);
            }
            self.ancestors.push(entry(content, text));
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

    /// A thread's title: a pin's own, the tree's for the root thread.
    fn thread_title(&self, thread: ThreadRef) -> &'a str {
        let snapshot = self.snapshot;
        match thread {
            ThreadRef::Root => &snapshot.tree.title,
            ThreadRef::Pin(pin) => snapshot.pin(pin).map_or("", |pin| pin.title.as_str()),
        }
    }

    /// What stands for ancestor thread `seg` known up to `up_to` at `budget`, and its text:
    ///
    /// 1. the newest summary written on purpose at that point, else the newest for the whole
    ///    thread: whole when it fits, else its fitted version at this budget, else cut at a
    ///    sentence (and its fitted version asked for);
    /// 2. else a summary the summariser wrote at that point for this budget, else for the
    ///    largest smaller one, cut if a recount grew it past the budget;
    /// 3. else one written for a larger budget when it fits, or cut (and one for this budget
    ///    asked for);
    /// 4. else the thread's last messages before the point, verbatim (and a summary asked for).
    fn ancestor_content(
        &mut self,
        path: &AncestorPath,
        seg: ThreadSegment,
        up_to: NodeId,
        budget: u32,
    ) -> (String, AncestorContent) {
        let summaries = &self.snapshot.summaries;
        let records: Vec<usize> = (0..summaries.len())
            .filter(|&k| summaries[k].thread == seg.thread && !summaries[k].text.trim().is_empty())
            .collect();
        let written = |k: usize| summaries[k].fitted_from.is_none();
        let at_point = |k: usize| summaries[k].up_to == Some(up_to);
        if let Some(content) = self.chosen_content(&records, seg, up_to, budget) {
            return content;
        }
        let automatic: Vec<usize> = records
            .iter()
            .copied()
            .filter(|&k| !summaries[k].chosen && written(k) && at_point(k))
            .collect();
        let exact = automatic.iter().rev().copied().find(|&k| summaries[k].budget == Some(budget));
        let smaller = || {
            automatic
                .iter()
                .rev()
                .copied()
                .filter(|&k| summaries[k].budget.is_some_and(|b| b < budget))
                .max_by_key(|&k| summaries[k].budget)
        };
        let larger = automatic
            .iter()
            .rev()
            .copied()
            .filter(|&k| summaries[k].budget.is_none_or(|b| b > budget))
            .min_by_key(|&k| summaries[k].budget.unwrap_or(u32::MAX));
        let fits = |k: usize| self.tokenizer.count_u32(&summaries[k].text) <= budget;
        let serving = exact.or_else(smaller).or(larger.filter(|&k| fits(k)));
        if let Some(k) = serving {
            return self.summary_or_cut(k, budget);
        }
        let mut notes = self
            .snapshot
            .summary_notes
            .iter()
            .rev()
            .filter(|note| note.thread == seg.thread && note.up_to == up_to);
        let stale = notes.clone().find_map(|note| match &note.state {
            SummaryState::Stale(why) => Some((why, AfterStale::WrittenAgain)),
            SummaryState::StaleKept(why) => Some((why, AfterStale::KeptToEdit)),
            _ => None,
        });
        // A stale summary its writer (a person, an agent, a file) is to edit is not replaced by
        // the summariser's own behind their back.
        let kept = matches!(stale, Some((_, AfterStale::KeptToEdit)));
        let write = self.settings.write_summaries;
        if write && !kept {
            self.missing.push(MissingSummary { thread: seg.thread, up_to, budget, condense: None });
        }
        if let Some(k) = larger {
            return self.summary_or_cut(k, budget);
        }
        // The newest note says what happened; a summary being written in place of a stale one
        // is told as the stale one, whose words say it is written again and why.
        let unwritten = if write { ExcerptReason::NotWritten } else { ExcerptReason::TurnedOff };
        let after = |then: AfterStale| if write { then } else { AfterStale::TurnedOff };
        let reason = match (notes.next().map(|note| &note.state), stale) {
            (None, _) => unwritten,
            (Some(SummaryState::Failed(why)), _) => ExcerptReason::Failed(why.clone()),
            // The stale note itself, or a summary being written in its place.
            (Some(_), Some((why, then))) => {
                ExcerptReason::Stale { why: why.clone(), then: after(then) }
            }
            (Some(_), None) => ExcerptReason::BeingWritten,
        };
        let (text, quoted) = self.excerpt(path, seg, budget);
        self.excerpted.extend(quoted.iter().copied());
        self.excerpted.sort_unstable();
        (text, AncestorContent::Excerpt { quoted, reason })
    }

    /// Step 1 of [`Builder::ancestor_content`]: the summary chosen on purpose for the thread
    /// (`records`, its non-empty summaries), at this point or for the whole thread: whole when
    /// it fits, else its fitted version at `budget`, else cut at a sentence (and its fitted
    /// version asked for). `None` when none was chosen.
    fn chosen_content(
        &mut self,
        records: &[usize],
        seg: ThreadSegment,
        up_to: NodeId,
        budget: u32,
    ) -> Option<(String, AncestorContent)> {
        let summaries = &self.snapshot.summaries;
        let written = |k: usize| summaries[k].fitted_from.is_none();
        let chosen =
            records
                .iter()
                .rev()
                .copied()
                .find(|&k| summaries[k].chosen && written(k) && summaries[k].up_to == Some(up_to))
                .or_else(|| {
                    records.iter().rev().copied().find(|&k| {
                        summaries[k].chosen && written(k) && summaries[k].up_to.is_none()
                    })
                })?;
        let record = &summaries[chosen];
        let tokens = self.tokenizer.count_u32(&record.text);
        if tokens <= budget {
            return Some((record.text.clone(), AncestorContent::Summary { record: chosen }));
        }
        let fitted = records.iter().rev().copied().find(|&f| {
            summaries[f].fitted_from == Some(record.id)
                && summaries[f].budget == Some(budget)
                && self.tokenizer.count_u32(&summaries[f].text) <= budget
        });
        if let Some(f) = fitted {
            let text = summaries[f].text.clone();
            return Some((text, AncestorContent::Fitted { record: f, from: chosen }));
        }
        let (id, text) = (record.id, record.text.clone());
        if self.settings.write_summaries {
            self.missing.push(MissingSummary {
                thread: seg.thread,
                up_to,
                budget,
                condense: Some(id),
            });
        }
        let cut = self.cut_summary(&text, budget);
        Some((cut, AncestorContent::Cut { record: chosen, whole_tokens: tokens }))
    }

    /// Summary `k` whole when it fits `budget`, else cut at a sentence.
    fn summary_or_cut(&self, k: usize, budget: u32) -> (String, AncestorContent) {
        let record = &self.snapshot.summaries[k];
        let tokens = self.tokenizer.count_u32(&record.text);
        if tokens <= budget {
            (record.text.clone(), AncestorContent::Summary { record: k })
        } else {
            (
                self.cut_summary(&record.text, budget),
                AncestorContent::Cut { record: k, whole_tokens: tokens },
            )
        }
    }

    /// `text` cut to `budget` tokens at the end of a sentence (at a word when its first
    /// sentence is already too long), ending with the visible marker.
    fn cut_summary(&self, text: &str, budget: u32) -> String {
        let marker = self.settings.summary_cut_marker.replace("{budget}", &budget.to_string());
        let room = u64::from(budget).saturating_sub(self.tokenizer.count(&marker));
        let head = self.tokenizer.head_within(text, room);
        let kept = sentence_head(head).unwrap_or(head).trim_end();
        format!("{kept}{marker}")
    }

    /// The last messages of ancestor thread `seg` up to its end, verbatim and oldest first, as
    /// many as fit `budget` (the newest cut to its end when it alone does not): the fallback
    /// when no summary can stand for the thread. Excluded and deleted messages and notes stay
    /// out, as they do from any context. Returns the text and the messages it quotes.
    fn excerpt(
        &self,
        path: &AncestorPath,
        seg: ThreadSegment,
        budget: u32,
    ) -> (String, Vec<NodeId>) {
        let budget = u64::from(budget);
        let mut lines: Vec<String> = Vec::new();
        let mut quoted: Vec<NodeId> = Vec::new();
        let mut used = 0u64;
        for &index in path.nodes[seg.start..seg.end].iter().rev() {
            let node = &self.snapshot.nodes[index];
            if node.excluded || node.pruned || matches!(node.edge, ParentEdge::Annotation(_)) {
                continue;
            }
            let who = match node.author {
                Author::Human => "Person",
                Author::Model => "Model",
                Author::Tool => "Tool",
            };
            let body = node.parts.iter().map(Part::text).collect::<Vec<_>>().join("\n");
            let line = format!("{who}: {body}");
            // The blank line between messages counts too.
            let tokens = self.tokenizer.count(&line) + 1;
            if used + tokens <= budget {
                used += tokens;
                lines.push(line);
                quoted.push(node.id);
                continue;
            }
            if lines.is_empty() {
                let opening = format!("{who}: \u{2026}");
                let room = budget.saturating_sub(self.tokenizer.count(&opening) + 1);
                let tail = self.tokenizer.tail_within(&body, room);
                if !tail.trim().is_empty() {
                    lines.push(format!("{opening}{}", tail.trim_start()));
                }
            }
            break;
        }
        lines.reverse();
        quoted.reverse();
        (lines.join("\n\n"), quoted)
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

/// `template` with each placeholder replaced in one pass, so that text put in for one (a title
/// holding `{text}`, say) is never read as another.
pub(super) fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out =
        String::with_capacity(template.len() + values.iter().map(|(_, v)| v.len()).sum::<usize>());
    let mut rest = template;
    'scan: while let Some(open) = rest.find('{') {
        for (placeholder, value) in values {
            if rest[open..].starts_with(placeholder) {
                out.push_str(&rest[..open]);
                out.push_str(value);
                rest = &rest[open + placeholder.len()..];
                continue 'scan;
            }
        }
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
    }
    out.push_str(rest);
    out
}

/// `head` up to the end of its last whole sentence (a full stop, question or exclamation mark or
/// ellipsis followed by a space, or a line's end); `None` when it holds no sentence end.
fn sentence_head(head: &str) -> Option<&str> {
    let mut end = None;
    let mut chars = head.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let closes =
            matches!(c, '.' | '!' | '?' | '\u{2026}' | '\u{3002}' | '\u{ff01}' | '\u{ff1f}');
        let next_is_space = chars.peek().is_none_or(|&(_, next)| next.is_whitespace());
        if (closes && next_is_space) || c == '\n' {
            end = Some(at + c.len_utf8());
        }
    }
    end.filter(|&end| !head[..end].trim().is_empty()).map(|end| &head[..end])
}

#[cfg(test)]
mod tests {
    use super::{fill, sentence_head};

    #[test]
    fn placeholders_are_filled_once_and_values_are_never_read_as_placeholders() {
        let filled = fill("{title}: {text} {other}", &[("{title}", "a {text}"), ("{text}", "b")]);
        assert_eq!(filled, "a {text}: b {other}");
    }

    #[test]
    fn a_head_ends_at_its_last_whole_sentence() {
        assert_eq!(sentence_head("One. Two! Thr"), Some("One. Two!"));
        assert_eq!(sentence_head("Pi is 3.14 and e"), None);
        assert_eq!(sentence_head("A list:\nthen"), Some("A list:\n"));
        assert_eq!(sentence_head("No end here"), None);
    }
}
