//! What a sync folder holds, read out of the database and stamped: records written once, and
//! operations that change a mutable field.
//!
//! A record is an immutable thing (a tree as it was created, a message, a pin, an attachment, a
//! note, a summary's write) named by its global id; an operation sets one mutable field of one
//! thing (a title, a flag, a pin's result, a deletion or a restore) and is stamped with a hybrid
//! logical clock and the device that made it. The field's value is the operation with the
//! greatest (clock, device), or the record's own value while it has none: a rule every replica
//! reaches from the same files in any order. The folding in of what arrived is `sync_fold.rs`;
//! files and git are the application layer's.

use std::collections::{BTreeMap, HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::StoreError;
use crate::model::{Anchor, ModelProfile, Part};
use crate::store::Store;

/// A thing written once into a sync folder. Its mutable fields carry their values when it was
/// written; later changes are [`SyncOp`]s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum SyncRecord {
    /// A tree.
    Tree {
        /// Its global id.
        id: String,
        /// Its title.
        title: String,
        /// `dialogue` or `buffer`.
        mode: String,
        /// Its system context.
        system_context: String,
        /// Whether buffer mode includes the system context.
        buffer_includes_system: bool,
        /// Its settings overrides (search hits named by global id).
        settings: Value,
        /// When it was created.
        created_at_ms: i64,
        /// When it was put in the trash.
        deleted_at_ms: Option<i64>,
        /// In a team's folder: who shared it there.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        shared_by: Option<String>,
    },
    /// A message.
    Message {
        /// Its global id.
        id: String,
        /// Its tree.
        tree: String,
        /// The message it follows.
        parent: Option<String>,
        /// The pin whose thread it begins (hanging off the pin's anchor); `None` when it
        /// continues its parent's thread, or begins the tree's main thread.
        thread: Option<String>,
        /// The message it is an edit of.
        edited_from: Option<String>,
        /// `human`, `model` or `tool`.
        author: String,
        /// Its content.
        parts: Vec<Part>,
        /// The model that wrote it.
        model: Option<String>,
        /// Its generation settings, as JSON.
        generation: Option<String>,
        /// The usage its provider reported, as JSON.
        usage: Option<String>,
        /// A reply that did not finish.
        incomplete: bool,
        /// Left out of every context.
        excluded: bool,
        /// Bookmarked.
        bookmarked: bool,
        /// Kept in every context.
        kept: bool,
        /// When it was soft-deleted.
        deleted_at_ms: Option<i64>,
        /// When it was written.
        created_at_ms: i64,
        /// Its exact token counts by tokenizer family.
        token_counts: BTreeMap<String, u64>,
    },
    /// A pin: a sub-thread opened from a message.
    Pin {
        /// Its global id.
        id: String,
        /// Its tree.
        tree: String,
        /// The pin of the thread it opens from; `None` for the main thread.
        parent: Option<String>,
        /// The message it hangs off.
        anchor_node: Option<String>,
        /// The highlighted passage.
        anchor: Option<SyncAnchor>,
        /// Its title.
        title: String,
        /// When it was closed, and its result.
        closed: Option<SyncClosed>,
        /// When it was deleted.
        deleted_at_ms: Option<i64>,
        /// When it was opened.
        created_at_ms: i64,
    },
    /// A file or text attached to a tree, a thread or a message.
    Attachment {
        /// Its global id.
        id: String,
        /// Its tree.
        tree: String,
        /// `tree`, `thread` or `node`.
        scope: String,
        /// For a thread's: the pin (`None` for the main thread).
        thread: Option<String>,
        /// For a message's: the message.
        node: Option<String>,
        /// `context`, `instruction`, `file` or `folder`.
        role: String,
        /// Its name.
        name: String,
        /// Its content.
        content: String,
        /// When it was attached.
        created_at_ms: i64,
    },
    /// A note on a message.
    Note {
        /// Its global id.
        id: String,
        /// The message.
        message: String,
        /// The note.
        text: String,
        /// Whether it enters context.
        included: bool,
        /// When it was written.
        created_at_ms: i64,
    },
    /// A reply's receipt: what its request was planned to hold and sent, and what the provider
    /// counted. Its id is `receipt-` and its reply's global id; the messages and threads it names
    /// are named by global id (the application layer turns them, [`TurnReceipt`]).
    Receipt {
        /// `receipt-` and the reply's global id.
        id: String,
        /// The reply.
        message: String,
        /// The receipt, as the application layer writes it.
        receipt: Value,
        /// Whether its provider cut the context.
        provider_cut: bool,
    },
    /// One version of a model profile of the person's (never a key), written when they chose to
    /// sync profiles and prices. Its id is `profile-` and a digest of the version, so each change
    /// is a new record; a machine keeps the latest version of each name.
    Profile {
        /// `profile-` and a digest of what it holds.
        id: String,
        /// The profile as the store holds it (never one that came with a file and waits).
        profile: ModelProfile,
        /// When it was last changed.
        updated_at_ms: i64,
    },
    /// One write of a summary (fitted versions are not synced: each device condenses its own).
    Summary {
        /// The write's global id.
        id: String,
        /// Its tree.
        tree: String,
        /// The thread summarised; `None` for the main thread.
        thread: Option<String>,
        /// The last message covered; `None` for the thread as a whole.
        path_end: Option<String>,
        /// The budget it was written for.
        budget: Option<u32>,
        /// The model that wrote it; '' for a person, an agent or a file.
        summarizer: String,
        /// `model`, `person`, `agent` or `file`.
        written_by: String,
        /// Written or asked for on purpose.
        chosen: bool,
        /// The text.
        text: String,
        /// What it summarised, in characters.
        input_chars: u64,
        /// What it summarised, in tokens.
        input_tokens: u64,
        /// When it was written.
        written_at_ms: i64,
    },
}

impl SyncRecord {
    /// Its global id, which names its file.
    pub fn id(&self) -> &str {
        match self {
            SyncRecord::Tree { id, .. }
            | SyncRecord::Message { id, .. }
            | SyncRecord::Pin { id, .. }
            | SyncRecord::Attachment { id, .. }
            | SyncRecord::Note { id, .. }
            | SyncRecord::Receipt { id, .. }
            | SyncRecord::Profile { id, .. }
            | SyncRecord::Summary { id, .. } => id,
        }
    }

    /// Where it stands in [`SYNC_RECORD_KINDS`]: also where a fold writes it, what a record
    /// hangs from being written before it.
    pub(crate) fn fold_order(&self) -> usize {
        match self {
            SyncRecord::Tree { .. } => 0,
            SyncRecord::Pin { .. } => 1,
            SyncRecord::Message { .. } => 2,
            SyncRecord::Attachment { .. } => 3,
            SyncRecord::Note { .. } => 4,
            SyncRecord::Summary { .. } => 5,
            SyncRecord::Receipt { .. } => 6,
            SyncRecord::Profile { .. } => 7,
        }
    }

    fn kind_row(&self) -> (&'static str, &'static str, &'static str) {
        SYNC_RECORD_KINDS[self.fold_order()]
    }

    /// Its kind as the folder names it: `trees`, `messages`, `pins`, … ([`SYNC_RECORD_KINDS`]).
    pub fn folder(&self) -> &'static str {
        self.kind_row().1
    }

    /// Its kind as an operation names it: `tree`, `message`, `pin`, ….
    pub(crate) fn kind(&self) -> &'static str {
        self.kind_row().0
    }

    /// The table that holds it.
    pub(crate) fn table(&self) -> &'static str {
        self.kind_row().2
    }

    /// The tree it belongs to, for a target that holds only some trees (`None` for a note or a
    /// receipt, whose message says).
    pub(crate) fn tree(&self) -> Option<&str> {
        match self {
            SyncRecord::Tree { id, .. } => Some(id),
            SyncRecord::Message { tree, .. }
            | SyncRecord::Pin { tree, .. }
            | SyncRecord::Attachment { tree, .. }
            | SyncRecord::Summary { tree, .. } => Some(tree),
            SyncRecord::Note { .. } | SyncRecord::Receipt { .. } | SyncRecord::Profile { .. } => {
                None
            }
        }
    }
}

impl SyncRecord {
    /// The message a note or a receipt belongs to.
    pub(crate) fn message(&self) -> Option<&str> {
        match self {
            SyncRecord::Note { message, .. } | SyncRecord::Receipt { message, .. } => Some(message),
            _ => None,
        }
    }
}

/// A digest of a profile's version, naming its record: FNV-1a, 64 bits (names, not security:
/// a version is the person's own, and a clash would only keep one of two versions).
pub(crate) fn profile_digest(profile: &ModelProfile, updated_at_ms: i64) -> String {
    let text = serde_json::to_string(&(profile, updated_at_ms)).unwrap_or_default();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("profile-{hash:016x}")
}

/// What a receipt names by id: a message or a thread's pin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiptRef {
    /// A message.
    Message,
    /// A thread's pin.
    Pin,
}

/// Turns the ids a receipt names (the store never reads a receipt; the application layer knows
/// where it keeps them): given the receipt and how to turn one id of a kind, the receipt with
/// every id turned. Used with row numbers → global ids on the way out, the other way on the way
/// in, where it may also apply what a team's receipts may say.
pub type TurnReceipt<'a> = &'a dyn Fn(&Value, &dyn Fn(ReceiptRef, &Value) -> Value) -> Value;

/// Each kind of record: (its name in an operation, its folder, the table holding it), in the
/// order a fold writes them, what a record hangs from first.
pub const SYNC_RECORD_KINDS: [(&str, &str, &str); 8] = [
    ("tree", "trees", "trees"),
    ("pin", "pins", "pins"),
    ("message", "messages", "nodes"),
    ("attachment", "attachments", "attachments"),
    ("note", "notes", "annotations"),
    ("summary", "summaries", "summary_updates"),
    ("receipt", "receipts", "receipts"),
    ("profile", "profiles", "model_profiles"),
];

/// The table holding things of kind `kind` (as an operation names it).
pub(crate) fn table_of(kind: &str) -> Option<&'static str> {
    SYNC_RECORD_KINDS.iter().find(|row| row.0 == kind).map(|row| row.2)
}

/// A highlighted passage, as [`Anchor`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncAnchor {
    /// Where it starts, in UTF-16 code units.
    pub start: u32,
    /// Where it ends.
    pub end: u32,
    /// The passage.
    pub text: String,
}

impl From<SyncAnchor> for Anchor {
    fn from(anchor: SyncAnchor) -> Anchor {
        Anchor { start: anchor.start, end: anchor.end, text: anchor.text }
    }
}

/// A closed pin's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncClosed {
    /// When it was closed.
    pub at_ms: i64,
    /// What the sub-thread concluded.
    pub result: String,
}

/// A change of one mutable field, written once into a sync folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncOp {
    /// `{clock as 16 hex digits}-{device}`: unique, and sorting by it sorts by clock.
    pub id: String,
    /// The thing changed, by global id.
    pub target: String,
    /// `tree`, `message`, `pin`, `note` or `attachment`.
    pub kind: String,
    /// The field (see [`SYNCED_FIELDS`]).
    pub field: String,
    /// Its new value.
    pub value: Value,
    /// The hybrid logical clock: milliseconds since 1970 shifted left 16 bits, plus a counter.
    pub clock: i64,
    /// The device that made the change.
    pub device: String,
}

/// Every field an operation may set, by kind: anything else in a folder is reported and skipped.
pub const SYNCED_FIELDS: &[(&str, &[&str])] = &[
    ("tree", &["title", "systemContext", "settings", "bufferIncludesSystem", "deleted"]),
    ("message", &["excluded", "bookmarked", "kept", "deleted", "parent"]),
    ("pin", &["title", "closed", "deleted", "place"]),
    ("note", &["included"]),
    ("attachment", &["removed"]),
];

/// Whether `kind` has a field `field` an operation may set.
pub(crate) fn is_synced_field(kind: &str, field: &str) -> bool {
    SYNCED_FIELDS.iter().any(|(known, fields)| *known == kind && fields.contains(&field))
}

/// A remote this database syncs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncTarget {
    /// Its name here (`origin` for a person's own remote).
    pub name: String,
    /// The git remote: a URL or a path.
    pub remote: String,
    /// Whether it holds every tree, or only the ones shared to it (a team's).
    pub shared_only: bool,
    /// What its last sync did, as JSON (the application layer's report).
    pub last_result_json: Option<String>,
}

/// A tree shared with a team.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncShare {
    /// The team's target name here (`team-` and its name).
    pub target: String,
    /// The team's remote, when this database has joined it.
    pub remote: Option<String>,
    /// The tree, by global id.
    pub tree: String,
    /// Who shared it, as members see it.
    pub shared_by: String,
    /// When.
    pub at_ms: i64,
}

/// What a target's folder does not hold yet.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SyncOutgoing {
    /// Records to write, parents before children.
    pub records: Vec<SyncRecord>,
    /// Operations to write, oldest first.
    pub ops: Vec<SyncOp>,
}

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

impl Store {
    /// This database's device id (made on first use).
    pub fn sync_device(&self) -> Result<String, StoreError> {
        self.write(|tx| device(tx))
    }

    /// The global id of every message of tree `tree_id`, by row.
    pub fn node_global_ids(
        &self,
        tree_id: crate::model::TreeId,
    ) -> Result<HashMap<crate::model::NodeId, String>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached("SELECT id, gid FROM nodes WHERE tree_id = ?1")?;
        let ids = statement
            .query_map([tree_id.0], |row| {
                Ok((crate::model::NodeId(row.get(0)?), row.get::<_, Option<String>>(1)?))
            })?
            .filter_map(|row| row.map(|(id, gid)| gid.map(|gid| (id, gid))).transpose())
            .collect::<Result<_, _>>()?;
        Ok(ids)
    }

    /// The tree with global id `gid`, if this database has it.
    pub fn tree_by_global_id(&self, gid: &str) -> Result<Option<crate::model::TreeId>, StoreError> {
        let conn = self.conn();
        Ok(crate::sync_records::row_of(&conn, "trees", gid)?.map(crate::model::TreeId))
    }

    /// Every remote this database syncs with, its own first, then teams by name.
    pub fn sync_targets(&self) -> Result<Vec<SyncTarget>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(
            "SELECT name, remote, scope, last_result_json FROM sync_targets
             ORDER BY scope = 'shared', name",
        )?;
        let targets = statement.query_map([], target_from_row)?.collect::<Result<_, _>>()?;
        Ok(targets)
    }

    /// The remote called `name`, if this database has synced with it.
    pub fn sync_target(&self, name: &str) -> Result<Option<SyncTarget>, StoreError> {
        let conn = self.conn();
        Ok(conn
            .prepare_cached(
                "SELECT name, remote, scope, last_result_json FROM sync_targets WHERE name = ?1",
            )?
            .query_row([name], target_from_row)
            .optional()?)
    }

    /// Remembers (or moves) the remote called `name`. A target whose remote changes forgets what
    /// the old one held, so that the new one gets everything.
    pub fn set_sync_target(
        &self,
        name: &str,
        remote: &str,
        shared_only: bool,
        at_ms: i64,
    ) -> Result<SyncTarget, StoreError> {
        self.write(|tx| {
            let before: Option<String> = tx
                .query_row("SELECT remote FROM sync_targets WHERE name = ?1", [name], |row| {
                    row.get(0)
                })
                .optional()?;
            if before.as_deref().is_some_and(|before| before != remote) {
                tx.execute("DELETE FROM sync_known WHERE target = ?1", [name])?;
            }
            tx.execute(
                "INSERT INTO sync_targets (name, remote, scope, updated_at_ms)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (name) DO UPDATE SET remote = ?2, scope = ?3, updated_at_ms = ?4",
                params![name, remote, if shared_only { "shared" } else { "all" }, at_ms],
            )?;
            Ok(())
        })?;
        self.sync_target(name)?
            .ok_or_else(|| StoreError::InvalidInput(format!("the sync target {name} vanished")))
    }

    /// Keeps what the last sync with `name` did, for the window's Settings → Sync.
    pub fn set_sync_result(&self, name: &str, result_json: &str) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.execute(
                "UPDATE sync_targets SET last_result_json = ?2 WHERE name = ?1",
                params![name, result_json],
            )?;
            Ok(())
        })
    }

    /// Shares tree `tree_gid` to the target `name` (a team's), as `shared_by`: its records go
    /// there from the next sync on.
    pub fn share_tree(
        &self,
        name: &str,
        tree_gid: &str,
        shared_by: &str,
        at_ms: i64,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            let exists: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM trees WHERE gid = ?1)",
                [tree_gid],
                |row| row.get(0),
            )?;
            if !exists {
                return Err(StoreError::InvalidInput(format!(
                    "no tree has the id {tree_gid}: `pinloom tree` lists the trees with their ids"
                )));
            }
            tx.execute(
                "INSERT OR IGNORE INTO sync_shares (target, tree_gid, shared_by, at_ms)
                 VALUES (?1, ?2, ?3, ?4)",
                params![name, tree_gid, shared_by, at_ms],
            )?;
            Ok(())
        })
    }

    /// Every tree shared with a team here: (the team's target name, its remote when joined, the
    /// tree's global id, who shared it, when), for the person's own remote to carry to their
    /// other machines.
    pub fn sync_shares(&self) -> Result<Vec<SyncShare>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(
            "SELECT s.target, t.remote, s.tree_gid, s.shared_by, s.at_ms
             FROM sync_shares s LEFT JOIN sync_targets t ON t.name = s.target
             ORDER BY s.target, s.tree_gid",
        )?;
        let shares = statement
            .query_map([], |row| {
                Ok(SyncShare {
                    target: row.get(0)?,
                    remote: row.get(1)?,
                    tree: row.get(2)?,
                    shared_by: row.get(3)?,
                    at_ms: row.get(4)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(shares)
    }

    /// How much target `name`'s folder does not hold yet: (records, changes), the changes made
    /// since the last stamp included.
    pub fn sync_waiting(&self, name: &str) -> Result<(u64, u64), StoreError> {
        let conn = self.conn();
        let unknown = |table: &str| {
            format!(
                "(SELECT count(*) FROM {table} x
                  WHERE NOT EXISTS (SELECT 1 FROM sync_known k WHERE k.target = ?1 AND k.id = x.gid))"
            )
        };
        let records = ["trees", "nodes", "pins", "attachments", "annotations", "summary_updates"]
            .map(unknown)
            .join(" + ");
        let changes = format!(
            "{} + (SELECT count(*) FROM sync_changes)",
            unknown("sync_ops").replace("x.gid", "x.id")
        );
        let (records, changes): (i64, i64) = conn
            .prepare_cached(&format!("SELECT {records}, {changes}"))?
            .query_row([name], |row| Ok((row.get(0)?, row.get(1)?)))?;
        Ok((records.max(0).unsigned_abs(), changes.max(0).unsigned_abs()))
    }

    /// Whether the person's model profiles and prices go to their own remote too (never to a
    /// team's; never a key).
    pub fn sync_profiles(&self) -> Result<bool, StoreError> {
        Ok(state(&self.conn(), "profiles")?.as_deref() == Some("1"))
    }

    /// Chooses whether model profiles and prices are synced.
    pub fn set_sync_profiles(&self, on: bool) -> Result<(), StoreError> {
        self.write(|tx| set_state(tx, "profiles", if on { "1" } else { "0" }))
    }

    /// Whether this database syncs on its own (after each reply and every few minutes).
    pub fn sync_automatic(&self) -> Result<bool, StoreError> {
        Ok(state(&self.conn(), "automatic")?.as_deref() == Some("1"))
    }

    /// Turns syncing on its own on or off, for this database on this machine.
    pub fn set_sync_automatic(&self, on: bool) -> Result<(), StoreError> {
        self.write(|tx| set_state(tx, "automatic", if on { "1" } else { "0" }))
    }

    /// The global ids of what the folder of target `name` is known to hold.
    pub fn sync_known(&self, name: &str) -> Result<HashSet<String>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached("SELECT id FROM sync_known WHERE target = ?1")?;
        let known = statement.query_map([name], |row| row.get(0))?.collect::<Result<_, _>>()?;
        Ok(known)
    }

    /// Records that the folder of target `name` now holds `ids` (written or read).
    pub fn mark_sync_known(&self, name: &str, ids: &[String]) -> Result<(), StoreError> {
        self.write(|tx| {
            let mut insert =
                tx.prepare_cached("INSERT OR IGNORE INTO sync_known (target, id) VALUES (?1, ?2)")?;
            for id in ids {
                insert.execute(params![name, id])?;
            }
            Ok(())
        })
    }

    /// Stamps every change made here since the last stamp, then gives what the folder of target
    /// `name` does not hold yet. Nothing is marked as held: the caller does that once the files
    /// are written ([`Store::mark_sync_known`]), so a crash in between only writes them again.
    pub fn sync_outgoing(
        &self,
        name: &str,
        turn: TurnReceipt<'_>,
    ) -> Result<SyncOutgoing, StoreError> {
        self.write(|tx| stamp_changes(tx))?;
        let conn = self.conn();
        let shared_only: bool = conn
            .prepare_cached("SELECT scope = 'shared' FROM sync_targets WHERE name = ?1")?
            .query_row([name], |row| row.get(0))
            .optional()?
            .unwrap_or(false);
        let sharers: HashMap<String, String> = conn
            .prepare_cached("SELECT tree_gid, shared_by FROM sync_shares WHERE target = ?1")?
            .query_map([name], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let shared: Option<HashSet<String>> =
            shared_only.then(|| sharers.keys().cloned().collect());
        let in_scope = |tree: Option<&str>| match (&shared, tree) {
            (None, _) => true,
            (Some(shared), Some(tree)) => shared.contains(tree),
            (Some(_), None) => false,
        };
        let mut records = Vec::new();
        crate::sync_records::read_records(&conn, Some(name), turn, &mut |record| {
            let tree = match record.message() {
                Some(message) => crate::sync_records::tree_of(&conn, message)?,
                None => record.tree().map(str::to_owned),
            };
            if in_scope(tree.as_deref()) {
                let mut record = record;
                // A team's folder says who shared each tree there.
                if let SyncRecord::Tree { id, shared_by, .. } = &mut record
                    && shared_only
                {
                    shared_by.clone_from(&sharers.get(id.as_str()).cloned());
                }
                records.push(record);
            }
            Ok(())
        })?;
        if !shared_only && state(&conn, "profiles")?.as_deref() == Some("1") {
            records.extend(crate::sync_records::profile_records(&conn, name)?);
        }
        let mut ops = Vec::new();
        let mut statement = conn.prepare_cached(
            "SELECT id, gid, kind, field, value_json, clock, device FROM sync_ops o
             WHERE NOT EXISTS (SELECT 1 FROM sync_known k WHERE k.target = ?1 AND k.id = o.id)
             ORDER BY id",
        )?;
        let mut rows = statement.query([name])?;
        while let Some(row) = rows.next()? {
            let op = op_from_row(row)?;
            if shared.is_some() {
                let tree = crate::sync_records::tree_of_target(&conn, &op.kind, &op.target)?;
                if !in_scope(tree.as_deref()) {
                    continue;
                }
            }
            ops.push(op);
        }
        Ok(SyncOutgoing { records, ops })
    }
}

fn target_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<SyncTarget> {
    Ok(SyncTarget {
        name: row.get(0)?,
        remote: row.get(1)?,
        shared_only: row.get::<_, String>(2)? == "shared",
        last_result_json: row.get(3)?,
    })
}

fn op_from_row(row: &rusqlite::Row<'_>) -> Result<SyncOp, StoreError> {
    let value: String = row.get(4)?;
    Ok(SyncOp {
        id: row.get(0)?,
        target: row.get(1)?,
        kind: row.get(2)?,
        field: row.get(3)?,
        value: serde_json::from_str(&value).unwrap_or(Value::Null),
        clock: row.get(5)?,
        device: row.get(6)?,
    })
}

/// Turns every change since the last stamp into an operation carrying the field's value now,
/// each with a clock later than any this device has made or heard.
pub(crate) fn stamp_changes(tx: &Connection) -> Result<usize, StoreError> {
    let changes: Vec<(String, String, String, i64)> = tx
        .prepare_cached(
            "SELECT gid, kind, field, at_ms FROM sync_changes ORDER BY at_ms, gid, field",
        )?
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)))?
        .collect::<Result<_, _>>()?;
    if changes.is_empty() {
        return Ok(0);
    }
    let device = device(tx)?;
    let mut clock = clock(tx)?;
    let mut stamped = 0;
    for (gid, kind, field, changed_at) in changes {
        let Some(value) = crate::sync_records::field_value(tx, &kind, &gid, &field)? else {
            // The thing is gone for good (the trash was emptied): nothing to tell.
            continue;
        };
        clock = tick(clock, changed_at);
        tx.prepare_cached(
            "INSERT OR IGNORE INTO sync_ops (id, gid, kind, field, value_json, clock, device)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![
            op_id(clock, &device),
            gid,
            kind,
            field,
            value.to_string(),
            clock,
            device
        ])?;
        stamped += 1;
    }
    tx.execute("DELETE FROM sync_changes", [])?;
    set_state(tx, "clock", &clock.to_string())?;
    Ok(stamped)
}

pub(crate) fn op_id(clock: i64, device: &str) -> String {
    format!("{clock:016x}-{device}")
}

/// `null` for an absent time, the time otherwise.
pub(crate) fn time_value(at_ms: Option<i64>) -> Value {
    at_ms.map_or(Value::Null, |at| json!(at))
}
