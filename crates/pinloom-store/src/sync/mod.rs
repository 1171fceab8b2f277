//! Sync's side of the store, one room: what a sync folder holds, read out of the database and
//! stamped, and what arrived folded in. `records.rs` names the shapes (records written once,
//! operations that change a mutable field, the kinds and fields there are), `clock.rs` the
//! hybrid logical clock and the device, `stamp.rs` turns changes made here into operations,
//! `read.rs` reads what a folder lacks, `fold.rs` folds in what arrived; this file is the
//! [`Store`]'s methods over them, and the remotes a database syncs with.
//!
//! A record is an immutable thing (a tree as it was created, a message, a pin, an attachment, a
//! note, a summary's write) named by its global id; an operation sets one mutable field of one
//! thing (a title, a flag, a pin's result, a deletion or a restore) and is stamped with a hybrid
//! logical clock and the device that made it. The field's value is the operation with the
//! greatest (clock, device), or the record's own value while it has none: a rule every replica
//! reaches from the same files in any order. Files and git are the application layer's.

use std::collections::{HashMap, HashSet};

use rusqlite::{OptionalExtension, params};
use serde_json::Value;

use crate::error::StoreError;
use crate::store::Store;
use crate::sync::clock::{device, set_state, state};
use crate::sync::records::{SyncOp, SyncRecord, SyncedField, TreeRecord, TurnReceipt};
use crate::sync::stamp::stamp_changes;

pub(crate) mod authors;
pub(crate) mod clock;
pub(crate) mod fold;
pub(crate) mod moves;
pub(crate) mod read;
pub(crate) mod records;
pub(crate) mod stamp;

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
        Ok(crate::sync::read::row_of(&conn, "trees", gid)?.map(crate::model::TreeId))
    }

    /// Every tree's global id, with its id: what an import of many conversations checks each
    /// against without a query per conversation.
    pub fn tree_global_ids(
        &self,
    ) -> Result<std::collections::HashMap<String, crate::model::TreeId>, StoreError> {
        let conn = self.conn();
        let mut statement =
            conn.prepare_cached("SELECT gid, id FROM trees WHERE gid IS NOT NULL")?;
        let rows = statement.query_map([], |row| {
            Ok((row.get::<_, String>(0)?, crate::model::TreeId(row.get(1)?)))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
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
                // Another remote: whether it is encrypted, and who signs there, is its own to say.
                tx.execute("DELETE FROM sync_state WHERE key = ?1", [format!("sealed {name}")])?;
                tx.execute("DELETE FROM sync_signers WHERE target = ?1", [name])?;
                let prefix = format!("team {name} ");
                tx.execute(
                    "DELETE FROM sync_state WHERE substr(key, 1, length(?1)) = ?1",
                    [&prefix],
                )?;
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

    /// Whether the folder of target `name` was ever seen encrypted here: from then on it must
    /// stay so, whatever its format.json comes to say.
    pub fn sync_sealed(&self, name: &str) -> Result<bool, StoreError> {
        Ok(state(&self.conn(), &format!("sealed {name}"))?.as_deref() == Some("1"))
    }

    /// Remembers that the folder of target `name` is encrypted.
    pub fn set_sync_sealed(&self, name: &str) -> Result<(), StoreError> {
        self.write(|tx| set_state(tx, &format!("sealed {name}"), "1"))
    }

    /// This device's signing key, as the application layer made it (its secret bytes in hex);
    /// `None` before the first sync that signs.
    pub fn sync_signing_key(&self) -> Result<Option<String>, StoreError> {
        state(&self.conn(), "signing key")
    }

    /// Keeps this device's signing key (made once; a device keeps its key for good).
    pub fn set_sync_signing_key(&self, secret_hex: &str) -> Result<(), StoreError> {
        self.write(|tx| set_state(tx, "signing key", secret_hex))
    }

    /// This device's key for reading what a team encrypts to it (an age X25519 identity, as the
    /// application layer made it); `None` before its first team.
    pub fn sync_member_key(&self) -> Result<Option<String>, StoreError> {
        state(&self.conn(), "member key")
    }

    /// Keeps this device's member key (made once: packs a team encrypted to it stay readable).
    pub fn set_sync_member_key(&self, secret: &str) -> Result<(), StoreError> {
        self.write(|tx| set_state(tx, "member key", secret))
    }

    /// What the application keeps of team `name` under `key` (its roster as last read, its
    /// owner's key, an invitation made here); forgotten with the team.
    pub fn sync_team_state(&self, name: &str, key: &str) -> Result<Option<String>, StoreError> {
        state(&self.conn(), &format!("team {name} {key}"))
    }

    /// Sets (or, with `None`, removes) what is kept of team `name` under `key`.
    pub fn set_sync_team_state(
        &self,
        name: &str,
        key: &str,
        value: Option<&str>,
    ) -> Result<(), StoreError> {
        let key = format!("team {name} {key}");
        self.write(|tx| match value {
            Some(value) => set_state(tx, &key, value),
            None => {
                tx.execute("DELETE FROM sync_state WHERE key = ?1", [&key])?;
                Ok(())
            }
        })
    }

    /// The key each device signs its packs with, as the folder of target `name` first showed it.
    pub fn sync_signers(&self, name: &str) -> Result<HashMap<String, String>, StoreError> {
        let conn = self.conn();
        let mut statement =
            conn.prepare_cached("SELECT device, key FROM sync_signers WHERE target = ?1")?;
        let signers = statement
            .query_map([name], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<_, _>>()?;
        Ok(signers)
    }

    /// Remembers the keys of devices seen for the first time in the folder of target `name`.
    pub fn pin_sync_signers(
        &self,
        name: &str,
        signers: &[(String, String)],
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            let mut insert = tx.prepare_cached(
                "INSERT OR IGNORE INTO sync_signers (target, device, key) VALUES (?1, ?2, ?3)",
            )?;
            for (device, key) in signers {
                insert.execute(params![name, device, key])?;
            }
            Ok(())
        })
    }

    /// Forgets the remote called `name` (a team left): what its folder held, and the trees
    /// shared with it here. The trees themselves stay.
    pub fn forget_sync_target(&self, name: &str) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.execute("DELETE FROM sync_known WHERE target = ?1", [name])?;
            tx.execute("DELETE FROM sync_shares WHERE target = ?1", [name])?;
            tx.execute("DELETE FROM sync_state WHERE key = ?1", [format!("sealed {name}")])?;
            tx.execute("DELETE FROM sync_signers WHERE target = ?1", [name])?;
            let prefix = format!("team {name} ");
            tx.execute("DELETE FROM sync_state WHERE substr(key, 1, length(?1)) = ?1", [&prefix])?;
            tx.execute("DELETE FROM sync_targets WHERE name = ?1", [name])?;
            Ok(())
        })
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
        self.outgoing(name, turn, false)
    }

    /// [`Store::sync_outgoing`] for a team that admitted a member since this machine last
    /// wrote to it: everything of this person's in the trees shared with it, held there or not
    /// (what was written before was not encrypted to the newcomer).
    pub fn sync_outgoing_again(
        &self,
        name: &str,
        turn: TurnReceipt<'_>,
    ) -> Result<SyncOutgoing, StoreError> {
        self.outgoing(name, turn, true)
    }

    fn outgoing(
        &self,
        name: &str,
        turn: TurnReceipt<'_>,
        again: bool,
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
        let unknown_to = (!again).then_some(name);
        crate::sync::read::read_records(&conn, unknown_to, turn, &mut |record| {
            let tree = match record.message() {
                Some(message) => crate::sync::read::tree_of(&conn, message)?,
                None => record.tree().map(str::to_owned),
            };
            // What another member wrote is in the team's folder already, signed by them.
            let theirs =
                shared_only && crate::sync::authors::written_by_another(&conn, record.id())?;
            if in_scope(tree.as_deref()) && !theirs {
                let mut record = record;
                // A team's folder says who shared each tree there.
                if let SyncRecord::Tree(TreeRecord { id, shared_by, .. }) = &mut record
                    && shared_only
                {
                    shared_by.clone_from(&sharers.get(id.as_str()).cloned());
                }
                records.push(record);
            }
            Ok(())
        })?;
        if !shared_only && state(&conn, "profiles")?.as_deref() == Some("1") {
            records.extend(crate::sync::read::profile_records(&conn, name)?);
        }
        let mut ops = Vec::new();
        let mut statement = conn.prepare_cached(
            "SELECT id, gid, kind, field, value_json, clock, device, from_json FROM sync_ops o
             WHERE ?2 OR NOT EXISTS (SELECT 1 FROM sync_known k WHERE k.target = ?1 AND k.id = o.id)
             ORDER BY id",
        )?;
        let mut rows = statement.query(params![name, again])?;
        let me = device(&conn)?;
        while let Some(row) = rows.next()? {
            let op = op_from_row(row)?;
            if shared.is_some() {
                // A team takes a change from the device that made it, of what its person wrote:
                // another machine's change is that machine's to send, and a change of what
                // another member wrote (a bookmark, a message left out) stays on this machine.
                if op.device != me || crate::sync::authors::written_by_another(&conn, &op.gid)? {
                    continue;
                }
                // This database's own operations: each names a synced field (stamp_changes).
                let kind = op.synced_field().map(SyncedField::kind);
                let tree = match kind {
                    Some(kind) => crate::sync::read::tree_of_thing(&conn, kind, &op.gid)?,
                    None => None,
                };
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
        gid: row.get(1)?,
        kind: row.get(2)?,
        field: row.get(3)?,
        value: serde_json::from_str(&value).unwrap_or(Value::Null),
        clock: row.get(5)?,
        device: row.get(6)?,
        from: row
            .get::<_, Option<String>>(7)?
            .map(|from| serde_json::from_str(&from).unwrap_or(Value::Null)),
    })
}
