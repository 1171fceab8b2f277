//! Snapshot building: one read of what the engine needs for a node, and the active path kept in
//! memory so that a send on a long thread neither re-reads nor re-counts it.
//!
//! The path (nodes, edges, stored counts, included annotations) is the expensive part and is
//! cached per tree; it is extended in place when a send appends to its end. Everything else the
//! engine reads (pins, summaries, attachments, retrieval candidates) grows with the number of
//! threads and attachments, not with the path, and is read fresh for every plan.
//!
//! The caches are dropped on every write this process makes other than the extension, and when
//! `PRAGMA data_version` says another process (the MCP server) wrote to the file.

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pinloom_engine::snapshot::{
    Attachment, AttachmentKind, AttachmentScope, CachedCount, NodeRecord, ParentEdge, PinRecord,
    RetrievalCandidate, Snapshot, SummaryAuthor, SummaryNote, SummaryRecord, SummaryState,
    ThreadRef, TreeInfo, TreeMode,
};
use pinloom_engine::tokens::Tokenizer;
use pinloom_store::{self as store, NodeId, PinId, Store, StoreError, TreeId};

use crate::base::engine_inputs::{
    ANNOTATION_ID_BASE, engine_author, engine_node, engine_pin, engine_thread, exact_family,
    node_record,
};
use crate::base::media::{PAGE_BREAK, stored_image};
use crate::json::{PlanView, TreeSettings};

/// How many retrieval candidates full-text search offers the engine: hits the kept history
/// already carries are dropped by the engine, so there are more than the slice usually takes.
const RETRIEVAL_CANDIDATES: u32 = 32;
/// How many trees keep their active path in memory.
const CACHED_PATHS: usize = 4;
/// How long an assembled plan is reused for the same node, prompt and budget.
const PLAN_TTL: Duration = Duration::from_secs(30);

/// A path as the engine reads it, and what extending it needs.
#[derive(Debug, Clone)]
pub(crate) struct CachedPath {
    /// The path's records root first, included annotations in their places. Its other fields
    /// are filled for each plan.
    pub(crate) snapshot: Snapshot,
    /// The store's id of the path's last node.
    pub(crate) end: NodeId,
    /// The thread of the path's last node.
    pub(crate) end_thread: Option<PinId>,
    /// The thread segments: each pin on the path with the store id of its thread's last node
    /// before the next pin edge; the root thread first (`None`).
    pub(crate) threads: Vec<(Option<PinId>, NodeId)>,
    /// The store ids of the path's messages, in order.
    store_ids: Vec<NodeId>,
    /// The exact families whose stored counts the records carry.
    counted: Vec<&'static str>,
}

impl CachedPath {
    /// Reads the path to `node` with its stored counts for `tokenizer` (when it is exact) and
    /// its included annotations.
    pub(crate) fn read(
        store: &Store,
        node: NodeId,
        tokenizer: Tokenizer,
    ) -> Result<CachedPath, StoreError> {
        let tree = store.node(node)?.tree_id;
        let family = exact_family(tokenizer);
        let path = store.plan_path(node, family)?;
        let mut annotations: HashMap<NodeId, Vec<store::Annotation>> = HashMap::new();
        for annotation in store.included_annotations(tree)? {
            annotations.entry(annotation.node_id).or_default().push(annotation);
        }
        let mut cached = CachedPath {
            snapshot: Snapshot { nodes: Vec::with_capacity(path.len()), ..Snapshot::default() },
            end: node,
            end_thread: None,
            threads: Vec::new(),
            store_ids: Vec::with_capacity(path.len()),
            counted: Vec::new(),
        };
        let mut steps = path.into_iter().peekable();
        while let Some(step) = steps.next() {
            // A note goes between its message and the next one in the same thread. Notes on the
            // message being answered would follow the prompt, and a sub-thread hangs off the
            // message itself (its summary ends there): both are left out.
            let same_thread_next = steps.peek().is_some_and(|next| next.pin_id == step.pin_id);
            let notes = if same_thread_next { annotations.remove(&step.id) } else { None };
            let count = step.tokens.map(|tokens| [(tokenizer, tokens)]);
            cached.push(step, count.as_ref().map_or(&[], |count| count.as_slice()));
            for annotation in notes.unwrap_or_default() {
                cached.push_annotation(&annotation);
            }
        }
        cached.end = node;
        cached.counted.extend(family);
        Ok(cached)
    }

    /// Makes sure the path's records carry the stored counts of `tokenizer`, reading them once
    /// per exact family: a path read for one model and planned for another counts nothing again.
    pub(crate) fn load_counts(
        &mut self,
        store: &Store,
        tokenizer: Tokenizer,
    ) -> Result<(), StoreError> {
        let Some(family) = exact_family(tokenizer) else { return Ok(()) };
        if self.counted.contains(&family) {
            return Ok(());
        }
        let counts = store.token_counts(&self.store_ids, family)?;
        let id = tokenizer.id();
        for record in &mut self.snapshot.nodes {
            if record.cached(id).is_some() {
                continue;
            }
            let Ok(row) = i64::try_from(record.id.0) else { continue };
            if let Some(tokens) = counts.get(&NodeId(row)) {
                record.cached_tokens.push(CachedCount {
                    tokenizer: id,
                    tokens: u32::try_from(*tokens).unwrap_or(u32::MAX),
                });
            }
        }
        self.counted.push(family);
        Ok(())
    }

    /// Keeps counts the engine made while planning on the path's records.
    pub(crate) fn remember_counts(
        &mut self,
        tokenizer: Tokenizer,
        counts: &[(pinloom_engine::snapshot::NodeId, u32)],
    ) {
        if counts.is_empty() {
            return;
        }
        let counts: HashMap<_, _> = counts.iter().copied().collect();
        let id = tokenizer.id();
        for record in &mut self.snapshot.nodes {
            if let Some(tokens) = counts.get(&record.id)
                && record.cached(id).is_none()
            {
                record.cached_tokens.push(CachedCount { tokenizer: id, tokens: *tokens });
            }
        }
    }

    /// Extends the path by a node just written after its end, with the notes on the end that
    /// now fall between two messages of one thread, so the path stays what [`CachedPath::read`]
    /// would read. `counts` are the node's stored counts.
    pub(crate) fn extend(
        &mut self,
        store: &Store,
        node: &store::Node,
        counts: &[(Tokenizer, u64)],
    ) -> Result<(), StoreError> {
        if node.pin_id == self.end_thread {
            for annotation in store.annotations(self.end)? {
                if annotation.included {
                    self.push_annotation(&annotation);
                }
            }
        }
        self.push(store::PathStep::from(node.clone()), counts);
        Ok(())
    }

    /// Appends a node that continues the path's last node.
    fn push(&mut self, node: store::PathStep, counts: &[(Tokenizer, u64)]) {
        let (id, thread) = (node.id, node.pin_id);
        let previous = self.snapshot.nodes.last().map(|last| (last.id, self.end_thread));
        let record = node_record(node, previous, counts);
        let crossed_pin = matches!(record.edge, ParentEdge::Pin { .. });
        if crossed_pin || self.threads.is_empty() {
            self.threads.push((thread, id));
        }
        if let Some(last) = self.threads.last_mut() {
            last.1 = id;
        }
        self.snapshot.nodes.push(record);
        self.snapshot.active = engine_node(id);
        self.end = id;
        self.end_thread = thread;
        self.store_ids.push(id);
    }

    fn push_annotation(&mut self, annotation: &store::Annotation) {
        let Some(parent) = self.snapshot.nodes.last().map(|last| last.id) else { return };
        let id = ANNOTATION_ID_BASE + u64::try_from(annotation.id).unwrap_or(0);
        let mut record = NodeRecord::text(
            id,
            ParentEdge::Annotation(parent),
            pinloom_engine::snapshot::Author::Human,
            &annotation.text,
        );
        record.include_annotation = annotation.included;
        record.created_at_ms = annotation.created_at_ms;
        self.snapshot.nodes.push(record);
    }

    /// Fills everything but the path for a plan of the path's end: the tree, the pins on the path
    /// and closed pins beside it, the ancestors' summaries, attachments and the retrieval
    /// candidates of `prompt`.
    pub(crate) fn fill(
        &mut self,
        store: &Store,
        tree: &store::TreeSetup,
        settings: &TreeSettings,
        summarizer: Option<&str>,
        notes: Vec<SummaryNote>,
        prompt: &str,
    ) -> Result<(), StoreError> {
        self.snapshot.pins = self.pins(store, tree.id)?;
        let (summaries, mut stale) = self.ancestor_summaries(store, tree.id, summarizer)?;
        self.snapshot.summaries = summaries;
        // The summariser's own notes come last: a summary being written again says so.
        stale.extend(notes);
        self.snapshot.summary_notes = stale;
        self.snapshot.attachments =
            store.attachments(tree.id)?.into_iter().map(attachment).collect();
        self.snapshot.retrieval = self.retrieval(store, tree.id, settings, prompt)?;
        // A question over picked messages starts a thread at the tree's top: only a first
        // message of the path can have been asked so.
        let firsts: Vec<NodeId> = self
            .snapshot
            .nodes
            .iter()
            .filter(|node| node.edge == ParentEdge::Root)
            .filter_map(|node| i64::try_from(node.id.0).ok().map(NodeId))
            .collect();
        self.snapshot.picked = crate::base::picked::picked_sources(store, &firsts)?;
        self.snapshot.compaction = match tree.mode {
            store::TreeMode::Dialogue => self.compaction(store, tree.id)?,
            store::TreeMode::Buffer => None,
        };
        self.snapshot.tree = TreeInfo {
            // A title taken from a message since excluded or deleted would carry its words.
            title: if store.title_withdrawn(tree.id)? {
                WITHDRAWN_TITLE.to_owned()
            } else {
                tree.title.clone()
            },
            mode: match tree.mode {
                store::TreeMode::Dialogue => TreeMode::Dialogue,
                store::TreeMode::Buffer => TreeMode::Buffer,
            },
            system_context: tree.system_context.clone(),
            buffer_mode_system_context: tree.buffer_includes_system,
            token_buffer: settings.token_buffer,
        };
        self.snapshot.active = engine_node(self.end);
        Ok(())
    }

    /// The pins on the path, and the closed pins beside it whose results may come back.
    fn pins(&self, store: &Store, tree: TreeId) -> Result<Vec<PinRecord>, StoreError> {
        let mut pins = Vec::new();
        for (pin, _) in &self.threads {
            if let Some(pin) = pin {
                pins.push(pin_record(&store.pin(*pin)?));
            }
        }
        // Closed pins opened from the current thread's parent: the results task frames may show.
        if self.threads.len() >= 2 {
            let parent = self.threads[self.threads.len() - 2].0;
            for pin in store.child_pins(tree, parent)? {
                if pin.closed_at_ms.is_some() && !pins.iter().any(|p| p.id == engine_pin(pin.id)) {
                    pins.push(pin_record(&pin));
                }
            }
        }
        // Closed pins opened from the current thread: their results come back to it (the
        // engine keeps those opened from a message of the path).
        let current = self.threads.last().and_then(|(pin, _)| *pin);
        for pin in store.child_pins(tree, current)? {
            if pin.closed_at_ms.is_some() && !pins.iter().any(|p| p.id == engine_pin(pin.id)) {
                pins.push(pin_record(&pin));
            }
        }
        Ok(pins)
    }

    /// Each ancestor thread's summaries that can serve it: those ending where the next thread
    /// hangs off (with their fitted versions), and those of the whole thread written on purpose
    /// while the thread holds nothing past that point (a summary of the whole thread would tell
    /// a pin what was said after its anchor: `pinloom_engine::permitted`, rule 1).
    /// Oldest write first, and among the summariser's own at equal budgets the chosen
    /// summariser's last: the engine takes the last that serves.
    fn ancestor_summaries(
        &self,
        store: &Store,
        tree: TreeId,
        summarizer: Option<&str>,
    ) -> Result<(Vec<SummaryRecord>, Vec<SummaryNote>), StoreError> {
        let mut summaries = Vec::new();
        let mut stale_notes = Vec::new();
        for (pin, up_to) in self.threads.iter().take(self.threads.len().saturating_sub(1)) {
            let mut theirs = Vec::new();
            let mut chosen = Vec::new();
            // Asked once a thread, and only when a summary of the whole thread is there.
            let mut goes_on: Option<bool> = None;
            // The store lists the newest first.
            for summary in store.thread_summaries(tree, *pin)?.into_iter().rev() {
                if let Some(why) = &summary.stale {
                    // Written from a message since excluded, deleted or moved away: it would
                    // carry its words. Not offered; the summariser writes a model's again, one
                    // by a person, an agent or a file waits for its writer to edit it, and the
                    // plan says why meanwhile.
                    if summary.key.path_end.is_none_or(|end| end == *up_to) {
                        let state = if summary.written_by == store::SummaryAuthor::Model {
                            SummaryState::Stale(why.clone())
                        } else {
                            SummaryState::StaleKept(why.clone())
                        };
                        stale_notes.push(SummaryNote {
                            thread: engine_thread(*pin),
                            up_to: engine_node(*up_to),
                            state,
                        });
                    }
                    continue;
                }
                let serves = match summary.key.path_end {
                    Some(end) => end == *up_to,
                    None if summary.chosen || summary.key.fitted_from.is_some() => {
                        let goes_on = match goes_on {
                            Some(known) => known,
                            None => {
                                *goes_on.insert(store.thread_goes_on_after(tree, *pin, *up_to)?)
                            }
                        };
                        !goes_on
                    }
                    None => false,
                };
                if !serves {
                    continue;
                }
                let by_summarizer = Some(summary.key.summarizer.as_str()) == summarizer;
                let record = summary_record(summary, *pin);
                if by_summarizer { chosen.push(record) } else { theirs.push(record) }
            }
            summaries.extend(theirs);
            summaries.extend(chosen);
        }
        Ok((summaries, stale_notes))
    }

    /// The current thread's compaction: the newest in effect whose last message is on this path
    /// before its end, with the summary that stands for its messages (the newest written on
    /// purpose at that point), stale when that summary is.
    fn compaction(
        &self,
        store: &Store,
        tree: TreeId,
    ) -> Result<Option<pinloom_engine::snapshot::Compaction>, StoreError> {
        let on_path = |node: NodeId| node != self.end && self.store_ids.contains(&node);
        let Some(compaction) =
            store.compactions(tree, self.end_thread)?.into_iter().find(|c| on_path(c.up_to))
        else {
            return Ok(None);
        };
        let summary = store.thread_summaries(tree, self.end_thread)?.into_iter().find(|summary| {
            summary.chosen
                && summary.key.fitted_from.is_none()
                && summary.key.path_end == Some(compaction.up_to)
        });
        Ok(summary.map(|summary| pinloom_engine::snapshot::Compaction {
            id: compaction.id,
            up_to: engine_node(compaction.up_to),
            written_by: match summary.written_by {
                store::SummaryAuthor::Person => "you".to_owned(),
                store::SummaryAuthor::Agent => "an agent".to_owned(),
                store::SummaryAuthor::File => "an imported file".to_owned(),
                store::SummaryAuthor::Model => summary.key.summarizer.clone(),
            },
            text: summary.text,
            stale: summary.stale,
        }))
    }

    /// The retrieval candidates of `prompt`: what the path may know, searched, and the person's
    /// own picks from anywhere in the tree.
    fn retrieval(
        &self,
        store: &Store,
        tree: TreeId,
        settings: &TreeSettings,
        prompt: &str,
    ) -> Result<Vec<RetrievalCandidate>, StoreError> {
        // What the path may know is searched, and only that (`pinloom_engine::permitted`): the
        // store's query walks the path's own segments.
        let hits = store.search_path(self.end, prompt, RETRIEVAL_CANDIDATES)?;
        // The person's own picks rank with the best automatic hit, and as bookmarked; they may
        // come from anywhere in the tree and are labelled as theirs.
        let best = hits.iter().map(|hit| hit.bm25).fold(-1.0_f64, f64::min);
        let mut retrieval: Vec<RetrievalCandidate> =
            hits.into_iter().map(|hit| candidate(hit, false)).collect();
        // Linear in the picks: an imported tree may name thousands, and each plan reads them.
        let mut placed: HashMap<u64, usize> =
            retrieval.iter().enumerate().map(|(at, found)| (found.node.0, at)).collect();
        let mut unfound = Vec::new();
        for id in &settings.search_hits {
            let wanted = u64::try_from(*id).unwrap_or(0);
            match placed.get(&wanted) {
                Some(&at) => {
                    // Found by the search too: still the person's pick, and labelled so.
                    retrieval[at].added = true;
                    retrieval[at].bookmarked = true;
                }
                None => unfound.push(NodeId(*id)),
            }
        }
        // Most trees pick none: no query then, since every plan passes here.
        // In the order the person picked them, each once.
        let picked = if unfound.is_empty() { Vec::new() } else { store.nodes(&unfound)? };
        for node in picked {
            if node.tree_id != tree || node.pruned_at_ms.is_some() {
                continue;
            }
            let Ok(key) = u64::try_from(node.id.0) else { continue };
            if placed.contains_key(&key) {
                continue;
            }
            placed.insert(key, retrieval.len());
            retrieval.push(candidate(
                store::SearchHit {
                    node_id: node.id,
                    pin_id: node.pin_id,
                    author: node.author,
                    text: node.text,
                    bm25: best,
                    created_at_ms: node.created_at_ms,
                    bookmarked: true,
                    pinned: false,
                },
                true,
            ));
        }
        Ok(retrieval)
    }
}

/// A stored summary as the engine reads it.
fn summary_record(summary: store::Summary, thread: Option<PinId>) -> SummaryRecord {
    SummaryRecord {
        id: u64::try_from(summary.id).unwrap_or(0),
        thread: engine_thread(thread),
        up_to: summary.key.path_end.map(engine_node),
        budget: summary.key.budget,
        written_by: match summary.written_by {
            store::SummaryAuthor::Model => SummaryAuthor::Model,
            store::SummaryAuthor::Person => SummaryAuthor::Person,
            store::SummaryAuthor::Agent => SummaryAuthor::Agent,
            store::SummaryAuthor::File => SummaryAuthor::File,
        },
        summarizer: summary.key.summarizer,
        chosen: summary.chosen,
        fitted_from: summary.key.fitted_from.and_then(|id| u64::try_from(id).ok()),
        text: summary.text,
    }
}

/// A search hit as the engine reads it; `added` when the person chose it by hand.
fn candidate(hit: store::SearchHit, added: bool) -> RetrievalCandidate {
    RetrievalCandidate {
        node: engine_node(hit.node_id),
        text: hit.text,
        author: engine_author(hit.author),
        created_at_ms: hit.created_at_ms,
        // FTS5's bm25 is lower for better matches; the engine wants higher.
        bm25: -hit.bm25,
        bookmarked: hit.bookmarked,
        pinned: hit.pinned,
        added,
    }
}

fn pin_record(pin: &store::Pin) -> PinRecord {
    PinRecord {
        id: engine_pin(pin.id),
        parent_thread: engine_thread(pin.parent_pin_id),
        title: pin.title.clone(),
        anchor: pin.anchor.as_ref().map(|anchor| pinloom_engine::snapshot::Anchor {
            text: anchor.text.clone(),
            range: (anchor.start, anchor.end),
        }),
        hangs_off: pin.anchor_node_id.map(engine_node),
        closed: pin.closed_at_ms.is_some(),
        result: pin.result.clone(),
    }
}

fn attachment(attachment: store::Attachment) -> Attachment {
    let scope = match attachment.scope {
        store::AttachmentScope::Tree => AttachmentScope::Tree,
        store::AttachmentScope::Thread(pin) => AttachmentScope::Thread(engine_thread(pin)),
        store::AttachmentScope::Node(node) => AttachmentScope::Node(engine_node(node)),
    };
    let kind = match attachment.role {
        store::AttachmentRole::Instruction => AttachmentKind::Instruction(attachment.content),
        store::AttachmentRole::Context => {
            AttachmentKind::Context { title: attachment.name, text: attachment.content }
        }
        store::AttachmentRole::File => AttachmentKind::File {
            size_bytes: attachment.content.len() as u64,
            path: attachment.name,
            content: attachment.content,
        },
        store::AttachmentRole::Folder => AttachmentKind::Folder {
            path: attachment.name,
            entries: attachment.content.lines().map(str::to_owned).collect(),
        },
        store::AttachmentRole::Pdf => AttachmentKind::Pdf {
            pages: attachment.content.split(PAGE_BREAK).map(str::to_owned).collect(),
            path: attachment.name,
        },
        store::AttachmentRole::Image => match stored_image(&attachment.content) {
            Some(image) => AttachmentKind::Image {
                media_type: image.media_type.to_owned(),
                width: image.width,
                height: image.height,
                data: image.data.to_owned(),
                name: attachment.name,
            },
            // Not one Pinloom stored (a synced or imported row it cannot read): shown in the
            // plan as reference text naming it, never sent as an image it may not be.
            None => AttachmentKind::Context {
                text: format!("[an image, {}, that could not be read]", attachment.name),
                title: attachment.name,
            },
        },
    };
    Attachment { id: u64::try_from(attachment.id).unwrap_or(0), scope, kind }
}

/// The thread a snapshot's summary is for, back as the store's pin id.
pub(crate) fn store_pin(thread: ThreadRef) -> Option<PinId> {
    match thread {
        ThreadRef::Root => None,
        ThreadRef::Pin(pin) => Some(PinId(i64::try_from(pin.0).unwrap_or(i64::MAX))),
    }
}

/// How a request names a tree whose title was taken from a message since excluded or deleted.
pub(crate) const WITHDRAWN_TITLE: &str = "the main thread";

/// What a plan put on a checked-out path above its stored end, taken off before it goes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DraftPlace {
    /// No draft: the plan answers a stored message.
    None,
    /// A draft prompt after the message planned from, in its thread.
    Continuing,
    /// A draft prompt as the first message of this pin, which hangs off the message planned from.
    FirstIn(PinId),
}

/// A tree's path checked out of the [`SnapshotCache`] for one plan or one extension: it goes
/// back to the cache when the guard is dropped (any draft taken off, under the database's data
/// version at that moment), so no early return can lose it. A path left half-changed by a
/// failure is [`CheckedOutPath::discard`]ed instead.
pub(crate) struct CheckedOutPath {
    cache: Arc<SnapshotCache>,
    store: Arc<Store>,
    tree: TreeId,
    /// `None` only once discarded.
    path: Option<CachedPath>,
    draft: DraftPlace,
}

impl CheckedOutPath {
    /// A path read from the store, to be cached when dropped.
    pub(crate) fn new(
        cache: &Arc<SnapshotCache>,
        store: &Arc<Store>,
        tree: TreeId,
        path: CachedPath,
    ) -> CheckedOutPath {
        CheckedOutPath {
            cache: cache.clone(),
            store: store.clone(),
            tree,
            path: Some(path),
            draft: DraftPlace::None,
        }
    }

    /// Records that a draft prompt now sits on the path (pushed by the plan).
    pub(crate) fn carry_draft(&mut self, draft: DraftPlace) {
        self.draft = draft;
    }

    /// Drops the path instead of giving it back: what a failure left it holding is not to be
    /// trusted by the next plan.
    pub(crate) fn discard(mut self) {
        self.path = None;
    }
}

impl Deref for CheckedOutPath {
    type Target = CachedPath;

    fn deref(&self) -> &CachedPath {
        self.path.as_ref().expect("a discarded path is never read")
    }
}

impl DerefMut for CheckedOutPath {
    fn deref_mut(&mut self) -> &mut CachedPath {
        self.path.as_mut().expect("a discarded path is never read")
    }
}

impl Drop for CheckedOutPath {
    fn drop(&mut self) {
        let Some(mut path) = self.path.take() else { return };
        match self.draft {
            DraftPlace::None => {}
            DraftPlace::Continuing => {
                path.snapshot.nodes.pop();
            }
            DraftPlace::FirstIn(_) => {
                path.snapshot.nodes.pop();
                path.threads.pop();
            }
        }
        path.snapshot.active = engine_node(path.end);
        path.snapshot.fuse_sources.clear();
        // Unreadable, the version cannot vouch for the path: it is read again next time.
        if let Ok(data_version) = self.store.data_version() {
            self.cache.give_back(data_version, self.tree, path);
        }
    }
}

/// What one plan preview is cached under: the node, the draft prompt, the profile and its budget.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct PlanKey {
    pub(crate) node: i64,
    pub(crate) prompt: Option<String>,
    pub(crate) profile: String,
    pub(crate) budget: u32,
}

#[derive(Debug, Default)]
struct Caches {
    /// The data version the caches were filled under.
    data_version: Option<i64>,
    /// Trees' active paths, most recently used last.
    paths: Vec<(TreeId, CachedPath)>,
    plans: HashMap<PlanKey, (Instant, PlanView)>,
}

/// The snapshot cache: this process's paths (the snapshots plans are made from) and plans, valid
/// while the database's data version is the one they were filled under.
#[derive(Debug, Default)]
pub(crate) struct SnapshotCache {
    caches: Mutex<Caches>,
}

impl SnapshotCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Caches> {
        // The caches are rebuilt from the store; a panic while one was held leaves nothing unsafe.
        self.caches.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Drops everything: called after every write this process makes.
    pub(crate) fn forget(&self) {
        let mut caches = self.lock();
        caches.paths.clear();
        caches.plans.clear();
    }

    /// Drops the assembled plans: called after a write that extended a cached path instead of
    /// invalidating it.
    pub(crate) fn forget_plans(&self) {
        self.lock().plans.clear();
    }

    /// Drops everything if another process wrote since the caches were filled.
    fn check(caches: &mut Caches, data_version: i64) {
        if caches.data_version != Some(data_version) {
            caches.paths.clear();
            caches.plans.clear();
            caches.data_version = Some(data_version);
        }
    }

    /// Checks out the cached path of `tree` if it ends at `end`; it comes back when the guard is
    /// dropped, so two plans of one tree at once each get a path (the second reads its own).
    pub(crate) fn check_out(
        self: &Arc<Self>,
        store: &Arc<Store>,
        data_version: i64,
        tree: TreeId,
        end: NodeId,
    ) -> Option<CheckedOutPath> {
        let mut caches = self.lock();
        Self::check(&mut caches, data_version);
        let index = caches.paths.iter().position(|(t, path)| *t == tree && path.end == end)?;
        let path = caches.paths.remove(index).1;
        Some(CheckedOutPath::new(self, store, tree, path))
    }

    /// Keeps `path` as `tree`'s active path, forgetting the least recently used beyond the limit.
    fn give_back(&self, data_version: i64, tree: TreeId, path: CachedPath) {
        let mut caches = self.lock();
        Self::check(&mut caches, data_version);
        caches.paths.retain(|(t, _)| *t != tree);
        caches.paths.push((tree, path));
        if caches.paths.len() > CACHED_PATHS {
            caches.paths.remove(0);
        }
    }

    /// A plan assembled less than 30 seconds ago for the same key, with no write since.
    pub(crate) fn plan(&self, data_version: i64, key: &PlanKey) -> Option<PlanView> {
        let mut caches = self.lock();
        Self::check(&mut caches, data_version);
        match caches.plans.get(key) {
            Some((made, plan)) if made.elapsed() < PLAN_TTL => Some(plan.clone()),
            _ => None,
        }
    }

    pub(crate) fn keep_plan(&self, data_version: i64, key: PlanKey, plan: PlanView) {
        let mut caches = self.lock();
        Self::check(&mut caches, data_version);
        caches.plans.retain(|_, (made, _)| made.elapsed() < PLAN_TTL);
        caches.plans.insert(key, (Instant::now(), plan));
    }
}
