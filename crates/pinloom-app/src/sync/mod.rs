//! Sync through git: the same trees on a person's machines, and shared trees with a team.
//!
//! A sync writes what the remote's folder lacks as packs (records written once, field changes
//! stamped with a hybrid logical clock: `packs.rs`, `pack_files.rs`, the layout in `folder.rs`),
//! encrypted when the folder is sealed (`folder_key.rs`), commits, fetches and merges (a merge
//! only adds files, so it never conflicts), folds what arrived into the database in one
//! transaction (`Store::sync_fold`), and pushes, fetching and merging again while another
//! machine pushed first. Git is the person's own command (`git.rs`).

mod admission;
pub(crate) mod folder;
mod folder_key;
pub(crate) mod git;
mod pack_files;
mod packs;
#[cfg(test)]
mod replicas;
mod roster;
mod signing;
mod teams;

use std::path::{Path, PathBuf};

use anyhow::Context;
use pinloom_store::{ReceiptRef, Store, SyncFolded, TurnReceipt};
use serde_json::Value;

use crate::base::pinloom::Pinloom;
use crate::base::receipts::{ReceiptSource, admit_receipt, receipt_references};
use crate::base::words::plural;
use crate::error::{ApiError, ErrorCode};
use crate::json::{SyncReport, SyncStatus};
use crate::runtime::{blocking, now_ms};
use folder::{Arrived, ArrivedPack};
use folder_key::Unlock;
use git::{Git, Pushed};
use packs::{PackLine, Seal};
use roster::Standing;
use signing::{DeviceKey, Signers, Writer};

/// The name of the remote a person's own machines sync through.
pub const OWN_REMOTE: &str = "origin";

/// How many times a sync fetches, merges and pushes again while other machines keep pushing
/// first, before it gives up for now.
const PUSH_ATTEMPTS: usize = 5;

/// The most lines a report lists of one kind (the rest are counted).
const LISTED: usize = 10;

/// The folder a database syncs through a target: beside the database, one per target.
pub(in crate::sync) fn sync_folder(database: &Path, target: &str) -> PathBuf {
    let stem = database.file_stem().map(|stem| stem.to_string_lossy().into_owned());
    database
        .with_file_name(format!("{}-sync", stem.unwrap_or_else(|| "pinloom".into())))
        .join(target)
}

impl Pinloom {
    /// Syncs with the database's own remote (`remote` the first time: a git URL or a path,
    /// remembered for this database) and with every team it has joined.
    pub async fn sync(&self, remote: Option<String>) -> anyhow::Result<SyncReport> {
        self.sync_unlocking(remote, None).await
    }

    /// [`Pinloom::sync`], with the passphrase of the person's own remote: a new remote is
    /// encrypted with it, an encrypted one opened with it on a machine that has not kept its key
    /// yet. A wrong one writes nothing.
    pub async fn sync_unlocking(
        &self,
        remote: Option<String>,
        passphrase: Option<String>,
    ) -> anyhow::Result<SyncReport> {
        // A blank remote (an empty field) is no remote: the one remembered is used.
        let remote = remote.filter(|remote| !remote.trim().is_empty());
        let unlock = self.unlock(passphrase);
        let store = self.store.clone();
        let report = blocking(move || {
            let mut reports = Vec::new();
            if remote.is_some() || store.sync_target(OWN_REMOTE)?.is_some() {
                reports.push(sync_target(&store, OWN_REMOTE, remote, false, &unlock)?);
            }
            for team in store.sync_targets()?.into_iter().filter(|target| target.shared_only) {
                let report = sync_target(&store, &team.name, None, true, &unlock)
                    .with_context(|| format!("could not sync with the team {}", team.name))?;
                reports.push(report);
            }
            if reports.is_empty() {
                return Err(no_remote());
            }
            Ok(combined(reports))
        })
        .await;
        // Whatever arrived changes paths and plans this process may have cached.
        self.snapshot_cache.forget();
        report.context("could not sync")
    }

    /// Creates the team `team` at `remote` (an empty repository), this machine its owner and
    /// member `your_name` (git's user name when absent); or joins a team made there before
    /// rosters, whose trees arrive, and what is added to them here goes back on each sync. A
    /// team with a roster is joined with an invitation ([`Pinloom::join_by_invitation`]).
    pub async fn join_team(
        &self,
        team: String,
        remote: String,
        your_name: Option<String>,
    ) -> anyhow::Result<SyncReport> {
        let name = team_target(&team)?;
        let store = self.store.clone();
        let unlock = self.unlock(None);
        let report = blocking(move || {
            teams::start_over_if_moved(&store, &name, &remote)?;
            teams::joining(&store, &name, || {
                teams::keep_member_name(&store, &name, your_name)?;
                sync_target(&store, &name, Some(remote), true, &unlock)
            })
        })
        .await;
        self.snapshot_cache.forget();
        report.with_context(|| format!("could not join the team {team}"))
    }

    /// Shares tree `tree_id` with the team `team` (joined before, or at `remote` now), marked as
    /// shared by `shared_by` (git's user.name when absent), and syncs the team: only shared
    /// trees are written to a team's remote.
    pub async fn share_tree(
        &self,
        tree_id: i64,
        team: String,
        remote: Option<String>,
        shared_by: Option<String>,
    ) -> anyhow::Result<SyncReport> {
        let name = team_target(&team)?;
        let store = self.store.clone();
        let unlock = self.unlock(None);
        let report = blocking(move || {
            let tree = store.tree(pinloom_store::TreeId(tree_id))?;
            if remote.is_none() && store.sync_target(&name)?.is_none() {
                return Err(crate::error::ApiError::invalid_input(format!(
                    "this database has not joined the team {team} yet: give its remote once with --remote"
                ))
                .into());
            }
            if let Some(remote) = &remote {
                teams::start_over_if_moved(&store, &name, remote)?;
            }
            teams::joining(&store, &name, || {
                // The name it is shared as is the one this machine goes by in the team, the
                // first time (a new team's roster names its owner so).
                if store.sync_team_state(&name, "name")?.is_none() {
                    teams::keep_member_name(&store, &name, shared_by.clone())?;
                }
                let by = match shared_by.filter(|by| !by.trim().is_empty()) {
                    Some(by) => by,
                    None => member_name(&store, &name)?,
                };
                store.share_tree(&name, &tree.global_id, by.trim(), now_ms())?;
                sync_target(&store, &name, remote, true, &unlock)
            })
        })
        .await;
        self.snapshot_cache.forget();
        report.context("could not share the tree")
    }

    fn unlock(&self, passphrase: Option<String>) -> Unlock {
        Unlock {
            keyring: self.keyring.clone(),
            passphrase: passphrase
                .filter(|passphrase| !passphrase.is_empty())
                .map(age::secrecy::SecretString::from),
        }
    }

    /// The git sync would run, as it names itself; `None` when this machine has none (a sync
    /// then fails saying so).
    pub async fn git_version(&self) -> Option<String> {
        crate::runtime::blocking(|| Ok(git::version())).await.ok().flatten()
    }

    /// Where this database syncs, whether on its own, what the last sync did and what waits.
    pub async fn sync_status(&self) -> anyhow::Result<SyncStatus> {
        self.read("could not read the sync settings", |store| {
            let target = store.sync_target(OWN_REMOTE)?;
            let (waiting_records, waiting_changes) = store.sync_waiting(OWN_REMOTE)?;
            let targets = store.sync_targets()?;
            let last_of = |target: &pinloom_store::SyncTarget| {
                target
                    .last_result_json
                    .as_deref()
                    .and_then(|json| serde_json::from_str::<SyncReport>(json).ok())
            };
            // The own remote's last sync; without one, the latest of a team's.
            let last = match &target {
                Some(own) => last_of(own),
                None => targets.iter().filter_map(last_of).max_by_key(|report| report.at_ms),
            };
            Ok(SyncStatus {
                remote: target.as_ref().map(|target| target.remote.clone()),
                automatic: store.sync_automatic()?,
                profiles: store.sync_profiles()?,
                last,
                waiting_records,
                waiting_changes,
                teams: u32::try_from(targets.iter().filter(|target| target.shared_only).count())
                    .unwrap_or(u32::MAX),
                encrypted: store.sync_sealed(OWN_REMOTE)?,
            })
        })
        .await
    }

    /// Chooses whether model profiles and prices go to the person's own remote too (never to a
    /// team's, never a key).
    pub async fn set_sync_profiles(&self, on: bool) -> anyhow::Result<SyncStatus> {
        self.write("could not change the sync settings", move |store| {
            Ok(store.set_sync_profiles(on)?)
        })
        .await?;
        self.sync_status().await
    }

    /// Turns syncing after each reply and every few minutes on or off.
    pub async fn set_sync_automatic(&self, on: bool) -> anyhow::Result<SyncStatus> {
        self.write("could not change the sync settings", move |store| {
            Ok(store.set_sync_automatic(on)?)
        })
        .await?;
        self.sync_status().await
    }
}

/// One whole sync with target `name`.
pub(in crate::sync) fn sync_target(
    store: &Store,
    name: &str,
    remote: Option<String>,
    shared_only: bool,
    unlock: &Unlock,
) -> anyhow::Result<SyncReport> {
    sync_target_uncoded(store, name, remote, shared_only, unlock).map_err(coded)
}

/// A failure of git or of the sync folder marked as a sync failure, so front ends show it as one:
/// the error's own file names no room, so the room says which failures are its own. What a
/// failure says is kept whole; one whose first known cause is something else is left as it is.
fn coded(error: anyhow::Error) -> anyhow::Error {
    let first_known = error.chain().find(|cause| {
        cause.is::<ApiError>()
            || cause.is::<pinloom_store::StoreError>()
            || cause.is::<git::GitError>()
            || cause.is::<folder::FolderError>()
            || cause.is::<folder_key::KeyError>()
    });
    match first_known {
        Some(cause)
            if cause.is::<git::GitError>()
                || cause.is::<folder::FolderError>()
                || cause.is::<folder_key::KeyError>() =>
        {
            anyhow::Error::new(ApiError {
                code: ErrorCode::SyncFailed,
                message: format!("{error:#}"),
            })
        }
        _ => error,
    }
}

fn sync_target_uncoded(
    store: &Store,
    name: &str,
    remote: Option<String>,
    shared_only: bool,
    unlock: &Unlock,
) -> anyhow::Result<SyncReport> {
    // A team's folder is not sealed with the person's passphrase (its members have none): the
    // passphrase given for the own remote is not this sync's.
    let for_team;
    let unlock = if shared_only {
        for_team = Unlock { keyring: unlock.keyring.clone(), passphrase: None };
        &for_team
    } else {
        unlock
    };
    let (target, moved) = target_of(store, name, remote, shared_only)?;
    let folder = sync_folder(store.path(), name);
    let _running = SyncLock::take(&folder)?;
    // Another remote starts from an empty folder: the old one's history (plain text, perhaps)
    // never goes to it. Everything here is sent again (the database forgot what it held).
    if moved {
        remove_folder(&folder)?;
    }
    let git = Git::new(&folder);
    git.prepare(&target.remote)?;
    let writer = Writer { device: store.sync_device()?, key: DeviceKey::of(store)? };
    let mut tally = Tally::default();
    let mut own_seal = None;
    for _ in 0..PUSH_ATTEMPTS {
        // Files an interrupted sync wrote and did not commit are this machine's own (no other
        // file has their names), so the merge passes them by and this sync's commit takes them.
        if git.fetch()? {
            git.merge()?;
        }
        remove_links(&git, &folder, &mut tally)?;
        let format = folder::check_format(&folder, unlock.passphrase.is_some())?;
        let side = if shared_only {
            match team_side(store, name, &folder, &writer, format, unlock, &mut tally)? {
                TeamTurn::Write(side) => *side,
                TeamTurn::Asked if push_request(&git, &mut tally)? => {
                    return finish(store, name, &target.remote, tally);
                }
                TeamTurn::Asked => continue,
                TeamTurn::Removed => return finish(store, name, &target.remote, tally),
            }
        } else {
            let seal = own_seal_of(store, name, &folder, format, unlock, &writer, &mut own_seal)?;
            tally.admission_notes.extend(seal.1);
            Side { seal: seal.0, signers: Signers::of(store, name, &writer)?, roster: None }
        };
        let Side { seal, mut signers, roster } = side;
        let reading = Reading {
            store,
            name,
            remote: &target.remote,
            folder: &folder,
            seal: &seal,
            old_layout: format.version < folder::FORMAT_VERSION && matches!(seal, Seal::Plain),
            roster: roster.as_ref(),
        };
        // A team's folder is read first: what its members wrote there is theirs, and a thing
        // that reached this machine another way (the person's other machine) is not sent again
        // as this machine's.
        let mut packs = Vec::new();
        if shared_only {
            packs = reading.receive(&store.sync_known(name)?, &mut signers, &mut tally)?;
        }
        let mut known = store.sync_known(name)?;
        let (written, message) =
            send(store, name, &folder, &writer, &seal, roster.as_ref(), &known, &mut tally)?;
        if !shared_only {
            known.extend(written.iter().cloned());
            packs = reading.receive(&known, &mut signers, &mut tally)?;
        }
        packs.extend(rewrite_folder(store, name, &folder, &writer, &seal, format, &mut tally)?);
        let known = store.sync_known(name)?;
        let done: Vec<String> =
            packs.iter().filter_map(|pack| pack.done(&known)).flatten().collect();
        store.mark_sync_known(name, &done)?;
        tally.committed |= git.commit(&message)?;
        // In a commit now: a crash before the push leaves the push to the next sync.
        store.mark_sync_known(name, &written)?;
        match git.push()? {
            Pushed::Yes => {
                tally.pushed = true;
                return finish(store, name, &target.remote, tally);
            }
            Pushed::NothingNew => return finish(store, name, &target.remote, tally),
            Pushed::Refused => {}
        }
    }
    anyhow::bail!(
        "the remote refused the push {PUSH_ATTEMPTS} times because other machines kept pushing first; everything is saved here and committed in the sync folder: sync again in a moment"
    )
}

/// A link is never part of the layout: what a remote committed as one is removed here (and from
/// the remote with this sync's commit) before anything is read or written.
fn remove_links(git: &Git, folder: &Path, tally: &mut Tally) -> anyhow::Result<()> {
    for link in git.forget_links()? {
        folder::remove_link(folder, &link)?;
        tally.links_removed.insert(link.display().to_string());
    }
    Ok(())
}

/// Commits and pushes this machine's request to join a team; false when another machine pushed
/// first (fetch, merge and try again).
fn push_request(git: &Git, tally: &mut Tally) -> anyhow::Result<bool> {
    tally.committed |= git.commit("Pinloom: a request to join the team")?;
    match git.push()? {
        Pushed::Refused => Ok(false),
        pushed => {
            tally.pushed = pushed == Pushed::Yes;
            Ok(true)
        }
    }
}

/// What one attempt reads a folder with.
struct Reading<'a> {
    store: &'a Store,
    name: &'a str,
    remote: &'a str,
    folder: &'a Path,
    seal: &'a Seal,
    /// A folder still of format 1, whose files are read.
    old_layout: bool,
    /// A team's roster, naming authors.
    roster: Option<&'a roster::Roster>,
}

impl Reading<'_> {
    /// Reads the packs not in `known` and folds what they hold; returns them, each to be marked
    /// as held once every line of it is.
    fn receive(
        &self,
        known: &std::collections::HashSet<String>,
        signers: &mut Signers,
        tally: &mut Tally,
    ) -> anyhow::Result<Vec<ArrivedPack>> {
        let (store, name) = (self.store, self.name);
        let mut arrived =
            pack_files::read_new(self.folder, known, self.seal, self.old_layout, signers)?;
        store.pin_sync_signers(name, &signers.new)?;
        let shares = std::mem::take(&mut arrived.shares);
        let packs = std::mem::take(&mut arrived.packs);
        let shared_only = name != OWN_REMOTE;
        tally.take(store, name, self.remote, arrived, shared_only, self.roster)?;
        if shared_only {
            // A team's folder has no say in what is shared with it: its shares are passed by.
            let ids: Vec<String> = shares.into_iter().map(|share| share.id).collect();
            store.mark_sync_known(name, &ids)?;
        } else {
            take_shares(store, name, shares)?;
        }
        Ok(packs)
    }
}

/// How one attempt writes to and reads from a folder.
struct Side {
    /// What packs are encrypted to and opened with.
    seal: Seal,
    /// Whose packs are read, under which keys.
    signers: Signers,
    /// A team's roster: it names authors, and whether a member was admitted since this machine
    /// last wrote.
    roster: Option<roster::Roster>,
}

/// What a team's folder lets this machine do now.
enum TeamTurn {
    /// Write and read, as a member (or in a team made before rosters).
    Write(Box<Side>),
    /// Asked to join: the request goes to the remote, nothing else.
    Asked,
    /// Removed by the team's owner, or not admitted: nothing goes to the team or comes from it
    /// (the report says so).
    Removed,
}

/// The person's own remote's seal: opened once per sync (its passphrase's scrypt is paid once).
/// Returns it and the notes its opening made.
fn own_seal_of(
    store: &Store,
    name: &str,
    folder: &Path,
    format: folder::Format,
    unlock: &Unlock,
    writer: &Writer,
    opened: &mut Option<Seal>,
) -> anyhow::Result<(Seal, Vec<String>)> {
    if let Some(seal) = opened {
        return Ok((seal.clone(), Vec::new()));
    }
    let entry = format!("sync-folder-key-{}-{name}", writer.device);
    let was_sealed = store.sync_sealed(name)?;
    let (seal, notes) = folder_key::seal_of(folder, format, was_sealed, unlock, &entry)?;
    if matches!(seal, Seal::Age { .. }) && !was_sealed {
        store.set_sync_sealed(name)?;
    }
    *opened = Some(seal.clone());
    Ok((seal, notes))
}

/// Where this machine stands in team `name`'s folder (`roster.rs`), and how it writes and reads
/// there: a member encrypts to the roster's members and reads only their packs.
fn team_side(
    store: &Store,
    name: &str,
    folder: &Path,
    writer: &Writer,
    format: folder::Format,
    unlock: &Unlock,
    tally: &mut Tally,
) -> anyhow::Result<TeamTurn> {
    let identity = roster::member_key(store)?;
    let me = roster::me(writer, &identity, &member_name(store, name)?);
    let (standing, notes) =
        roster::standing(store, name, folder, &me, &identity, format.new, now_ms())?;
    tally.note(notes);
    let team = name.strip_prefix("team-").unwrap_or(name);
    match standing {
        Standing::Open => {
            let entry = format!("sync-folder-key-{}-{name}", writer.device);
            let was_sealed = store.sync_sealed(name)?;
            let (seal, notes) = folder_key::seal_of(folder, format, was_sealed, unlock, &entry)?;
            tally.note(notes);
            let mut signers = Signers::of(store, name, writer)?;
            signers.authored = true;
            Ok(TeamTurn::Write(Box::new(Side { seal, signers, roster: None })))
        }
        Standing::Member(roster) => {
            let seal = Seal::Age { identity: Box::new(identity), recipients: roster.recipients() };
            let signers = roster.signers();
            Ok(TeamTurn::Write(Box::new(Side { seal, signers, roster: Some(roster) })))
        }
        Standing::Asked => {
            tally.headline = Some(format!(
                "Asked to join the team {team}: once its owner's Pinloom has synced, sync again to receive its trees."
            ));
            Ok(TeamTurn::Asked)
        }
        Standing::NotAdmitted => {
            tally.headline = Some(format!(
                "The owner of the team {team} did not admit this machine (an invitation admits one device, within 14 days): nothing is sent to the team or read from it. Ask them for a new invitation and join with it, or leave the team."
            ));
            Ok(TeamTurn::Removed)
        }
        Standing::Removed(roster) => {
            let owner = roster.name_of(&roster.owner).unwrap_or("its owner").to_owned();
            tally.headline = Some(format!(
                "The team's owner ({}) removed this machine from the team {team}: nothing more is sent to it or read from it. Leave the team (Settings → Sync → Teams) to stop syncing it; the trees that came through it stay here.",
                roster::shown(&owner)
            ));
            Ok(TeamTurn::Removed)
        }
    }
}

/// The name this machine's member goes by in team `name`: as given when joining, else git's
/// user.name, else the system's user name.
fn member_name(store: &Store, name: &str) -> anyhow::Result<String> {
    Ok(store.sync_team_state(name, "name")?.unwrap_or_else(default_member_name))
}

fn default_member_name() -> String {
    git::configured_name()
        .or_else(|| std::env::var("USER").ok().or_else(|| std::env::var("USERNAME").ok()))
        .map(|name| roster::shown(&name))
        .unwrap_or_else(|| "someone".into())
}

/// The target `name`, at `remote` when given (remembered); whether its remote changed.
fn target_of(
    store: &Store,
    name: &str,
    remote: Option<String>,
    shared_only: bool,
) -> anyhow::Result<(pinloom_store::SyncTarget, bool)> {
    let before = store.sync_target(name)?;
    let target = match (remote, before.clone()) {
        (Some(remote), _) => store.set_sync_target(name, remote.trim(), shared_only, now_ms())?,
        (None, Some(target)) => target,
        (None, None) => return Err(no_remote()),
    };
    let moved = before.is_some_and(|before| before.remote != target.remote);
    Ok((target, moved))
}

/// Removes a sync folder (its remote changed, or its team was left); one not there is fine.
fn remove_folder(folder: &Path) -> anyhow::Result<()> {
    match std::fs::remove_dir_all(folder) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error).with_context(|| format!("could not empty {}", folder.display())),
    }
}

/// Writes what the folder of target `name` lacks as packs of `device`; returns the ids written
/// (the lines' and the packs') and the commit's message.
///
/// In a team with a roster, a member admitted since this machine last wrote gets everything of
/// this person's in the shared trees written again, encrypted to them too.
#[allow(clippy::too_many_arguments)] // one step of the sync loop, each input named
fn send(
    store: &Store,
    name: &str,
    folder: &std::path::Path,
    writer: &Writer,
    seal: &Seal,
    roster: Option<&roster::Roster>,
    known: &std::collections::HashSet<String>,
    tally: &mut Tally,
) -> anyhow::Result<(Vec<String>, String)> {
    let shared_only = name != OWN_REMOTE;
    let members = roster.map(|roster| {
        let mut devices: Vec<&str> =
            roster.members.iter().map(|member| member.device.as_str()).collect();
        devices.sort_unstable();
        devices.join(",")
    });
    let sent_to = store.sync_team_state(name, "sent to")?;
    let again = match (&members, &sent_to) {
        (Some(members), Some(sent)) => {
            members.split(',').any(|member| !sent.split(',').any(|was| was == member))
        }
        _ => false,
    };
    let outgoing = if again {
        store.sync_outgoing_again(name, &turn_receipt)?
    } else {
        store.sync_outgoing(name, &turn_receipt)?
    };
    tally.sent_records += outgoing.records.len();
    tally.sent_changes += outgoing.ops.len();
    let message = format!(
        "Pinloom sync from {}: {} records, {} changes",
        writer.device,
        outgoing.records.len(),
        outgoing.ops.len()
    );
    let mut lines: Vec<PackLine> = outgoing.records.into_iter().map(PackLine::Record).collect();
    lines.extend(outgoing.ops.into_iter().map(PackLine::Op));
    if !shared_only {
        let shares = share_files(store)?.into_iter().filter(|share| !known.contains(&share.id));
        lines.extend(shares.map(PackLine::Share));
    }
    let written = pack_files::write_packs(folder, writer, &lines, seal, now_ms())?
        .into_iter()
        .flat_map(|pack| pack.lines.into_iter().chain([pack.id]))
        .collect();
    if members != sent_to {
        store.set_sync_team_state(name, "sent to", members.as_deref())?;
    }
    Ok((written, message))
}

/// What a sync rewrites of the folder once it has read it: an earlier Pinloom's files turned into
/// packs (a plain folder's only: in a sealed one they are no member's), this device's small packs
/// folded together. Returns the packs written, each held here once all its lines are.
fn rewrite_folder(
    store: &Store,
    name: &str,
    folder: &std::path::Path,
    writer: &Writer,
    seal: &Seal,
    format: folder::Format,
    tally: &mut Tally,
) -> anyhow::Result<Vec<ArrivedPack>> {
    let mut written = Vec::new();
    if matches!(seal, Seal::Plain) && format.version < folder::FORMAT_VERSION {
        let (converted, files, vouched) =
            pack_files::convert_old_layout(folder, writer, seal, now_ms())?;
        // The changes re-signed here are the files' own, folded already: held.
        store.mark_sync_known(name, &vouched)?;
        written.extend(converted);
        tally.converted += files;
        folder::write_format(folder, false)?;
    }
    written.extend(pack_files::compact_own(folder, writer, seal, now_ms())?);
    Ok(written)
}

/// The trees shared with teams here, as the person's own remote carries them.
fn share_files(store: &Store) -> anyhow::Result<Vec<folder::ShareFile>> {
    Ok(store
        .sync_shares()?
        .into_iter()
        .map(|share| folder::ShareFile {
            id: folder::ShareFile::id_of(&share.tree, &share.target),
            team: share.target,
            remote: share.remote,
            tree: share.tree,
            shared_by: share.shared_by,
            at_ms: share.at_ms,
        })
        .collect())
}

/// Takes in the shares the person's own remote brought (their other machines' own): each lets
/// the team's folder speak for the tree here too, under the team's name and under any team
/// joined here at the same remote. One whose tree is not here yet waits for it.
fn take_shares(store: &Store, name: &str, shares: Vec<folder::ShareFile>) -> anyhow::Result<()> {
    let targets = store.sync_targets()?;
    let mut taken: Vec<String> = Vec::new();
    for share in shares {
        let made_here = share.team.strip_prefix("team-").and_then(|team| team_target(team).ok());
        if made_here.as_deref() != Some(share.team.as_str()) {
            // Not a team's name as this build makes them: nothing to share with.
            taken.push(share.id);
            continue;
        }
        if store.tree_by_global_id(&share.tree)?.is_none() {
            continue;
        }
        let same_remote = targets.iter().filter(|target| {
            target.shared_only
                && share.remote.as_deref().is_some_and(|remote| remote == target.remote)
        });
        let mut teams: Vec<&str> = same_remote.map(|target| target.name.as_str()).collect();
        teams.push(&share.team);
        for team in teams {
            store.share_tree(team, &share.tree, &share.shared_by, share.at_ms)?;
        }
        taken.push(share.id);
    }
    store.mark_sync_known(name, &taken)?;
    Ok(())
}

/// A receipt with the messages and threads it names turned by `turn` (row numbers and global ids,
/// one way or the other); one that names something not there names nothing.
fn turn_receipt(receipt: &Value, turn: &dyn Fn(ReceiptRef, &Value) -> Value) -> Value {
    receipt_references(receipt, |source, id| {
        let kind = match source {
            ReceiptSource::Node => ReceiptRef::Message,
            ReceiptSource::Pin => ReceiptRef::Pin,
        };
        Some(turn(kind, id)).filter(|turned| !turned.is_null())
    })
}

/// A receipt from a team's folder: admitted as a receipt from a file is (marked as imported, its
/// words dropped, its verdict made again from its numbers), then turned. `null` when it is not a
/// receipt at all, which the fold refuses.
fn admit_team_receipt(receipt: &Value, turn: &dyn Fn(ReceiptRef, &Value) -> Value) -> Value {
    admit_receipt(receipt).map_or(Value::Null, |admitted| turn_receipt(&admitted, turn))
}

fn no_remote() -> anyhow::Error {
    crate::error::ApiError::invalid_input(
        "this database has no sync remote yet: give one once with `pinloom sync --remote <git URL or path>` (or in Settings → Sync); it is remembered",
    )
    .into()
}

/// The target a team's remote is kept under: `team-` and its name, which names a folder.
fn team_target(team: &str) -> anyhow::Result<String> {
    let team = team.trim();
    let fits = !team.is_empty()
        && team.len() <= 40
        && team.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !fits {
        return Err(crate::error::ApiError::invalid_input(format!(
            "{team:?} cannot name a team: use up to 40 letters, digits, '-' or '_'"
        ))
        .into());
    }
    Ok(format!("team-{team}"))
}

/// Several targets' reports as one: counts added up, each team's notes and words after the own
/// remote's.
fn combined(reports: Vec<SyncReport>) -> SyncReport {
    let mut all = reports.into_iter();
    let Some(mut first) = all.next() else {
        return SyncReport::default();
    };
    for report in all {
        first.sent_records += report.sent_records;
        first.sent_changes += report.sent_changes;
        first.received_records += report.received_records;
        first.received_changes += report.received_changes;
        first.trees_changed.extend(report.trees_changed);
        first.committed |= report.committed;
        first.pushed |= report.pushed;
        first.notes.extend(report.notes);
        first.text.push('\n');
        first.text.push_str(&report.text);
    }
    first.trees_changed.sort_unstable();
    first.trees_changed.dedup();
    first
}

/// One sync of a folder at a time (the window's own and a `pinloom sync` in a terminal would
/// otherwise meet in git's index): the system's lock on a file beside the folder, held by this
/// process's open handle. The system lets it go when the handle closes, which it does however
/// the process ends (an error, a panic, a kill), so no sync is ever blocked by a dead one.
struct SyncLock {
    _held: std::fs::File,
}

impl SyncLock {
    fn take(folder: &Path) -> anyhow::Result<SyncLock> {
        let path = folder.with_extension("lock");
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("could not create {}", parent.display()))?;
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("could not open {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => Ok(SyncLock { _held: file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(crate::error::ApiError::invalid_input(
                "another sync of this database is running (the window's, or a `pinloom sync`); try again when it ends",
            )
            .into()),
            Err(std::fs::TryLockError::Error(error)) => {
                Err(error).with_context(|| format!("could not lock {}", path.display()))
            }
        }
    }
}

/// What one sync did, over its attempts.
#[derive(Debug, Default)]
struct Tally {
    sent_records: usize,
    sent_changes: usize,
    folded: Vec<SyncFolded>,
    damaged: Vec<(String, String)>,
    refused: Vec<(String, String)>,
    admission_notes: Vec<String>,
    unknown: Vec<String>,
    not_followed: Vec<String>,
    links_removed: std::collections::BTreeSet<String>,
    left_for_later: usize,
    /// Files of an earlier Pinloom's layout turned into packs.
    converted: usize,
    /// A team's packs written before this machine was a member.
    before_joining: usize,
    /// What the report's first line says instead of its counts (asked to join, removed).
    headline: Option<String>,
    committed: bool,
    pushed: bool,
}

impl Tally {
    fn take(
        &mut self,
        store: &Store,
        name: &str,
        remote: &str,
        arrived: Arrived,
        from_team: bool,
        roster: Option<&roster::Roster>,
    ) -> anyhow::Result<()> {
        let Arrived {
            records,
            ops,
            damaged,
            unknown,
            not_followed,
            left_for_later,
            authors,
            before_joining,
            ..
        } = arrived;
        let admitted = admission::admit(store, remote, records, ops, from_team)?;
        // A team's receipts are other people's files: kept as an imported file's are.
        let turn: TurnReceipt<'_> = if from_team { &admit_team_receipt } else { &turn_receipt };
        let authors = named(authors, roster);
        let folded =
            store.sync_fold_by(name, admitted.records, admitted.ops, &authors, turn, now_ms())?;
        // A damaged or refused file will not read better later: it is reported once and left.
        let ids: Vec<String> = damaged
            .iter()
            .chain(&admitted.refused)
            .map(|(id, _)| id.clone())
            .chain(before_joining.iter().cloned())
            .collect();
        store.mark_sync_known(name, &ids)?;
        self.before_joining += before_joining.len();
        self.damaged.extend(damaged);
        self.refused.extend(admitted.refused);
        for note in admitted.notes {
            if !self.admission_notes.contains(&note) {
                self.admission_notes.push(note);
            }
        }
        self.unknown = unknown;
        self.not_followed = not_followed;
        self.left_for_later = left_for_later;
        self.folded.push(folded);
        Ok(())
    }

    /// Notes for the report, each said once.
    fn note(&mut self, notes: Vec<String>) {
        for note in notes {
            if !self.admission_notes.contains(&note) {
                self.admission_notes.push(note);
            }
        }
    }
}

/// The authors of what a team's folder brought, named as its roster names their devices.
fn named(
    authors: std::collections::HashMap<String, String>,
    roster: Option<&roster::Roster>,
) -> pinloom_store::SyncAuthors {
    authors
        .into_iter()
        .map(|(id, device)| {
            let name = roster
                .and_then(|roster| roster.name_of(&device))
                .map_or_else(|| "a member of the team".to_owned(), roster::shown);
            (id, pinloom_store::SyncAuthor { device, name })
        })
        .collect()
}

fn finish(store: &Store, name: &str, remote: &str, tally: Tally) -> anyhow::Result<SyncReport> {
    let mut notes = Vec::new();
    let (mut received_records, mut received_changes) = (0, 0);
    let mut trees = std::collections::BTreeSet::new();
    for folded in &tally.folded {
        received_records += folded.records;
        received_changes += folded.ops;
        trees.extend(folded.trees_changed.iter().cloned());
        describe(folded, &mut notes);
    }
    list(
        &tally.damaged,
        |(_, why)| format!("Skipped a damaged file: {why}."),
        "damaged files",
        &mut notes,
    );
    list(&tally.refused, |(id, why)| format!("Skipped {id}: {why}."), "refused", &mut notes);
    notes.extend(tally.admission_notes.iter().cloned());
    if !tally.links_removed.is_empty() {
        let shown: Vec<String> =
            tally.links_removed.iter().take(3).map(|path| folder::shown(Path::new(path))).collect();
        notes.push(format!(
            "The remote held {} symbolic links ({}{}): a sync folder never holds one, so none was followed, and this sync removed them.",
            tally.links_removed.len(),
            shown.join(", "),
            if tally.links_removed.len() > 3 { ", …" } else { "" }
        ));
    }
    if !tally.not_followed.is_empty() {
        notes.push(format!(
            "The folder holds {} symbolic links or other things where its layout has folders ({}): a sync folder never holds them, and they were not followed.",
            tally.not_followed.len(),
            tally.not_followed.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    if tally.left_for_later > 0 {
        notes.push(format!(
            "The remote holds more new files than one sync reads ({} files or {} MB); {} were left for the next sync, which goes on from there.",
            folder::MAX_FILES_PER_SYNC,
            folder::MAX_BYTES_PER_SYNC / (1024 * 1024),
            tally.left_for_later
        ));
    }
    if tally.converted > 0 {
        notes.push(format!(
            "The remote held {} files in the layout of an earlier Pinloom: they are now in packs, which every Pinloom from this one on reads (an earlier one asks to be updated).",
            tally.converted
        ));
    }
    if tally.before_joining > 0 {
        let (packs, were) = if tally.before_joining == 1 {
            ("One of the team's packs".to_owned(), "was")
        } else {
            (format!("{} of the team's packs", tally.before_joining), "were")
        };
        notes.push(format!(
            "{packs} {were} written before this machine was a member, encrypted to the members then: a member reads from the moment they are added (each member's Pinloom writes its part of the shared trees again for a newcomer)."
        ));
    }
    if !tally.unknown.is_empty() {
        notes.push(format!(
            "{} files are of a kind this Pinloom does not know (a newer Pinloom wrote them); they are left in the folder for an updated Pinloom to read.",
            tally.unknown.len()
        ));
    }
    let mut tree_ids = Vec::new();
    for gid in &trees {
        if let Some(id) = store.tree_by_global_id(gid)? {
            tree_ids.push(id.0);
        }
    }
    let mut report = SyncReport {
        remote: remote.to_owned(),
        sent_records: tally.sent_records,
        sent_changes: tally.sent_changes,
        received_records,
        received_changes,
        trees_changed: tree_ids,
        committed: tally.committed,
        pushed: tally.pushed,
        notes,
        at_ms: now_ms(),
        text: String::new(),
    };
    report.text = report_text(&report);
    if let Some(headline) = tally.headline {
        // What this sync was (a request to join, a removal) says more than its counts.
        let rest = report.text.split_once('\n').map_or("", |(_, rest)| rest);
        report.text = if rest.is_empty() { headline } else { format!("{headline}\n{rest}") };
    }
    store.set_sync_result(name, &serde_json::to_string(&report)?)?;
    Ok(report)
}

/// Says what a fold met that a person should know: waits, refusals and conflicts.
fn describe(folded: &SyncFolded, notes: &mut Vec<String>) {
    if !folded.waiting.is_empty() {
        notes.push(format!(
            "{} records or changes wait for what they hang from, which is not in the remote yet; the next sync takes them in.",
            folded.waiting.len()
        ));
    }
    if !folded.ahead.is_empty() {
        notes.push(format!(
            "{} changes are stamped more than a day ahead of this machine's clock: they were not taken in (a machine whose clock is wrong, or a remote that wants its changes to win for good), and wait until that time.",
            folded.ahead.len()
        ));
    }
    list(&folded.skipped, |(id, why)| format!("Skipped {id}: {why}."), "skipped", notes);
    if !folded.under_deleted.is_empty() {
        notes.push(format!(
            "{} messages from another machine continue a branch deleted here: they are in the trash with it, and restoring the branch brings them back.",
            folded.under_deleted.len()
        ));
    }
    if !folded.into_closed.is_empty() {
        notes.push(format!(
            "{} messages from another machine continue a thread closed here; the thread keeps its result and shows them.",
            folded.into_closed.len()
        ));
    }
    list(
        &folded.moves_undone,
        |(moved, under)| {
            format!(
                "Two machines moved branches under each other: the later move, of {moved} under {under}, would have made a loop, so the earlier move stands on every machine; move the branch again to choose otherwise."
            )
        },
        "moves undone",
        notes,
    );
    list(
        &folded.changed_on_both,
        |(_, field, kept)| {
            format!(
                "The {field} was changed here and on another machine: the later change, {kept}, is kept; the other stays in the history."
            )
        },
        "changed on both sides",
        notes,
    );
}

/// One note per item, the first [`LISTED`] of them, then how many more there were.
fn list<T>(items: &[T], say: impl Fn(&T) -> String, more: &str, notes: &mut Vec<String>) {
    notes.extend(items.iter().take(LISTED).map(say));
    if items.len() > LISTED {
        notes.push(format!("…and {} more {more}.", items.len() - LISTED));
    }
}

/// The report in words, as `pinloom sync` prints it.
fn report_text(report: &SyncReport) -> String {
    let nothing = report.sent_records
        + report.sent_changes
        + report.received_records
        + report.received_changes
        == 0;
    let mut text = if nothing && report.pushed {
        format!(
            "Synced with {}: pushed what an interrupted sync had committed; nothing else new.",
            report.remote
        )
    } else if nothing {
        format!("Synced with {}: nothing new on either side.", report.remote)
    } else {
        format!(
            "Synced with {}: sent {} and {}; received {} and {}.",
            report.remote,
            plural(report.sent_records, "record"),
            plural(report.sent_changes, "change"),
            plural(report.received_records, "record"),
            plural(report.received_changes, "change"),
        )
    };
    for note in &report.notes {
        text.push('\n');
        text.push_str(note);
    }
    text
}

/// One fuzz case for a pack as a folder holds it: `data` read as the pack named `fuzz-pack`, in a
/// plain folder (its first byte even) or a sealed one (odd; the rest read as the pack). Reading
/// may refuse; it may not panic, nor hold more lines than it states.
#[cfg(feature = "test-seams")]
pub fn pack_fuzz_case(data: &[u8]) -> Option<usize> {
    static FOLDER_KEY: std::sync::OnceLock<age::x25519::Identity> = std::sync::OnceLock::new();
    let (first, rest) = data.split_first()?;
    let seal = if first % 2 == 0 {
        Seal::Plain
    } else {
        Seal::folder_key(FOLDER_KEY.get_or_init(age::x25519::Identity::generate).clone())
    };
    let pack = packs::decode("fuzz-pack", rest, &seal).ok()?;
    assert_eq!(pack.lines.len() as u64, pack.header.lines, "a pack holds what it states");
    Some(pack.lines.len())
}

/// One fuzz case for what a sync folder brings: `data` as lines of records and operations (each
/// line read as a record, else as an operation), admitted and folded into a fresh database in
/// memory that holds a private tree, from the folder of a team (`data` starting with `t`) or of
/// the person's own remote. Neither may panic; a team's folder may not change the private tree;
/// whatever was written must read back as records.
#[cfg(feature = "test-seams")]
pub fn sync_fuzz_case(data: &[u8]) -> Option<SyncFolded> {
    let text = std::str::from_utf8(data).ok()?;
    let from_team = text.starts_with('t');
    let mut records = Vec::new();
    let mut ops = Vec::new();
    for line in text.lines() {
        if let Ok(record) = serde_json::from_str::<pinloom_store::SyncRecord>(line) {
            records.push(record);
        } else if let Ok(op) = serde_json::from_str::<pinloom_store::SyncOp>(line) {
            ops.push(op);
        }
    }
    let store = Store::open(Path::new(":memory:")).ok()?;
    let private = store.create_tree("Private", pinloom_store::TreeMode::Dialogue, 1).ok()?;
    let name = if from_team { "team-fuzz" } else { OWN_REMOTE };
    store.set_sync_target(name, "/fuzz.git", from_team, 1).ok()?;
    let before = store.tree(private.id).ok()?;
    let admitted = admission::admit(&store, "fuzz", records, ops, from_team).ok()?;
    let turn: TurnReceipt<'_> = if from_team { &admit_team_receipt } else { &turn_receipt };
    let folded = store.sync_fold(name, admitted.records, admitted.ops, turn, now_ms()).ok()?;
    if from_team {
        assert_eq!(store.tree(private.id).ok()?, before, "a team changed a private tree");
    }
    if let Err(error) = store.sync_dump(&turn_receipt) {
        panic!("what a sync wrote does not read back: {error}");
    }
    Some(folded)
}
