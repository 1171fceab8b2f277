//! A team's roster: who may write to its folder, under which keys, and whom its packs are
//! encrypted to. The team's owner (the device that made it) signs each version; every member's
//! machine holds the owner to the key its invitation named, reads the newest version it can
//! open, reads packs only from the devices it names, and encrypts what it writes to their
//! recipients. A member added later reads from then on; a member removed reads nothing written
//! after (their own packs read before the removal stay theirs, the rest are refused).
//!
//! In the folder, each file encrypted with age:
//!
//! ```text
//! team/roster/<version, 8 digits>-<owner device>.age    the roster, then its signature line
//! team/requests/<device>.age                            a request to join, to the owner only
//! ```
//!
//! A request carries the joining device's keys, its member's name and the invitation's code;
//! the owner's next sync admits it when the code is one it made, unused and fresh.
//!
//! A team folder made before rosters has none: it stays an open team (what any member's
//! device writes is read, its packs compressed, not encrypted), as it was.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use age::x25519;
use anyhow::Context;
use pinloom_store::Store;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::sync::folder::{self, Taken};
use crate::sync::folder_key;
use crate::sync::signing::{self, Signers, Writer};

const ROSTER_FOLDER: &str = "team/roster";
const REQUEST_FOLDER: &str = "team/requests";

/// The largest roster file read (a member is a few hundred bytes).
const MAX_ROSTER_BYTES: u64 = 1024 * 1024;

/// The largest request file read.
const MAX_REQUEST_BYTES: u64 = 16 * 1024;

/// The most roster versions or requests one sync opens.
const MAX_FILES: usize = 200;

/// How long an invitation's code admits whoever brings it first.
const INVITATION_LIFETIME_MS: i64 = 14 * 24 * 3600 * 1000;

/// One member: a device, the name its person gave, and its keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(in crate::sync) struct Member {
    pub(in crate::sync) device: String,
    pub(in crate::sync) name: String,
    /// The ed25519 key its packs are signed with, in hex.
    pub(in crate::sync) signer: String,
    /// The age X25519 recipient packs are encrypted to.
    pub(in crate::sync) recipient: String,
}

/// A device removed from the team.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(in crate::sync) struct Removed {
    pub(in crate::sync) device: String,
    pub(in crate::sync) name: String,
    pub(in crate::sync) signer: String,
    /// Its packs the owner had in the folder when removing it: written while it was a member.
    pub(in crate::sync) kept: Vec<String>,
}

/// One version of a team's roster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(in crate::sync) struct Roster {
    pub(in crate::sync) team: String,
    pub(in crate::sync) version: u64,
    /// The owner's device: a member, whose key signs every version.
    pub(in crate::sync) owner: String,
    pub(in crate::sync) members: Vec<Member>,
    #[serde(default)]
    pub(in crate::sync) removed: Vec<Removed>,
}

impl Roster {
    pub(in crate::sync) fn member(&self, device: &str) -> Option<&Member> {
        self.members.iter().find(|member| member.device == device)
    }

    /// The name the roster gives `device`, member or removed.
    pub(in crate::sync) fn name_of(&self, device: &str) -> Option<&str> {
        self.member(device).map(|member| member.name.as_str()).or_else(|| {
            self.removed.iter().find(|gone| gone.device == device).map(|gone| gone.name.as_str())
        })
    }

    /// Whom a pack is encrypted to: every member.
    pub(in crate::sync) fn recipients(&self) -> Vec<x25519::Recipient> {
        self.members.iter().filter_map(|member| member.recipient.parse().ok()).collect()
    }

    /// The keys packs are read under: its members', and its removed members' for the packs of
    /// theirs it keeps; no other device's.
    pub(in crate::sync) fn signers(&self) -> Signers {
        let mut known: std::collections::HashMap<String, String> = self
            .members
            .iter()
            .map(|member| (member.device.clone(), member.signer.clone()))
            .collect();
        let mut removed = std::collections::HashMap::new();
        for gone in &self.removed {
            known.entry(gone.device.clone()).or_insert_with(|| gone.signer.clone());
            removed.insert(gone.device.clone(), gone.kept.clone());
        }
        Signers { known, new: Vec::new(), removed: Some(removed), authored: true }
    }

    fn owner_key(&self) -> Option<&str> {
        self.member(&self.owner).map(|owner| owner.signer.as_str())
    }
}

/// A request to join, as the joining device writes it for the owner.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Request {
    team: String,
    member: Member,
    code: String,
}

/// This machine's standing in a team's folder.
pub(in crate::sync) enum Standing {
    /// A team made before rosters: any member's device is read, nothing is encrypted.
    Open,
    /// A member, under this roster.
    Member(Roster),
    /// Asked to join; the owner has not admitted this machine yet.
    Asked,
    /// Asked, and the owner's machine read the request without admitting this one (a code used
    /// already, or too old): a new invitation is needed.
    NotAdmitted,
    /// Removed by the owner (the newest roster that names it, as removed).
    Removed(Roster),
}

/// What an invitation names beside the team and its remote: the owner's key, the recipient a
/// request is encrypted to, and a code that admits one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::sync) struct Admission {
    pub(in crate::sync) owner: String,
    pub(in crate::sync) recipient: String,
    pub(in crate::sync) code: String,
}

/// The key this device reads what teams encrypt to it with, made on first use and kept in the
/// database beside its signing key (a copied database is the same member).
pub(in crate::sync) fn member_key(store: &Store) -> anyhow::Result<x25519::Identity> {
    use age::secrecy::ExposeSecret;
    if let Some(secret) = store.sync_member_key()?
        && let Ok(identity) = secret.parse::<x25519::Identity>()
    {
        return Ok(identity);
    }
    let identity = x25519::Identity::generate();
    store.set_sync_member_key(identity.to_string().expose_secret())?;
    Ok(identity)
}

/// This machine as a member of a team: its device, the name it goes by, its keys.
pub(in crate::sync) fn me(writer: &Writer, identity: &x25519::Identity, name: &str) -> Member {
    Member {
        device: writer.device.clone(),
        name: name.to_owned(),
        signer: writer.key.public(),
        recipient: identity.to_public().to_string(),
    }
}

/// Where a team and this machine stand, after the owner's part: on the owner's machine, a new
/// folder gets its first roster, and requests with a code of its own are admitted into a new
/// version. A joining machine writes its request once. `new_folder` for a folder just made.
/// Returns notes for the report.
pub(in crate::sync) fn standing(
    store: &Store,
    name: &str,
    folder: &Path,
    me: &Member,
    identity: &x25519::Identity,
    new_folder: bool,
    now_ms: i64,
) -> anyhow::Result<(Standing, Vec<String>)> {
    let mut notes = Vec::new();
    let team = name.strip_prefix("team-").unwrap_or(name);
    let pinned = store.sync_team_state(name, "owner")?;
    let newest = newest_roster(folder, team, identity, pinned.as_deref(), &mut notes)?;
    let Some(roster) = newest else {
        return match pinned {
            // Not admitted yet: the roster is there, encrypted to the members (without an
            // invitation, asking says to get one).
            _ if kept(store, name)?.is_none() && any_roster_file(folder) => {
                ask(store, name, folder, team, me).map(|standing| (standing, notes))
            }
            // A machine that expected a roster and finds none its owner signed.
            Some(_) => Err(ApiError::invalid_input(format!(
                "the remote holds no roster of the team {team} signed by its owner (removed, or the wrong remote): nothing was written; ask the team's owner to check it"
            ))
            .into()),
            None if new_folder || !has_packs(folder) => {
                let roster = Roster {
                    team: team.to_owned(),
                    version: 1,
                    owner: me.device.clone(),
                    members: vec![me.clone()],
                    removed: Vec::new(),
                };
                write_roster(folder, &roster, store)?;
                store.set_sync_team_state(name, "owner", Some(&me.signer))?;
                keep(store, name, &roster)?;
                Ok((Standing::Member(roster), notes))
            }
            None => Ok((Standing::Open, notes)),
        };
    };
    if pinned.is_none() {
        // Joined by its remote alone, before rosters: the roster's owner is taken as the team's.
        store.set_sync_team_state(name, "owner", roster.owner_key())?;
    }
    let roster = if roster.owner == me.device {
        admit_requests(store, name, folder, roster, identity, now_ms, &mut notes)?
    } else {
        roster
    };
    keep(store, name, &roster)?;
    if roster.member(&me.device).is_some() {
        store.set_sync_team_state(name, "asked", None)?;
        return Ok((Standing::Member(roster), notes));
    }
    if roster.removed.iter().any(|gone| gone.device == me.device) {
        return Ok((Standing::Removed(roster), notes));
    }
    Ok((ask(store, name, folder, team, me)?, notes))
}

/// The roster as last read here, for the window.
pub(in crate::sync) fn kept(store: &Store, name: &str) -> anyhow::Result<Option<Roster>> {
    Ok(store.sync_team_state(name, "roster")?.and_then(|json| serde_json::from_str(&json).ok()))
}

fn keep(store: &Store, name: &str, roster: &Roster) -> anyhow::Result<()> {
    store.set_sync_team_state(name, "roster", Some(&serde_json::to_string(roster)?))?;
    Ok(())
}

fn has_packs(folder: &Path) -> bool {
    std::fs::read_dir(folder.join("packs")).is_ok_and(|mut entries| entries.next().is_some())
}

fn any_roster_file(folder: &Path) -> bool {
    std::fs::read_dir(folder.join(ROSTER_FOLDER)).is_ok_and(|mut entries| entries.next().is_some())
}

/// Makes an invitation's admission on the owner's machine: a fresh code, kept until used.
pub(in crate::sync) fn invite(
    store: &Store,
    name: &str,
    writer: &Writer,
    identity: &x25519::Identity,
    now_ms: i64,
) -> anyhow::Result<Option<Admission>> {
    let Some(roster) = kept(store, name)? else {
        return Ok(None);
    };
    if roster.owner != writer.device {
        let owner = roster.name_of(&roster.owner).unwrap_or("its owner").to_owned();
        anyhow::bail!(ApiError::invalid_input(format!(
            "only the team's owner ({owner}) admits members: ask them for an invitation"
        )));
    }
    let code = random_code();
    store.set_sync_team_state(name, &format!("invitation {code}"), Some(&now_ms.to_string()))?;
    Ok(Some(Admission {
        owner: writer.key.public(),
        recipient: identity.to_public().to_string(),
        code,
    }))
}

/// Keeps what an invitation says on the joining machine: the owner its roster must be signed
/// by, and the request to write on the first sync.
pub(in crate::sync) fn accept(
    store: &Store,
    name: &str,
    admission: &Admission,
) -> anyhow::Result<()> {
    store.set_sync_team_state(name, "owner", Some(&admission.owner))?;
    store.set_sync_team_state(name, "owner recipient", Some(&admission.recipient))?;
    store.set_sync_team_state(name, "code", Some(&admission.code))?;
    // A new invitation is a new request.
    store.set_sync_team_state(name, "asked", None)?;
    Ok(())
}

/// Removes the member named `who` (their name or device) from the team: a new roster version
/// that keeps the packs of theirs the folder holds now. Owner only.
pub(in crate::sync) fn remove_member(
    store: &Store,
    name: &str,
    folder: &Path,
    writer: &Writer,
    who: &str,
) -> anyhow::Result<String> {
    let Some(mut roster) = kept(store, name)? else {
        anyhow::bail!(ApiError::invalid_input(
            "this team has no roster (it was made before Pinloom kept one): every member's device writes to it; make a new team to choose its members"
        ));
    };
    if roster.owner != writer.device {
        anyhow::bail!(ApiError::invalid_input("only the team's owner removes members"));
    }
    let matches: Vec<usize> = (0..roster.members.len())
        .filter(|&index| {
            let member = &roster.members[index];
            member.device == who || member.name.eq_ignore_ascii_case(who.trim())
        })
        .collect();
    let index = match matches.as_slice() {
        [index] => *index,
        [] => anyhow::bail!(ApiError::invalid_input(format!(
            "the team has no member {who:?}: `pinloom team list` names them"
        ))),
        _ => anyhow::bail!(ApiError::invalid_input(format!(
            "several members are called {who:?}: give the device id `pinloom team list` shows"
        ))),
    };
    if roster.members[index].device == roster.owner {
        anyhow::bail!(ApiError::invalid_input(
            "the owner cannot be removed from their own team; leave it instead"
        ));
    }
    let member = roster.members.remove(index);
    let kept_packs = pack_ids_of(folder, &member.device);
    roster.removed.push(Removed {
        device: member.device,
        name: member.name.clone(),
        signer: member.signer,
        kept: kept_packs,
    });
    roster.version += 1;
    write_roster(folder, &roster, store)?;
    keep(store, name, &roster)?;
    Ok(member.name)
}

fn pack_ids_of(folder: &Path, device: &str) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(folder.join("packs").join(device))
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".pack").map(str::to_owned)
        })
        .collect();
    ids.sort();
    ids
}

/// The newest roster of the team that this machine can open and that its owner signed.
fn newest_roster(
    folder: &Path,
    team: &str,
    identity: &x25519::Identity,
    pinned: Option<&str>,
    notes: &mut Vec<String>,
) -> anyhow::Result<Option<Roster>> {
    let mut newest: Option<Roster> = None;
    for (version, owner, file) in roster_files(folder)? {
        if newest.as_ref().is_some_and(|roster| roster.version >= version) {
            continue;
        }
        match read_roster(folder, &file, identity) {
            Ok(roster) => {
                let signed_by_owner = roster.owner_key().is_some_and(|key| {
                    pinned.is_none_or(|pinned| pinned == key) && roster.owner == owner
                });
                if roster.team == team && roster.version == version && signed_by_owner {
                    newest = Some(roster);
                } else {
                    notes.push(format!(
                        "{} is not a roster the team's owner signed; it was not read.",
                        folder::shown(&file)
                    ));
                }
            }
            // A newer version encrypted to others: this machine is not a member (yet, or
            // any more), which its standing says.
            Err(RosterError::NotForMe) => {}
            Err(RosterError::Unreadable(why)) => {
                notes.push(format!("{} was not read: {why}.", folder::shown(&file)));
            }
        }
    }
    Ok(newest)
}

enum RosterError {
    NotForMe,
    Unreadable(String),
}

/// The roster files, by version, newest last: (version, owner device, path in the folder).
fn roster_files(folder: &Path) -> anyhow::Result<Vec<(u64, String, PathBuf)>> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(folder.join(ROSTER_FOLDER)) else {
        return Ok(files);
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let parsed = name.strip_suffix(".age").and_then(|stem| stem.split_once('-'));
        if let Some((version, owner)) = parsed
            && let Ok(version) = version.parse::<u64>()
            && entry.file_type().is_ok_and(|kind| kind.is_file())
        {
            files.push((version, owner.to_owned(), Path::new(ROSTER_FOLDER).join(&name)));
        }
    }
    files.sort();
    // The newest are the ones that count.
    let extra = files.len().saturating_sub(MAX_FILES);
    files.drain(..extra);
    Ok(files)
}

fn read_roster(
    folder: &Path,
    file: &Path,
    identity: &x25519::Identity,
) -> Result<Roster, RosterError> {
    let bytes = folder::read_counted(folder, file, MAX_ROSTER_BYTES, &mut Taken::unbounded())
        .map_err(RosterError::Unreadable)?;
    let plain =
        folder_key::decrypt(&bytes, identity, MAX_ROSTER_BYTES).map_err(|error| match error {
            age::DecryptError::NoMatchingKeys => RosterError::NotForMe,
            other => RosterError::Unreadable(other.to_string()),
        })?;
    let (body, signature) = split_signed(&plain).map_err(RosterError::Unreadable)?;
    let roster: Roster = serde_json::from_slice(body)
        .map_err(|error| RosterError::Unreadable(format!("not a roster ({error})")))?;
    let key = roster
        .owner_key()
        .ok_or_else(|| RosterError::Unreadable("its owner is not one of its members".to_owned()))?;
    signing::verify_as(signing::ROSTER, key, body, &signature).map_err(RosterError::Unreadable)?;
    Ok(roster)
}

/// Writes `roster`, signed by this device, encrypted to its members and the members it removes
/// (who read that they were removed, and nothing after).
fn write_roster(folder: &Path, roster: &Roster, store: &Store) -> anyhow::Result<()> {
    let key = signing::DeviceKey::of(store)?;
    let body = serde_json::to_vec(roster)?;
    let signature = key.sign_as(signing::ROSTER, &body);
    let mut recipients = roster.recipients();
    // A removed member is told by the version that removes them only.
    if let Some(gone) = roster.removed.last()
        && let Some(recipient) = last_recipient_of(store, roster, &gone.device)
    {
        recipients.push(recipient);
    }
    let sealed = seal(&signed_lines(&body, &signature), &recipients)?;
    let file = Path::new(ROSTER_FOLDER).join(format!("{:08}-{}.age", roster.version, roster.owner));
    folder::write_once(folder, &file, &sealed)?;
    Ok(())
}

/// The recipient a removed member had, from the roster as last kept here.
fn last_recipient_of(store: &Store, roster: &Roster, device: &str) -> Option<x25519::Recipient> {
    let name = format!("team-{}", roster.team);
    let before = kept(store, &name).ok().flatten()?;
    before.member(device)?.recipient.parse().ok()
}

/// Writes this machine's request to join, once, encrypted to the owner the invitation named.
fn ask(
    store: &Store,
    name: &str,
    folder: &Path,
    team: &str,
    me: &Member,
) -> anyhow::Result<Standing> {
    let file = Path::new(REQUEST_FOLDER).join(format!("{}.age", me.device));
    if folder.join(&file).exists() {
        return Ok(Standing::Asked);
    }
    if store.sync_team_state(name, "asked")?.is_some() {
        // Asked before, and the owner's machine has read the request (and removed it) without
        // admitting this one: asking again with the same code would be refused again.
        return Ok(Standing::NotAdmitted);
    }
    let (Some(recipient), Some(code)) =
        (store.sync_team_state(name, "owner recipient")?, store.sync_team_state(name, "code")?)
    else {
        anyhow::bail!(ApiError::invalid_input(format!(
            "the team {team} has members chosen by its owner: join it with an invitation from them (Settings → Sync → Teams, or `pinloom team join`)"
        )));
    };
    let recipient: x25519::Recipient = recipient.parse().map_err(|_| {
        ApiError::invalid_input("the invitation's recipient is not one: ask for a new invitation")
    })?;
    let request = Request { team: team.to_owned(), member: me.clone(), code };
    let body = serde_json::to_vec(&request)?;
    let signature = signing::DeviceKey::of(store)?.sign_as(signing::REQUEST, &body);
    let sealed = seal(&signed_lines(&body, &signature), &[recipient])?;
    folder::write_once(folder, &file, &sealed)?;
    store.set_sync_team_state(name, "asked", Some("1"))?;
    Ok(Standing::Asked)
}

/// The owner's part: each request that brings a code this machine made, unused and fresh, and
/// is signed by the key it names, admits its device. Each request is read once and removed.
#[allow(clippy::too_many_arguments)] // the owner's one step, each input named
fn admit_requests(
    store: &Store,
    name: &str,
    folder: &Path,
    mut roster: Roster,
    identity: &x25519::Identity,
    now_ms: i64,
    notes: &mut Vec<String>,
) -> anyhow::Result<Roster> {
    let Ok(entries) = std::fs::read_dir(folder.join(REQUEST_FOLDER)) else {
        return Ok(roster);
    };
    let mut admitted = Vec::new();
    let files: BTreeSet<PathBuf> = entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
        .map(|entry| Path::new(REQUEST_FOLDER).join(entry.file_name()))
        .take(MAX_FILES)
        .collect();
    for file in files {
        match read_request(folder, &file, identity, &roster.team) {
            Ok(request) => {
                let code_key = format!("invitation {}", request.code);
                let made = store.sync_team_state(name, &code_key)?.and_then(|at| at.parse().ok());
                let device = request.member.device.clone();
                if roster.member(&device).is_some() {
                    // Asked twice (an earlier request already admitted it): nothing to do.
                } else if !pinloom_store::is_device_id(&device) {
                    notes.push(format!(
                        "A request to join named no device; {} was removed.",
                        folder::shown(&file)
                    ));
                } else if roster.removed.iter().any(|gone| gone.device == device) {
                    notes.push(format!(
                        "{} asked to join again after being removed; not admitted (invite them again from a new device).",
                        shown(&request.member.name)
                    ));
                } else if made.is_some_and(|made: i64| now_ms - made <= INVITATION_LIFETIME_MS) {
                    store.set_sync_team_state(name, &code_key, None)?;
                    let mut member = request.member;
                    member.name = shown(&member.name);
                    admitted.push(member.name.clone());
                    roster.members.push(member);
                } else {
                    notes.push(format!(
                        "{} asked to join with an invitation that is not one this machine made, was used already, or is older than 14 days; not admitted.",
                        shown(&request.member.name)
                    ));
                }
            }
            Err(why) => {
                notes.push(format!("{} was not read: {why}; removed.", folder::shown(&file)))
            }
        }
        folder::remove_file(&folder.join(&file))?;
    }
    if !admitted.is_empty() {
        roster.version += 1;
        write_roster(folder, &roster, store).context("could not write the team's roster")?;
        notes.push(format!("Admitted to the team: {}.", admitted.join(", ")));
    }
    Ok(roster)
}

fn read_request(
    folder: &Path,
    file: &Path,
    identity: &x25519::Identity,
    team: &str,
) -> Result<Request, String> {
    let bytes = folder::read_counted(folder, file, MAX_REQUEST_BYTES, &mut Taken::unbounded())?;
    let plain = folder_key::decrypt(&bytes, identity, MAX_REQUEST_BYTES)
        .map_err(|error| error.to_string())?;
    let (body, signature) = split_signed(&plain)?;
    let request: Request =
        serde_json::from_slice(body).map_err(|_| "not a request to join".to_owned())?;
    signing::verify_as(signing::REQUEST, &request.member.signer, body, &signature)?;
    if request.team != team {
        return Err("it asks to join another team".to_owned());
    }
    if request.member.recipient.parse::<x25519::Recipient>().is_err() {
        return Err("it names no key to encrypt to".to_owned());
    }
    Ok(request)
}

/// A name a member chose, as shown: printable, at most 60 characters.
pub(in crate::sync) fn shown(name: &str) -> String {
    let clean: String =
        name.chars().filter(|c| !c.is_control()).take(60).collect::<String>().trim().to_owned();
    if clean.is_empty() { "someone".to_owned() } else { clean }
}

fn random_code() -> String {
    let mut bytes = [0u8; 16];
    rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut bytes);
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn signed_lines(body: &[u8], signature: &str) -> Vec<u8> {
    let mut plain = body.to_vec();
    plain.push(b'\n');
    plain.extend_from_slice(signature.as_bytes());
    plain.push(b'\n');
    plain
}

fn split_signed(plain: &[u8]) -> Result<(&[u8], String), String> {
    let text = plain.strip_suffix(b"\n").unwrap_or(plain);
    let at = text.iter().rposition(|byte| *byte == b'\n').ok_or("it is not signed")?;
    let signature = std::str::from_utf8(&text[at + 1..]).map_err(|_| "it is not signed")?;
    Ok((&text[..at], signature.to_owned()))
}

/// `plain` encrypted to `recipients`.
fn seal(plain: &[u8], recipients: &[x25519::Recipient]) -> anyhow::Result<Vec<u8>> {
    let to = recipients.iter().map(|recipient| recipient as &dyn age::Recipient);
    folder_key::encrypt(age::Encryptor::with_recipients(to)?, plain).map_err(anyhow::Error::msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::signing::DeviceKey;

    const TEAM: &str = "team-geo";

    /// A machine with a database in memory that joined the team: its store, writer and key.
    fn machine() -> (Store, Writer, x25519::Identity) {
        let store = Store::open(Path::new(":memory:")).unwrap();
        store.set_sync_target(TEAM, "/geo.git", true, 1).unwrap();
        let writer =
            Writer { device: store.sync_device().unwrap(), key: DeviceKey::of(&store).unwrap() };
        let identity = member_key(&store).unwrap();
        (store, writer, identity)
    }

    fn stand(store: &Store, folder: &Path, me: &Member, key: &x25519::Identity) -> Standing {
        standing(store, TEAM, folder, me, key, false, 10).unwrap().0
    }

    #[test]
    fn an_invitation_admits_one_device_and_a_roster_another_member_signs_is_not_read() {
        let folder = tempfile::tempdir().unwrap();
        let folder = folder.path();
        let (ana, ana_writer, ana_key) = machine();
        let ana_me = me(&ana_writer, &ana_key, "Ana");
        let (made, _) = standing(&ana, TEAM, folder, &ana_me, &ana_key, true, 1).unwrap();
        assert!(matches!(made, Standing::Member(ref roster) if roster.version == 1));

        // Ben asks with Ana's invitation; her next sync admits him into version 2.
        let admission = invite(&ana, TEAM, &ana_writer, &ana_key, 5).unwrap().unwrap();
        let (ben, ben_writer, ben_key) = machine();
        accept(&ben, TEAM, &admission).unwrap();
        let ben_me = me(&ben_writer, &ben_key, "Ben\u{1b}[2J");
        assert!(matches!(stand(&ben, folder, &ben_me, &ben_key), Standing::Asked));
        let (admitted, notes) = standing(&ana, TEAM, folder, &ana_me, &ana_key, false, 9).unwrap();
        assert!(
            notes.iter().any(|note| note.contains("Admitted to the team: Ben[2J.")),
            "{notes:?}"
        );
        let Standing::Member(roster) = admitted else { panic!("Ana stays a member") };
        assert_eq!((roster.version, roster.members.len()), (2, 2));
        assert_eq!(roster.name_of(&ben_writer.device), Some("Ben[2J"), "no control characters");
        assert!(matches!(stand(&ben, folder, &ben_me, &ben_key), Standing::Member(_)));

        // Cleo brings the same code: it admitted Ben, and no one else.
        let (cleo, cleo_writer, cleo_key) = machine();
        accept(&cleo, TEAM, &admission).unwrap();
        let cleo_me = me(&cleo_writer, &cleo_key, "Cleo");
        assert!(matches!(stand(&cleo, folder, &cleo_me, &cleo_key), Standing::Asked));
        let (_, notes) = standing(&ana, TEAM, folder, &ana_me, &ana_key, false, 11).unwrap();
        assert!(notes.iter().any(|note| note.contains("Cleo asked to join")), "{notes:?}");
        assert!(matches!(stand(&cleo, folder, &cleo_me, &cleo_key), Standing::NotAdmitted));

        // Ben writes a newer roster naming himself owner and Cleo a member: no machine reads it.
        let forged = Roster {
            team: "geo".into(),
            version: 9,
            owner: ben_writer.device.clone(),
            members: vec![ben_me.clone(), ana_me.clone(), cleo_me.clone()],
            removed: Vec::new(),
        };
        write_roster(folder, &forged, &ben).unwrap();
        for (store, me, key) in [(&ana, &ana_me, &ana_key), (&ben, &ben_me, &ben_key)] {
            let (standing, notes) = standing(store, TEAM, folder, me, key, false, 13).unwrap();
            let Standing::Member(roster) = standing else { panic!("still a member") };
            assert_eq!(roster.version, 2);
            assert!(notes.iter().any(|note| note.contains("not a roster the team's owner signed")));
        }
        assert!(matches!(stand(&cleo, folder, &cleo_me, &cleo_key), Standing::NotAdmitted));

        // An invitation older than 14 days admits no one.
        let late = invite(&ana, TEAM, &ana_writer, &ana_key, 20).unwrap().unwrap();
        let (dan, dan_writer, dan_key) = machine();
        accept(&dan, TEAM, &late).unwrap();
        let dan_me = me(&dan_writer, &dan_key, "Dan");
        assert!(matches!(stand(&dan, folder, &dan_me, &dan_key), Standing::Asked));
        let later = 20 + INVITATION_LIFETIME_MS + 1;
        let (_, notes) = standing(&ana, TEAM, folder, &ana_me, &ana_key, false, later).unwrap();
        assert!(notes.iter().any(|note| note.contains("older than 14 days")), "{notes:?}");
    }
}
