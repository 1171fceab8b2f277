//! What ThreadMind's renderings are made of, read from the store: a thread's chain of sections,
//! the summary log as ThreadMind's stats count it, and the list of threads.

use anyhow::Context;
use pinloom_engine::snapshot::Author;
use pinloom_engine::threadmind::{SummaryWrite, ThreadEntry, ThreadSection, transcript};
use pinloom_store::{self as store, NodeId, PinId, ROOT_THREAD_SLUG, Store, SummaryKey, Tree};

use crate::base::engine_inputs::engine_author;

/// A thread of a tree as ThreadMind names it: `main` is the root thread (`None`).
pub(in crate::threadmind) fn find_thread(
    store: &Store,
    tree: &Tree,
    id: &str,
) -> Result<Option<Option<PinId>>, store::StoreError> {
    if id == ROOT_THREAD_SLUG {
        return Ok(Some(None));
    }
    Ok(store.pin_by_slug(tree.id, id)?.map(|pin| Some(pin.id)))
}

/// A thread's ThreadMind id.
pub(in crate::threadmind) fn thread_slug(
    store: &Store,
    thread: Option<PinId>,
) -> Result<String, store::StoreError> {
    match thread {
        None => Ok(ROOT_THREAD_SLUG.to_owned()),
        Some(pin) => Ok(store.pin(pin)?.slug),
    }
}

/// The key ThreadMind's summary_update writes: the thread as a whole, by hand.
pub(in crate::threadmind) fn own_summary_key(tree: &Tree, thread: Option<PinId>) -> SummaryKey {
    SummaryKey {
        tree_id: tree.id,
        pin_id: thread,
        path_end: None,
        budget: None,
        summarizer: String::new(),
        fitted_from: None,
    }
}

/// A thread's summary as ThreadMind reads it (trimmed), chosen as a send chooses it: the newest
/// written on purpose where the next thread hangs off (`hang_at`), else the newest written on
/// purpose for the whole thread (summary_update's), else the newest the summariser wrote where
/// the next thread hangs off. Empty when it has none.
pub(in crate::threadmind) fn thread_summary(
    store: &Store,
    tree: &Tree,
    thread: Option<PinId>,
    hang_at: Option<NodeId>,
) -> Result<String, store::StoreError> {
    // Newest first; fitted versions are for budgets, not for this whole-text view; one written
    // from a message since excluded, deleted or moved away would carry its words.
    let written: Vec<store::Summary> = store
        .thread_summaries(tree.id, thread)?
        .into_iter()
        .filter(|summary| {
            summary.key.fitted_from.is_none()
                && summary.stale.is_none()
                && !summary.text.trim().is_empty()
        })
        .collect();
    let at_end = |summary: &&store::Summary| hang_at.is_some() && summary.key.path_end == hang_at;
    let chosen = written
        .iter()
        .find(|summary| summary.chosen && at_end(summary))
        .or_else(|| written.iter().find(|summary| summary.chosen && summary.key.path_end.is_none()))
        .or_else(|| written.iter().find(|summary| at_end(summary)));
    Ok(chosen.map(|summary| summary.text.trim().to_owned()).unwrap_or_default())
}

/// How a chain shows an ancestor thread without a summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::threadmind) enum Unsummarised {
    /// As ThreadMind does (the MCP tools and resources): its section is left out.
    Skipped,
    /// Named, with what a send carries instead (Pinloom's own renderings: `pinloom context`,
    /// the inspector's copy), so no ancestor leaves a context without a word.
    Named,
}

/// What an ancestor thread's section says when it has no summary.
pub(in crate::threadmind) const NO_SUMMARY_NOTE: &str = "_No summary of this thread yet: a send from here \
carries its last messages before the sub-thread instead. Write one with summary_update, or under \
\u{201c}What this pin knows\u{201d} in Pinloom's window._";

/// The threads from the root to `thread`, root first, as ThreadMind's sections: each holds its
/// summary, and the active one, when it has none, its messages on the path to `end` (its newest
/// message when absent).
pub(in crate::threadmind) fn chain(
    store: &Store,
    tree: &Tree,
    thread: Option<PinId>,
    end: Option<NodeId>,
    unsummarised: Unsummarised,
) -> anyhow::Result<Vec<ThreadSection>> {
    // (thread, its title, the node the next thread down hangs off)
    let mut threads: Vec<(Option<PinId>, String, Option<NodeId>)> = Vec::new();
    let mut current = thread;
    let mut hang_at = None;
    while let Some(pin) = current {
        if threads.iter().any(|(seen, _, _)| *seen == Some(pin)) || threads.len() > 64 {
            anyhow::bail!(
                "the threads above {} loop back on themselves; the file is damaged",
                pin.0
            );
        }
        let pin = store.pin(pin)?;
        threads.push((Some(pin.id), pin.title, hang_at));
        hang_at = pin.anchor_node_id;
        current = pin.parent_pin_id;
    }
    threads.push((None, tree.title.clone(), hang_at));
    threads.reverse();

    let last = threads.len() - 1;
    let mut sections = Vec::with_capacity(threads.len());
    for (i, (thread, title, hang_at)) in threads.into_iter().enumerate() {
        let mut content = thread_summary(store, tree, thread, hang_at)?;
        if content.is_empty() && i == last {
            content = thread_messages_transcript(store, tree, thread, end)?;
        } else if content.is_empty() && unsummarised == Unsummarised::Named {
            content = NO_SUMMARY_NOTE.to_owned();
        }
        sections.push(ThreadSection { title, content });
    }
    Ok(sections)
}

/// The live messages of `thread` on the path to `end` (its newest message when absent).
pub(in crate::threadmind) fn thread_path(
    store: &Store,
    tree: &Tree,
    thread: Option<PinId>,
    end: Option<NodeId>,
) -> Result<Vec<store::Node>, store::StoreError> {
    let end = match end {
        Some(end) => Some(end),
        None => store.newest_in_thread(tree.id, thread)?,
    };
    let Some(end) = end else { return Ok(Vec::new()) };
    let tail = store.thread_tail(end)?;
    // `end` given by a caller may lie in another thread; then this thread has nothing up to it.
    Ok(tail.into_iter().filter(|node| node.pin_id == thread).collect())
}

fn thread_messages_transcript(
    store: &Store,
    tree: &Tree,
    thread: Option<PinId>,
    end: Option<NodeId>,
) -> anyhow::Result<String> {
    let path = thread_path(store, tree, thread, end).context("could not read the thread")?;
    let messages: Vec<(Author, &str)> = path
        .iter()
        .filter(|node| !node.excluded)
        .map(|node| (engine_author(node.author), node.text.as_str()))
        .collect();
    Ok(transcript(messages))
}

/// Every summary write of the tree, oldest first, named by its thread's id; deleted threads'
/// writes stay, as ThreadMind's stats keep them.
pub(in crate::threadmind) fn summary_writes(
    store: &Store,
    tree: &Tree,
) -> Result<Vec<SummaryWrite>, store::StoreError> {
    let pins = store.all_pins(tree.id)?;
    Ok(store
        .summary_log(tree.id)?
        .into_iter()
        .map(|(pin, text)| SummaryWrite {
            thread: match pin {
                None => ROOT_THREAD_SLUG.to_owned(),
                Some(pin) => pins
                    .iter()
                    .find(|p| p.id == pin)
                    .map_or_else(|| pin.0.to_string(), |p| p.slug.clone()),
            },
            units: text.encode_utf16().count() as u64,
        })
        .collect())
}

/// The tree's live threads as ThreadMind lists them, `main` first, and which entry is which pin.
pub(in crate::threadmind) fn thread_entries(
    store: &Store,
    tree: &Tree,
) -> Result<(Vec<ThreadEntry>, Vec<store::Pin>), store::StoreError> {
    let pins = store.live_threads(tree.id)?;
    let mut entries = vec![ThreadEntry { id: ROOT_THREAD_SLUG.to_owned(), parent: None }];
    for pin in &pins {
        let parent = match pin.parent_pin_id {
            None => Some(0),
            Some(parent) => pins.iter().position(|p| p.id == parent).map(|index| index + 1),
        };
        entries.push(ThreadEntry { id: pin.slug.clone(), parent });
    }
    Ok((entries, pins))
}

/// ThreadMind's thread list of the tree, `active` marked.
pub(in crate::threadmind) fn thread_list(
    store: &Store,
    tree: &Tree,
    active: Option<PinId>,
) -> Result<String, store::StoreError> {
    let (entries, pins) = thread_entries(store, tree)?;
    let marked = match active {
        None => Some(0),
        Some(active) => pins.iter().position(|pin| pin.id == active).map(|index| index + 1),
    };
    Ok(pinloom_engine::threadmind::thread_list(&entries, marked))
}
