//! Changes of synced fields made here, stamped into operations: the triggers the migrations
//! install note which field of which thing changed (`sync_changes`); a sync turns each into an
//! operation with the clock's next value.

use rusqlite::{Connection, params};

use crate::error::StoreError;
use crate::sync::clock::{clock, device, op_id, set_state, tick};
use crate::sync::read::field_value;
use crate::sync::records::SyncedField;

/// Turns every change since the last stamp into an operation carrying the field's value now,
/// each with a clock later than any this device has made or heard.
pub(crate) fn stamp_changes(tx: &Connection) -> Result<usize, StoreError> {
    type Change = (String, String, String, i64, Option<String>);
    let changes: Vec<Change> = tx
        .prepare_cached(
            "SELECT gid, kind, field, at_ms, before_json FROM sync_changes
             ORDER BY at_ms, gid, field",
        )?
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?)))?
        .collect::<Result<_, _>>()?;
    if changes.is_empty() {
        return Ok(0);
    }
    let device = device(tx)?;
    let mut clock = clock(tx)?;
    let mut stamped = 0;
    for (gid, kind, field, changed_at, before) in changes {
        // Only this database's own triggers write these: a pair no sync carries is a database
        // changed by something else, and stamping it would send what no machine can read.
        let Some(synced) = SyncedField::parse(&kind, &field) else {
            return Err(StoreError::InvalidInput(format!(
                "the database noted a change of {kind} field {field:?}, which no sync carries: \
                 was it changed by another program? Back it up, then open it with Pinloom again"
            )));
        };
        let Some(value) = field_value(tx, synced, &gid)? else {
            // The thing is gone for good (the trash was emptied): nothing to tell.
            continue;
        };
        clock = tick(clock, changed_at);
        tx.prepare_cached(
            "INSERT OR IGNORE INTO sync_ops (id, gid, kind, field, value_json, clock, device,
                                             from_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?
        .execute(params![
            op_id(clock, &device),
            gid,
            kind,
            field,
            value.to_string(),
            clock,
            device,
            before
        ])?;
        stamped += 1;
    }
    tx.execute("DELETE FROM sync_changes", [])?;
    set_state(tx, "clock", &clock.to_string())?;
    Ok(stamped)
}
