//! The hybrid logical clock a change is stamped with, the device that made it, and the small
//! state a database keeps for syncing (`sync_state`).

use rusqlite::{Connection, OptionalExtension};

use crate::error::StoreError;

/// How many bits of a clock count events within one millisecond.
const COUNTER_BITS: u32 = 16;

pub(crate) fn state(conn: &Connection, key: &str) -> Result<Option<String>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT value FROM sync_state WHERE key = ?1")?
        .query_row([key], |row| row.get(0))
        .optional()?)
}

pub(crate) fn set_state(conn: &Connection, key: &str, value: &str) -> Result<(), StoreError> {
    conn.prepare_cached("INSERT OR REPLACE INTO sync_state (key, value) VALUES (?1, ?2)")?
        .execute([key, value])?;
    Ok(())
}

/// This database's device id, made on first use: 16 random hex digits.
pub(crate) fn device(conn: &Connection) -> Result<String, StoreError> {
    if let Some(device) = state(conn, "device")? {
        return Ok(device);
    }
    let device: String =
        conn.query_row("SELECT lower(hex(randomblob(8)))", [], |row| row.get(0))?;
    set_state(conn, "device", &device)?;
    Ok(device)
}

pub(crate) fn clock(conn: &Connection) -> Result<i64, StoreError> {
    Ok(state(conn, "clock")?.and_then(|clock| clock.parse().ok()).unwrap_or(0))
}

/// The clock of an event at `at_ms` after `last`: later than every clock this device has made
/// or heard, and no earlier than the event's own time. It never overflows: a clock at the very
/// end of the range stays there (a fold refuses clocks that far ahead, [`CLOCK_AHEAD_LIMIT_MS`],
/// so only a database damaged by an older build can hold one).
pub(crate) fn tick(last: i64, at_ms: i64) -> i64 {
    let at = at_ms.clamp(0, i64::MAX >> COUNTER_BITS) << COUNTER_BITS;
    last.saturating_add(1).max(at)
}

/// How far ahead of the receiving machine's own clock an operation's clock may be: a machine
/// whose clock runs hours fast still syncs; one stamped further ahead (a clock a remote chose so
/// that it wins its field for good, or so that this machine's next file names are known in
/// advance) is refused until that time comes.
pub const CLOCK_AHEAD_LIMIT_MS: i64 = 24 * 3_600_000;

/// Whether `device` is a device id as this build makes them (16 lowercase hex digits): it names
/// a folder of the sync folder, so nothing else (`..`, a path) may.
pub fn is_device_id(device: &str) -> bool {
    device.len() == 16 && device.bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'))
}

/// The milliseconds part of a clock.
pub fn clock_ms(clock: i64) -> i64 {
    clock >> COUNTER_BITS
}

pub(crate) fn op_id(clock: i64, device: &str) -> String {
    format!("{clock:016x}-{device}")
}
