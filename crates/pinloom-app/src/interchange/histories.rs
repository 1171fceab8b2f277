//! Histories other tools keep, imported as a stream of conversations: each mapped to an Open Loom
//! tree (`chatgpt.rs`, `claude.rs`, `open_webui.rs`, `llm_log.rs`), gathered in batches and written by the Open Loom importer, a batch a
//! transaction. A file is recognised by its content, never its name. A conversation already here
//! (its id kept as its tree's global id) gains only its new messages (`merging.rs`), so a second
//! import of a later export adds what is new; a stop (a damaged file, a conversation refused)
//! keeps the batches written before it and says where it stopped.

use std::collections::HashMap;
use std::fmt;
use std::io::{BufReader, Read};
use std::path::Path;

use pinloom_store::{Store, TreeId};
use serde::de::{DeserializeSeed, SeqAccess, Visitor};
use serde_json::{Value, json};

use super::branching::Mapped;
use super::chatgpt::{self, Image};
use super::documents::{ReadDocument, read_document, write_document};
use super::merging;
use super::open_loom_import::Notes;
use super::{claude, llm_log, open_webui};
use crate::base::media::{self, MAX_IMAGE_BYTES};
use crate::base::safe_files::{Links, open_regular};
use crate::base::words::counted;
use crate::error::ApiError;
use crate::json::{ImportReport, TransferProgress};

/// A history Pinloom reads, as its file's first bytes say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum History {
    /// A tool's `conversations.json`.
    Conversations(Tool),
    /// A zip, read when it holds a tool's export as downloaded.
    Zip,
    /// A SQLite file, read when it is `llm`'s `logs.db`.
    Sqlite,
}

/// Whose conversations a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    ChatGpt,
    Claude,
    OpenWebUi,
}

/// The history the first bytes of a file (at least the first 64 KB, or all of a smaller file)
/// say it is, if it is one.
pub(crate) fn recognise(head: &[u8]) -> Option<History> {
    if head.starts_with(b"PK\x03\x04") {
        return Some(History::Zip);
    }
    if pinloom_store::is_sqlite(head) {
        return Some(History::Sqlite);
    }
    tool_of(head).map(History::Conversations)
}

/// Whose `conversations.json` begins with `head`, if a tool's Pinloom reads.
fn tool_of(head: &[u8]) -> Option<Tool> {
    if chatgpt::looks_like_conversations(head) {
        Some(Tool::ChatGpt)
    } else if claude::looks_like_conversations(head) {
        Some(Tool::Claude)
    } else if open_webui::looks_like_chats(head) {
        Some(Tool::OpenWebUi)
    } else {
        None
    }
}

/// The most a history's conversations file may hold: it is read as a stream, a conversation at a
/// time, so this bounds the time a mistaken pick takes, not memory.
pub(crate) const MAX_HISTORY_BYTES: u64 = 8 * 1024 * 1024 * 1024;
/// The most conversations one import writes; a larger export is imported in turns (each import
/// passes over what the ones before wrote).
pub(crate) const MAX_CONVERSATIONS: usize = 20_000;
/// A batch is written when it holds this many messages, or [`BATCH_TREES`] conversations.
const BATCH_MESSAGES: usize = 2_500;
const BATCH_TREES: usize = 100;
/// How far a zip's entry may say it inflates beside what it takes: more is a bomb, refused
/// before a byte is inflated (text compresses to about a tenth; 100 is generous).
const MAX_INFLATION: u64 = 100;

/// Imports the history at `path`, recognised as `history`, telling `progress` how far into the
/// file it is. `source` names the file in the report.
pub(crate) fn import(
    store: &Store,
    path: &Path,
    history: History,
    source: &str,
    progress: &mut dyn FnMut(TransferProgress),
    now_ms: i64,
) -> anyhow::Result<ImportReport> {
    let cannot = |error: &dyn std::fmt::Display| {
        ApiError::invalid_input(format!("cannot read {}: {error}", path.display()))
    };
    let (file, total) = open_regular(path, Links::Followed, None).map_err(|e| cannot(&e))?;
    match history {
        History::Conversations(tool) => {
            if total > MAX_HISTORY_BYTES {
                anyhow::bail!(cannot(&"it is larger than the 8 GB an import reads"));
            }
            let reader = Counted {
                inner: BufReader::with_capacity(1 << 16, file),
                read: 0,
                total,
                progress,
            };
            with_batches(store, source, now_ms, |writer| {
                let mapping = Mapping { tool, image: &mut |_| None, projects: HashMap::new() };
                stream(reader, mapping, writer)
            })
        }
        History::Sqlite => {
            drop(file);
            let mut opened = None;
            let report = with_batches(store, source, now_ms, |writer| {
                let mut index = 0;
                let read = pinloom_store::read_llm_log(path, &mut |conversation| {
                    if index >= MAX_CONVERSATIONS {
                        return Err(too_many());
                    }
                    writer.seen = index + 1;
                    let title = conversation.name.clone().unwrap_or_default();
                    let mapped = llm_log::tree_of(&conversation, index, &mut writer.notes);
                    index += 1;
                    match mapped {
                        Some(mapped) => {
                            writer.add(mapped, title).map_err(|error| format!("{error:#}"))
                        }
                        None => Ok(()),
                    }
                });
                match read {
                    Ok(()) => Ok(()),
                    Err(Ok(why)) => Err(StreamError::Stopped(why)),
                    // The file is not llm's log at all: said as such, not as a stop.
                    Err(Err(error)) if writer.seen == 0 => {
                        opened = Some(ApiError::from(anyhow::Error::new(error)).message);
                        Ok(())
                    }
                    Err(Err(error)) => Err(StreamError::Stopped(error.to_string())),
                }
            });
            match opened {
                Some(why) => Err(cannot(&why).into()),
                None => report,
            }
        }
        History::Zip => {
            let mut archive = zip::ZipArchive::new(file)
                .map_err(|error| cannot(&format!("it is not a zip Pinloom can read ({error})")))?;
            let (index, size) = conversations_entry(&mut archive).map_err(|why| cannot(&why))?;
            // Images are read from a second handle while the first streams the conversations.
            let (again, _) = open_regular(path, Links::Followed, None).map_err(|e| cannot(&e))?;
            let mut images = zip::ZipArchive::new(again).map_err(|e| cannot(&e))?;
            let names = image_names(&mut images);
            let tool = zipped_tool(&mut archive, index).ok_or_else(|| {
                cannot(&"its conversations.json is neither ChatGPT's nor Claude's export")
            })?;
            let projects = zipped_projects(&mut images);
            let entry = archive.by_index(index).map_err(|e| cannot(&e))?;
            // No more than the entry said it holds: a header that lies stops there.
            let reader = Counted {
                inner: BufReader::with_capacity(1 << 16, entry.take(size + 1)),
                read: 0,
                total: size,
                progress,
            };
            let mut image = |asset: &str| image_in_zip(&mut images, &names, asset);
            with_batches(store, source, now_ms, |writer| {
                stream(reader, Mapping { tool, image: &mut image, projects }, writer)
            })
        }
    }
}

/// How a tool's conversations are mapped: by whose they are, with the images and project
/// instructions their export holds beside them.
struct Mapping<'i> {
    tool: Tool,
    image: &'i mut dyn FnMut(&str) -> Option<Image>,
    projects: HashMap<String, String>,
}

/// Reads every conversation of `reader`, mapping each and handing it to `writer`.
fn stream(
    reader: impl Read,
    mapping: Mapping<'_>,
    writer: &mut Batches<'_>,
) -> Result<(), StreamError> {
    let Mapping { tool, image, projects } = mapping;
    each_conversation(reader, &mut |index, conversation| {
        if index >= MAX_CONVERSATIONS {
            return Err(too_many());
        }
        writer.seen = index + 1;
        let notes = &mut writer.notes;
        let mapped = match tool {
            Tool::ChatGpt => chatgpt::tree_of(&conversation, index, image, notes),
            Tool::Claude => claude::tree_of(&conversation, index, &projects, notes),
            Tool::OpenWebUi => open_webui::tree_of(&conversation, index, notes),
        };
        let Some(mapped) = mapped else {
            return Ok(());
        };
        writer
            .add(mapped, conversation_title(&conversation, index))
            .map_err(|error| format!("{error:#}"))
    })
}

/// Calls `each` with every conversation of the array `reader` holds, one at a time, never the
/// whole array in memory; stops at the first error `each` returns.
fn each_conversation<R: Read>(
    reader: R,
    each: &mut dyn FnMut(usize, Value) -> Result<(), String>,
) -> Result<(), StreamError> {
    let mut deserializer = serde_json::Deserializer::from_reader(reader);
    let stopped = serde::Deserializer::deserialize_seq(&mut deserializer, Conversations { each });
    match stopped {
        Ok(Ok(())) => deserializer.end().map_err(StreamError::Syntax),
        Ok(Err(stopped)) => Err(StreamError::Stopped(stopped)),
        Err(error) => Err(StreamError::Syntax(error)),
    }
}

/// Why reading the conversations stopped.
#[derive(Debug)]
enum StreamError {
    /// The file is not the JSON it should be, from this point on.
    Syntax(serde_json::Error),
    /// The caller stopped it.
    Stopped(String),
}

struct Conversations<'a> {
    each: &'a mut dyn FnMut(usize, Value) -> Result<(), String>,
}

impl<'de> Visitor<'de> for Conversations<'_> {
    type Value = Result<(), String>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("an array of conversations")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut index = 0;
        while let Some(conversation) = seq.next_element_seed(OneValue)? {
            if let Err(stopped) = (self.each)(index, conversation) {
                return Ok(Err(stopped));
            }
            index += 1;
        }
        Ok(Ok(()))
    }
}

/// One element, read whole (a conversation is small beside its export).
struct OneValue;

impl<'de> DeserializeSeed<'de> for OneValue {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        serde::Deserialize::deserialize(deserializer)
    }
}

/// Why an import stops at [`MAX_CONVERSATIONS`].
fn too_many() -> String {
    format!(
        "an import writes at most {MAX_CONVERSATIONS} conversations; import the file again to \
         bring the rest (what is here already is passed over)"
    )
}

/// A conversation's title as the report names it (ChatGPT's `title`, Claude's `name`).
fn conversation_title(conversation: &Value, index: usize) -> String {
    let titled = conversation.get("title").or_else(|| conversation.get("name"));
    match titled.and_then(Value::as_str).map(str::trim) {
        Some(title) if !title.is_empty() => title.to_owned(),
        _ => format!("conversation {}", index + 1),
    }
}

/// Runs `read`, which hands the conversations of a file to the [`Batches`] it is given, while a
/// second thread writes the batches read, one transaction each: reading and checking a batch (on
/// this thread, the counting on every core) and writing the one before it overlap. At most one
/// read batch waits to be written, so the memory held stays a batch or two whatever the file's
/// size. Returns the report once every batch is written, or what stopped the import.
fn with_batches(
    store: &Store,
    source: &str,
    now_ms: i64,
    read: impl FnOnce(&mut Batches<'_>) -> Result<(), StreamError>,
) -> anyhow::Result<ImportReport> {
    std::thread::scope(|scope| {
        let (to_write, to_be_written) = std::sync::mpsc::sync_channel::<ReadBatch>(1);
        let (done, written) = std::sync::mpsc::channel();
        scope.spawn(move || {
            for batch in to_be_written {
                let result = write_document(store, batch.read, &mut |_| {})
                    .map_err(|error| stopped_at(&batch.titles, error));
                let failed = result.is_err();
                // A failure ends the writing: the reading learns it at its next batch.
                if done.send(result).is_err() || failed {
                    break;
                }
            }
        });
        let mut batches = Batches::new(store, source, now_ms, to_write, written)?;
        let stopped = read(&mut batches);
        batches.finish(stopped)
    })
}

/// A batch read and checked, on its way to the thread that writes it.
struct ReadBatch {
    read: ReadDocument,
    titles: Vec<String>,
}

/// The conversations gathered and written a batch at a time.
struct Batches<'a> {
    store: &'a Store,
    source: String,
    now_ms: i64,
    /// The trees here before the import, by global id: a conversation is looked up here, not
    /// with a query that would wait for the batch being written.
    here: HashMap<String, TreeId>,
    /// Where read batches go to be written; gone once the last is sent.
    to_write: Option<std::sync::mpsc::SyncSender<ReadBatch>>,
    /// Each written batch's report, or why it was not written.
    written: std::sync::mpsc::Receiver<anyhow::Result<ImportReport>>,
    pending: Vec<Value>,
    titles: Vec<String>,
    messages: usize,
    /// How many conversations the file held up to where it was read.
    seen: usize,
    passed_over: usize,
    /// Conversations naming a tree made here, which nothing was added to.
    claims: usize,
    /// Conversations here already that had new messages: (title, tree, messages added).
    merged: Vec<(String, i64, usize)>,
    notes: Notes,
    report: ImportReport,
}

impl<'a> Batches<'a> {
    fn new(
        store: &'a Store,
        source: &str,
        now_ms: i64,
        to_write: std::sync::mpsc::SyncSender<ReadBatch>,
        written: std::sync::mpsc::Receiver<anyhow::Result<ImportReport>>,
    ) -> anyhow::Result<Batches<'a>> {
        Ok(Batches {
            store,
            source: source.to_owned(),
            now_ms,
            here: store.tree_global_ids()?,
            to_write: Some(to_write),
            written,
            pending: Vec::new(),
            titles: Vec::new(),
            messages: 0,
            seen: 0,
            passed_over: 0,
            claims: 0,
            merged: Vec::new(),
            notes: Notes::default(),
            report: ImportReport { trees: Vec::new(), notes: Vec::new() },
        })
    }

    /// Adds a conversation, writing the batch once it is full; one already here gains its new
    /// messages now, or is passed over when it has none.
    fn add(&mut self, mapped: Mapped, title: String) -> anyhow::Result<()> {
        if let Some(gid) = &mapped.global_id
            && let Some(&here) = self.here.get(gid)
        {
            // Only a tree that came from a tool is continued by that tool's export: a file that
            // names a tree made here (its id can be read from any export of it) adds nothing.
            if pinloom_store::is_made_here(gid) {
                self.notes.add(format!(
                    "{title:?} names tree {}, whose id is one Pinloom made, not its tool's: a tree made here is not continued by a file, and nothing was added to it",
                    here.0
                ));
                self.claims += 1;
                return Ok(());
            }
            return self.merge(here, mapped, title);
        }
        self.pending.push(mapped.tree);
        self.titles.push(title);
        self.messages += mapped.messages;
        if self.pending.len() >= BATCH_TREES || self.messages >= BATCH_MESSAGES {
            self.write()?;
        }
        Ok(())
    }

    /// Writes the new messages of a conversation imported before into its tree `here`.
    fn merge(&mut self, here: TreeId, mapped: Mapped, title: String) -> anyhow::Result<()> {
        let gids: Vec<&str> = mapped
            .tree
            .get("nodes")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|nodes| nodes.values())
            .filter_map(|node| node.pointer("/extensions/pinloom/globalId")?.as_str())
            .collect();
        // Most conversations of a later export are unchanged: no reading for them.
        if merging::new_global_ids(self.store, here, &gids)?.is_empty() {
            self.passed_over += 1;
            return Ok(());
        }
        let document = json!({ "format": "open-loom", "version": "2.0", "trees": [mapped.tree] });
        let read =
            read_document(document.to_string(), "Imported conversation", &self.source, self.now_ms)
                .map_err(|error| stopped_at(std::slice::from_ref(&title), error))?;
        let merged = merging::merge_document(self.store, read, here)
            .map_err(|error| stopped_at(std::slice::from_ref(&title), error))?;
        if merged.unplaced > 0 {
            self.notes.add(format!(
                "{} new messages of {title:?} were left out: what they answer is not in tree {}",
                merged.unplaced, here.0
            ));
        }
        if merged.added > 0 {
            self.merged.push((title, here.0, merged.added));
        } else {
            self.passed_over += 1;
        }
        Ok(())
    }

    /// Reads and checks the batch gathered, and hands it to be written in one transaction.
    fn write(&mut self) -> anyhow::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let trees = std::mem::take(&mut self.pending);
        let titles = std::mem::take(&mut self.titles);
        self.messages = 0;
        let document =
            json!({ "format": "open-loom", "version": "2.0", "trees": trees }).to_string();
        let read = read_document(document, "Imported conversation", &self.source, self.now_ms)
            .map_err(|error| stopped_at(&titles, error))?;
        let sent = self
            .to_write
            .as_ref()
            .is_some_and(|to_write| to_write.send(ReadBatch { read, titles }).is_ok());
        // Not sent: the writing stopped at a batch before this one, and says why in `finish`.
        anyhow::ensure!(sent, "a batch before it could not be written");
        Ok(())
    }

    /// Waits for every batch handed over to be written, gathering their reports; the first
    /// that could not be written is why the import stopped.
    fn all_written(&mut self) -> Option<String> {
        drop(self.to_write.take());
        let mut failed = None;
        for written in self.written.iter() {
            match written {
                Ok(report) => {
                    self.report.trees.extend(report.trees);
                    self.report.notes.extend(report.notes);
                }
                Err(error) => failed = Some(format!("{error:#}")),
            }
        }
        failed
    }

    /// The report, once the file is read: the last batch written first. A stop keeps what was
    /// written and is an error that says where it stopped and what came in before.
    fn finish(mut self, stopped: Result<(), StreamError>) -> anyhow::Result<ImportReport> {
        let stopped = match stopped {
            Ok(()) => self.write().err().map(|error| format!("{error:#}")),
            Err(StreamError::Syntax(error)) => {
                let before =
                    self.write().err().map(|error| format!("; {error:#}")).unwrap_or_default();
                Some(format!(
                    "the file is not readable JSON from conversation {} on ({error}){before}",
                    self.seen + 1
                ))
            }
            Err(StreamError::Stopped(why)) => Some(why),
        };
        // What the writing says stopped it comes before what the reading said of it.
        let stopped = self.all_written().or(stopped);
        let mut notes = std::mem::take(&mut self.notes).into_lines();
        for (title, tree, added) in self.merged.iter().rev() {
            notes.insert(
                0,
                format!(
                    "{title:?} was imported before (tree {tree}): {} added to it",
                    counted(*added, "new message was", "new messages were")
                ),
            );
        }
        if self.passed_over > 0 {
            notes.insert(0, format!(
                "{} already here (the same ids, from an import before) had nothing new and {} passed over",
                counted(self.passed_over, "conversation", "conversations"),
                if self.passed_over == 1 { "was" } else { "were" }
            ));
        }
        self.report.notes.splice(0..0, notes);
        match stopped {
            None if self.report.trees.is_empty()
                && self.passed_over == 0
                && self.claims == 0
                && self.merged.is_empty() =>
            {
                Err(ApiError::invalid_input(
                    "the export holds no conversation with a message to show; nothing was imported",
                )
                .into())
            }
            None => Ok(self.report),
            Some(why) => {
                let kept = match self.report.trees.len() {
                    0 => "nothing was imported".to_owned(),
                    n => format!("the {n} conversations before it were imported and stay"),
                };
                Err(ApiError::invalid_input(format!("the import stopped: {why}; {kept}")).into())
            }
        }
    }
}

/// A batch that could not be read or written, named by its conversations.
fn stopped_at(titles: &[String], error: anyhow::Error) -> anyhow::Error {
    let named: Vec<String> = titles.iter().take(3).map(|title| format!("{title:?}")).collect();
    let more =
        if titles.len() > 3 { format!(" and {} more", titles.len() - 3) } else { String::new() };
    anyhow::Error::new(ApiError::invalid_input(format!(
        "the batch of {}{more} could not be written ({})",
        named.join(", "),
        ApiError::from(error).message
    )))
}

/// A reader that tells `progress` how far into the file it is.
struct Counted<'p, R> {
    inner: R,
    read: u64,
    total: u64,
    progress: &'p mut dyn FnMut(TransferProgress),
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buffer)?;
        let before = self.read / (4 << 20);
        self.read += read as u64;
        if self.read / (4 << 20) != before || read == 0 {
            (self.progress)(TransferProgress::Reading { bytes: self.read, total: self.total });
        }
        Ok(read)
    }
}

/// The export's `conversations.json` in the zip (the one nearest its root) and the size it says
/// it inflates to, refused when that is more than an import reads or more than its compressed
/// size can honestly hold.
fn conversations_entry<R: Read + std::io::Seek>(
    archive: &mut zip::ZipArchive<R>,
) -> Result<(usize, u64), String> {
    let mut found: Option<(usize, usize)> = None;
    for index in 0..archive.len() {
        let Some(Ok(name)) = archive.name_for_index(index) else { continue };
        let depth = name.matches('/').count();
        if (name == "conversations.json" || name.ends_with("/conversations.json"))
            && found.is_none_or(|(_, shallowest)| depth < shallowest)
        {
            found = Some((index, depth));
        }
    }
    let Some((index, _)) = found else {
        return Err("it is a zip without conversations.json: choose ChatGPT's or Claude's export as downloaded, or an Open Loom file".to_owned());
    };
    let entry = archive.by_index_raw(index).map_err(|error| error.to_string())?;
    let (size, packed) = (entry.size(), entry.compressed_size().max(1));
    if size > MAX_HISTORY_BYTES {
        return Err(
            "its conversations.json says it holds more than the 8 GB an import reads".to_owned()
        );
    }
    if size > packed.saturating_mul(MAX_INFLATION) && size > (1 << 20) {
        return Err(format!(
            "its conversations.json says it inflates {size} bytes from {packed}: more than text \
             compresses, so it was not inflated"
        ));
    }
    Ok((index, size))
}

/// Whose export the zip's `conversations.json` (entry `index`) is, from its first bytes.
fn zipped_tool<R: Read + std::io::Seek>(
    archive: &mut zip::ZipArchive<R>,
    index: usize,
) -> Option<Tool> {
    let entry = archive.by_index(index).ok()?;
    let mut head = Vec::with_capacity(64 * 1024);
    entry.take(64 * 1024).read_to_end(&mut head).ok()?;
    tool_of(&head)
}

/// The instructions of each project in a Claude export's `projects.json`, when the zip holds one
/// no larger than 64 MB that reads.
fn zipped_projects<R: Read + std::io::Seek>(
    archive: &mut zip::ZipArchive<R>,
) -> HashMap<String, String> {
    const MAX_PROJECTS_BYTES: u64 = 64 << 20;
    let Ok(entry) = archive.by_name("projects.json") else { return HashMap::new() };
    if entry.size() > MAX_PROJECTS_BYTES
        || entry.size() > entry.compressed_size().max(1).saturating_mul(MAX_INFLATION)
    {
        return HashMap::new();
    }
    let mut text = Vec::new();
    if entry.take(MAX_PROJECTS_BYTES).read_to_end(&mut text).is_err() {
        return HashMap::new();
    }
    serde_json::from_slice(&text)
        .map(|projects| claude::project_instructions(&projects))
        .unwrap_or_default()
}

/// The entries of the zip that may be images, by their file's name.
fn image_names<R: Read + std::io::Seek>(archive: &mut zip::ZipArchive<R>) -> Vec<(String, usize)> {
    (0..archive.len())
        .filter_map(|index| {
            let name = archive.name_for_index(index)?.ok()?;
            let base = name.rsplit('/').next()?;
            (!base.is_empty() && !base.ends_with(".json") && !base.ends_with(".html"))
                .then(|| (base.to_owned(), index))
        })
        .collect()
}

/// The image whose file the asset id names (`file-…` / `file_…`, the name's start), read when it
/// says it holds no more than an image may be and is one models take.
fn image_in_zip<R: Read + std::io::Seek>(
    archive: &mut zip::ZipArchive<R>,
    names: &[(String, usize)],
    asset: &str,
) -> Option<Image> {
    if asset.len() < 8 {
        return None;
    }
    let (name, index) = names.iter().find(|(name, _)| name.starts_with(asset))?;
    let entry = archive.by_index(*index).ok()?;
    let packed = entry.compressed_size().max(1);
    if entry.size() > MAX_IMAGE_BYTES || entry.size() > packed.saturating_mul(MAX_INFLATION) {
        return None;
    }
    let mut bytes = Vec::new();
    entry.take(MAX_IMAGE_BYTES + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > MAX_IMAGE_BYTES {
        return None;
    }
    let data_url = media::image_data_url(&bytes, name).ok()?;
    Some(Image { name: name.clone(), data_url })
}

/// Which history a fuzz case is read as: one target per format.
#[cfg(feature = "test-seams")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FuzzedHistory {
    /// ChatGPT's `conversations.json`.
    ChatGpt,
    /// Claude's `conversations.json`.
    Claude,
    /// Open WebUI's chat export.
    OpenWebUi,
    /// An export's zip as downloaded.
    Zip,
    /// `llm`'s `logs.db`.
    LlmLog,
}

/// One fuzz case for the history importers: `data` as the file `format` names (cases its content
/// says are another are skipped), imported into a fresh database in memory a conversation at a
/// time, a zip or a SQLite file from a file of its own as a person's would be. The import may
/// refuse it or stop; it may not panic.
#[cfg(feature = "test-seams")]
pub fn history_fuzz_case(format: FuzzedHistory, data: &[u8]) -> Option<ImportReport> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static CASES: AtomicUsize = AtomicUsize::new(0);
    let history = recognise(&data[..data.len().min(64 << 10)])?;
    let wanted = match history {
        History::Conversations(Tool::ChatGpt) => FuzzedHistory::ChatGpt,
        History::Conversations(Tool::Claude) => FuzzedHistory::Claude,
        History::Conversations(Tool::OpenWebUi) => FuzzedHistory::OpenWebUi,
        History::Zip => FuzzedHistory::Zip,
        History::Sqlite => FuzzedHistory::LlmLog,
    };
    if wanted != format {
        return None;
    }
    let store = Store::open(Path::new(":memory:")).ok()?;
    let History::Conversations(tool) = history else {
        let case = CASES.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("pinloom-fuzz-{}-{case}", std::process::id()));
        std::fs::write(&path, data).ok()?;
        let report = import(&store, &path, history, "fuzz", &mut |_| {}, 0);
        let _ = std::fs::remove_file(&path);
        return report.ok();
    };
    with_batches(&store, "fuzz", 0, |writer| {
        let mapping = Mapping { tool, image: &mut |_| None, projects: HashMap::new() };
        stream(data, mapping, writer)
    })
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversations_are_read_one_at_a_time_and_a_damaged_tail_says_where() {
        let mut titles = Vec::new();
        let text = r#"[{"title": "One"}, {"title": "Two"}, {"title": "#;
        let error = each_conversation(text.as_bytes(), &mut |_, conversation| {
            titles.push(conversation["title"].as_str().unwrap_or("").to_owned());
            Ok(())
        })
        .unwrap_err();
        assert_eq!(titles, ["One", "Two"]);
        assert!(matches!(error, StreamError::Syntax(_)));
    }
}
