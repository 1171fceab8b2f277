//! Small builders for snapshots.

use pinloom_engine::profile::{ModelProfile, ProviderFamily};
use pinloom_engine::settings::TruncationStrategy;
use pinloom_engine::snapshot::{
    Anchor, Author, NodeId, NodeRecord, ParentEdge, PinId, PinRecord, Snapshot, SummaryAuthor,
    SummaryRecord, ThreadRef, TreeInfo,
};
use pinloom_engine::tokens::{CharHeuristic, Tokenizer};

/// A snapshot under construction: nodes appended as a chain, pins opened on the last node.
#[derive(Clone)]
pub(crate) struct Tree {
    pub(crate) snapshot: Snapshot,
    next_id: u64,
}

impl Tree {
    pub(crate) fn new(title: &str) -> Tree {
        Tree {
            snapshot: Snapshot {
                tree: TreeInfo { title: title.to_owned(), ..TreeInfo::default() },
                ..Snapshot::default()
            },
            next_id: 1,
        }
    }

    fn last(&self) -> Option<NodeId> {
        self.snapshot.nodes.last().map(|n| n.id)
    }

    /// Appends a continuation of the last node (or the root).
    pub(crate) fn say(&mut self, author: Author, text: &str) -> NodeId {
        let edge = match self.last() {
            Some(p) => ParentEdge::Continuation(p),
            None => ParentEdge::Root,
        };
        self.push(edge, author, text)
    }

    pub(crate) fn push(&mut self, edge: ParentEdge, author: Author, text: &str) -> NodeId {
        let id = self.next_id;
        self.next_id += 1;
        self.snapshot.nodes.push(NodeRecord::text(id, edge, author, text));
        self.snapshot.active = NodeId(id);
        NodeId(id)
    }

    /// Opens a pin on the last node and writes its first message.
    pub(crate) fn pin(
        &mut self,
        pin: u64,
        title: &str,
        anchor: Option<&str>,
        first: &str,
    ) -> NodeId {
        let parent = self.last().unwrap();
        let parent_thread = self.current_thread();
        self.snapshot.pins.push(PinRecord {
            id: PinId(pin),
            parent_thread,
            title: title.to_owned(),
            anchor: anchor.map(|a| Anchor { text: a.to_owned(), range: (0, a.len() as u32) }),
            hangs_off: Some(parent),
            closed: false,
            result: None,
        });
        self.push(ParentEdge::Pin { parent, pin: PinId(pin) }, Author::Human, first)
    }

    fn current_thread(&self) -> ThreadRef {
        let mut thread = ThreadRef::Root;
        for n in &self.snapshot.nodes {
            if let ParentEdge::Pin { pin, .. } = n.edge {
                thread = ThreadRef::Pin(pin);
            }
        }
        thread
    }

    /// A summary of `thread` ending at `up_to`: the summariser's at `budget`, or, without one,
    /// the person's (written on purpose).
    pub(crate) fn summary(
        &mut self,
        thread: ThreadRef,
        up_to: NodeId,
        budget: Option<u32>,
        text: &str,
    ) {
        let id = self.snapshot.summaries.len() as u64 + 1;
        let mut record = SummaryRecord::written(thread, up_to, budget.unwrap_or(1), text);
        record.id = id;
        record.budget = budget;
        if budget.is_none() {
            record.written_by = SummaryAuthor::Person;
            record.chosen = true;
        }
        self.snapshot.summaries.push(record);
    }
}

/// A profile counting 4 characters a token, no message overhead, with this window and no reserve:
/// budgets in tests are then plain arithmetic.
pub(crate) fn profile(family: ProviderFamily, window: u32) -> ModelProfile {
    let mut p = ModelProfile::unknown(family, "test-model");
    p.context_window = window;
    p.reserve = 0;
    p.tokenizer = Tokenizer::Chars(CharHeuristic::FourChars);
    p.message_overhead = 0;
    p
}

/// Every truncation strategy, for property tests.
pub(crate) fn strategies() -> impl proptest::strategy::Strategy<Value = TruncationStrategy> {
    use proptest::prelude::*;
    prop_oneof![
        Just(TruncationStrategy::TruncateMiddle),
        Just(TruncationStrategy::RollingWindow),
        Just(TruncationStrategy::StopAtLimit),
    ]
}
