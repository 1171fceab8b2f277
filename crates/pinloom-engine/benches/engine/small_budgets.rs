//! W7: small budgets, in the style of the NTM measurement quoted in issue 47 (405 multi-turn
//! conversations with one-line replies, budgets of a quarter to three quarters of each
//! conversation). Generated here: 400 conversations of 6 to 30 turns whose questions each state a
//! fact (a gauge reading) among 10 to 60 words, answered in one line. At each budget, the last
//! question is planned by truncateMiddle (the shipped settings) and by the newest messages that
//! fit (what LangChain's `trim_messages` keeps), and the facts each request carries are counted;
//! so are the plans whose first question was cut while its reply was kept as the start.

use pinloom_engine::family::request_body;
use pinloom_engine::plan::{SliceKind, SourceId};
use pinloom_engine::planner::plan;
use pinloom_engine::profile::{ModelProfile, ProviderFamily};
use pinloom_engine::settings::Settings;
use pinloom_engine::snapshot::{Author, CachedCount, NodeRecord, ParentEdge, Snapshot};
use pinloom_engine::tokens::Tokenizer;

use super::{Rng, prose};

const CONVERSATIONS: u64 = 400;

/// What one budget share kept over all conversations.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    /// Facts stated before the last question, in all conversations.
    pub(crate) facts: u64,
    /// Those truncateMiddle's request carried.
    pub(crate) pinloom: u64,
    /// Those the newest messages that fit carried.
    pub(crate) newest: u64,
    /// Plans that kept the first reply as the start without its question.
    pub(crate) split_starts: u64,
    /// Plans that found the budget small (no start, marker or step).
    pub(crate) small: u64,
}

/// W7 at budgets of `percent` of each conversation's tokens, truncateMiddle cutting in steps of
/// `step` % of the history's room.
pub(crate) fn w7_at(percent: u64, step: u32) -> Kept {
    let tokenizer = Tokenizer::O200k;
    let settings = Settings { truncation_step_percent: step, ..Settings::default() };
    let mut rng = Rng(0x7e5 + percent);
    let mut kept = Kept::default();
    for conversation in 0..CONVERSATIONS {
        let turns = 6 + rng.next() % 25;
        let mut snapshot = Snapshot::default();
        let mut facts = Vec::new();
        let mut total = 0u64;
        for turn in 1..=turns {
            let fact =
                format!("Fact {conversation}-{turn}: gauge {} read {} cm.", turn * 7, turn * 13);
            let words = 10 + (rng.next() % 50) as usize;
            let question = format!("{} {fact}", prose(&mut rng, words * 6));
            let reply_bytes = 40 + (rng.next() % 40) as usize;
            let reply = prose(&mut rng, reply_bytes);
            for (author, text) in [(Author::Human, question), (Author::Model, reply)] {
                // The last question is the prompt; its reply is not written yet.
                if turn == turns && author == Author::Model {
                    break;
                }
                let id = snapshot.nodes.len() as u64 + 1;
                let edge = if id == 1 {
                    ParentEdge::Root
                } else {
                    ParentEdge::Continuation(pinloom_engine::snapshot::NodeId(id - 1))
                };
                let mut node = NodeRecord::text(id, edge, author, &text);
                let tokens = tokenizer.count_u32(&text);
                node.cached_tokens =
                    [CachedCount { tokenizer: tokenizer.id(), tokens }].into_iter().collect();
                total += u64::from(tokens);
                snapshot.nodes.push(node);
                snapshot.active = pinloom_engine::snapshot::NodeId(id);
            }
            if turn < turns {
                facts.push(fact);
            }
        }
        let mut profile = ModelProfile::shipped(ProviderFamily::OpenAiCompatible, "gpt-4o");
        profile.reserve = 0;
        profile.context_window = u32::try_from(total * percent / 100).unwrap().max(1);
        let Ok(made) = plan(&snapshot, &profile, &settings) else { continue };
        let body = request_body(&made, &snapshot, &profile);
        kept.facts += facts.len() as u64;
        kept.pinloom += facts.iter().filter(|fact| body.contains(fact.as_str())).count() as u64;
        kept.small += u64::from(made.small_budget.is_some());
        // The newest messages that fit beside the prompt, as the plan counts them.
        let history: Vec<(usize, u64, bool)> = made
            .slices
            .iter()
            .filter(|slice| slice.kind.is_history())
            .filter_map(|slice| match slice.source {
                SourceId::Node(node) => {
                    Some(((node.0 - 1) as usize, u64::from(slice.tokens), slice.is_included()))
                }
                _ => None,
            })
            .collect();
        let prompt: u64 = made
            .slices
            .iter()
            .filter(|slice| slice.kind == SliceKind::Prompt)
            .map(|slice| u64::from(slice.tokens))
            .sum();
        let room = u64::from(made.available).saturating_sub(prompt);
        let mut filled = 0u64;
        for &(index, tokens, _) in history.iter().rev() {
            if filled + tokens > room {
                break;
            }
            filled += tokens;
            let text = snapshot.nodes[index].parts[0].text();
            kept.newest += facts.iter().filter(|fact| text.contains(fact.as_str())).count() as u64;
        }
        if history.len() >= 2 && !history[0].2 && history[1].2 && !history[1..].iter().all(|h| h.2)
        {
            kept.split_starts += 1;
        }
    }
    kept
}
