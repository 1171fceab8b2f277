//! Folding what a sync folder brought into the database: one transaction, the same result from
//! the same files whatever their order.
//!
//! Records are written once each, parents first (a record whose parent arrives later in the same
//! batch waits for it; one whose parent is not in the folder yet is left for a later sync).
//! Operations join every one known before; each field they touch then takes the value of its
//! greatest (clock, device), which every replica computes alike.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use crate::attachments::{insert_annotation, insert_attachment};
use crate::codec::{author_from_sql, mode_from_sql, role_from_sql};
use crate::error::StoreError;
use crate::model::{
    AttachmentScope, NewNode, NodeId, PinId, Receipt, Sharing, SummaryAuthor, SummaryKey,
    SummaryWrite, TreeId,
};
use crate::node_rows::{in_deleted_branch, node_by_id};
use crate::node_writes::insert_node_with;
use crate::nodes::{move_branch, prune, reparent, unprune};
use crate::picks::{Pick, write_picks};
use crate::pins::{PinPlace, free_pin_slug, insert_pin};
use crate::receipts::write_receipt;
use crate::search::indexed_at_the_end;
use crate::slugs::slugify;
use crate::store::Store;
use crate::summaries::{as_sql_count, insert_summary, log_summary_write};
use crate::sync::authors::SyncAuthors;
use crate::sync::clock::{
    CLOCK_AHEAD_LIMIT_MS, clock, clock_ms, device, is_device_id, op_id, set_state, state,
};
use crate::sync::read::{row_number, row_of, settings_in};
use crate::sync::records::{
    AttachmentRecord, MessageRecord, NoteRecord, PickedRecord, PinRecord, ProfileRecord,
    ReceiptRecord, ReceiptRef, RecordKind, SummaryRecord, SyncOp, SyncRecord, SyncedField,
    TreeRecord, TurnReceipt,
};
use crate::sync::stamp::stamp_changes;
use crate::trees::{NewTree, insert_tree};

/// What folding in a folder's new files did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SyncFolded {
    /// Records written here.
    pub records: usize,
    /// Operations taken in.
    pub ops: usize,
    /// Records and operations this database already had (through another remote, or its own).
    pub already_here: usize,
    /// The trees (by global id) something arrived in.
    pub trees_changed: BTreeSet<String>,
    /// Records left for a later sync, with why: what they hang from is not in the folder yet.
    pub waiting: Vec<(String, String)>,
    /// Records and operations refused, with why. They are not tried again.
    pub skipped: Vec<(String, String)>,
    /// Messages that arrived under a branch deleted here: they are in the trash with it, and
    /// restoring the branch brings them back.
    pub under_deleted: Vec<String>,
    /// Messages that arrived in a thread closed here (by global id of the thread's pin).
    pub into_closed: Vec<String>,
    /// Operations stamped further ahead of this machine's clock than a sync believes
    /// ([`CLOCK_AHEAD_LIMIT_MS`]): not taken in, and read again by later syncs.
    pub ahead: Vec<String>,
    /// Fields changed here and on another machine since this one last heard: (thing, field, the
    /// value kept). The other value stays in the field's history.
    pub changed_on_both: Vec<(String, String, Value)>,
    /// Moves that arrived now and stand undone, since an earlier move of another branch made
    /// them a loop (two machines that moved branches under each other): (the moved message,
    /// the message it was moved under), by global id. Every machine settles them alike.
    pub moves_undone: Vec<(String, String)>,
}

impl Store {
    /// Folds what the folder of target `name` brought (records and operations read from files
    /// not known to be there before) into the database, in one transaction, and marks them as
    /// held by that folder. Changes made here since the last stamp are stamped first, so they
    /// compete with what arrived by their own clocks. `now_ms` is this machine's clock: an
    /// operation stamped more than [`CLOCK_AHEAD_LIMIT_MS`] after it waits, unread.
    ///
    /// A team's folder speaks only for the trees shared with that team (by the person, or
    /// created in its folder): whatever it brings for another tree, or that names something of
    /// another tree, is refused and reported once.
    pub fn sync_fold(
        &self,
        name: &str,
        records: Vec<SyncRecord>,
        ops: Vec<SyncOp>,
        turn: TurnReceipt<'_>,
        now_ms: i64,
    ) -> Result<SyncFolded, StoreError> {
        self.sync_fold_by(name, records, ops, &SyncAuthors::new(), turn, now_ms)
    }

    /// [`Store::sync_fold`], with the author of each record (by id) as the folder's signed packs
    /// and the team's roster say: kept for what is written now. In a team's folder an operation
    /// is applied only when its device wrote the thing it changes.
    pub fn sync_fold_by(
        &self,
        name: &str,
        records: Vec<SyncRecord>,
        ops: Vec<SyncOp>,
        authors: &SyncAuthors,
        turn: TurnReceipt<'_>,
        now_ms: i64,
    ) -> Result<SyncFolded, StoreError> {
        self.write(|tx| {
            set_state(tx, "folding", "1")?;
            stamp_changes(tx)?;
            let heard_before: i64 =
                state(tx, "heard")?.and_then(|heard| heard.parse().ok()).unwrap_or(0);
            let mut folded = SyncFolded::default();
            let mut known = Vec::new();
            let authority = Authority::of(tx, name, &records)?;
            let records = authority.admit_records(tx, records, &mut folded, &mut known)?;
            let inserted = indexed_at_the_end(tx, || {
                fold_records(tx, records, turn, &mut folded, &mut known)
            })?;
            authority.remember_shares(tx, name, &inserted)?;
            crate::sync::authors::remember(tx, name, &inserted, authors)?;
            let me = device(tx)?;
            let ops = admit_ops(tx, name, &authority, ops, &me, now_ms, &mut folded, &mut known)?;
            let touched = fold_ops(tx, &ops, &inserted, &mut folded, &mut known)?;
            // A message that arrives may be the place a move waited for.
            let mut moved_in = BTreeSet::new();
            for (kind, gid) in &inserted {
                if *kind == RecordKind::Message {
                    moved_in.extend(crate::sync::read::tree_of_thing(tx, *kind, gid)?);
                }
            }
            for (field, gid) in &touched {
                if *field == SyncedField::MessageParent {
                    // A move is settled with every other move of its tree, not on its own.
                    moved_in.extend(crate::sync::read::tree_of_thing(tx, field.kind(), gid)?);
                } else {
                    apply_winner(tx, *field, gid, &mut folded)?;
                }
                report_both_sides(tx, gid, *field, &me, heard_before, &ops, &mut folded)?;
            }
            let arrived: HashSet<&str> = ops.iter().map(|op| op.id.as_str()).collect();
            for tree in moved_in {
                let settled = crate::sync::moves::settle_moves(tx, &tree, &arrived)?;
                folded.moves_undone.extend(settled.undone);
                folded.skipped.extend(settled.skipped);
            }
            let heard = ops
                .iter()
                .filter(|op| op.device != me)
                .map(|op| op.clock)
                .max()
                .unwrap_or(0)
                .max(heard_before);
            set_state(tx, "heard", &heard.to_string())?;
            let received = ops.iter().map(|op| op.clock).max().unwrap_or(0);
            set_state(tx, "clock", &clock(tx)?.max(received).to_string())?;
            let mut insert =
                tx.prepare_cached("INSERT OR IGNORE INTO sync_known (target, id) VALUES (?1, ?2)")?;
            for id in &known {
                insert.execute(params![name, id])?;
            }
            tx.execute("DELETE FROM sync_state WHERE key = 'folding'", [])?;
            Ok(folded)
        })
    }

    /// Every field change this database knows for thing `gid`, newest first: (field, value,
    /// clock, device). A rename that lost to a later one is here.
    pub fn sync_history(&self, gid: &str) -> Result<Vec<(String, Value, i64, String)>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(
            "SELECT field, value_json, clock, device FROM sync_ops WHERE gid = ?1
             ORDER BY clock DESC, device DESC",
        )?;
        let history = statement
            .query_map([gid], |row| {
                let value: String = row.get(1)?;
                Ok((
                    row.get(0)?,
                    serde_json::from_str(&value).unwrap_or(Value::Null),
                    row.get(2)?,
                    row.get(3)?,
                ))
            })?
            .collect::<Result<_, _>>()?;
        Ok(history)
    }

    /// Everything the database holds that a sync carries, as records sorted by kind and global
    /// id, one JSON line each: two replicas that have synced the same files give equal dumps.
    pub fn sync_dump(&self, turn: TurnReceipt<'_>) -> Result<String, StoreError> {
        let conn = self.conn();
        let mut records = Vec::new();
        crate::sync::read::read_records(&conn, None, turn, &mut |record| {
            records.push(record);
            Ok(())
        })?;
        records.sort_by(|a, b| (a.kind().folder(), a.id()).cmp(&(b.kind().folder(), b.id())));
        let mut dump = String::new();
        for record in records {
            let line = serde_json::to_string(&record).map_err(|error| {
                StoreError::InvalidInput(format!("a record cannot be written: {error}"))
            })?;
            dump.push_str(&line);
            dump.push('\n');
        }
        // What each summary reads as now (its newest write), which the records alone do not say.
        let mut current = conn.prepare_cached(
            "SELECT json_array(t.gid, p.gid, n.gid, s.budget, s.summarizer, s.written_by,
                 s.chosen, s.text)
             FROM summaries s JOIN trees t ON t.id = s.tree_id
             LEFT JOIN pins p ON p.id = s.pin_id
             LEFT JOIN nodes n ON n.id = s.path_end_node_id
             WHERE s.fitted_from IS NULL
             ORDER BY 1",
        )?;
        let mut rows = current.query([])?;
        while let Some(row) = rows.next()? {
            dump.push_str("current summary ");
            dump.push_str(&row.get::<_, String>(0)?);
            dump.push('\n');
        }
        Ok(dump)
    }
}

/// What a target's folder may touch.
enum Authority {
    /// The person's own remote: their own trees on their other machines.
    Everything,
    /// A team's: the trees (by global id) shared with it, by the person or created in its
    /// folder, and those whose tree records arrive now and are not here yet.
    Trees {
        /// The trees it may touch.
        shared: HashSet<String>,
        /// Who shared each tree that arrives now, as its record says.
        sharers: HashMap<String, (String, i64)>,
    },
}

impl Authority {
    fn of(tx: &Connection, name: &str, records: &[SyncRecord]) -> Result<Authority, StoreError> {
        let team: bool = tx
            .prepare_cached("SELECT scope = 'shared' FROM sync_targets WHERE name = ?1")?
            .query_row([name], |row| row.get(0))
            .optional()?
            .unwrap_or(false);
        if !team {
            return Ok(Authority::Everything);
        }
        let mut shared: HashSet<String> = tx
            .prepare_cached("SELECT tree_gid FROM sync_shares WHERE target = ?1")?
            .query_map([name], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        let mut sharers = HashMap::new();
        for record in records {
            if let SyncRecord::Tree(TreeRecord { id, shared_by, created_at_ms, .. }) = record
                && row_of(tx, "trees", id)?.is_none()
            {
                // New here: created in the team's folder, so the team's to speak for. A tree
                // already here and never shared with this team stays out of its reach, whatever
                // its records say (a team that learned a tree's id, from an export, say).
                shared.insert(id.clone());
                let by = shared_by.clone().unwrap_or_else(|| "a member of the team".to_owned());
                sharers.insert(id.clone(), (by, *created_at_ms));
            }
        }
        Ok(Authority::Trees { shared, sharers })
    }

    fn allows(&self, tree: Option<&str>) -> bool {
        match self {
            Authority::Everything => true,
            Authority::Trees { shared, .. } => tree.is_some_and(|tree| shared.contains(tree)),
        }
    }

    /// The records this folder may bring; the others are refused (reported, marked as held so
    /// that they are reported once).
    fn admit_records(
        &self,
        tx: &Connection,
        records: Vec<SyncRecord>,
        folded: &mut SyncFolded,
        known: &mut Vec<String>,
    ) -> Result<Vec<SyncRecord>, StoreError> {
        if matches!(self, Authority::Everything) {
            return Ok(records);
        }
        // A note or a receipt says its tree through its message, which may arrive with it.
        let arriving: HashMap<&str, &str> = records
            .iter()
            .filter_map(|record| match record {
                SyncRecord::Message(MessageRecord { id, tree, .. }) => {
                    Some((id.as_str(), tree.as_str()))
                }
                _ => None,
            })
            .collect();
        let mut admitted = Vec::with_capacity(records.len());
        for record in &records {
            let why = if matches!(record, SyncRecord::Profile(_)) {
                Some("a team's folder brings no model profiles; left out")
            } else {
                let tree = match record.message() {
                    Some(message) => match arriving.get(message) {
                        Some(tree) => Some((*tree).to_owned()),
                        None => crate::sync::read::tree_of(tx, message)?,
                    },
                    None => record.tree().map(str::to_owned),
                };
                (!self.allows(tree.as_deref()))
                    .then_some("it belongs to a tree not shared with this team; left out")
            };
            match why {
                Some(why) => {
                    known.push(record.id().to_owned());
                    folded.skipped.push((record.id().to_owned(), why.to_owned()));
                }
                None => admitted.push(record.clone()),
            }
        }
        Ok(admitted)
    }

    /// A team's folder names who shared each tree: a member's additions to it go back there, and
    /// the tree list says who shared it. Only trees written now from this folder are its.
    fn remember_shares(
        &self,
        tx: &Connection,
        name: &str,
        inserted: &[(RecordKind, String)],
    ) -> Result<(), StoreError> {
        let sharers = match self {
            // The person's own remote holds every tree: there is no sharing to remember.
            Authority::Everything => return Ok(()),
            Authority::Trees { sharers, .. } => sharers,
        };
        let mut insert = tx.prepare_cached(
            "INSERT OR IGNORE INTO sync_shares (target, tree_gid, shared_by, at_ms)
             VALUES (?1, ?2, ?3, ?4)",
        )?;
        for (kind, gid) in inserted {
            if *kind == RecordKind::Tree
                && let Some((by, at)) = sharers.get(gid)
            {
                insert.execute(params![name, gid, by, at])?;
            }
        }
        Ok(())
    }
}

/// The operations to take in: each from a device named as devices are, not claiming to be this
/// machine's own, no further ahead than [`CLOCK_AHEAD_LIMIT_MS`] (those wait, unread, until
/// their time), and for a team's folder, changing only what belongs to a tree shared with it
/// (one naming something not here yet waits for it).
#[allow(clippy::too_many_arguments)] // each is one input of the fold, named
fn admit_ops(
    tx: &Connection,
    name: &str,
    authority: &Authority,
    ops: Vec<SyncOp>,
    me: &str,
    now_ms: i64,
    folded: &mut SyncFolded,
    known: &mut Vec<String>,
) -> Result<Vec<SyncOp>, StoreError> {
    let latest = now_ms.saturating_add(CLOCK_AHEAD_LIMIT_MS);
    let mut admitted = Vec::with_capacity(ops.len());
    for op in ops {
        let refused = if !is_device_id(&op.device) {
            Some("it names no device this Pinloom makes")
        } else if op.device == me && !is_known_op(tx, &op.id)? {
            Some("it claims to come from this machine, which never made it")
        } else {
            None
        };
        if let Some(why) = refused {
            known.push(op.id.clone());
            folded.skipped.push((op.id, why.to_owned()));
            continue;
        }
        if clock_ms(op.clock) > latest {
            folded.ahead.push(op.id);
            continue;
        }
        let Some(field) = op.synced_field() else {
            known.push(op.id.clone());
            let why = unsynced(&op);
            folded.skipped.push((op.id, why));
            continue;
        };
        if let Authority::Trees { .. } = authority {
            match crate::sync::read::tree_of_thing(tx, field.kind(), &op.gid)? {
                Some(tree) if authority.allows(Some(&tree)) => {
                    if let Some(why) = crate::sync::authors::not_theirs(tx, &op, field)? {
                        known.push(op.id.clone());
                        folded.skipped.push((op.id, why));
                        continue;
                    }
                }
                Some(_) => {
                    known.push(op.id.clone());
                    folded.skipped.push((
                        op.id,
                        "it changes a tree not shared with this team; left out".to_owned(),
                    ));
                    continue;
                }
                None if held_by(tx, name, &op.gid)? => {
                    // Gone for good here (the trash was emptied): nothing left to change.
                    known.push(op.id);
                    continue;
                }
                None => {
                    folded.waiting.push((op.id, format!("it changes {}, not here yet", op.gid)));
                    continue;
                }
            }
        }
        admitted.push(op);
    }
    Ok(admitted)
}

/// Whether the folder of target `name` is known to hold the record `id` (read from it or
/// written to it before).
fn held_by(tx: &Connection, name: &str, id: &str) -> Result<bool, StoreError> {
    Ok(tx
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM sync_known WHERE target = ?1 AND id = ?2)")?
        .query_row([name, id], |row| row.get(0))?)
}

fn is_known_op(tx: &Connection, id: &str) -> Result<bool, StoreError> {
    Ok(tx
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM sync_ops WHERE id = ?1)")?
        .query_row([id], |row| row.get(0))?)
}

/// The global ids a record hangs from, with their tables.
fn dependencies(record: &SyncRecord) -> Vec<(&'static str, String)> {
    let on = |table: &'static str, gid: &Option<String>| gid.clone().map(|gid| (table, gid));
    let tree = |gid: &String| Some(("trees", gid.clone()));
    let list = match record {
        SyncRecord::Tree(_) | SyncRecord::Profile(_) => vec![],
        SyncRecord::Pin(PinRecord { tree: of, parent, anchor_node, .. }) => {
            vec![tree(of), on("pins", parent), on("nodes", anchor_node)]
        }
        SyncRecord::Message(MessageRecord {
            tree: of,
            parent,
            thread,
            edited_from,
            picked,
            ..
        }) => {
            let mut list =
                vec![tree(of), on("nodes", parent), on("pins", thread), on("nodes", edited_from)];
            list.extend(picked.iter().map(|pick| Some(("nodes", pick.message.clone()))));
            list
        }
        SyncRecord::Attachment(AttachmentRecord { tree: of, thread, node, .. }) => {
            vec![tree(of), on("pins", thread), on("nodes", node)]
        }
        SyncRecord::Note(NoteRecord { message, .. })
        | SyncRecord::Receipt(ReceiptRecord { message, .. }) => {
            vec![Some(("nodes", message.clone()))]
        }
        SyncRecord::Summary(SummaryRecord { tree: of, thread, path_end, .. }) => {
            vec![tree(of), on("pins", thread), on("nodes", path_end)]
        }
    };
    list.into_iter().flatten().collect()
}

/// Writes every record not here yet, each after what it hangs from; returns the (kind, global
/// id) of those written.
fn fold_records(
    tx: &Connection,
    mut records: Vec<SyncRecord>,
    turn: TurnReceipt<'_>,
    folded: &mut SyncFolded,
    known: &mut Vec<String>,
) -> Result<Vec<(RecordKind, String)>, StoreError> {
    records.sort_by(|a, b| (a.kind(), a.id()).cmp(&(b.kind(), b.id())));
    let incoming: HashSet<String> = records.iter().map(|record| record.id().to_owned()).collect();
    let mut done: HashSet<String> = HashSet::new();
    let mut parked: HashMap<String, Vec<usize>> = HashMap::new();
    let mut queue: VecDeque<usize> = (0..records.len()).collect();
    let mut inserted = Vec::new();
    while let Some(index) = queue.pop_front() {
        let record = &records[index];
        let id = record.id().to_owned();
        if is_here(tx, record)? {
            folded.already_here += 1;
            known.push(id.clone());
            done.insert(id.clone());
            queue.extend(parked.remove(&id).unwrap_or_default());
            continue;
        }
        let mut missing = None;
        for (table, gid) in dependencies(record) {
            if row_of(tx, table, &gid)?.is_none() {
                missing = Some(gid);
                break;
            }
        }
        if missing.is_none()
            && let Some(why) = elsewhere(tx, record)?
        {
            known.push(id.clone());
            folded.skipped.push((id, why));
            continue;
        }
        if let Some(missing) = missing {
            if incoming.contains(&missing) && !done.contains(&missing) {
                parked.entry(missing).or_default().push(index);
            } else {
                folded
                    .waiting
                    .push((id, format!("it hangs from {missing}, not in the folder yet")));
            }
            continue;
        }
        tx.execute_batch("SAVEPOINT sync_record")?;
        match insert_record(tx, record, turn, folded) {
            Ok(()) => {
                tx.execute_batch("RELEASE sync_record")?;
                folded.records += 1;
                if let Some(tree) = record_tree(tx, record)? {
                    folded.trees_changed.insert(tree);
                }
                inserted.push((record.kind(), id.clone()));
                done.insert(id.clone());
                queue.extend(parked.remove(&id).unwrap_or_default());
            }
            Err(error) => {
                tx.execute_batch("ROLLBACK TO sync_record; RELEASE sync_record")?;
                folded.skipped.push((id.clone(), error.to_string()));
            }
        }
        known.push(id);
    }
    for (missing, indexes) in parked {
        for index in indexes {
            let id = records[index].id().to_owned();
            folded
                .waiting
                .push((id, format!("it hangs from {missing}, which could not be written")));
        }
    }
    Ok(inserted)
}

/// Why `record` may not be written, when something it hangs from (a message, a thread) belongs to
/// another tree than its own: a pin anchored in another tree's message would carry that tree's
/// words into this one's requests.
fn elsewhere(tx: &Connection, record: &SyncRecord) -> Result<Option<String>, StoreError> {
    let Some(own) = record_tree(tx, record)? else { return Ok(None) };
    for (table, gid) in dependencies(record) {
        let tree: Option<String> = match table {
            "nodes" => crate::sync::read::tree_of(tx, &gid)?,
            "pins" => crate::sync::read::tree_of_thing(tx, RecordKind::Pin, &gid)?,
            _ => continue,
        };
        if tree.as_deref().is_some_and(|tree| tree != own) {
            return Ok(Some(format!("it names {gid}, which belongs to another tree; left out")));
        }
    }
    Ok(None)
}

fn record_tree(tx: &Connection, record: &SyncRecord) -> Result<Option<String>, StoreError> {
    match record.message() {
        Some(message) => crate::sync::read::tree_of(tx, message),
        None => Ok(record.tree().map(str::to_owned)),
    }
}

/// Whether the database holds `record` already (through another remote, or as its own).
fn is_here(tx: &Connection, record: &SyncRecord) -> Result<bool, StoreError> {
    match record {
        // A version of a profile is "here" once a version as new (or newer) is.
        SyncRecord::Profile(ProfileRecord { profile, updated_at_ms, .. }) => Ok(tx
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM model_profiles WHERE name = ?1 AND updated_at_ms >= ?2)",
            )?
            .query_row(params![profile.name, updated_at_ms], |row| row.get(0))?),
        SyncRecord::Receipt(ReceiptRecord { message, .. }) => Ok(tx
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM receipts r JOIN nodes n ON n.id = r.node_id
                 WHERE n.gid = ?1)",
            )?
            .query_row([message], |row| row.get(0))?),
        other => Ok(row_of(tx, other.kind().table(), other.id())?.is_some()),
    }
}

fn required(tx: &Connection, table: &str, gid: &str) -> Result<i64, StoreError> {
    row_of(tx, table, gid)?.ok_or_else(|| StoreError::InvalidInput(format!("{gid} is not here")))
}

fn optional(tx: &Connection, table: &str, gid: &Option<String>) -> Result<Option<i64>, StoreError> {
    gid.as_deref().map(|gid| required(tx, table, gid)).transpose()
}

fn insert_record(
    tx: &Connection,
    record: &SyncRecord,
    turn: TurnReceipt<'_>,
    folded: &mut SyncFolded,
) -> Result<(), StoreError> {
    match record {
        SyncRecord::Profile(ProfileRecord { profile, updated_at_ms, .. }) => {
            // Newer than this machine's version of the name (`is_here` checked): it replaces it,
            // waiting to be enabled when the application layer said so (`imported_from`). A
            // profile never becomes a default by arriving: the default is each window's own.
            crate::profiles::validate(profile)?;
            crate::profiles::insert_profile(tx, profile, true, *updated_at_ms)?;
            if let Some(from) = &profile.imported_from {
                // Replacing keeps an enabled profile enabled; this version may not be.
                tx.execute(
                    "UPDATE model_profiles SET imported_from = ?2 WHERE name = ?1",
                    params![profile.name.trim(), from],
                )?;
            }
            Ok(())
        }
        SyncRecord::Receipt(ReceiptRecord { message, receipt, provider_cut, .. }) => {
            let node = NodeId(required(tx, "nodes", message)?);
            let here = |kind: ReceiptRef, gid: &Value| row_number(tx, kind, gid);
            let turned = turn(receipt, &here);
            if !turned.is_object() {
                return Err(StoreError::InvalidInput("the receipt cannot be read".into()));
            }
            write_receipt(
                tx,
                node,
                &Receipt { json: turned.to_string(), provider_cut: *provider_cut },
            )
        }
        SyncRecord::Tree(tree) => insert_tree_record(tx, tree),
        SyncRecord::Pin(pin) => insert_pin_record(tx, pin),
        SyncRecord::Message(message) => insert_message_record(tx, message, folded),
        SyncRecord::Attachment(AttachmentRecord {
            id,
            tree,
            scope,
            thread,
            node,
            role,
            name,
            content,
            created_at_ms,
        }) => {
            let tree = TreeId(required(tx, "trees", tree)?);
            let scope = match scope.as_str() {
                "tree" => AttachmentScope::Tree,
                "thread" => AttachmentScope::Thread(optional(tx, "pins", thread)?.map(PinId)),
                "node" => AttachmentScope::Node(NodeId(optional(tx, "nodes", node)?.ok_or_else(
                    || StoreError::InvalidInput("a message's attachment names no message".into()),
                )?)),
                other => {
                    return Err(StoreError::InvalidInput(format!(
                        "unknown attachment scope {other:?}"
                    )));
                }
            };
            let row = insert_attachment(
                tx,
                tree,
                scope,
                role_from_sql(role)?,
                name,
                content,
                *created_at_ms,
            )?;
            tx.execute("UPDATE attachments SET gid = ?2 WHERE id = ?1", params![row, id])?;
            Ok(())
        }
        SyncRecord::Note(NoteRecord { id, message, text, included, created_at_ms }) => {
            let node = NodeId(required(tx, "nodes", message)?);
            let row = insert_annotation(tx, node, text, *included, *created_at_ms)?;
            tx.execute("UPDATE annotations SET gid = ?2 WHERE id = ?1", params![row, id])?;
            Ok(())
        }
        SyncRecord::Summary(summary) => insert_summary_record(tx, summary),
    }
}

fn insert_tree_record(tx: &Connection, record: &TreeRecord) -> Result<(), StoreError> {
    let TreeRecord {
        id,
        title,
        mode,
        system_context,
        buffer_includes_system,
        settings,
        created_at_ms,
        deleted_at_ms,
        ..
    } = record;
    let new = NewTree {
        title: title.clone(),
        mode: mode_from_sql(mode)?,
        system_context: system_context.clone(),
        sharing: Sharing::Solo,
        created_at_ms: *created_at_ms,
    };
    let tree = insert_tree(tx, &new, None)?;
    let settings = settings_in(tx, settings)?;
    tx.execute(
        "UPDATE trees SET gid = ?2, buffer_includes_system = ?3, settings_json = ?4,
             deleted_at_ms = ?5
         WHERE id = ?1",
        params![tree.id.0, id, buffer_includes_system, settings, deleted_at_ms],
    )?;
    Ok(())
}

fn insert_pin_record(tx: &Connection, record: &PinRecord) -> Result<(), StoreError> {
    let PinRecord {
        id,
        tree,
        parent,
        anchor_node,
        anchor,
        title,
        closed,
        deleted_at_ms,
        created_at_ms,
    } = record;
    let tree = TreeId(required(tx, "trees", tree)?);
    let anchor = anchor.clone().map(Into::into);
    let place = PinPlace {
        tree_id: tree,
        parent: optional(tx, "pins", parent)?.map(PinId),
        anchor_node: optional(tx, "nodes", anchor_node)?.map(NodeId),
        anchor: anchor.as_ref(),
    };
    let placeholder = format!("\u{1}{id}");
    let pin = insert_pin(tx, place, title, Some(&placeholder), *created_at_ms)?;
    // A deleted thread keeps its own slug; a live one takes the next free one.
    let slug = match deleted_at_ms {
        Some(_) => slugify(title),
        None => free_pin_slug(tx, tree, &slugify(title))?,
    };
    tx.execute(
        "UPDATE pins SET gid = ?2, slug = ?3, deleted_at_ms = ?4, closed_at_ms = ?5, result = ?6
         WHERE id = ?1",
        params![
            pin.id.0,
            id,
            slug,
            deleted_at_ms,
            closed.as_ref().map(|closed| closed.at_ms),
            closed.as_ref().map(|closed| closed.result.as_str())
        ],
    )?;
    Ok(())
}

fn insert_message_record(
    tx: &Connection,
    record: &MessageRecord,
    folded: &mut SyncFolded,
) -> Result<(), StoreError> {
    let MessageRecord {
        id,
        tree,
        parent,
        thread,
        edited_from,
        author,
        parts,
        model,
        generation,
        usage,
        incomplete,
        excluded,
        bookmarked,
        kept,
        deleted_at_ms,
        created_at_ms,
        token_counts,
        picked,
    } = record;
    let tree_id = TreeId(required(tx, "trees", tree)?);
    let thread_id = optional(tx, "pins", thread)?.map(PinId);
    // A message that begins a thread hangs off its pin's anchor as it is here: if the thread
    // moved on the machine that wrote the message (after the pin's own record was written), the
    // move is an operation of its own, replayed with the others.
    let parent_id = match thread_id {
        Some(pin) => crate::pins::pin_by_id(tx, pin)?.anchor_node_id,
        None => optional(tx, "nodes", parent)?.map(NodeId),
    };
    let author = author_from_sql(author)?;
    let new = NewNode {
        tree_id,
        parent_id,
        pin_id: thread_id,
        author,
        parts: parts.clone(),
        edited_from: optional(tx, "nodes", edited_from)?.map(NodeId),
        model: model.clone(),
        generation_json: generation.clone(),
        usage_json: usage.clone(),
        incomplete: *incomplete,
        token_counts: token_counts.iter().map(|(family, n)| (family.clone(), *n)).collect(),
        created_at_ms: *created_at_ms,
        receipt: None,
        reply_tokens: Vec::new(),
        replaces_draft: None,
    };
    if let Some(parent) = parent_id
        && in_deleted_branch(tx, parent)?
    {
        folded.under_deleted.push(id.clone());
    }
    // Not here yet (`is_here`): the record's global id is free.
    let node = insert_node_with(tx, &new, true, true, Some(id))?;
    if let Some(pin) = node.pin_id {
        let (closed, gid): (bool, String) = tx.query_row(
            "SELECT closed_at_ms IS NOT NULL, gid FROM pins WHERE id = ?1",
            [pin.0],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
        if closed {
            folded.into_closed.push(gid);
        }
    }
    if *excluded || *bookmarked || *kept {
        tx.execute(
            "UPDATE nodes SET excluded = ?2, bookmarked = ?3, kept = ?4 WHERE id = ?1",
            params![node.id.0, excluded, bookmarked, kept],
        )?;
    }
    if let Some(at) = deleted_at_ms {
        prune(tx, node.id, *at)?;
    }
    insert_picks(tx, node.id, picked)
}

/// A question's picks as they arrived, by global id: those here go to [`write_picks`], which
/// keeps only what may stand.
fn insert_picks(
    tx: &Connection,
    question: NodeId,
    picked: &[PickedRecord],
) -> Result<(), StoreError> {
    let mut picks = Vec::with_capacity(picked.len());
    for pick in picked {
        if let Some(node) = row_of(tx, "nodes", &pick.message)? {
            picks.push(Pick { node: NodeId(node), with_summary: pick.with_summary });
        }
    }
    write_picks(tx, question, &picks)
}

fn insert_summary_record(tx: &Connection, record: &SummaryRecord) -> Result<(), StoreError> {
    let SummaryRecord {
        id,
        tree,
        thread,
        path_end,
        budget,
        summarizer,
        written_by,
        chosen,
        text,
        input_chars,
        input_tokens,
        written_at_ms,
    } = record;
    let written_by = SummaryAuthor::parse(written_by).ok_or_else(|| {
        StoreError::InvalidInput(format!("unknown summary author {written_by:?}"))
    })?;
    let key = SummaryKey {
        tree_id: TreeId(required(tx, "trees", tree)?),
        pin_id: optional(tx, "pins", thread)?.map(PinId),
        path_end: optional(tx, "nodes", path_end)?.map(NodeId),
        budget: *budget,
        summarizer: summarizer.clone(),
        fitted_from: None,
    };
    let (chars, tokens) = (as_sql_count(*input_chars)?, as_sql_count(*input_tokens)?);
    let write = SummaryWrite {
        text,
        written_by,
        chosen: *chosen,
        input_chars: *input_chars,
        input_tokens: *input_tokens,
        written_at_ms: *written_at_ms,
    };
    let existing = crate::summaries::summary_by_key(tx, &key)?;
    let summary = match &existing {
        Some(summary) => summary.id,
        None => insert_summary(tx, &key, &write, chars, tokens)?,
    };
    log_summary_write(tx, summary, text, chars, tokens, *written_at_ms)?;
    tx.execute(
        "UPDATE summary_updates SET gid = ?2 WHERE id = ?1",
        params![tx.last_insert_rowid(), id],
    )?;
    // The summary reads as its latest write by (time, global id), whichever arrived last.
    let newest: String = tx.query_row(
        "SELECT gid FROM summary_updates WHERE summary_id = ?1
         ORDER BY written_at_ms DESC, gid DESC LIMIT 1",
        [summary],
        |row| row.get(0),
    )?;
    if existing.is_some() && newest == *id {
        let changed = tx.execute(
            "UPDATE summaries SET text = ?2, input_chars = ?3, input_tokens = ?4,
                 updated_at_ms = ?5, written_by = ?6, chosen = ?7, stale_reason = NULL
             WHERE id = ?1 AND text IS NOT ?2",
            params![summary, text, chars, tokens, written_at_ms, written_by.as_str(), chosen],
        )?;
        if changed > 0 {
            tx.execute("DELETE FROM summaries WHERE fitted_from = ?1", [summary])?;
        }
    }
    Ok(())
}

/// Why an operation is skipped that names no field a sync may set.
fn unsynced(op: &SyncOp) -> String {
    format!("{} has no field {:?} a sync may set", op.kind, op.field)
}

/// Takes in every operation not known yet; returns the fields to settle: those the operations
/// touch, and those of newly written things that operations already named.
fn fold_ops(
    tx: &Connection,
    ops: &[SyncOp],
    inserted: &[(RecordKind, String)],
    folded: &mut SyncFolded,
    known: &mut Vec<String>,
) -> Result<BTreeSet<(SyncedField, String)>, StoreError> {
    let mut touched = BTreeSet::new();
    let mut insert = tx.prepare_cached(
        "INSERT OR IGNORE INTO sync_ops (id, gid, kind, field, value_json, clock, device,
                                         from_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    for op in ops {
        known.push(op.id.clone());
        let Some(field) = op.synced_field() else {
            folded.skipped.push((op.id.clone(), unsynced(op)));
            continue;
        };
        if op.id != op_id(op.clock, &op.device) || op.clock < 0 {
            folded
                .skipped
                .push((op.id.clone(), "its name does not match its clock and device".into()));
            continue;
        }
        let value = op.value.to_string();
        let from = op.from.as_ref().map(Value::to_string);
        let row = params![op.id, op.gid, op.kind, op.field, value, op.clock, op.device, from];
        if insert.execute(row)? == 0 {
            folded.already_here += 1;
            continue;
        }
        folded.ops += 1;
        if let Some(tree) = crate::sync::read::tree_of_thing(tx, field.kind(), &op.gid)? {
            folded.trees_changed.insert(tree);
        }
        touched.insert((field, op.gid.clone()));
    }
    let mut fields =
        tx.prepare_cached("SELECT DISTINCT kind, field FROM sync_ops WHERE gid = ?1")?;
    for (_, gid) in inserted {
        let named: Vec<(String, String)> = fields
            .query_map([gid], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<_, _>>()?;
        // Only synced fields are ever written to `sync_ops` (above, and `stamp_changes`).
        for field in named.iter().filter_map(|(kind, field)| SyncedField::parse(kind, field)) {
            touched.insert((field, gid.clone()));
        }
    }
    Ok(touched)
}

/// Sets a field to the value of its greatest (clock, device) operation, when the thing is here
/// (one not here yet is settled when its record arrives).
fn apply_winner(
    tx: &Connection,
    field: SyncedField,
    gid: &str,
    folded: &mut SyncFolded,
) -> Result<(), StoreError> {
    let Some(row) = row_of(tx, field.kind().table(), gid)? else { return Ok(()) };
    let winner: Option<(String, String)> = tx
        .prepare_cached(
            "SELECT id, value_json FROM sync_ops WHERE gid = ?1 AND field = ?2
             ORDER BY clock DESC, device DESC LIMIT 1",
        )?
        .query_row([gid, field.name()], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?;
    // `touched` names only fields an operation was just stored for, or that `sync_ops` holds.
    let Some((op, value)) = winner else { return Ok(()) };
    let value: Value = serde_json::from_str(&value).unwrap_or(Value::Null);
    tx.execute_batch("SAVEPOINT sync_field")?;
    match set_field(tx, field, row, &value) {
        Ok(()) => tx.execute_batch("RELEASE sync_field")?,
        Err(error) => {
            tx.execute_batch("ROLLBACK TO sync_field; RELEASE sync_field")?;
            folded.skipped.push((op, error.to_string()));
        }
    }
    Ok(())
}

fn wrong(field: &str, value: &Value) -> StoreError {
    StoreError::InvalidInput(format!("{value} is not a value the field {field} can take"))
}

fn flag(field: &str, value: &Value) -> Result<bool, StoreError> {
    value.as_bool().ok_or_else(|| wrong(field, value))
}

fn time(field: &str, value: &Value) -> Result<Option<i64>, StoreError> {
    match value {
        Value::Null => Ok(None),
        other => other.as_i64().map(Some).ok_or_else(|| wrong(field, value)),
    }
}

fn text<'a>(field: &str, value: &'a Value) -> Result<&'a str, StoreError> {
    value.as_str().ok_or_else(|| wrong(field, value))
}

fn set_field(
    tx: &Connection,
    synced: SyncedField,
    row: i64,
    value: &Value,
) -> Result<(), StoreError> {
    let field = synced.name();
    match synced {
        SyncedField::TreeTitle => {
            let title = text(field, value)?.trim();
            if title.is_empty() {
                return Err(wrong(field, value));
            }
            // A title someone set: no longer the one taken from a message.
            tx.execute(
                "UPDATE trees SET title = ?2, title_from_node = NULL WHERE id = ?1",
                params![row, title],
            )?;
        }
        SyncedField::TreeSystemContext => {
            tx.execute(
                "UPDATE trees SET system_context = ?2 WHERE id = ?1",
                params![row, text(field, value)?],
            )?;
        }
        SyncedField::TreeSettings => {
            let settings = settings_in(tx, value)?;
            tx.execute(
                "UPDATE trees SET settings_json = ?2 WHERE id = ?1",
                params![row, settings],
            )?;
        }
        SyncedField::TreeBufferIncludesSystem => {
            tx.execute(
                "UPDATE trees SET buffer_includes_system = ?2 WHERE id = ?1",
                params![row, flag(field, value)?],
            )?;
        }
        SyncedField::TreeDeleted => {
            tx.execute(
                "UPDATE trees SET deleted_at_ms = ?2 WHERE id = ?1",
                params![row, time(field, value)?],
            )?;
        }
        SyncedField::MessageExcluded
        | SyncedField::MessageBookmarked
        | SyncedField::MessageKept => {
            let on = flag(field, value)?;
            if synced == SyncedField::MessageExcluded && on {
                crate::stale_summaries::mark_summaries_of(
                    tx,
                    NodeId(row),
                    &format!("written before message #{row} was excluded"),
                )?;
            }
            tx.execute(&format!("UPDATE nodes SET {field} = ?2 WHERE id = ?1"), params![row, on])?;
        }
        SyncedField::MessageDeleted => set_message_deleted(tx, NodeId(row), time(field, value)?)?,
        SyncedField::MessageParent => set_message_parent(tx, NodeId(row), value)?,
        SyncedField::PinPlace => set_pin_place(tx, PinId(row), value)?,
        SyncedField::PinTitle => {
            tx.execute(
                "UPDATE pins SET title = ?2 WHERE id = ?1",
                params![row, text(field, value)?],
            )?;
        }
        SyncedField::PinClosed => {
            let (at, result) = match value {
                Value::Null => (None, None),
                Value::Object(closed) => (
                    Some(
                        closed
                            .get("atMs")
                            .and_then(Value::as_i64)
                            .ok_or_else(|| wrong(field, value))?,
                    ),
                    Some(
                        closed.get("result").and_then(Value::as_str).unwrap_or_default().to_owned(),
                    ),
                ),
                _ => return Err(wrong(field, value)),
            };
            tx.execute(
                "UPDATE pins SET closed_at_ms = ?2, result = ?3 WHERE id = ?1",
                params![row, at, result],
            )?;
        }
        SyncedField::PinDeleted => set_pin_deleted(tx, PinId(row), time(field, value)?)?,
        SyncedField::NoteIncluded => {
            tx.execute(
                "UPDATE annotations SET included = ?2 WHERE id = ?1",
                params![row, flag(field, value)?],
            )?;
        }
        SyncedField::AttachmentRemoved => {
            tx.execute("DELETE FROM attachments WHERE id = ?1", [row])?;
        }
    }
    Ok(())
}

/// Replays a move: the message (with its branch and threads) under the message `value` names,
/// or, for `null`, a thread's first message left without a parent (its thread moved to open from
/// a thread with no message yet).
fn set_message_parent(tx: &Connection, node: NodeId, value: &Value) -> Result<(), StoreError> {
    let moving = node_by_id(tx, node)?;
    let Some(parent) = value.as_str() else {
        if !value.is_null() {
            return Err(wrong("parent", value));
        }
        if moving.parent_id.is_some() && moving.pin_id.is_some() {
            reparent(tx, &moving, None)?;
        }
        return Ok(());
    };
    let parent = row_of(tx, "nodes", parent)?.ok_or_else(|| {
        StoreError::InvalidInput(format!("the message it moved under, {parent}, is not here"))
    })?;
    if moving.parent_id != Some(NodeId(parent)) {
        move_branch(tx, node, NodeId(parent))?;
    }
    Ok(())
}

/// Replays a thread's move: the thread it opens from and the message it hangs off, its depth
/// and those of the threads below it; its highlighted passage, which quoted the old anchor, goes.
fn set_pin_place(tx: &Connection, pin: PinId, value: &Value) -> Result<(), StoreError> {
    let named = |key: &str, table: &str| -> Result<Option<i64>, StoreError> {
        match value.get(key) {
            Some(Value::String(gid)) => row_of(tx, table, gid)?
                .map(Some)
                .ok_or_else(|| StoreError::InvalidInput(format!("{gid} is not here"))),
            Some(Value::Null) => Ok(None),
            _ => Err(wrong("place", value)),
        }
    };
    let (parent, anchor) = (named("parent", "pins")?, named("anchor", "nodes")?);
    let now = crate::pins::pin_by_id(tx, pin)?;
    if now.parent_pin_id.map(|id| id.0) == parent && now.anchor_node_id.map(|id| id.0) == anchor {
        return Ok(());
    }
    let depth = crate::pins::thread_depth(tx, parent.map(PinId))? + 1;
    tx.execute(
        "UPDATE pins SET parent_pin_id = ?2, anchor_node_id = ?3, depth = ?4,
             range_start = NULL, range_end = NULL, anchor_text = NULL
         WHERE id = ?1",
        params![pin.0, parent, anchor, depth],
    )?;
    crate::nodes::renumber_pin_depths(tx, Some(pin))
}

fn set_message_deleted(tx: &Connection, node: NodeId, at: Option<i64>) -> Result<(), StoreError> {
    let now = node_by_id(tx, node)?.pruned_at_ms;
    match (now, at) {
        (None, Some(at)) => prune(tx, node, at),
        (Some(_), None) => unprune(tx, node),
        (Some(_), Some(at)) => {
            tx.execute("UPDATE nodes SET pruned_at_ms = ?2 WHERE id = ?1", params![node.0, at])?;
            Ok(())
        }
        (None, None) => Ok(()),
    }
}

fn set_pin_deleted(tx: &Connection, pin: PinId, at: Option<i64>) -> Result<(), StoreError> {
    let now = crate::pins::pin_by_id(tx, pin)?.deleted_at_ms;
    match (now, at) {
        (Some(_), None) => crate::threads::bring_back_pin(tx, pin),
        (_, at) => {
            tx.execute("UPDATE pins SET deleted_at_ms = ?2 WHERE id = ?1", params![pin.0, at])?;
            Ok(())
        }
    }
}

/// Reports a field this device changed since it last heard from others, that an arriving
/// operation from another device changed too.
fn report_both_sides(
    tx: &Connection,
    gid: &str,
    field: SyncedField,
    me: &str,
    heard_before: i64,
    ops: &[SyncOp],
    folded: &mut SyncFolded,
) -> Result<(), StoreError> {
    let theirs =
        ops.iter().any(|op| op.gid == gid && op.synced_field() == Some(field) && op.device != me);
    let field = field.name();
    if !theirs {
        return Ok(());
    }
    let mine: bool = tx
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM sync_ops
             WHERE gid = ?1 AND field = ?2 AND device = ?3 AND clock > ?4)",
        )?
        .query_row(params![gid, field, me, heard_before], |row| row.get(0))?;
    if mine {
        let kept: String = tx.query_row(
            "SELECT value_json FROM sync_ops WHERE gid = ?1 AND field = ?2
             ORDER BY clock DESC, device DESC LIMIT 1",
            [gid, field],
            |row| row.get(0),
        )?;
        folded.changed_on_both.push((
            gid.to_owned(),
            field.to_owned(),
            serde_json::from_str(&kept).unwrap_or(Value::Null),
        ));
    }
    Ok(())
}
