//! The rule of what a path may know (`pinloom_engine::permitted`), checked on random trees
//! against an oracle written here from the rule's words: a second, independent reading of the
//! tree by parent links, not the planner's ancestry walk.
//!
//! Trees grow by regenerations and edits (branches from any message), nested pins with and
//! without a passage, closed pins with results, notes (included or not), exclusions, soft
//! deletes, and summaries, attachments and retrieval candidates aimed at random places, some on
//! the path and most not, some added by the person; some requests fuse answers, chosen among the
//! active message's own answers and from anywhere else; some messages are picked from anywhere
//! for a question over several branches, that question on the path or not, with their branch's
//! summary or without. Every included slice of every plan must
//! be permitted, and no text of anything else may appear in the rendered request.
//! Cases: PROPTEST_CASES (default 256).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;

use pinloom_engine::plan::{
    AncestorContent, ContextPlan, Provenance, PruneReason, SliceKind, SliceStatus, SourceId,
};
use pinloom_engine::planner::plan;
use pinloom_engine::profile::ProviderFamily;
use pinloom_engine::render::{chat_request, slice_text};
use pinloom_engine::settings::{AssemblyStrategy, Settings, TaskFrameShares};
use pinloom_engine::snapshot::{
    Anchor, Attachment, AttachmentKind, AttachmentScope, Author, FuseSource, NodeId, NodeRecord,
    ParentEdge, Part, PickedSource, PinId, PinRecord, RetrievalCandidate, Snapshot, SummaryAuthor,
    SummaryRecord, ThreadRef,
};

use crate::fixtures::{profile, strategies};

#[derive(Debug, Clone)]
enum Op {
    /// A message continuing the cursor.
    Say(bool),
    /// Move the cursor to an earlier message: the next message is a regeneration or an edit.
    Branch(usize),
    /// A pin on an earlier message, with or without a passage, perhaps closed with a result;
    /// its first message becomes the cursor.
    Pin(usize, bool, bool),
    /// A note on the cursor, included or not; the thread continues after it.
    Note(bool),
    /// Exclude an earlier message.
    Exclude(usize),
    /// Soft-delete an earlier message.
    Delete(usize),
    /// Keep an earlier message in every context.
    Keep(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => any::<bool>().prop_map(Op::Say),
        3 => any::<usize>().prop_map(Op::Branch),
        2 => (any::<usize>(), any::<bool>(), any::<bool>()).prop_map(|(n, a, c)| Op::Pin(n, a, c)),
        1 => any::<bool>().prop_map(Op::Note),
        1 => any::<usize>().prop_map(Op::Exclude),
        1 => any::<usize>().prop_map(Op::Delete),
        1 => any::<usize>().prop_map(Op::Keep),
    ]
}

/// Where random summaries, attachments and candidates are aimed: an index picks a node.
#[derive(Debug, Clone)]
struct Extras {
    /// (thread, node, kind: the summariser's / the person's at a point / an agent's for the whole
    /// thread / an empty one, long or short).
    summaries: Vec<(usize, usize, u8, bool)>,
    attachments: Vec<(u8, usize, u8)>,
    candidates: Vec<(usize, bool, u16)>,
    /// Whether every ancestor also gets a summary aimed exactly at its anchor; without, most
    /// ancestors have none and are carried as their last messages.
    aim_at_anchors: bool,
    /// Answers chosen to fuse from anywhere (an index picks a node), and whether the active
    /// message's own answers are chosen too.
    fuse: (Vec<usize>, bool),
    /// Messages picked for a question over several branches: (the question: on the path at this
    /// index, or any message; the message picked; with its branch's summary; that summary written).
    picked: Vec<(Option<usize>, usize, bool, bool)>,
}

fn extras() -> impl Strategy<Value = Extras> {
    (
        prop::collection::vec((any::<usize>(), any::<usize>(), 0u8..4, any::<bool>()), 0..8),
        prop::collection::vec((0u8..3, any::<usize>(), 0u8..6), 0..6),
        prop::collection::vec((any::<usize>(), prop::bool::weighted(0.2), 0u16..1000), 0..24),
        any::<bool>(),
        (prop::collection::vec(any::<usize>(), 0..3), prop::bool::weighted(0.3)),
        prop::collection::vec(
            (prop::option::of(any::<usize>()), any::<usize>(), any::<bool>(), any::<bool>()),
            0..4,
        ),
    )
        .prop_map(|(summaries, attachments, candidates, aim_at_anchors, fuse, picked)| {
            Extras { summaries, attachments, candidates, aim_at_anchors, fuse, picked }
        })
}

/// The words filling a message: shared across the tree, so hits are everywhere.
const FILLER: &str = "meander delta silt oxbow levee floodplain";

struct World {
    snapshot: Snapshot,
    /// Messages that may be the active node (not notes).
    messages: Vec<NodeId>,
}

fn grow(ops: &[Op]) -> World {
    let mut nodes: Vec<NodeRecord> = Vec::new();
    let mut pins: Vec<PinRecord> = Vec::new();
    let mut messages: Vec<NodeId> = Vec::new();
    let mut thread_of: HashMap<NodeId, ThreadRef> = HashMap::new();
    let text = |id: u64, extra: &str| format!("m{id}q {FILLER} {extra}");
    let push = |nodes: &mut Vec<NodeRecord>, edge: ParentEdge, author: Author, extra: &str| {
        let id = nodes.len() as u64 + 1;
        nodes.push(NodeRecord::text(id, edge, author, &text(id, extra)));
        NodeId(id)
    };
    let first = push(&mut nodes, ParentEdge::Root, Author::Human, "start");
    messages.push(first);
    thread_of.insert(first, ThreadRef::Root);
    let mut cursor = first;
    let mut human = false;
    for step in ops {
        let pick = |n: usize| messages[n % messages.len()];
        match *step {
            Op::Say(by_person) => {
                human = by_person || !human;
                let author = if human { Author::Human } else { Author::Model };
                let id = push(&mut nodes, ParentEdge::Continuation(cursor), author, "");
                thread_of.insert(id, thread_of[&cursor]);
                messages.push(id);
                cursor = id;
            }
            Op::Branch(n) => cursor = pick(n),
            Op::Pin(n, with_passage, closed) => {
                let anchor = pick(n);
                let pin = PinId(pins.len() as u64 + 1);
                pins.push(PinRecord {
                    id: pin,
                    parent_thread: thread_of[&anchor],
                    title: format!("pin {}", pin.0),
                    anchor: with_passage
                        .then(|| Anchor { text: format!("p{}q", pin.0), range: (0, 4) }),
                    hangs_off: Some(anchor),
                    closed,
                    result: closed.then(|| format!("r{}q", pin.0)),
                });
                let id = push(
                    &mut nodes,
                    ParentEdge::Pin { parent: anchor, pin },
                    Author::Human,
                    "asks",
                );
                thread_of.insert(id, ThreadRef::Pin(pin));
                messages.push(id);
                cursor = id;
            }
            Op::Note(include) => {
                let id = push(&mut nodes, ParentEdge::Annotation(cursor), Author::Human, "note");
                nodes[id.0 as usize - 1].include_annotation = include;
                thread_of.insert(id, thread_of[&cursor]);
                // The thread continues after the note, as the app places notes on the chain.
                cursor = id;
            }
            Op::Exclude(n) => nodes[pick(n).0 as usize - 1].excluded = true,
            Op::Delete(n) => nodes[pick(n).0 as usize - 1].pruned = true,
            Op::Keep(n) => nodes[pick(n).0 as usize - 1].kept = true,
        }
    }
    let snapshot = Snapshot { nodes, pins, active: cursor, ..Snapshot::default() };
    World { snapshot, messages }
}

/// The oracle's reading of the tree for one active message: parent links followed one by one.
struct Permitted {
    /// The path, root first.
    path: Vec<NodeId>,
    on_path: HashSet<NodeId>,
    thread: HashMap<NodeId, ThreadRef>,
    /// The active message's thread.
    current: ThreadRef,
    /// Ancestor threads and the message each hands on from (where the next thread hangs off).
    ancestors: HashMap<ThreadRef, NodeId>,
}

fn oracle(snapshot: &Snapshot) -> Permitted {
    let by_id: HashMap<NodeId, &NodeRecord> = snapshot.nodes.iter().map(|n| (n.id, n)).collect();
    let mut path = vec![snapshot.active];
    while let Some(parent) = by_id[path.last().unwrap()].edge.parent() {
        path.push(parent);
    }
    path.reverse();
    let mut thread = HashMap::new();
    let mut current = ThreadRef::Root;
    let mut ancestors = HashMap::new();
    for (position, id) in path.iter().enumerate() {
        if let ParentEdge::Pin { pin, .. } = by_id[id].edge {
            ancestors.insert(current, path[position - 1]);
            current = ThreadRef::Pin(pin);
        }
        thread.insert(*id, current);
    }
    Permitted { on_path: path.iter().copied().collect(), path, thread, current, ancestors }
}

impl Permitted {
    fn threads(&self) -> HashSet<ThreadRef> {
        self.thread.values().copied().collect()
    }

    fn attachment_allowed(&self, scope: AttachmentScope) -> bool {
        match scope {
            AttachmentScope::Tree => true,
            AttachmentScope::Thread(thread) => self.threads().contains(&thread),
            AttachmentScope::Node(node) => self.on_path.contains(&node),
        }
    }
}

/// Checks every included slice against the oracle; returns the markers of what may not appear.
fn check(
    snapshot: &Snapshot,
    plan: &ContextPlan,
    settings: &Settings,
) -> Result<Vec<String>, TestCaseError> {
    let permitted = oracle(snapshot);
    let by_id: HashMap<NodeId, &NodeRecord> = snapshot.nodes.iter().map(|n| (n.id, n)).collect();
    let current_pin = match permitted.current {
        ThreadRef::Pin(pin) => snapshot.pin(pin),
        ThreadRef::Root => None,
    };
    let sibling_results_allowed = |pin: PinId| {
        settings.include_closed_sibling_results
            && current_pin.is_some_and(|current| {
                current.id != pin
                    && snapshot
                        .pin(pin)
                        .is_some_and(|p| p.closed && p.parent_thread == current.parent_thread)
            })
    };
    // Rule 4's second half: a pin closed on the active message's own thread, opened from a
    // message of its path, hands its result back.
    let returned_results_allowed = |pin: PinId| {
        snapshot.pin(pin).is_some_and(|p| {
            p.closed
                && p.parent_thread == permitted.current
                && p.hangs_off.is_some_and(|node| {
                    permitted.on_path.contains(&node)
                        && permitted.thread[&node] == permitted.current
                })
        })
    };
    let results_allowed =
        |pin: PinId| sibling_results_allowed(pin) || returned_results_allowed(pin);
    // Messages an included excerpt quotes whole: sent once, there.
    let quoted: HashSet<NodeId> = plan
        .ancestors
        .iter()
        .filter(|entry| plan.slices[entry.slice].is_included())
        .flat_map(|entry| match &entry.content {
            AncestorContent::Excerpt { quoted, .. } => quoted.clone(),
            _ => Vec::new(),
        })
        .collect();
    let history: HashSet<NodeId> = plan
        .included()
        .filter_map(|s| match (s.kind.is_history() || s.kind == SliceKind::Prompt, s.source) {
            (true, SourceId::Node(id)) => Some(id),
            _ => None,
        })
        .collect();
    // Rule 7: a model's answer to the active message itself, chosen to fuse, not deleted.
    let fusable = |id: NodeId| {
        snapshot.fuse_sources.iter().any(|source| source.node == id)
            && by_id.get(&id).is_some_and(|node| {
                node.edge == ParentEdge::Continuation(snapshot.active)
                    && node.author == Author::Model
                    && !node.pruned
            })
    };
    // Rule 8: picked for a question on the path, and neither excluded nor deleted since.
    let pickable = |id: NodeId| {
        snapshot.picked.iter().any(|pick| {
            pick.node == id
                && permitted.on_path.contains(&pick.question)
                && !pick.deleted
                && !pick.excluded
        })
    };
    for slice in plan.included() {
        let why = format!("{:?} {:?}", slice.kind, slice.source);
        match slice.source {
            SourceId::FuseSource(id) => {
                prop_assert!(fusable(id), "not an answer to fuse: {}", why);
                prop_assert_eq!(slice.provenance, Provenance::ChosenToFuse);
            }
            SourceId::FuseInstruction => {
                prop_assert!(
                    plan.included().any(|s| matches!(s.source, SourceId::FuseSource(_))),
                    "an instruction to fuse nothing"
                );
                prop_assert_eq!(slice.provenance, Provenance::ChosenToFuse);
            }
            SourceId::Node(id) if slice.kind == SliceKind::RootGoal => {
                prop_assert_eq!(Some(&id), permitted.path.first(), "{}", why);
            }
            SourceId::Node(id) => {
                prop_assert!(permitted.on_path.contains(&id), "off the path: {}", why);
                prop_assert_eq!(permitted.thread[&id], permitted.current, "{}", why);
                let node = by_id[&id];
                prop_assert!(!node.excluded && !node.pruned, "{}", why);
                let note = matches!(node.edge, ParentEdge::Annotation(_));
                prop_assert!(!note || node.include_annotation, "a note not asked for: {}", why);
                let expected = if note { Provenance::AddedByPerson } else { Provenance::Path };
                prop_assert_eq!(slice.provenance, expected, "{}", why);
            }
            SourceId::Retrieval(id) => {
                // The path: the current thread up to the active message, each ancestor thread
                // up to where the next hangs off.
                prop_assert!(permitted.on_path.contains(&id), "a hit off the path: {}", why);
                let node = by_id[&id];
                prop_assert!(!node.excluded && !node.pruned, "{}", why);
                prop_assert!(!history.contains(&id), "sent twice: {}", why);
                prop_assert!(!quoted.contains(&id), "sent twice, once in an excerpt: {}", why);
                prop_assert_eq!(slice.provenance, Provenance::Path);
            }
            SourceId::AddedSearchHit(id) => {
                prop_assert!(
                    snapshot.retrieval.iter().any(|c| c.node == id && c.added),
                    "added by nobody: {}",
                    why
                );
                prop_assert!(!history.contains(&id), "sent twice: {}", why);
                prop_assert_eq!(slice.provenance, Provenance::AddedByPerson);
            }
            SourceId::Summary(thread) => {
                let Some(&up_to) = permitted.ancestors.get(&thread) else {
                    return Err(TestCaseError::fail(format!("not an ancestor thread: {why}")));
                };
                let Some(entry) = plan
                    .ancestors
                    .iter()
                    .find(|entry| plan.slices[entry.slice].source == slice.source)
                else {
                    return Err(TestCaseError::fail(format!(
                        "a summary slice no ancestor owns: {why}"
                    )));
                };
                prop_assert_eq!(entry.up_to, up_to, "{}", why);
                let text = slice_text(slice, snapshot);
                match &entry.content {
                    AncestorContent::Summary { record } => {
                        prop_assert!(serves(snapshot, *record, thread, up_to), "{}", why);
                        prop_assert!(text.contains(&snapshot.summaries[*record].text), "{}", why);
                    }
                    AncestorContent::Cut { record, .. } => {
                        prop_assert!(serves(snapshot, *record, thread, up_to), "{}", why);
                    }
                    AncestorContent::Fitted { record, from } => {
                        prop_assert!(serves(snapshot, *from, thread, up_to), "{}", why);
                        let fitted = &snapshot.summaries[*record];
                        prop_assert_eq!(fitted.fitted_from, Some(snapshot.summaries[*from].id));
                        prop_assert!(text.contains(&fitted.text), "{}", why);
                    }
                    // The thread's own messages up to the anchor: what the markers check allows.
                    AncestorContent::Excerpt { .. } => {}
                    AncestorContent::RootGoal => {
                        return Err(TestCaseError::fail(format!("a goal as a summary: {why}")));
                    }
                }
            }
            SourceId::Anchor(pin) => {
                prop_assert_eq!(Some(pin), current_pin.map(|p| p.id), "{}", why);
            }
            SourceId::PinResult(pin) => {
                prop_assert!(results_allowed(pin), "{}", why);
                let expected = if slice.kind == SliceKind::PinResult {
                    Provenance::Path
                } else {
                    Provenance::SiblingResult
                };
                prop_assert_eq!(slice.provenance, expected, "{}", why);
            }
            SourceId::Attachment(id) | SourceId::PdfPage { attachment: id, .. } => {
                let attachment = snapshot.attachments.iter().find(|a| a.id == id).unwrap();
                prop_assert!(permitted.attachment_allowed(attachment.scope), "{}", why);
            }
            SourceId::Picked(id) => {
                prop_assert!(pickable(id), "not picked for a question on the path: {}", why);
                prop_assert_eq!(slice.provenance, Provenance::AddedByPerson);
            }
            SourceId::PickedSummary(id) => {
                let asked = snapshot
                    .picked
                    .iter()
                    .any(|pick| pick.node == id && pick.with_summary && pick.summary.is_some());
                prop_assert!(pickable(id) && asked, "a summary nobody asked for: {}", why);
                prop_assert_eq!(slice.provenance, Provenance::AddedByPerson);
            }
            SourceId::AgentPrompt
            | SourceId::TreeSystemContext
            | SourceId::Tool(_)
            | SourceId::WorkingBuffer => {}
        }
    }
    // Every message picked for a question on the path is sent, whatever its branch: one slice
    // per pick, in the order picked.
    let picked_slices = plan.slices.iter().filter(|s| matches!(s.source, SourceId::Picked(_)));
    for (pick, slice) in snapshot.picked.iter().zip(picked_slices) {
        prop_assert_eq!(slice.source, SourceId::Picked(pick.node));
        let permitted_pick =
            permitted.on_path.contains(&pick.question) && !pick.deleted && !pick.excluded;
        prop_assert_eq!(slice.is_included(), permitted_pick, "{:?}", slice);
    }
    // A chosen answer is left out only for a reason, and every permitted one is sent.
    for slice in &plan.slices {
        if let SourceId::FuseSource(id) = slice.source {
            prop_assert_eq!(slice.is_included(), fusable(id), "{:?}", slice);
        }
    }
    // What may not appear anywhere in the request.
    let mut forbidden = Vec::new();
    let added: HashSet<NodeId> =
        snapshot.retrieval.iter().filter(|c| c.added).map(|c| c.node).collect();
    for node in &snapshot.nodes {
        let elsewhere_allowed = added.contains(&node.id) || fusable(node.id) || pickable(node.id);
        if !permitted.on_path.contains(&node.id) && !elsewhere_allowed {
            forbidden.push(format!("m{}q", node.id.0));
        }
    }
    for (k, summary) in snapshot.summaries.iter().enumerate() {
        let source = match summary.fitted_from {
            Some(id) => snapshot.summaries.iter().position(|s| s.id == id).unwrap_or(k),
            None => k,
        };
        let allowed = permitted
            .ancestors
            .get(&summary.thread)
            .is_some_and(|&up_to| serves(snapshot, source, summary.thread, up_to));
        if !allowed {
            forbidden.push(format!("s{k}q"));
        }
    }
    for (k, pick) in snapshot.picked.iter().enumerate() {
        if !(pick.with_summary && pickable(pick.node)) {
            forbidden.push(format!("k{k}q"));
        }
    }
    for attachment in &snapshot.attachments {
        if !permitted.attachment_allowed(attachment.scope) {
            forbidden.push(format!("a{}q", attachment.id));
        }
    }
    for pin in &snapshot.pins {
        if current_pin.map(|p| p.id) != Some(pin.id) {
            forbidden.push(format!("p{}q", pin.id.0));
        }
        if !results_allowed(pin.id) {
            forbidden.push(format!("r{}q", pin.id.0));
        }
    }
    Ok(forbidden)
}

/// Whether summary `k` may stand for ancestor `thread` known up to `up_to`: it ends exactly
/// there, or it is of the whole thread and written on purpose.
fn serves(snapshot: &Snapshot, k: usize, thread: ThreadRef, up_to: NodeId) -> bool {
    let summary = &snapshot.summaries[k];
    summary.thread == thread
        && summary.fitted_from.is_none()
        && (summary.up_to == Some(up_to) || (summary.up_to.is_none() && summary.chosen))
}

/// No ancestor thread leaves a plan without a word: each has its entry, and the entry's slice is
/// sent or pruned with a reason the report lists.
fn every_ancestor_is_accounted_for(
    snapshot: &Snapshot,
    plan: &ContextPlan,
) -> Result<(), TestCaseError> {
    let permitted = oracle(snapshot);
    prop_assert_eq!(plan.ancestors.len(), permitted.ancestors.len());
    let report = plan.pruned_report();
    for entry in &plan.ancestors {
        prop_assert_eq!(permitted.ancestors.get(&entry.thread), Some(&entry.up_to));
        let slice = &plan.slices[entry.slice];
        match slice.status {
            SliceStatus::Included => {}
            SliceStatus::Pruned(reason) => {
                prop_assert!(
                    matches!(
                        reason,
                        PruneReason::OverBudget
                            | PruneReason::OutsideShare
                            | PruneReason::OverDepthBudget
                    ),
                    "an ancestor left out for {:?}",
                    reason
                );
                prop_assert!(
                    report.iter().any(|cut| cut.source == slice.source && cut.reason == reason)
                );
            }
        }
    }
    Ok(())
}

fn furnish(world: &mut World, extras: &Extras, active: usize) {
    let snapshot = &mut world.snapshot;
    let messages = &world.messages;
    let pick = |n: usize| messages[n % messages.len()];
    snapshot.active = pick(active);
    let threads: Vec<ThreadRef> = std::iter::once(ThreadRef::Root)
        .chain(snapshot.pins.iter().map(|p| ThreadRef::Pin(p.id)))
        .collect();
    // Summaries of any thread, ending anywhere, written by anyone, some longer than any budget
    // and some empty; the oracle knows which may serve an ancestor.
    let long = |k: usize| format!("s{k}q {}", "summary ".repeat(60));
    snapshot.summaries = extras
        .summaries
        .iter()
        .enumerate()
        .map(|(k, &(thread, node, kind, is_long))| {
            let text = if is_long { long(k) } else { format!("s{k}q summary") };
            let mut record =
                SummaryRecord::written(threads[thread % threads.len()], pick(node), 800, &text);
            record.id = k as u64 + 1;
            match kind {
                0 => {}
                1 => {
                    (record.budget, record.written_by, record.chosen) =
                        (None, SummaryAuthor::Person, true)
                }
                2 => {
                    (record.up_to, record.budget) = (None, None);
                    (record.written_by, record.chosen) = (SummaryAuthor::Agent, true);
                }
                _ => record.text = " ".into(),
            }
            record
        })
        .collect();
    // Aim some summaries exactly at the path's anchors, so the permitted case is exercised, and
    // give every chosen summary a fitted version at the nearest budget.
    let permitted = oracle(snapshot);
    for (thread, up_to) in permitted.ancestors.iter().filter(|_| extras.aim_at_anchors) {
        let k = snapshot.summaries.len();
        let mut record = SummaryRecord::written(*thread, *up_to, 800, &format!("s{k}q summary"));
        record.id = k as u64 + 1;
        snapshot.summaries.push(record);
    }
    let chosen: Vec<SummaryRecord> =
        snapshot.summaries.iter().filter(|s| s.chosen).cloned().collect();
    for source in chosen {
        let k = snapshot.summaries.len();
        let mut fitted = source.clone();
        (fitted.id, fitted.fitted_from, fitted.budget) = (k as u64 + 1, Some(source.id), Some(8));
        (fitted.written_by, fitted.chosen) = (SummaryAuthor::Model, false);
        fitted.text = format!("s{k}q fitted");
        snapshot.summaries.push(fitted);
    }
    snapshot.attachments = extras
        .attachments
        .iter()
        .enumerate()
        .map(|(k, &(scope, n, kind))| {
            let id = k as u64 + 1;
            let scope = match scope {
                0 => AttachmentScope::Tree,
                1 => AttachmentScope::Thread(threads[n % threads.len()]),
                _ => AttachmentScope::Node(pick(n)),
            };
            let marker = format!("a{id}q");
            let kind = match kind {
                0 => AttachmentKind::Instruction(marker),
                1 => AttachmentKind::Context { title: "ctx".into(), text: marker },
                2 => AttachmentKind::File {
                    path: "f.txt".into(),
                    size_bytes: marker.len() as u64,
                    content: marker,
                },
                3 => AttachmentKind::Folder { path: "dir".into(), entries: vec![marker] },
                4 => AttachmentKind::Pdf {
                    path: "f.pdf".into(),
                    pages: vec![format!("{marker} one"), format!("{marker} two")],
                },
                _ => AttachmentKind::Image {
                    name: "i.png".into(),
                    media_type: "image/png".into(),
                    width: 64,
                    height: 64,
                    data: marker,
                },
            };
            Attachment { id, scope, kind }
        })
        .collect();
    let by_id: HashMap<NodeId, String> = snapshot
        .nodes
        .iter()
        .map(|n| (n.id, n.parts.iter().map(Part::text).collect::<Vec<_>>().join("\n")))
        .collect();
    // Answers chosen to fuse: from anywhere, as a faulty front end might send them, and the
    // active message's own answers when the case asks for them.
    let (picks, own) = &extras.fuse;
    let mut chosen: Vec<NodeId> =
        picks.iter().map(|&n| NodeId((n % snapshot.nodes.len()) as u64 + 1)).collect();
    if *own {
        let active = snapshot.active;
        chosen.extend(
            snapshot
                .nodes
                .iter()
                .filter(|node| node.edge == ParentEdge::Continuation(active))
                .map(|node| node.id),
        );
    }
    let records: HashMap<NodeId, &NodeRecord> = snapshot.nodes.iter().map(|n| (n.id, n)).collect();
    snapshot.fuse_sources = chosen
        .into_iter()
        .map(|id| {
            let node = records[&id];
            FuseSource {
                node: id,
                answers: match node.edge {
                    ParentEdge::Continuation(parent) => Some(parent),
                    _ => None,
                },
                author: node.author,
                deleted: node.pruned,
                text: by_id[&id].clone(),
                label: "a model".into(),
            }
        })
        .collect();
    // Messages picked from anywhere for a question on the path or anywhere else.
    let path = oracle(snapshot).path;
    snapshot.picked = extras
        .picked
        .iter()
        .enumerate()
        .map(|(k, &(question, n, with_summary, written))| {
            let node = records[&NodeId((n % snapshot.nodes.len()) as u64 + 1)];
            let mut thread = ThreadRef::Root;
            let mut at = node;
            loop {
                match at.edge {
                    ParentEdge::Pin { pin, .. } => {
                        thread = ThreadRef::Pin(pin);
                        break;
                    }
                    ParentEdge::Root => break,
                    edge => at = records[&edge.parent().unwrap()],
                }
            }
            PickedSource {
                question: match question {
                    Some(at) => path[at % path.len()],
                    None => pick(n / 7),
                },
                node: node.id,
                label: format!("the thread {thread:?}"),
                text: by_id[&node.id].clone(),
                excluded: node.excluded,
                deleted: node.pruned,
                with_summary,
                summary: written.then(|| format!("k{k}q summary")),
                thread,
            }
        })
        .collect();
    // Candidates from anywhere, as a faulty store might offer them; some added by the person.
    snapshot.retrieval = extras
        .candidates
        .iter()
        .map(|&(n, added, bm25)| {
            let node = NodeId((n % snapshot.nodes.len()) as u64 + 1);
            RetrievalCandidate {
                node,
                text: by_id[&node].clone(),
                author: Author::Model,
                created_at_ms: 0,
                bm25: f64::from(bm25) / 100.0,
                bookmarked: false,
                pinned: false,
                added,
            }
        })
        .collect();
}

/// What the runs checked, printed when the last case has passed (`--nocapture` shows it): the
/// figures the engine README quotes.
struct Tally {
    cases: AtomicUsize,
    plans: AtomicUsize,
    refusals: AtomicUsize,
    with_hit: AtomicUsize,
    fused: AtomicUsize,
    picked: AtomicUsize,
    ancestors: AtomicUsize,
    summaries: AtomicUsize,
    fitted_or_cut: AtomicUsize,
    excerpts: AtomicUsize,
    ancestors_cut: AtomicUsize,
}

static TALLY: Tally = Tally {
    cases: AtomicUsize::new(0),
    plans: AtomicUsize::new(0),
    refusals: AtomicUsize::new(0),
    with_hit: AtomicUsize::new(0),
    fused: AtomicUsize::new(0),
    picked: AtomicUsize::new(0),
    ancestors: AtomicUsize::new(0),
    summaries: AtomicUsize::new(0),
    fitted_or_cut: AtomicUsize::new(0),
    excerpts: AtomicUsize::new(0),
    ancestors_cut: AtomicUsize::new(0),
};

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
}

fn tally(plan: Option<&ContextPlan>) {
    let add = |counter: &AtomicUsize, n: usize| counter.fetch_add(n, Ordering::Relaxed);
    match plan {
        None => {
            add(&TALLY.refusals, 1);
        }
        Some(plan) => {
            add(&TALLY.plans, 1);
            add(
                &TALLY.with_hit,
                usize::from(plan.included().any(|s| s.kind == SliceKind::SearchResult)),
            );
            add(
                &TALLY.fused,
                usize::from(plan.included().any(|s| matches!(s.source, SourceId::FuseSource(_)))),
            );
            add(&TALLY.picked, usize::from(plan.included().any(|s| s.kind == SliceKind::Picked)));
            for entry in &plan.ancestors {
                add(&TALLY.ancestors, 1);
                match entry.content {
                    AncestorContent::Summary { .. } => add(&TALLY.summaries, 1),
                    AncestorContent::Fitted { .. } | AncestorContent::Cut { .. } => {
                        add(&TALLY.fitted_or_cut, 1)
                    }
                    AncestorContent::Excerpt { .. } => add(&TALLY.excerpts, 1),
                    AncestorContent::RootGoal => 0,
                };
                add(&TALLY.ancestors_cut, usize::from(!plan.slices[entry.slice].is_included()));
            }
        }
    }
    if TALLY.cases.fetch_add(1, Ordering::Relaxed) + 1 == cases() as usize {
        let get = |counter: &AtomicUsize| counter.load(Ordering::Relaxed);
        eprintln!(
            "permitted: {} cases, {} plans checked, {} refusals, {} with a search hit, {} fusing \
             answers, {} with messages picked from other branches; {} \
             ancestor threads: {} as a summary, {} fitted or cut, {} as their last messages, {} \
             cut for the budget with the reason listed",
            cases(),
            get(&TALLY.plans),
            get(&TALLY.refusals),
            get(&TALLY.with_hit),
            get(&TALLY.fused),
            get(&TALLY.picked),
            get(&TALLY.ancestors),
            get(&TALLY.summaries),
            get(&TALLY.fitted_or_cut),
            get(&TALLY.excerpts),
            get(&TALLY.ancestors_cut),
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn every_slice_of_every_plan_is_something_the_path_may_know(
        ops in prop::collection::vec(op(), 0..80),
        extras in extras(),
        active in any::<usize>(),
        window in 40u32..4_000,
        strategy in strategies(),
        step in prop_oneof![Just(0u32), Just(25), 1u32..100],
        share in 0u32..60,
        frames in any::<bool>(),
        sibling_results in any::<bool>(),
        budgets in prop_oneof![Just(vec![800, 500, 300, 150]), Just(vec![8]), Just(vec![40, 8])],
        family in prop_oneof![
            Just(ProviderFamily::OpenAiCompatible),
            Just(ProviderFamily::Anthropic),
            Just(ProviderFamily::Gemini),
        ],
    ) {
        let mut world = grow(&ops);
        furnish(&mut world, &extras, active);
        let mut settings = Settings {
            truncation: strategy,
            truncation_step_percent: step,
            include_closed_sibling_results: sibling_results,
            depth_budgets: budgets,
            ..Settings::default()
        };
        settings.retrieval.share_percent = share;
        if frames {
            settings.assembly = AssemblyStrategy::TaskFrames(TaskFrameShares::default());
        }
        let model = profile(family, window);
        let Ok(plan) = plan(&world.snapshot, &model, &settings) else {
            // Refusals (budget, exclusions, a deleted active message) have tests of their own;
            // what matters here is that nothing that may not be known is ever sent.
            tally(None);
            return Ok(());
        };
        tally(Some(&plan));
        let forbidden = check(&world.snapshot, &plan, &settings)?;
        every_ancestor_is_accounted_for(&world.snapshot, &plan)?;
        let request = chat_request(&plan, &world.snapshot, &model);
        let mut sent: String = request.system.clone().unwrap_or_default();
        for message in &request.messages {
            for part in &message.parts {
                sent.push('\n');
                match part {
                    // An image's bytes are what it sends: they must not leak either.
                    Part::Image { data, .. } => sent.push_str(data),
                    part => sent.push_str(part.text()),
                }
            }
        }
        for marker in forbidden {
            // A marker is a whole word: `m1q` must not be found inside `m11q`.
            let found = sent
                .split(|c: char| !c.is_alphanumeric())
                .any(|word| word == marker);
            prop_assert!(!found, "{} was sent:\n{}", marker, sent);
        }
    }
}
