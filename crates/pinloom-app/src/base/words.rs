//! How counts read in the sentences Pinloom says of what it did: one home, so a plan's
//! explanation, a sync's report and ThreadMind's instructions agree.

/// `count` and `noun`, plural unless the count is one ("1 message", "3 messages").
pub(crate) fn plural(count: usize, noun: &str) -> String {
    if count == 1 { format!("1 {noun}") } else { format!("{count} {noun}s") }
}

/// `count` with the singular or plural that follows it, for words whose plural is not a
/// trailing s ("1 summary is", "2 summaries are").
pub(crate) fn counted(count: usize, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

/// The start of `text` on one line, cut at a word within `limit` characters, with "…" when cut.
pub(crate) fn opening_words(text: &str, limit: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= limit {
        return flat;
    }
    let cut: String = flat.chars().take(limit).collect();
    let at_word = cut.rfind(' ').filter(|&at| at > limit / 2).map_or(cut.as_str(), |at| &cut[..at]);
    format!("{at_word}…")
}
