//! What a send sent, said in one line on standard error after the reply: the tokens of the
//! window, what was cut or folded, how the ancestor threads came, search hits, messages picked
//! from other branches, what the provider counted and what it cost, and where the reply is. The
//! receipt in full is `--json`'s.

use pinloom_app::json::{AncestorState, Exchange};
use pinloom_app::{Verdict, thousands};

/// The line for `exchange`, whose reply is in tree `tree_id`.
pub(crate) fn sent(exchange: &Exchange, tree_id: i64) -> String {
    let plan = &exchange.plan;
    let mut parts = Vec::new();
    let sent = exchange.receipt.as_ref().map_or(plan.used, |receipt| receipt.planned);
    parts.push(format!(
        "sent {} of {} tokens to {}",
        thousands(u64::from(sent)),
        thousands(u64::from(plan.available)),
        plan.profile
    ));
    if plan.omitted_messages > 0 {
        parts.push(format!("cut {}", count(plan.omitted_messages, "message", "messages")));
    }
    let dropped = plan
        .slices
        .iter()
        .filter(|slice| {
            !slice.included && slice.kind != "recentHistory" && slice.kind != "oldHistory"
        })
        .map(|slice| slice.count.max(1))
        .sum::<u32>();
    if dropped > 0 {
        parts.push(format!("left out {}", count(dropped, "other piece", "other pieces")));
    }
    if let Some(compaction) = plan.compaction.as_ref().filter(|compaction| compaction.included) {
        parts.push(format!(
            "{} folded into compaction {}",
            count(compaction.messages, "message", "messages"),
            compaction.id
        ));
    }
    let carried: Vec<_> = plan.ancestry.iter().filter(|ancestor| ancestor.included).collect();
    let summaries = carried
        .iter()
        .filter(|ancestor| {
            matches!(
                ancestor.state,
                AncestorState::Summary | AncestorState::Fitted | AncestorState::Cut
            )
        })
        .count() as u32;
    let excerpts =
        carried.iter().filter(|ancestor| ancestor.state == AncestorState::Excerpt).count() as u32;
    if summaries > 0 {
        parts.push(count(summaries, "summary", "summaries"));
    }
    if excerpts > 0 {
        parts.push(format!(
            "{} in place of a summary",
            count(excerpts, "thread's last messages", "threads' last messages")
        ));
    }
    if plan.missing_summaries > 0 {
        parts.push(format!(
            "{} not written yet",
            count(plan.missing_summaries, "summary", "summaries")
        ));
    }
    let hits = plan
        .slices
        .iter()
        .filter(|slice| slice.included && slice.kind == "searchResult")
        .map(|slice| slice.count.max(1))
        .sum::<u32>();
    if hits > 0 {
        parts.push(count(hits, "search hit", "search hits"));
    }
    let picked = |source: &str| {
        plan.slices.iter().filter(|slice| slice.included && slice.source == source).count() as u32
    };
    let (picks, pick_summaries) = (picked("picked"), picked("pickedSummary"));
    if picks > 0 {
        parts.push(format!("{} added by you", count(picks, "picked message", "picked messages")));
    }
    if pick_summaries > 0 {
        parts.push(count(pick_summaries, "picked branch's summary", "picked branches' summaries"));
    }
    if let Some(receipt) = &exchange.receipt {
        parts.push(match (receipt.verdict, receipt.counted) {
            (Verdict::Matched, Some(counted)) => {
                format!("the provider counted {}", thousands(counted))
            }
            (Verdict::ProviderCut, Some(counted)) => format!(
                "the provider counted only {}: it cut the context (`pinloom context --node {} \
                 --format report` says what)",
                thousands(counted),
                exchange.reply.message.id
            ),
            _ => "the provider counted nothing".to_owned(),
        });
        if let Some(cost) = &receipt.cost {
            parts.push(format!("${:.4}", cost.total));
        }
    }
    parts.push(format!("reply #{} in tree {tree_id}", exchange.reply.message.id));
    parts.join(" · ")
}

fn count(n: u32, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
