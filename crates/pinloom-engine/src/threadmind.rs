//! ThreadMind's output, byte for byte as ThreadMind v0.4.1 prints it: the assembled markdown of
//! `context_get` with its footer, and `stats_show`.
//!
//! ThreadMind counts in its own way and Pinloom keeps it: 3.5 UTF-16 units a token, rounded up;
//! depth is the number of threads on the chain, the active one included; the raw history is the
//! cumulative length of every summary update.

use crate::error::EngineError;
use crate::planner::ancestry;
use crate::snapshot::{Author, Part, Snapshot, SummaryRecord, ThreadRef};
use crate::tokens::CharHeuristic;

/// The assembled context as ThreadMind computes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadMindContext {
    /// The sections joined by `---` separators, without the footer.
    pub text: String,
    /// ThreadMind's estimate of `text`.
    pub tokens: u64,
    /// Threads on the chain, the active one included.
    pub depth: usize,
}

/// Assembles the chain's sections: the system context, then each thread's summary root-first,
/// the active thread marked `(active)` and falling back to its messages when it has no summary.
/// Threads with nothing to show are skipped.
pub fn assemble(snapshot: &Snapshot, max_depth: usize) -> Result<ThreadMindContext, EngineError> {
    let path = ancestry(snapshot, max_depth)?;
    let mut sections = Vec::new();
    if !snapshot.tree.system_context.is_empty() {
        sections.push(format!("## System Context\n\n{}", snapshot.tree.system_context));
    }
    let last = path.threads.len() - 1;
    for (i, segment) in path.threads.iter().enumerate() {
        let active = i == last;
        let end = snapshot.nodes[path.nodes[segment.end - 1]].id;
        let title = match segment.thread {
            ThreadRef::Root => snapshot.tree.title.clone(),
            ThreadRef::Pin(pin) => snapshot.pin(pin).map(|p| p.title.clone()).unwrap_or_default(),
        };
        let mut content = thread_summary(snapshot, segment.thread, end)
            .map(|s| s.text.clone())
            .unwrap_or_default();
        if content.is_empty() && active {
            content = path.nodes[segment.start..segment.end]
                .iter()
                .map(|&n| &snapshot.nodes[n])
                .filter(|n| !n.excluded && !n.pruned)
                .map(|n| {
                    let who = match n.author {
                        Author::Human => "user",
                        Author::Model => "assistant",
                        Author::Tool => "tool",
                    };
                    let text = n.parts.iter().map(Part::text).collect::<Vec<_>>().join("\n");
                    format!("{who}: {text}")
                })
                .collect::<Vec<_>>()
                .join("\n\n");
        }
        if !content.is_empty() {
            let marker = if active { " (active)" } else { "" };
            sections.push(format!("## Thread: {title}{marker}\n\n{content}"));
        }
    }
    let text = sections.join("\n\n---\n\n");
    let tokens = CharHeuristic::ThreeAndAHalfChars.estimate(&text);
    Ok(ThreadMindContext { text, tokens, depth: path.threads.len() })
}

/// A thread's summary ending at `end`: the newest written by hand, else the newest of any budget.
fn thread_summary(
    snapshot: &Snapshot,
    thread: ThreadRef,
    end: crate::snapshot::NodeId,
) -> Option<&SummaryRecord> {
    let matching =
        || snapshot.summaries.iter().filter(move |s| s.thread == thread && s.up_to == end);
    matching().rfind(|s| s.budget.is_none()).or_else(|| matching().next_back())
}

/// `context_get`'s text: the sections, a `---` rule and the footer.
pub fn context_markdown(snapshot: &Snapshot, max_depth: usize) -> Result<String, EngineError> {
    let context = assemble(snapshot, max_depth)?;
    let mut footer = format!(
        "_ThreadMind context: ~{} tokens | depth: {} threads_",
        context.tokens, context.depth
    );
    let cumulative: u64 = snapshot.summary_updates.iter().map(|u| u.content_units).sum();
    if cumulative > 0 {
        let raw = raw_tokens(cumulative);
        footer.push_str(&format!(
            "\n_Estimated raw history: ~{} tokens (~{}% reduction from {} summary updates)_",
            thousands(raw),
            reduction_percent(context.tokens, raw),
            snapshot.summary_updates.len()
        ));
    }
    Ok(format!("{}\n\n---\n{footer}", context.text))
}

/// `stats_show`'s text.
pub fn stats(snapshot: &Snapshot, max_depth: usize) -> Result<String, EngineError> {
    let context = assemble(snapshot, max_depth)?;
    // Per thread, in the order each first appears in the log (a JavaScript object's key order).
    let mut rows: Vec<(String, u64, u64, u64)> = Vec::new(); // label, updates, current, cumulative
    for update in &snapshot.summary_updates {
        match rows.iter_mut().find(|r| r.0 == update.thread_label) {
            Some(row) => {
                row.1 += 1;
                row.2 = update.content_units;
                row.3 += update.content_units;
            }
            None => rows.push((
                update.thread_label.clone(),
                1,
                update.content_units,
                update.content_units,
            )),
        }
    }
    let updates = snapshot.summary_updates.len();
    let cumulative: u64 = rows.iter().map(|r| r.3).sum();
    let raw = raw_tokens(cumulative);
    let mut out = format!("ThreadMind Stats: \"{}\"\n\n", snapshot.tree.title);
    out.push_str("Overview:\n");
    out.push_str(&format!(
        "  Threads: {} ({} with tracked updates)\n",
        snapshot.tree.thread_count,
        rows.len()
    ));
    out.push_str(&format!("  Summary updates: {updates}\n"));
    out.push_str(&format!(
        "  Current context: ~{} tokens (depth: {})\n\n",
        context.tokens, context.depth
    ));
    if raw > 0 {
        out.push_str("Token Savings (estimated):\n");
        out.push_str(&format!("  Estimated raw history: ~{} tokens\n", thousands(raw)));
        out.push_str(&format!("  ThreadMind context:    ~{} tokens\n", context.tokens));
        out.push_str(&format!(
            "  Reduction:             ~{}%\n\n",
            reduction_percent(context.tokens, raw)
        ));
    } else {
        out.push_str("Token Savings:\n");
        out.push_str("  No summary updates tracked yet. Use summary_update to start tracking.\n\n");
    }
    if !rows.is_empty() {
        out.push_str("Per-Thread Breakdown:\n");
        out.push_str(&format!(
            "  {:<20} {:<9} {:<10} {:<14} Ratio\n",
            "Thread", "Updates", "Current", "Cumulative"
        ));
        let lines: Vec<String> = rows
            .iter()
            .map(|(label, count, current, total)| {
                let current = raw_tokens(*current);
                let total = raw_tokens(*total);
                let ratio = if total > 0 { reduction_percent(current, total) } else { 0 };
                format!(
                    "  {:<20} {:<9} ~{:<9} ~{:<13} {ratio}%",
                    label,
                    count.to_string(),
                    current.to_string(),
                    total.to_string()
                )
            })
            .collect();
        out.push_str(&lines.join("\n"));
        out.push_str("\n\n");
    }
    out.push_str("Method: Cumulative summary input vs current context size.\n");
    out.push_str("Token estimates use ~3.5 chars/token approximation.");
    Ok(out)
}

/// `Math.ceil(units / 3.5)`, in integers.
fn raw_tokens(units: u64) -> u64 {
    (2 * units).div_ceil(7)
}

/// `Math.round((1 - part / whole) * 100)`: JavaScript rounds halves up, negatives included.
fn reduction_percent(part: u64, whole: u64) -> i64 {
    let x = (1.0 - part as f64 / whole as f64) * 100.0;
    (x + 0.5).floor() as i64
}

/// `Number.prototype.toLocaleString()` in en-US for an integer: commas every three digits.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_match_to_locale_string_seed_000() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(12_000), "12,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn reduction_rounds_like_math_round_seed_000() {
        assert_eq!(reduction_percent(450, 12_000), 96);
        assert_eq!(reduction_percent(1, 2), 50);
        assert_eq!(reduction_percent(3, 2), -50);
    }
}
