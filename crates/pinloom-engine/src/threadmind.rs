//! ThreadMind's output, byte for byte as ThreadMind v0.4.1 prints it: the assembled context of
//! `context_get` with its footer, the `threadmind://context` resource, `stats_show`, the thread
//! list and `thread_switch`'s preview.
//!
//! ThreadMind counts in its own way and Pinloom keeps it: 3.5 UTF-16 units a token, rounded up;
//! depth is the number of threads on the chain, the active one included; the raw history is the
//! cumulative length of every summary update. The caller (the application layer) decides what
//! each thread's section holds; this module only lays the text out.

use crate::snapshot::Author;
use crate::tokens::CharHeuristic;

/// ThreadMind walks at most this many threads up from the active one; a deeper chain loses its
/// outermost threads rather than failing.
pub const MAX_CHAIN: usize = 50;

/// How many UTF-16 units of the context `thread_switch` shows.
pub const PREVIEW_UNITS: usize = 300;

/// One thread of the chain, as its section shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadSection {
    /// The thread's title (the tree's, for the root thread).
    pub title: String,
    /// What the section holds: the thread's summary, or for the active thread without one its
    /// messages. Empty skips the section (the thread still counts towards the depth).
    pub content: String,
}

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

/// Lays out the system context, then each thread of `chain` (root first, the active one last)
/// that has content, the active one marked `(active)`.
pub fn assemble(system_context: &str, chain: &[ThreadSection]) -> ThreadMindContext {
    let chain = &chain[chain.len().saturating_sub(MAX_CHAIN)..];
    let mut sections = Vec::new();
    if !system_context.is_empty() {
        sections.push(format!("## System Context\n\n{system_context}"));
    }
    for (i, thread) in chain.iter().enumerate() {
        if thread.content.is_empty() {
            continue;
        }
        let marker = if i + 1 == chain.len() { " (active)" } else { "" };
        sections.push(format!("## Thread: {}{marker}\n\n{}", thread.title, thread.content));
    }
    let text = sections.join("\n\n---\n\n");
    let tokens = CharHeuristic::ThreeAndAHalfChars.estimate(&text);
    ThreadMindContext { text, tokens, depth: chain.len() }
}

/// The active thread's messages as its section shows them when it has no summary:
/// `user: …`, `assistant: …`, separated by blank lines.
pub fn transcript<'a>(messages: impl IntoIterator<Item = (Author, &'a str)>) -> String {
    messages
        .into_iter()
        .map(|(author, text)| {
            let who = match author {
                Author::Human => "user",
                Author::Model => "assistant",
                Author::Tool => "tool",
            };
            format!("{who}: {text}")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// One write of a thread's summary, as ThreadMind's stats record it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryWrite {
    /// The thread's id (its slug; `main` for the root thread).
    pub thread: String,
    /// The length of what was written, in UTF-16 units (JavaScript's `length`).
    pub units: u64,
}

/// One thread's line in the stats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadStats {
    /// The thread's id.
    pub thread: String,
    /// How many times its summary was written.
    pub updates: u64,
    /// The length of the newest write.
    pub current_units: u64,
    /// The length of every write added up.
    pub cumulative_units: u64,
}

/// The per-thread stats of a log of writes (oldest first), in the order ThreadMind lists them:
/// the order of a JavaScript object's keys, so ids that read as array indices ("5", "123") come
/// first in numeric order, then the others as each first appeared.
pub fn stats_by_thread(log: &[SummaryWrite]) -> Vec<ThreadStats> {
    let mut rows: Vec<ThreadStats> = Vec::new();
    for write in log {
        match rows.iter_mut().find(|row| row.thread == write.thread) {
            Some(row) => {
                row.updates += 1;
                row.current_units = write.units;
                row.cumulative_units += write.units;
            }
            None => rows.push(ThreadStats {
                thread: write.thread.clone(),
                updates: 1,
                current_units: write.units,
                cumulative_units: write.units,
            }),
        }
    }
    // A stable sort keeps first appearance among the others.
    rows.sort_by_key(|row| array_index(&row.thread).map_or((1, 0), |index| (0, index)));
    rows
}

/// The value of a JavaScript property key that is an array index: a canonical decimal below
/// 2³² − 1.
fn array_index(key: &str) -> Option<u64> {
    let index: u64 = key.parse().ok()?;
    (index.to_string() == key && index < u64::from(u32::MAX)).then_some(index)
}

/// `context_get`'s text: the sections, a `---` rule and the footer.
pub fn context_text(context: &ThreadMindContext, stats: &[ThreadStats]) -> String {
    let mut footer = format!(
        "_ThreadMind context: ~{} tokens | depth: {} threads_",
        context.tokens, context.depth
    );
    let cumulative: u64 = stats.iter().map(|row| row.cumulative_units).sum();
    if cumulative > 0 {
        let raw = estimate(cumulative);
        let updates: u64 = stats.iter().map(|row| row.updates).sum();
        footer.push_str(&format!(
            "\n_Estimated raw history: ~{} tokens (~{}% reduction from {updates} summary updates)_",
            thousands(raw),
            reduction_percent(context.tokens, raw),
        ));
    }
    format!("{}\n\n---\n{footer}", context.text)
}

/// The `threadmind://context` resource's text, whose footer is shorter than `context_get`'s.
pub fn context_resource(context: &ThreadMindContext) -> String {
    format!("{}\n\n---\n_~{} tokens | depth: {}_", context.text, context.tokens, context.depth)
}

/// `stats_show`'s text for a project of `thread_count` live threads (the root one included).
pub fn stats_text(
    title: &str,
    thread_count: usize,
    context: &ThreadMindContext,
    stats: &[ThreadStats],
) -> String {
    let updates: u64 = stats.iter().map(|row| row.updates).sum();
    let raw = estimate(stats.iter().map(|row| row.cumulative_units).sum());
    let mut out = format!("ThreadMind Stats: \"{title}\"\n\n");
    out.push_str("Overview:\n");
    out.push_str(&format!("  Threads: {thread_count} ({} with tracked updates)\n", stats.len()));
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
    if !stats.is_empty() {
        out.push_str("Per-Thread Breakdown:\n");
        out.push_str(&format!(
            "  {} {} {} {} Ratio\n",
            pad_end("Thread", 20),
            pad_end("Updates", 9),
            pad_end("Current", 10),
            pad_end("Cumulative", 14)
        ));
        let lines: Vec<String> = stats
            .iter()
            .map(|row| {
                let current = estimate(row.current_units);
                let total = estimate(row.cumulative_units);
                let ratio = if total > 0 { reduction_percent(current, total) } else { 0 };
                format!(
                    "  {} {} ~{} ~{} {ratio}%",
                    pad_end(&row.thread, 20),
                    pad_end(&row.updates.to_string(), 9),
                    pad_end(&current.to_string(), 9),
                    pad_end(&total.to_string(), 13)
                )
            })
            .collect();
        out.push_str(&lines.join("\n"));
        out.push_str("\n\n");
    }
    out.push_str("Method: Cumulative summary input vs current context size.\n");
    out.push_str("Token estimates use ~3.5 chars/token approximation.");
    out
}

/// One thread in the list ThreadMind prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadEntry {
    /// Its id.
    pub id: String,
    /// Its parent's index in the same list; `None` for the root thread.
    pub parent: Option<usize>,
}

/// ThreadMind v0.4.1's thread list: every thread's id on its own line, depth first from the root
/// thread, children in their order, ` ← active` after the active one. (ThreadMind's
/// documentation draws a tree with `├──` connectors; the code it ships never reaches them and
/// prints this flat list, which is what agents see.)
pub fn thread_list(threads: &[ThreadEntry], active: Option<usize>) -> String {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); threads.len()];
    let mut roots = Vec::new();
    for (index, thread) in threads.iter().enumerate() {
        match thread.parent {
            Some(parent) if parent < threads.len() => children[parent].push(index),
            _ => roots.push(index),
        }
    }
    if roots.is_empty() {
        return "(empty tree)".to_owned();
    }
    let mut lines = Vec::with_capacity(threads.len());
    // Depth first without recursion: a chain of threads can be long.
    let mut stack: Vec<usize> = roots.into_iter().rev().collect();
    while let Some(index) = stack.pop() {
        let marker = if Some(index) == active { " ← active" } else { "" };
        lines.push(format!("{}{marker}", threads[index].id));
        stack.extend(children[index].iter().rev());
    }
    lines.join("\n")
}

/// The first `units` UTF-16 units of `text` followed by `...`, or the whole text when it is not
/// longer. A cut through a character's surrogate pair keeps the units before it.
pub fn preview(text: &str, units: usize) -> String {
    if text.encode_utf16().count() <= units {
        return text.to_owned();
    }
    let mut taken = 0;
    let mut end = 0;
    for (offset, c) in text.char_indices() {
        if taken + c.len_utf16() > units {
            break;
        }
        taken += c.len_utf16();
        end = offset + c.len_utf8();
    }
    format!("{}...", &text[..end])
}

/// `Math.ceil(units / 3.5)`, in integers.
fn estimate(units: u64) -> u64 {
    (2 * units).div_ceil(7)
}

/// `Math.round((1 - part / whole) * 100)`: JavaScript rounds halves up, negatives included.
fn reduction_percent(part: u64, whole: u64) -> i64 {
    let x = (1.0 - part as f64 / whole as f64) * 100.0;
    (x + 0.5).floor() as i64
}

/// `String.prototype.padEnd`: pads to a length in UTF-16 units and never cuts.
fn pad_end(text: &str, units: usize) -> String {
    let have = text.encode_utf16().count();
    format!("{text}{}", " ".repeat(units.saturating_sub(have)))
}

/// `Number.prototype.toLocaleString()` in en-US for an integer: commas every three digits, as a
/// person reads a token count (the command line's report line uses it too).
pub fn thousands(n: u64) -> String {
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
        // Math.round(-2.5) is -2 in JavaScript, where Rust's f64::round gives -3.
        assert_eq!(reduction_percent(41, 40), -2);
    }

    #[test]
    fn pad_end_counts_utf16_units_and_never_cuts() {
        assert_eq!(pad_end("ab", 4), "ab  ");
        assert_eq!(pad_end("🌊", 3), "🌊 ");
        assert_eq!(pad_end("toolong", 3), "toolong");
    }

    #[test]
    fn array_index_keys_sort_first_like_javascript_objects() {
        let log: Vec<SummaryWrite> = ["zeta", "123", "main", "5", "05"]
            .iter()
            .map(|id| SummaryWrite { thread: (*id).into(), units: 7 })
            .collect();
        let order: Vec<String> = stats_by_thread(&log).into_iter().map(|r| r.thread).collect();
        assert_eq!(order, ["5", "123", "zeta", "main", "05"]);
    }

    #[test]
    fn the_preview_cuts_at_units_not_bytes() {
        assert_eq!(preview("abc", 3), "abc");
        assert_eq!(preview("abcd", 3), "abc...");
        assert_eq!(preview("ab🌊c", 3), "ab...", "half a surrogate pair is left out");
        assert_eq!(preview("é🌊", 3), "é🌊", "exactly 3 units is whole");
    }
}
