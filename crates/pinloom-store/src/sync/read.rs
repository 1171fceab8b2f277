//! The database's rows as sync records and field values, named by global id instead of row
//! number.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde_json::{Value, json};

use crate::error::StoreError;
use crate::model::Part;
use crate::sync::records::{
    AttachmentRecord, MessageRecord, NoteRecord, PickedRecord, PinRecord, ProfileRecord,
    ReceiptRecord, ReceiptRef, RecordKind, SummaryRecord, SyncAnchor, SyncClosed, SyncRecord,
    SyncedField, TreeRecord, TurnReceipt, profile_digest,
};

/// Calls `each` with every record the database holds: trees, pins, messages, attachments, notes
/// and summary writes, each kind in row order. Fitted summaries stay out (each device condenses
/// its own from the chosen text).
///
/// With `unknown_to`, only the records that target's folder is not known to hold: the filter runs
/// in SQL, so a sync of one new message into a large tree reads one row, not all of them.
pub(crate) fn read_records(
    conn: &Connection,
    unknown_to: Option<&str>,
    turn: TurnReceipt<'_>,
    each: &mut dyn FnMut(SyncRecord) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let only = unknown_to.is_some();
    each_row(conn, &filtered(TREES, only), unknown_to, each, &mut |row| {
        let settings: String = row.get(5)?;
        Ok(SyncRecord::Tree(TreeRecord {
            id: row.get(0)?,
            title: row.get(1)?,
            mode: row.get(2)?,
            system_context: row.get(3)?,
            buffer_includes_system: row.get(4)?,
            settings: settings_out(conn, &settings)?,
            created_at_ms: row.get(6)?,
            deleted_at_ms: row.get(7)?,
            shared_by: None,
        }))
    })?;
    each_row(conn, &filtered(PINS, only), unknown_to, each, &mut pin_record)?;
    let mut picks = conn.prepare_cached(
        "SELECT n.gid, p.with_summary FROM picked_sources p JOIN nodes n ON n.id = p.source_id
         WHERE p.question_id = ?1 ORDER BY p.position",
    )?;
    each_row(conn, &filtered(MESSAGES, only), unknown_to, each, &mut |row| {
        let id = row.get::<_, i64>(0)?;
        // A message's token counts are not written: every machine that reads a folder counts
        // them from the text itself (a count from elsewhere is not believed), so they would be
        // bytes for nothing, and a query per message of a first sync.
        let token_counts = BTreeMap::new();
        // Only a first message can have been asked over picks: the rest skip the lookup.
        let picked = match row.get::<_, Option<String>>(3)? {
            Some(_) => Vec::new(),
            None => picks
                .query_map([id], |row| {
                    Ok(PickedRecord { message: row.get(0)?, with_summary: row.get(1)? })
                })?
                .collect::<Result<_, _>>()?,
        };
        message_record(row, token_counts, picked)
    })?;
    each_row(conn, &filtered(ATTACHMENTS, only), unknown_to, each, &mut |row| {
        Ok(SyncRecord::Attachment(AttachmentRecord {
            id: row.get(0)?,
            tree: row.get(1)?,
            scope: row.get(2)?,
            thread: row.get(3)?,
            node: row.get(4)?,
            role: row.get(5)?,
            name: row.get(6)?,
            content: row.get(7)?,
            created_at_ms: row.get(8)?,
        }))
    })?;
    each_row(conn, &filtered(NOTES, only), unknown_to, each, &mut |row| {
        Ok(SyncRecord::Note(NoteRecord {
            id: row.get(0)?,
            message: row.get(1)?,
            text: row.get(2)?,
            included: row.get(3)?,
            created_at_ms: row.get(4)?,
        }))
    })?;
    each_row(conn, &filtered(RECEIPTS, only), unknown_to, each, &mut |row| {
        let stored: String = row.get(2)?;
        let receipt: Value = serde_json::from_str(&stored).unwrap_or(Value::Null);
        let named = |kind: ReceiptRef, id: &Value| -> Value {
            id.as_i64().map_or(Value::Null, |id| global_id(conn, kind, id))
        };
        Ok(SyncRecord::Receipt(ReceiptRecord {
            id: row.get(0)?,
            message: row.get(1)?,
            receipt: turn(&receipt, &named),
            provider_cut: row.get(3)?,
        }))
    })?;
    each_row(conn, &filtered(SUMMARY_WRITES, only), unknown_to, each, &mut |row| {
        Ok(SyncRecord::Summary(SummaryRecord {
            id: row.get(0)?,
            tree: row.get(1)?,
            thread: row.get(2)?,
            path_end: row.get(3)?,
            budget: row.get(4)?,
            summarizer: row.get(5)?,
            written_by: row.get(6)?,
            chosen: row.get(7)?,
            text: row.get(8)?,
            input_chars: row.get::<_, i64>(9)?.max(0).unsigned_abs(),
            input_tokens: row.get::<_, i64>(10)?.max(0).unsigned_abs(),
            written_at_ms: row.get(11)?,
        }))
    })
}

const TREES: &str =
    "SELECT gid, title, mode, system_context, buffer_includes_system, settings_json,
        created_at_ms, deleted_at_ms
    FROM trees x /*unknown x.gid*/ ORDER BY x.id";

const PINS: &str = "SELECT p.gid, t.gid, pp.gid, a.gid, p.range_start, p.range_end,
        p.anchor_text, p.title, p.closed_at_ms, p.result, p.deleted_at_ms, p.created_at_ms
    FROM pins p JOIN trees t ON t.id = p.tree_id
    LEFT JOIN pins pp ON pp.id = p.parent_pin_id
    LEFT JOIN nodes a ON a.id = p.anchor_node_id /*unknown p.gid*/
    ORDER BY p.id";

// A message names its pin only when it begins that pin's thread (its parent is in another
// thread, or it has none): a message continuing a thread is in its parent's, wherever moves put
// that parent.
const MESSAGES: &str = "SELECT n.id, n.gid, t.gid, p.gid,
        CASE WHEN n.parent_id IS NULL OR p.pin_id IS NOT n.pin_id THEN pin.gid END, e.gid,
        n.author, n.text,
        n.parts_json, n.model, n.generation_json, n.usage_json, n.incomplete, n.excluded,
        n.bookmarked, n.kept, n.pruned_at_ms, n.created_at_ms
    FROM nodes n JOIN trees t ON t.id = n.tree_id
    LEFT JOIN nodes p ON p.id = n.parent_id
    LEFT JOIN pins pin ON pin.id = n.pin_id
    LEFT JOIN nodes e ON e.id = n.edited_from /*unknown n.gid*/
    ORDER BY n.id";

const ATTACHMENTS: &str = "SELECT a.gid, t.gid, a.scope, p.gid, n.gid, a.role, a.name, a.content,
        a.created_at_ms
    FROM attachments a JOIN trees t ON t.id = a.tree_id
    LEFT JOIN pins p ON p.id = a.pin_id
    LEFT JOIN nodes n ON n.id = a.node_id /*unknown a.gid*/
    ORDER BY a.id";

const NOTES: &str = "SELECT a.gid, n.gid, a.text, a.included, a.created_at_ms
    FROM annotations a JOIN nodes n ON n.id = a.node_id /*unknown a.gid*/ ORDER BY a.id";

const RECEIPTS: &str = "SELECT 'receipt-' || n.gid, n.gid, r.receipt_json, r.provider_cut
    FROM receipts r JOIN nodes n ON n.id = r.node_id /*unknown 'receipt-' || n.gid*/
    ORDER BY r.node_id";

const SUMMARY_WRITES: &str = "SELECT u.gid, t.gid, p.gid, n.gid, s.budget, s.summarizer,
        s.written_by, s.chosen, u.text, u.input_chars, u.input_tokens, u.written_at_ms
    FROM summary_updates u JOIN summaries s ON s.id = u.summary_id
    JOIN trees t ON t.id = s.tree_id
    LEFT JOIN pins p ON p.id = s.pin_id
    LEFT JOIN nodes n ON n.id = s.path_end_node_id
    WHERE s.fitted_from IS NULL /*unknown u.gid*/
    ORDER BY u.id";

/// `sql` with its `/*unknown x.gid*/` marker made a condition (rows whose global id the folder of
/// target `?1` is not known to hold) or taken out.
fn filtered(sql: &str, unknown: bool) -> String {
    let Some(start) = sql.find("/*unknown ") else { return sql.to_owned() };
    let end = start + sql[start..].find("*/").unwrap_or(0) + 2;
    let named = sql[start + "/*unknown ".len()..end - 2].trim();
    let joiner = if sql[..start].contains("WHERE") { "AND" } else { "WHERE" };
    let condition = if unknown {
        format!(
            "{joiner} NOT EXISTS (SELECT 1 FROM sync_known k WHERE k.target = ?1 AND k.id = {named})"
        )
    } else {
        String::new()
    };
    format!("{}{condition}{}", &sql[..start], &sql[end..])
}

/// Calls `each` with the record `record` makes of every row `sql` selects (`?1` bound to
/// `target` when given).
fn each_row(
    conn: &Connection,
    sql: &str,
    target: Option<&str>,
    each: &mut dyn FnMut(SyncRecord) -> Result<(), StoreError>,
    record: &mut dyn FnMut(&Row<'_>) -> Result<SyncRecord, StoreError>,
) -> Result<(), StoreError> {
    let mut statement = conn.prepare_cached(sql)?;
    let mut rows = match target {
        Some(target) => statement.query([target])?,
        None => statement.query([])?,
    };
    while let Some(row) = rows.next()? {
        each(record(row)?)?;
    }
    Ok(())
}

fn pin_record(row: &Row<'_>) -> Result<SyncRecord, StoreError> {
    let anchor = match (row.get::<_, Option<u32>>(4)?, row.get::<_, Option<u32>>(5)?) {
        (Some(start), Some(end)) => Some(SyncAnchor {
            start,
            end,
            text: row.get::<_, Option<String>>(6)?.unwrap_or_default(),
        }),
        _ => None,
    };
    let closed = match (row.get::<_, Option<i64>>(8)?, row.get::<_, Option<String>>(9)?) {
        (Some(at_ms), result) => Some(SyncClosed { at_ms, result: result.unwrap_or_default() }),
        (None, _) => None,
    };
    Ok(SyncRecord::Pin(PinRecord {
        id: row.get(0)?,
        tree: row.get(1)?,
        parent: row.get(2)?,
        anchor_node: row.get(3)?,
        anchor,
        title: row.get(7)?,
        closed,
        deleted_at_ms: row.get(10)?,
        created_at_ms: row.get(11)?,
    }))
}

fn message_record(
    row: &Row<'_>,
    token_counts: BTreeMap<String, u64>,
    picked: Vec<PickedRecord>,
) -> Result<SyncRecord, StoreError> {
    let text: String = row.get(7)?;
    let parts = match row.get::<_, Option<String>>(8)? {
        None => vec![Part::Text { text }],
        Some(json) => serde_json::from_str(&json).map_err(|error| {
            StoreError::InvalidInput(format!("a message's stored parts are damaged: {error}"))
        })?,
    };
    Ok(SyncRecord::Message(MessageRecord {
        id: row.get(1)?,
        tree: row.get(2)?,
        parent: row.get(3)?,
        thread: row.get(4)?,
        edited_from: row.get(5)?,
        author: row.get(6)?,
        parts,
        model: row.get(9)?,
        generation: row.get(10)?,
        usage: row.get(11)?,
        incomplete: row.get(12)?,
        excluded: row.get(13)?,
        bookmarked: row.get(14)?,
        kept: row.get(15)?,
        deleted_at_ms: row.get(16)?,
        created_at_ms: row.get(17)?,
        token_counts,
        picked,
    }))
}

/// The tree (by global id) of the message `message`.
pub(crate) fn tree_of(conn: &Connection, message: &str) -> Result<Option<String>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT t.gid FROM nodes n JOIN trees t ON t.id = n.tree_id WHERE n.gid = ?1",
        )?
        .query_row([message], |row| row.get(0))
        .optional()?)
}

/// The tree (by global id) of the thing of kind `kind` named `gid`, when it is here; `None` for a
/// profile, which belongs to no tree.
pub(crate) fn tree_of_thing(
    conn: &Connection,
    kind: RecordKind,
    gid: &str,
) -> Result<Option<String>, StoreError> {
    let sql = match kind {
        RecordKind::Tree => return Ok(Some(gid.to_owned())),
        RecordKind::Message => return tree_of(conn, gid),
        RecordKind::Receipt => {
            "SELECT t.gid FROM receipts r JOIN nodes n ON n.id = r.node_id
             JOIN trees t ON t.id = n.tree_id WHERE 'receipt-' || n.gid = ?1"
        }
        RecordKind::Profile => return Ok(None),
        RecordKind::Pin => {
            "SELECT t.gid FROM pins x JOIN trees t ON t.id = x.tree_id WHERE x.gid = ?1"
        }
        RecordKind::Note => {
            "SELECT t.gid FROM annotations x JOIN nodes n ON n.id = x.node_id
             JOIN trees t ON t.id = n.tree_id WHERE x.gid = ?1"
        }
        RecordKind::Attachment => {
            "SELECT t.gid FROM attachments x JOIN trees t ON t.id = x.tree_id WHERE x.gid = ?1"
        }
        RecordKind::Summary => {
            "SELECT t.gid FROM summary_updates u JOIN summaries s ON s.id = u.summary_id
             JOIN trees t ON t.id = s.tree_id WHERE u.gid = ?1"
        }
    };
    Ok(conn.prepare_cached(sql)?.query_row([gid], |row| row.get(0)).optional()?)
}

/// The value of a synced field of the thing `gid` now; `None` when the thing is gone.
pub(crate) fn field_value(
    conn: &Connection,
    field: SyncedField,
    gid: &str,
) -> Result<Option<Value>, StoreError> {
    let (column, shape) = match field {
        SyncedField::AttachmentRemoved => return Ok(Some(Value::Bool(true))),
        SyncedField::TreeSettings => {
            let settings: Option<String> = conn
                .prepare_cached("SELECT settings_json FROM trees WHERE gid = ?1")?
                .query_row([gid], |row| row.get(0))
                .optional()?;
            return settings.map(|settings| settings_out(conn, &settings)).transpose();
        }
        SyncedField::PinClosed => {
            let closed: Option<(Option<i64>, Option<String>)> = conn
                .prepare_cached("SELECT closed_at_ms, result FROM pins WHERE gid = ?1")?
                .query_row([gid], |row| Ok((row.get(0)?, row.get(1)?)))
                .optional()?;
            return Ok(closed.map(|(at, result)| match at {
                Some(at_ms) => json!({ "atMs": at_ms, "result": result.unwrap_or_default() }),
                None => Value::Null,
            }));
        }
        SyncedField::MessageParent => {
            // The parent's global id; `null` for a first message (a row that is gone: no value).
            let parent: Option<Option<String>> = conn
                .prepare_cached(
                    "SELECT p.gid FROM nodes n LEFT JOIN nodes p ON p.id = n.parent_id
                     WHERE n.gid = ?1",
                )?
                .query_row([gid], |row| row.get(0))
                .optional()?;
            return Ok(parent.map(|parent| parent.map_or(Value::Null, Value::String)));
        }
        SyncedField::PinPlace => {
            let place: Option<(Option<String>, Option<String>)> = conn
                .prepare_cached(
                    "SELECT pp.gid, a.gid FROM pins x LEFT JOIN pins pp ON pp.id = x.parent_pin_id
                     LEFT JOIN nodes a ON a.id = x.anchor_node_id WHERE x.gid = ?1",
                )?
                .query_row([gid], |row| Ok((row.get(0)?, row.get(1)?)))
                .optional()?;
            return Ok(place.map(|(parent, anchor)| json!({ "parent": parent, "anchor": anchor })));
        }
        SyncedField::TreeTitle => ("SELECT title FROM trees WHERE gid = ?1", Shape::Text),
        SyncedField::TreeSystemContext => {
            ("SELECT system_context FROM trees WHERE gid = ?1", Shape::Text)
        }
        SyncedField::TreeBufferIncludesSystem => {
            ("SELECT buffer_includes_system FROM trees WHERE gid = ?1", Shape::Flag)
        }
        SyncedField::TreeDeleted => ("SELECT deleted_at_ms FROM trees WHERE gid = ?1", Shape::Time),
        SyncedField::MessageExcluded => ("SELECT excluded FROM nodes WHERE gid = ?1", Shape::Flag),
        SyncedField::MessageBookmarked => {
            ("SELECT bookmarked FROM nodes WHERE gid = ?1", Shape::Flag)
        }
        SyncedField::MessageKept => ("SELECT kept FROM nodes WHERE gid = ?1", Shape::Flag),
        SyncedField::MessageDeleted => {
            ("SELECT pruned_at_ms FROM nodes WHERE gid = ?1", Shape::Time)
        }
        SyncedField::PinTitle => ("SELECT title FROM pins WHERE gid = ?1", Shape::Text),
        SyncedField::PinDeleted => ("SELECT deleted_at_ms FROM pins WHERE gid = ?1", Shape::Time),
        SyncedField::NoteIncluded => {
            ("SELECT included FROM annotations WHERE gid = ?1", Shape::Flag)
        }
    };
    let mut statement = conn.prepare_cached(column)?;
    Ok(match shape {
        Shape::Text => {
            statement.query_row([gid], |row| row.get::<_, String>(0)).optional()?.map(Value::String)
        }
        Shape::Flag => {
            statement.query_row([gid], |row| row.get::<_, bool>(0)).optional()?.map(Value::Bool)
        }
        Shape::Time => statement
            .query_row([gid], |row| row.get::<_, Option<i64>>(0))
            .optional()?
            .map(time_value),
    })
}

/// `null` for an absent time, the time otherwise.
pub(crate) fn time_value(at_ms: Option<i64>) -> Value {
    at_ms.map_or(Value::Null, |at| json!(at))
}

/// How a synced column reads as JSON.
enum Shape {
    Text,
    Flag,
    Time,
}

/// A tree's settings for a folder: the search hits it keeps name messages by row number here,
/// so they go out by global id.
pub(crate) fn settings_out(conn: &Connection, settings: &str) -> Result<Value, StoreError> {
    let mut value: Value = serde_json::from_str(settings).unwrap_or_else(|_| json!({}));
    if let Some(Value::Array(hits)) = value.get_mut("searchHits") {
        let mut gid = conn.prepare_cached("SELECT gid FROM nodes WHERE id = ?1")?;
        let mut named = Vec::with_capacity(hits.len());
        for hit in hits.iter() {
            if let Some(id) = hit.as_i64()
                && let Some(found) =
                    gid.query_row([id], |row| row.get::<_, String>(0)).optional()?
            {
                named.push(Value::String(found));
            }
        }
        *hits = named;
    }
    Ok(value)
}

/// A tree's settings from a folder: search hits back to row numbers (those not here are left
/// out), as the JSON text the database keeps.
pub(crate) fn settings_in(conn: &Connection, settings: &Value) -> Result<String, StoreError> {
    let mut value = match settings {
        Value::Object(_) => settings.clone(),
        _ => json!({}),
    };
    if let Some(Value::Array(hits)) = value.get_mut("searchHits") {
        let mut id = conn.prepare_cached("SELECT id FROM nodes WHERE gid = ?1")?;
        let mut numbered = Vec::with_capacity(hits.len());
        for hit in hits.iter() {
            if let Some(gid) = hit.as_str()
                && let Some(found) = id.query_row([gid], |row| row.get::<_, i64>(0)).optional()?
            {
                numbered.push(json!(found));
            }
        }
        *hits = numbered;
    }
    Ok(value.to_string())
}

/// The row number of the thing with global id `gid` in `table`.
pub(crate) fn row_of(conn: &Connection, table: &str, gid: &str) -> Result<Option<i64>, StoreError> {
    let sql = format!("SELECT rowid FROM {table} WHERE gid = ?1");
    Ok(conn.prepare_cached(&sql)?.query_row(params![gid], |row| row.get(0)).optional()?)
}

/// The global id of the message or pin with row number `id`, as a receipt names it (`null` when
/// it is gone).
fn global_id(conn: &Connection, kind: ReceiptRef, id: i64) -> Value {
    let sql = match kind {
        ReceiptRef::Message => "SELECT gid FROM nodes WHERE id = ?1",
        ReceiptRef::Pin => "SELECT gid FROM pins WHERE id = ?1",
    };
    conn.prepare_cached(sql)
        .and_then(|mut statement| {
            statement.query_row([id], |row| row.get::<_, String>(0)).optional()
        })
        .ok()
        .flatten()
        .map_or(Value::Null, Value::String)
}

/// The row number of the message or pin with global id `gid`, as a receipt here names it
/// (`null` when it is not here).
pub(crate) fn row_number(conn: &Connection, kind: ReceiptRef, gid: &Value) -> Value {
    let Some(gid) = gid.as_str() else { return Value::Null };
    let table = match kind {
        ReceiptRef::Message => "nodes",
        ReceiptRef::Pin => "pins",
    };
    row_of(conn, table, gid).ok().flatten().map_or(Value::Null, |row| json!(row))
}

/// The person's model profiles (not those waiting since they came with a file) as records, the
/// versions target `name`'s folder lacks.
pub(crate) fn profile_records(
    conn: &Connection,
    name: &str,
) -> Result<Vec<SyncRecord>, StoreError> {
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {}, updated_at_ms FROM model_profiles WHERE imported_from IS NULL ORDER BY name",
        crate::profiles::PROFILE_COLUMNS
    ))?;
    let mut known = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM sync_known WHERE target = ?1 AND id = ?2)")?;
    let mut records = Vec::new();
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        let profile = crate::profiles::profile_from_row(row)?;
        let updated_at_ms: i64 = row.get(14)?;
        let id = profile_digest(&profile, updated_at_ms);
        if !known.query_row(params![name, id], |row| row.get::<_, bool>(0))? {
            records.push(SyncRecord::Profile(ProfileRecord { id, profile, updated_at_ms }));
        }
    }
    Ok(records)
}
