//! Receipts: every reply keeps what its request was planned to hold and what was sent, beside
//! what the provider counted, and says so when the provider counted materially fewer prompt
//! tokens than were sent (a local server cutting the context to a window of its own is the
//! known case: Ollama does it silently).
//!
//! Providers count differently, so the check is deliberately loose: the planned count includes
//! Pinloom's per-message overhead, estimates for models without an exact tokenizer are only
//! calibrated, and local servers report only the prompt tokens they evaluated, leaving out a
//! prefix their cache kept from an earlier request. What such a server could have kept is bounded
//! by what it held after the earlier requests this one repeats (`server_context`), so a server
//! that cut one request is caught on the next one too.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::base::cost::cost;
use crate::json::{DiffEntry, KindTokens, Prices, Receipt, SentSlice, Verdict};
use anyhow::Context;
use pinloom_engine::ContextPlan;
use pinloom_engine::plan::{AncestorContent, AncestorEntry, SliceKind};
use pinloom_engine::render::slice_text;
use pinloom_engine::snapshot::{Snapshot, SummaryAuthor};
use pinloom_providers::{ProviderId, Reply};
use pinloom_store as store;

impl Receipt {
    /// A receipt as the store keeps it, read back. Its words are composed again from its
    /// numbers: a receipt that came with a file (even one imported before receipts said so)
    /// never speaks in Pinloom's voice with the file's words.
    pub(crate) fn read(stored: &store::Receipt) -> anyhow::Result<Receipt> {
        let mut receipt: Receipt =
            serde_json::from_str(&stored.json).context("a stored receipt is unreadable")?;
        receipt.message = (receipt.verdict == Verdict::ProviderCut).then(|| receipt.cut_words());
        Ok(receipt)
    }

    /// What a cut context means, in Pinloom's words and the receipt's numbers only.
    fn cut_words(&self) -> String {
        let (planned, counted) = (self.planned, self.counted.unwrap_or(0));
        if self.imported {
            return format!(
                "the file this reply came with recorded that its provider counted {counted} prompt \
                 tokens where {planned} were planned"
            );
        }
        let local = ProviderId::from_name(&self.provider).is_some_and(ProviderId::is_local);
        cut_message(local, u64::from(planned), counted)
    }
}

/// What a receipt is made from, besides the plan.
pub(crate) struct Sending<'a> {
    pub(crate) profile: &'a str,
    pub(crate) model: &'a str,
    pub(crate) provider: ProviderId,
    pub(crate) tokenizer: String,
    pub(crate) exact_counts: bool,
    pub(crate) prices: Option<Prices>,
}

/// The receipt of a reply: the plan's side, the provider's side, and the verdict.
/// `earlier` are receipts of requests this one repeats as a prefix (the reply before it on the
/// path, earlier answers to the same message).
pub(crate) fn receipt(
    plan: &ContextPlan,
    snapshot: &Snapshot,
    sending: &Sending<'_>,
    reply: &Reply,
    earlier: &[Receipt],
) -> Receipt {
    let planned = u64::from(plan.used);
    let usage = reply.usage;
    let local = sending.provider.is_local();
    let reusable = if local {
        earlier
            .iter()
            .filter(|receipt| receipt.profile == sending.profile)
            .map(|receipt| u64::from(receipt.planned).min(receipt.server_context))
            .max()
            .unwrap_or(0)
    } else {
        0
    };
    // An image is planned at its provider's rule, a ceiling where the provider may count less
    // (a small image at low detail, a vision model with a smaller grid): the text alone is what
    // a provider that kept everything must have counted.
    let images: u64 = plan
        .slices
        .iter()
        .filter(|slice| slice.is_included() && slice.kind == SliceKind::Image)
        .map(|slice| u64::from(slice.tokens))
        .sum();
    let expected_at_least = planned.saturating_sub(reusable).saturating_sub(images);
    let (verdict, message) = match usage.input_tokens {
        None => (Verdict::NotReported, None),
        Some(counted) if cut(expected_at_least, counted, sending.exact_counts) => {
            (Verdict::ProviderCut, Some(cut_message(local, planned, counted)))
        }
        Some(_) => (Verdict::Matched, None),
    };
    let output = usage.output_tokens;
    let server_context = match (verdict, usage.input_tokens) {
        (Verdict::ProviderCut, Some(counted)) => counted,
        // A local server that counted less than was sent kept the rest from its cache.
        (Verdict::Matched, Some(counted)) if local => counted.max(planned),
        (_, Some(counted)) => counted,
        (_, None) => planned,
    } + output.unwrap_or(0);
    let cost = sending.prices.and_then(|prices| cost(prices, usage.input_tokens?, &usage, output));
    Receipt {
        profile: sending.profile.to_owned(),
        model: sending.model.to_owned(),
        provider: sending.provider.name().to_owned(),
        tokenizer: sending.tokenizer.clone(),
        exact_counts: sending.exact_counts,
        available: plan.available,
        planned: plan.used,
        by_kind: by_kind(plan),
        sent: sent(plan, snapshot),
        counted: usage.input_tokens,
        cache_read: usage.cached_input_tokens,
        cache_write: usage.cache_write_input_tokens,
        output,
        expected_at_least,
        server_context,
        verdict,
        message,
        cost,
        first_text_ms: reply.first_text_after.map(|after| millis(after.as_millis())),
        took_ms: millis(reply.took.as_millis()),
        imported: false,
    }
}

fn millis(value: u128) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
}

/// Whether `counted` is materially fewer than `expected`: by more than 64 tokens and by more
/// than 15 % under an exact count, 40 % under an estimate (a calibrated estimate may be that far
/// off before the model's replies have taught it).
pub(crate) fn cut(expected: u64, counted: u64, exact_counts: bool) -> bool {
    let tolerance = if exact_counts { 15 } else { 40 };
    let missing = expected.saturating_sub(counted);
    missing > 64 && missing * 100 > expected * tolerance
}

/// What a provider cutting the context means, in Pinloom's words and numbers only.
fn cut_message(local: bool, planned: u64, counted: u64) -> String {
    if local {
        format!(
            "the server counted {counted} prompt tokens where Pinloom sent {planned}: it cut the \
             context to fit a smaller window of its own, so the reply did not see all of it \
             (usually the start of the conversation). Set the profile's context window to what \
             the server runs with (for Ollama, the model's num_ctx or OLLAMA_CONTEXT_LENGTH), or \
             give the server a larger window."
        )
    } else {
        format!(
            "the provider counted {counted} prompt tokens where Pinloom planned {planned}: \
             something between Pinloom and the model cut the context, or the profile counts \
             tokens with a tokenizer that does not fit the model. Check the model's Budget → \
             Address and Budget → Token counting."
        )
    }
}

fn by_kind(plan: &ContextPlan) -> Vec<KindTokens> {
    let mut totals: Vec<KindTokens> = Vec::new();
    for slice in plan.included() {
        let kind = slice.kind.as_str().to_owned();
        match totals.iter_mut().find(|total| total.kind == kind) {
            Some(total) => {
                total.slices += 1;
                total.tokens = total.tokens.saturating_add(slice.tokens);
            }
            None => totals.push(KindTokens { kind, slices: 1, tokens: slice.tokens }),
        }
    }
    let fills: u32 = plan.role_fills.iter().map(|fill| fill.tokens).sum();
    let marker = plan.marker.as_ref().map_or(0, |marker| marker.tokens);
    if fills + marker > 0 {
        let slices = u32::try_from(plan.role_fills.len()).unwrap_or(u32::MAX)
            + u32::from(plan.marker.is_some());
        totals.push(KindTokens { kind: "framing".to_owned(), slices, tokens: fills + marker });
    }
    totals
}

/// What a plan sent, in order: consecutive messages of the path as one run, everything else
/// slice by slice.
pub(crate) fn sent(plan: &ContextPlan, snapshot: &Snapshot) -> Vec<SentSlice> {
    let mut sent: Vec<SentSlice> = Vec::new();
    let mut run_open = false;
    for (index, slice) in plan.slices.iter().enumerate() {
        if !slice.is_included() {
            run_open = false;
            continue;
        }
        let (source, source_id) = crate::base::plan::source_view(slice.source);
        // A whole message of the path (not a note, a draft or a message cut at the boundary).
        let message = matches!(
            slice.kind,
            SliceKind::Prompt | SliceKind::RecentHistory | SliceKind::OldHistory
        ) && slice.node_index().is_some()
            && source == "node";
        if message {
            if run_open && let Some(run) = sent.last_mut() {
                run.last_id = source_id;
                run.count += 1;
                run.tokens = run.tokens.saturating_add(slice.tokens);
                continue;
            }
            run_open = true;
            sent.push(SentSlice {
                kind: "history".to_owned(),
                source,
                source_id,
                last_id: source_id,
                count: 1,
                tokens: slice.tokens,
                digest: None,
                note: None,
            });
            continue;
        }
        run_open = false;
        let composed = slice.node_index().is_none();
        sent.push(SentSlice {
            kind: slice.kind.as_str().to_owned(),
            source,
            source_id,
            last_id: None,
            count: 1,
            tokens: slice.tokens,
            digest: composed.then(|| digest(&slice_text(slice, snapshot))),
            note: plan
                .ancestors
                .iter()
                .find(|entry| entry.slice == index)
                .map(|entry| ancestor_note(entry, snapshot)),
        });
    }
    sent
}

/// What stood for an ancestor thread in a request, in words.
pub(crate) fn ancestor_note(entry: &AncestorEntry, snapshot: &Snapshot) -> String {
    let by = |k: usize| {
        let summary = &snapshot.summaries[k];
        match summary.written_by {
            SummaryAuthor::Person => "you".to_owned(),
            SummaryAuthor::Agent => "an agent".to_owned(),
            SummaryAuthor::File => "an imported file".to_owned(),
            SummaryAuthor::Model => summary.summarizer.clone(),
        }
    };
    match &entry.content {
        AncestorContent::Summary { record } => format!("summary written by {}", by(*record)),
        AncestorContent::Fitted { record, from } => format!(
            "summary written by {}, fitted to {} tokens by {}",
            by(*from),
            entry.budget,
            snapshot.summaries[*record].summarizer
        ),
        AncestorContent::Cut { record, whole_tokens } => format!(
            "summary written by {}, cut from {whole_tokens} to its budget of {} tokens",
            by(*record),
            entry.budget
        ),
        AncestorContent::Excerpt { reason, .. } => format!(
            "summary not available: {}; its last messages before the branching point, verbatim",
            reason.describe()
        ),
        AncestorContent::RootGoal => "the thread's first message (task frames)".to_owned(),
    }
}

/// FNV-1a, 64 bits: stable across builds and machines (std's hashers are not), and enough to
/// tell a changed text from the same one.
fn digest(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// What identifies a sent slice across two requests: its source and the source's id.
type SliceKey = (String, Option<i64>);
/// What is compared of a sent slice: its kind, its tokens (when known) and its text's digest.
type SliceFacts = (String, Option<u32>, Option<String>);

/// A request's contents keyed for comparison.
type Keyed = Vec<(SliceKey, SliceFacts)>;

/// Where each message of a path stands in it, by id.
fn positions(path: &[store::Node]) -> HashMap<i64, usize> {
    path.iter().enumerate().map(|(position, node)| (node.id.0, position)).collect()
}

/// What a request sent, with its runs of messages expanded into one entry per message, along
/// `path` (the path the request was made on, or one that holds it).
fn keyed(sent: &[SentSlice], positions: &HashMap<i64, usize>, path: &[store::Node]) -> Keyed {
    let mut keyed = Keyed::new();
    for sent in sent {
        let span = match (sent.kind.as_str(), sent.source_id, sent.last_id) {
            ("history", Some(first), Some(last)) => Some((first, last)),
            _ => None,
        };
        let Some((first, last)) = span else {
            keyed.push((
                (sent.source.clone(), sent.source_id),
                (sent.kind.clone(), Some(sent.tokens), sent.digest.clone()),
            ));
            continue;
        };
        match (positions.get(&first), positions.get(&last)) {
            (Some(&from), Some(&to)) if from <= to => {
                let tokens = (sent.count == 1).then_some(sent.tokens);
                for node in &path[from..=to] {
                    keyed.push((
                        ("node".to_owned(), Some(node.id.0)),
                        ("history".to_owned(), tokens, None),
                    ));
                }
            }
            // Not on this path (an edit replaced it): the run stands as one entry.
            _ => keyed.push((
                ("node".to_owned(), Some(first)),
                ("history".to_owned(), Some(sent.tokens), None),
            )),
        }
    }
    keyed
}

/// What differs between two requests' contents: what only `now` sent, what only `before` sent,
/// what both sent with a different text or size, and how many things both sent unchanged.
#[derive(Debug, Default)]
pub(crate) struct SentDiff {
    pub(crate) only_now: Vec<DiffEntry>,
    pub(crate) only_before: Vec<DiffEntry>,
    pub(crate) changed: Vec<DiffEntry>,
    pub(crate) unchanged: u32,
}

/// Compares what two requests sent, each along the path it was made on (the same path twice for
/// two requests of one branch; a branch's own path for each side of a comparison).
pub(crate) fn diff(
    now: &[SentSlice],
    now_path: &[store::Node],
    before: &[SentSlice],
    before_path: &[store::Node],
) -> SentDiff {
    let now_positions = positions(now_path);
    let before_positions = positions(before_path);
    let entry =
        |key: &SliceKey, value: &SliceFacts, path: &[store::Node], at: &HashMap<i64, usize>| {
            let preview = match (key.0.as_str(), key.1.and_then(|id| at.get(&id))) {
                ("node", Some(&position)) => path[position].text.chars().take(80).collect(),
                _ => String::new(),
            };
            DiffEntry {
                kind: value.0.clone(),
                source: key.0.clone(),
                source_id: key.1,
                tokens: value.1,
                preview,
            }
        };
    let now_keyed = keyed(now, &now_positions, now_path);
    let before_keyed = keyed(before, &before_positions, before_path);
    let before_map: HashMap<&SliceKey, &SliceFacts> =
        before_keyed.iter().map(|(key, value)| (key, value)).collect();
    let now_map: HashMap<&SliceKey, &SliceFacts> =
        now_keyed.iter().map(|(key, value)| (key, value)).collect();
    let mut diff = SentDiff::default();
    for (key, value) in &now_keyed {
        match before_map.get(key) {
            None => diff.only_now.push(entry(key, value, now_path, &now_positions)),
            // A message's size is known per run only; a message is the same message.
            Some(old)
                if old.2 != value.2
                    || (value.1.is_some()
                        && old.1.is_some()
                        && old.1 != value.1
                        && key.0 != "node") =>
            {
                diff.changed.push(entry(key, value, now_path, &now_positions));
            }
            Some(_) => diff.unchanged += 1,
        }
    }
    diff.only_before = before_keyed
        .iter()
        .filter(|(key, _)| !now_map.contains_key(key))
        .map(|(key, value)| entry(key, value, before_path, &before_positions))
        .collect();
    diff
}

/// What kind of thing a receipt's slice names by id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReceiptSource {
    Node,
    Pin,
}

/// A receipt with the ids its slices name turned by `turn` (document ids into import indices,
/// import indices into the store's ids); an id that turns into nothing becomes `null`.
pub(crate) fn receipt_references<T: serde::Serialize>(
    receipt: &Value,
    turn: impl Fn(ReceiptSource, &Value) -> Option<T>,
) -> Value {
    let mut receipt = receipt.clone();
    if let Some(Value::Array(sent)) = receipt.get_mut("sent") {
        for entry in sent {
            let source = match entry.get("source").and_then(Value::as_str) {
                Some(
                    "node" | "retrieval" | "addedSearchHit" | "fuseSource" | "picked"
                    | "pickedSummary",
                ) => Some(ReceiptSource::Node),
                Some("summary" | "anchor" | "pinResult") => Some(ReceiptSource::Pin),
                _ => None,
            };
            for key in ["sourceId", "lastId"] {
                let Some(id) = entry.get(key).filter(|id| !id.is_null()) else { continue };
                let turned = source.and_then(|source| turn(source, id));
                entry[key] = turned.map_or(Value::Null, |turned| json!(turned));
            }
        }
    }
    receipt
}

/// A receipt from a file (or a team's sync folder) as Pinloom may keep it: read as a receipt (anything else is left out),
/// marked as imported, its words dropped (the file's text is never shown as Pinloom's own: what
/// is said of an imported receipt is composed from its numbers), its verdict made again from its
/// numbers, and a cost that is not a non-negative finite number dropped.
pub(crate) fn admit_receipt(receipt: &Value) -> Option<Value> {
    // The slices name messages by the document's ids until the importer turns them into the
    // store's: they are read apart.
    let mut numbers = receipt.clone();
    numbers["sent"] = Value::Array(Vec::new());
    let mut read: Receipt = serde_json::from_value(numbers).ok()?;
    read.imported = true;
    read.message = None;
    read.expected_at_least = read.expected_at_least.min(u64::from(read.planned));
    read.verdict = match read.counted {
        None => Verdict::NotReported,
        Some(counted) if cut(read.expected_at_least, counted, read.exact_counts) => {
            Verdict::ProviderCut
        }
        Some(_) => Verdict::Matched,
    };
    let sound = |amount: f64| amount.is_finite() && amount >= 0.0;
    if read.cost.is_some_and(|cost| !(sound(cost.input) && sound(cost.output) && sound(cost.total)))
    {
        read.cost = None;
    }
    let mut admitted = serde_json::to_value(&read).ok()?;
    // The slices keep the document's ids for the importer to turn into the store's, without
    // words of the file's (an ancestor's note is Pinloom's to write).
    let sent: Vec<Value> = receipt
        .get("sent")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|slice| slice.is_object())
        .map(|slice| {
            let mut slice = slice.clone();
            if let Some(object) = slice.as_object_mut() {
                object.insert("note".into(), Value::Null);
            }
            slice
        })
        .collect();
    admitted["sent"] = Value::Array(sent);
    Some(admitted)
}
