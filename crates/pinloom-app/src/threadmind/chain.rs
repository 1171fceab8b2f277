//! What ThreadMind's renderings are made of, read from the store: a thread's chain of sections,
//! the summary log as ThreadMind's stats count it, and the list of threads.

use anyhow::Context;
use pinloom_engine::snapshot::Author;
use pinloom_engine::threadmind::{SummaryWrite, ThreadEntry, ThreadSection, transcript};
use pinloom_store::{self as store, NodeId, PinId, ROOT_THREAD_SLUG, Store, SummaryKey, Tree};

use crate::conversation::engine_inputs::engine_author;

/// A thread of a tree as ThreadMind names it: `main` is the root thread (`None`).
pub(crate) fn find_thread(
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
pub(crate) fn thread_slug(
    store: &Store,
    thread: Option<PinId>,
) -> Result<String, store::StoreError> {
    match thread {
        None => Ok(ROOT_THREAD_SLUG.to_owned()),
        Some(pin) => Ok(store.pin(pin)?.slug),
    }
}

/// The key ThreadMind's summary_update writes: the thread as a whole, by hand.
pub(crate) fn own_summary_key(tree: &Tree, thread: Option<PinId>) -> SummaryKey {
    SummaryKey {
        tree_id: tree.id,
        pin_id: thread,
        path_end: None,
        budget: None,
        summarizer: String::new(),
    }
}

/// A thread's summary as ThreadMind reads it (trimmed): the one summary_update wrote, else, when
/// a sub-thread hangs off the thread at `hang_at`, the newest summary of the thread up to there
/// (one the app's summariser or the person wrote for a send). Empty when it has none.
pub(crate) fn thread_summary(
    store: &Store,
    tree: &Tree,
    thread: Option<PinId>,
    hang_at: Option<NodeId>,
) -> Result<String, store::StoreError> {
    if let Some(own) = store.summary(&own_summary_key(tree, thread))? {
        let text = own.text.trim();
        if !text.is_empty() {
            return Ok(text.to_owned());
        }
    }
    let Some(hang_at) = hang_at else { return Ok(String::new()) };
    let written = store.thread_summaries(tree.id, thread)?;
    // Newest first; one written by hand (no budget) wins over a model's at the same end.
    let at_end = || written.iter().filter(|summary| summary.key.path_end == Some(hang_at));
    let chosen = at_end().find(|summary| summary.key.budget.is_none()).or_else(|| at_end().next());
    Ok(chosen.map(|summary| summary.text.trim().to_owned()).unwrap_or_default())
}

/// The threads from the root to `thread`, root first, as ThreadMind's sections: each holds its
/// summary, and the active one, when it has none, its messages on the path to `end` (its newest
/// message when absent).
pub(crate) fn chain(
    store: &Store,
    tree: &Tree,
    thread: Option<PinId>,
    end: Option<NodeId>,
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
        }
        sections.push(ThreadSection { title, content });
    }
    Ok(sections)
}

/// The live messages of `thread` on the path to `end` (its newest message when absent).
pub(crate) fn thread_path(
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
pub(crate) fn summary_writes(
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
pub(crate) fn thread_entries(
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
pub(crate) fn thread_list(
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
