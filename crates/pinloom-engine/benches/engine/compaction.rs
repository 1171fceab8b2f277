//! W6: compaction against truncation on one long thread with planted facts, W5's method. A
//! 120-turn conversation (questions ~300 B, answers ~900 B), every answer stating a fact (a
//! gauge reading), sent to a 16,384-token window: from about turn 40 the history no longer
//! fits. Truncation (truncateMiddle, the shipped 25 % step) keeps the first turn and the newest
//! that fit; compaction (the app's automatic setting: when the history is cut or fills 80 % of
//! the budget, all but the last 4 turns) sends a summary in their place. The summariser is
//! simulated as W5's is: its summary keeps every fact stated in the span, in order, then prose up
//! to its size (the app's budget, an eighth of the window: 2,048 tokens; a second run at half),
//! and a summary that cannot hold every fact keeps the oldest that fit. What it reads is counted
//! as the app reads it: the whole span while it fits the summariser's room, else the previous
//! compaction's summary and what followed. Each request is checked for every fact stated before
//! it; no search hits (the bench has no full-text index; in the app both recover some by search).

use pinloom_engine::ContextPlan;
use pinloom_engine::family::request_body;
use pinloom_engine::planner::plan;
use pinloom_engine::profile::{ModelProfile, ProviderFamily};
use pinloom_engine::settings::Settings;
use pinloom_engine::snapshot::{
    Author, CachedCount, Compaction, NodeId, NodeRecord, ParentEdge, Snapshot, TreeInfo,
};
use pinloom_engine::tokens::Tokenizer;

use super::{Rng, prose};

const TURNS: u64 = 120;
const WINDOW: u32 = 16_384;
/// The app's automatic compaction: at this share of the budget, keeping this many turns.
const AT_PERCENT: u64 = 80;
const KEEP_TURNS: usize = 4;
/// What the summariser is told besides the thread (the shipped instruction's length).
const INSTRUCTION_TOKENS: u64 = 80;

/// What one way of fitting the thread sent over the whole conversation.
#[derive(Debug, Default)]
pub(crate) struct Fitted {
    /// Tokens of every request, added up.
    pub(crate) sent: u64,
    /// Facts the requests carried, over the facts stated before each.
    pub(crate) facts_carried: u64,
    pub(crate) facts_due: u64,
    /// The last request: its tokens, and the facts it carried of those stated before it.
    pub(crate) last_sent: u64,
    pub(crate) last_facts: u64,
    /// Compactions made, and the summariser's tokens (read and written) for them.
    pub(crate) compactions: u64,
    pub(crate) summariser: u64,
}

/// W6 with summaries of `summary_tokens`: truncation's run and compaction's.
pub(crate) fn w6_runs(summary_tokens: u32) -> (Fitted, Fitted, Snapshot) {
    let tokenizer = Tokenizer::O200k;
    let mut profile = ModelProfile::shipped(ProviderFamily::OpenAiCompatible, "gpt-4o");
    profile.context_window = WINDOW;
    let settings = Settings::default();
    let mut rng = Rng(0x3c6);
    let fact = |turn: u64| {
        format!("Fact {turn}: the gauge at mile {} read {} cm.", turn * 7, turn * 13 + 5)
    };
    let mut snapshot = Snapshot {
        tree: TreeInfo {
            title: "long thread".into(),
            system_context: "Be precise.".into(),
            ..TreeInfo::default()
        },
        ..Snapshot::default()
    };
    let (mut truncated, mut compacted) = (Fitted::default(), Fitted::default());
    // The thread's messages so far: id, tokens, and the turn whose fact it states (answers).
    let mut thread: Vec<(NodeId, u64, Option<u64>)> = Vec::new();
    let mut current: Option<Compaction> = None;
    // Where the last compaction ended (in `thread`), for what the next one reads.
    let mut last_end = 0usize;
    for turn in 1..=TURNS {
        for author in [Author::Human, Author::Model] {
            let id = NodeId(thread.len() as u64 + 1);
            let text = match author {
                Author::Model => format!("{} {}", fact(turn), prose(&mut rng, 900)),
                _ => prose(&mut rng, 300),
            };
            let edge = thread
                .last()
                .map_or(ParentEdge::Root, |(last, ..)| ParentEdge::Continuation(*last));
            let mut node = NodeRecord::text(id.0, edge, author, &text);
            let tokens = tokenizer.count_u32(&text);
            node.cached_tokens =
                [CachedCount { tokenizer: tokenizer.id(), tokens }].into_iter().collect();
            snapshot.nodes.push(node);
            thread.push((id, u64::from(tokens) + 4, (author == Author::Model).then_some(turn)));
            if author != Author::Human {
                continue;
            }
            snapshot.active = id;
            let stated: Vec<String> = (1..turn).map(fact).collect();
            // Truncation: the plan as it is.
            snapshot.compaction = None;
            let cut = plan(&snapshot, &profile, &settings).unwrap();
            count_request(&mut truncated, &cut, &snapshot, &profile, &stated, turn);
            // Compaction: compacted first when the history is cut or past its share.
            snapshot.compaction = current.clone();
            let mut made = plan(&snapshot, &profile, &settings).unwrap();
            let history = thread.len() - 1; // the prompt aside
            if due(&made, AT_PERCENT) && history > 2 * KEEP_TURNS + 1 {
                let end = history - 2 * KEEP_TURNS; // messages 0..end are compacted
                let facts: Vec<String> =
                    thread[..end].iter().filter_map(|(.., turn)| turn.map(fact)).collect();
                let text = summary(&mut rng, tokenizer, &facts, summary_tokens);
                // What the summariser reads: the span while it fits its room, else the last
                // summary and what followed it.
                let span: u64 = thread[..end].iter().map(|(_, tokens, _)| tokens).sum();
                let room = u64::from(WINDOW - summary_tokens).saturating_sub(1_024);
                let read = match &current {
                    Some(previous) if span > room => {
                        tokenizer.count(&previous.text)
                            + thread[last_end..end].iter().map(|(_, tokens, _)| tokens).sum::<u64>()
                    }
                    _ => span,
                };
                compacted.compactions += 1;
                compacted.summariser += read + INSTRUCTION_TOKENS + tokenizer.count(&text);
                current = Some(Compaction {
                    id: i64::try_from(compacted.compactions).unwrap(),
                    up_to: thread[end - 1].0,
                    text,
                    written_by: "the summariser".into(),
                    stale: None,
                });
                last_end = end;
                snapshot.compaction = current.clone();
                made = plan(&snapshot, &profile, &settings).unwrap();
            }
            count_request(&mut compacted, &made, &snapshot, &profile, &stated, turn);
        }
    }
    (truncated, compacted, snapshot)
}

/// Whether the app's automatic setting compacts before sending `made`: its history (sent or cut,
/// not already compacted) is cut, or fills more than `at_percent` of the budget.
pub(crate) fn due(made: &ContextPlan, at_percent: u64) -> bool {
    let history = made.history_fill();
    let tokens: u64 = history.iter().map(|entry| u64::from(entry.tokens)).sum();
    history.iter().any(|entry| entry.cut) || tokens * 100 > u64::from(made.available) * at_percent
}

/// The simulated summary: the facts in order while they fit, then prose up to its size.
pub(crate) fn summary(rng: &mut Rng, tokenizer: Tokenizer, facts: &[String], size: u32) -> String {
    let mut text = String::new();
    for fact in facts {
        if tokenizer.count(&format!("{text}{fact} ")) > u64::from(size) {
            break;
        }
        text.push_str(fact);
        text.push(' ');
    }
    let filler = prose(rng, 8 * size as usize);
    let mut end = 0;
    for (at, _) in filler.match_indices(' ') {
        if tokenizer.count(&format!("{text}{}", &filler[..at])) > u64::from(size) {
            break;
        }
        end = at;
    }
    text.push_str(&filler[..end]);
    text
}

fn count_request(
    into: &mut Fitted,
    made: &ContextPlan,
    snapshot: &Snapshot,
    profile: &ModelProfile,
    stated: &[String],
    turn: u64,
) {
    let body = request_body(made, snapshot, profile);
    let carried = stated.iter().filter(|fact| body.contains(fact.as_str())).count() as u64;
    into.sent += u64::from(made.used);
    into.facts_carried += carried;
    into.facts_due += stated.len() as u64;
    if turn == TURNS {
        into.last_sent = u64::from(made.used);
        into.last_facts = carried;
    }
}
