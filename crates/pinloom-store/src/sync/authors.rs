//! Who wrote what a team's folder brought. The application reads each pack's signature and the
//! team's roster, and hands the fold the device and name behind every record; the fold keeps them
//! for what it writes (`sync_authors`). A thing with no row was written by this database's
//! person. In a team a member changes only what they wrote, and a tree's title, settings and
//! deletion are the decision of whoever shared it: every machine refuses the rest alike.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::StoreError;
use crate::sync::records::{RecordKind, SyncOp, SyncedField};

/// The author of a record from a team's folder: the device whose signed pack brought it, and the
/// name the team's roster gives that device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncAuthor {
    /// The device id.
    pub device: String,
    /// Its member's name.
    pub name: String,
}

/// Authors by record id.
pub type SyncAuthors = HashMap<String, SyncAuthor>;

/// Keeps the authors of the records just written from target `name`'s folder (a record already
/// here keeps the author it had: whoever wrote it first).
pub(crate) fn remember(
    tx: &Connection,
    name: &str,
    inserted: &[(RecordKind, String)],
    authors: &SyncAuthors,
) -> Result<(), StoreError> {
    if authors.is_empty() {
        return Ok(());
    }
    let mut insert = tx.prepare_cached(
        "INSERT OR IGNORE INTO sync_authors (gid, target, device, name) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (_, gid) in inserted {
        if let Some(author) = authors.get(gid) {
            insert.execute(params![gid, name, author.device, author.name])?;
        }
    }
    Ok(())
}

/// Who wrote thing `gid`, when it arrived from a team; `None` for the person's own.
pub(crate) fn author_of(conn: &Connection, gid: &str) -> Result<Option<SyncAuthor>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT device, name FROM sync_authors WHERE gid = ?1")?
        .query_row([gid], |row| Ok(SyncAuthor { device: row.get(0)?, name: row.get(1)? }))
        .optional()?)
}

/// Why operation `op` from a team's folder may not change `field`: it changes what another
/// member wrote (a tree: what another member shared). `None` when it is its device's own.
pub(crate) fn not_theirs(
    conn: &Connection,
    op: &SyncOp,
    field: SyncedField,
) -> Result<Option<String>, StoreError> {
    let author = author_of(conn, &op.gid)?;
    if author.as_ref().is_some_and(|author| author.device == op.device) {
        return Ok(None);
    }
    let whose = author.map_or_else(|| "you".to_owned(), |author| author.name);
    let why = if field.kind() == RecordKind::Tree {
        format!(
            "it changes the {} of a tree {whose} shared: only whoever shares a tree decides its title, settings and deletion; not applied",
            field.name()
        )
    } else {
        format!(
            "it changes the {} of a {} {whose} wrote: a member changes only what they wrote; not applied",
            field.name(),
            field.kind().name()
        )
    };
    Ok(Some(why))
}

/// Whether thing `gid` was written by someone else in a team (so not this person's to change).
pub(crate) fn written_by_another(conn: &Connection, gid: &str) -> Result<bool, StoreError> {
    Ok(author_of(conn, gid)?.is_some())
}
