//! Whole documents in and out: an Open Loom v2 document or a socketteer tree read and written in
//! one transaction, and trees written out as one Open Loom document.

use pinloom_store::TreeId;
use serde_json::Value;

use super::skim::{Refusal, Skim};
use super::{open_loom_export, open_loom_import, socketteer};
use crate::base::pinloom::Pinloom;
use crate::base::untrusted;
use crate::error::ApiError;
use crate::json::{ExportOptions, ImportReport, ImportedTreeSummary, TransferProgress};
use crate::runtime::{blocking, now_ms};

impl Default for ExportOptions {
    fn default() -> ExportOptions {
        ExportOptions { system_prompts: true, raw_responses: true }
    }
}

impl ImportReport {
    /// The report as a person reads it.
    pub fn text(&self) -> String {
        let mut out: Vec<String> = self
            .trees
            .iter()
            .map(|tree| {
                format!(
                    "Imported \"{}\" as tree {} ({}): {} messages, {} threads.",
                    tree.title, tree.id, tree.slug, tree.messages, tree.threads
                )
            })
            .collect();
        if self.notes.is_empty() {
            out.push("Everything in the document was mapped.".to_owned());
        } else {
            out.push("Not mapped, kept only for export, or repaired:".to_owned());
            out.extend(self.notes.iter().map(|note| format!("  - {note}")));
        }
        out.join("\n")
    }
}

impl Pinloom {
    /// The trees as one Open Loom v2 document (pretty JSON).
    pub async fn export_open_loom(
        &self,
        trees: Vec<i64>,
        options: ExportOptions,
    ) -> anyhow::Result<String> {
        self.read("could not export the trees", move |store| {
            open_loom_text(store, &trees, options, &mut |_| {})
        })
        .await
    }

    /// Reads an Open Loom v2 document, or a socketteer/loom tree, and writes every tree in it in
    /// one transaction. `title_hint` names a tree the document leaves untitled (the file's
    /// name). A document that cannot be read is refused with where and why, and nothing is
    /// written.
    pub async fn import_document(
        &self,
        text: String,
        title_hint: String,
    ) -> anyhow::Result<ImportReport> {
        let source = title_hint.clone();
        self.import_document_reporting(text, title_hint, source, |_| {}).await
    }

    /// [`Pinloom::import_document`], telling `progress` how many messages the document holds
    /// and then how many of them are written so far. `source` names the file in what the import
    /// brings (its model profiles say they came from it).
    pub(in crate::interchange) async fn import_document_reporting(
        &self,
        text: String,
        title_hint: String,
        source: String,
        mut progress: impl FnMut(TransferProgress) + Send + 'static,
    ) -> anyhow::Result<ImportReport> {
        // Reading a large document takes a while of CPU: off the async executor too.
        let read = blocking(move || read_document(text, &title_hint, &source, now_ms())).await?;
        self.write("nothing was imported", move |store| write_document(store, read, &mut progress))
            .await
    }
}

/// A document read and checked, ready to write.
pub(super) struct ReadDocument {
    batch: open_loom_import::ImportBatch,
    /// The file it came from, as its profiles will name it.
    source: String,
    at_ms: i64,
}

impl ReadDocument {
    /// The one tree of a document made from one conversation, and the document's text, which
    /// what its messages keep for export is expanded from.
    pub(super) fn into_only_tree(self) -> anyhow::Result<(open_loom_import::TreeBatch, Skim)> {
        let open_loom_import::ImportBatch { skim, mut trees, .. } = self.batch;
        match (trees.pop(), trees.is_empty()) {
            (Some(tree), true) => Ok((tree, skim)),
            _ => anyhow::bail!("a conversation read as {} trees", trees.len() + 1),
        }
    }
}

/// Reads `text` as an Open Loom v2 document or a socketteer/loom tree; a text that is neither
/// is refused with where and why. An Open Loom document is read a message at a time, leaving
/// unread what Pinloom only keeps ([`skim`]); socketteer's format is read whole, then as the
/// Open Loom document it maps to.
pub(super) fn read_document(
    text: String,
    title_hint: &str,
    source: &str,
    now: i64,
) -> anyhow::Result<ReadDocument> {
    let title_hint = match title_hint.trim() {
        "" => "Imported loom".to_owned(),
        hint => hint.to_owned(),
    };
    let skeleton_of = |skim: &Skim| {
        skim.document().map_err(|refusal| {
            ApiError::invalid_input(match refusal {
                Refusal::Syntax(error) => {
                    format!("the file is not valid JSON: {error}; nothing was imported")
                }
                refusal => format!("the file {refusal}; nothing was imported"),
            })
        })
    };
    let mut skim = Skim::new(text);
    let mut skeleton = skeleton_of(&skim)?;
    if skeleton.get("format").is_none() {
        let value: Value = serde_json::from_str(skim.text()).map_err(|error| {
            ApiError::invalid_input(format!(
                "the file is not valid JSON: {error}; nothing was imported"
            ))
        })?;
        if !socketteer::detect(&value) {
            return Err(ApiError::invalid_input(unread_format(&value)).into());
        }
        let document = socketteer::to_open_loom(&value, &title_hint).to_string();
        drop(value);
        skim = Skim::new(document);
        skeleton = skeleton_of(&skim)?;
    }
    Ok(ReadDocument {
        batch: open_loom_import::read_document(skim, &skeleton, &title_hint, now)?,
        source: match source.trim() {
            "" => "an imported file".to_owned(),
            source => source.to_owned(),
        },
        at_ms: now,
    })
}

/// Writes every tree of a read document into `store` in one transaction, keeping out what a
/// document may not decide.
pub(super) fn write_document(
    store: &pinloom_store::Store,
    read: ReadDocument,
    progress: &mut dyn FnMut(TransferProgress),
) -> anyhow::Result<ImportReport> {
    let ReadDocument { mut batch, source, at_ms } = read;
    let total = batch.trees.iter().map(|tree| tree.import.nodes.len() as u64).sum();
    progress(TransferProgress::Checked { total });
    let mut notes = std::mem::take(&mut batch.notes);
    let here = store.profiles()?;
    batch.profiles =
        untrusted::admit_profiles(std::mem::take(&mut batch.profiles), &here, &mut |note| {
            notes.add(note)
        });
    let summarizers = untrusted::possible_summarizers(&here, &batch.profiles);
    for tree in &mut batch.trees {
        let title = &tree.import.tree.title;
        untrusted::admit_settings(&mut tree.settings, &summarizers, title, &mut |note| {
            notes.add(note)
        });
    }
    let mut arriving = Vec::new();
    for profile in &mut batch.profiles {
        if here.iter().any(|existing| existing.name == profile.name) {
            notes.add(format!(
                "model profile {:?} exists here already; yours was kept as it is",
                profile.name
            ));
        } else {
            // Data until the person accepts it: never planned for, sent to or a default.
            profile.imported_from = Some(source.clone());
            arriving.push(format!("{:?}", profile.name));
        }
    }
    if !arriving.is_empty() {
        let one = arriving.len() == 1;
        notes.add(format!(
            "{} {} came with the file and {} not enabled: nothing is planned for or sent to {} \
             until you enable {} in Settings → Models from imported files",
            if one { "model profile" } else { "model profiles" },
            arriving.join(", "),
            if one { "is" } else { "are" },
            if one { "it" } else { "them" },
            if one { "it" } else { "them" },
        ));
    }
    let (written, _) = store.import_trees(
        &batch.trees,
        &batch.profiles,
        |which, imported| open_loom_import::preserved_json(&batch, which, imported),
        at_ms,
        &mut |written| progress(TransferProgress::Writing { messages: written as u64, total }),
    )?;
    let mut notes = notes.into_lines();
    for tree in &written {
        if let Some(here) = tree.copy_of {
            notes.push(format!(
                "\"{}\" is already here (tree {}, the same global id): it was imported as a copy, with ids of its own, which syncs as a tree of its own",
                tree.tree.title, here.0
            ));
        }
    }
    let trees = written
        .into_iter()
        .map(|tree| ImportedTreeSummary {
            id: tree.tree.id.0,
            slug: tree.tree.slug,
            title: tree.tree.title,
            messages: tree.nodes.len(),
            threads: tree.pins.len(),
        })
        .collect();
    Ok(ImportReport { trees, notes })
}

/// Which importer a fuzz case drives.
#[cfg(feature = "test-seams")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FuzzedImporter {
    /// Open Loom v2 documents.
    OpenLoom,
    /// socketteer/loom's saved trees, read through the spec's mapping.
    Socketteer,
}

/// One fuzz case for the importers: `data` as a document, imported into a fresh database in
/// memory, then exported again. The import may refuse the document; neither step may panic,
/// and what was written must export. Cases the other importer would read are skipped.
#[cfg(feature = "test-seams")]
pub fn import_fuzz_case(importer: FuzzedImporter, data: &[u8]) -> Option<ImportReport> {
    let text = std::str::from_utf8(data).ok()?;
    let value: Value = serde_json::from_str(text).ok()?;
    let is_open_loom = value.get("format").is_some();
    if is_open_loom != (importer == FuzzedImporter::OpenLoom) {
        return None;
    }
    let store = pinloom_store::Store::open(std::path::Path::new(":memory:")).ok()?;
    let read = read_document(text.to_owned(), "fuzz", "fuzz", 0).ok()?;
    let report = write_document(&store, read, &mut |_| {}).ok()?;
    let trees: Vec<i64> = report.trees.iter().map(|tree| tree.id).collect();
    if let Err(error) = open_loom_text(&store, &trees, ExportOptions::default(), &mut |_| {}) {
        panic!("an imported tree does not export: {error:#}");
    }
    Some(report)
}

/// The trees as one Open Loom v2 document (pretty JSON); `progress` hears how many messages are
/// read out so far.
fn open_loom_text(
    store: &pinloom_store::Store,
    trees: &[i64],
    options: ExportOptions,
    progress: &mut dyn FnMut(usize),
) -> anyhow::Result<String> {
    // Room for a typical document up front (a message takes ~600 bytes with its edge around its
    // text): growing a buffer of megabytes by doubling copies it each time.
    let mut room = 0;
    for tree in trees {
        room += store.tree(TreeId(*tree))?.node_count as usize * 1_024;
    }
    let mut text = Vec::with_capacity(room);
    write_open_loom(store, trees, options, progress, &mut text)?;
    Ok(String::from_utf8(text)?)
}

/// Writes the Open Loom document of `trees` to `out` as it is made.
pub(in crate::interchange) fn write_open_loom(
    store: &pinloom_store::Store,
    trees: &[i64],
    options: ExportOptions,
    progress: &mut dyn FnMut(usize),
    out: impl std::io::Write,
) -> anyhow::Result<()> {
    let trees: Vec<TreeId> = trees.iter().copied().map(TreeId).collect();
    open_loom_export::write_document(store, &trees, options, now_ms(), progress, out)
}

/// Why a JSON file is not one Pinloom reads, naming the format it looks like.
fn unread_format(value: &Value) -> String {
    let has = |key: &str| value.get(key).is_some();
    let nodes_have = |key: &str| {
        value
            .get("nodes")
            .and_then(Value::as_object)
            .is_some_and(|nodes| nodes.values().next().is_some_and(|node| node.get(key).is_some()))
    };
    if has("nodes") && has("bookmarkedNodes") && has("rootNodeId") {
        "this is an Open Loom v1 file (Loom Swift); Pinloom reads Open Loom 2.x: export it as Open Loom 2.0 first; nothing was imported".to_owned()
    } else if has("current") && nodes_have("parentId") && nodes_have("unread") {
        "this is a Loomsidian (Obsidian loom) file, which Pinloom does not read yet; export it as Open Loom 2.0 first; nothing was imported".to_owned()
    } else if value.get("loomTree").and_then(|tree| tree.get("nodeStore")).is_some() {
        "this is a MiniLoom file, which Pinloom does not read yet; export it as Open Loom 2.0 first; nothing was imported".to_owned()
    } else {
        "this JSON is neither an Open Loom document (no \"format\": \"open-loom\") nor a socketteer loom tree; nothing was imported".to_owned()
    }
}
