//! Teams as Settings → Sync shows them: the teams joined and their members, an invitation to one
//! (its name, remote, owner's keys and a code that admits one device, as text to send a
//! colleague), joining by such a text, removing a member, and leaving.

use anyhow::Context;

use crate::base::pinloom::Pinloom;
use crate::error::ApiError;
use crate::json::{SyncReport, TeamMember, TeamStanding, TeamView};
use crate::runtime::{blocking, now_ms};
use crate::sync::roster::{self, Admission};
use crate::sync::signing::{DeviceKey, Writer};
use crate::sync::{remove_folder, sync_folder, sync_target, team_target};

/// The first line of an invitation, which says what the text is.
const INVITATION_HEAD: &str = "Pinloom team invitation";

/// The longest invitation read (a pasted one carries a name and an address).
const MAX_INVITATION_BYTES: usize = 4096;

impl Pinloom {
    /// Every team this database has joined, by name.
    pub async fn teams(&self) -> anyhow::Result<Vec<TeamView>> {
        self.read("could not read the teams", |store| {
            let shares = store.sync_shares()?;
            let device = store.sync_device()?;
            let mut teams = Vec::new();
            for target in store.sync_targets()?.into_iter().filter(|target| target.shared_only) {
                let mut shared_trees = Vec::new();
                for share in shares.iter().filter(|share| share.target == target.name) {
                    shared_trees.extend(store.tree_by_global_id(&share.tree)?.map(|id| id.0));
                }
                let roster = roster::kept(store, &target.name)?;
                let asked = store.sync_team_state(&target.name, "asked")?.is_some();
                let (standing, members, owned) = match &roster {
                    Some(roster) => (
                        if roster.member(&device).is_some() {
                            TeamStanding::Member
                        } else if roster.removed.iter().any(|gone| gone.device == device) {
                            TeamStanding::Removed
                        } else {
                            TeamStanding::Asked
                        },
                        roster
                            .members
                            .iter()
                            .map(|member| TeamMember {
                                name: roster::shown(&member.name),
                                device: member.device.clone(),
                                owner: member.device == roster.owner,
                                you: member.device == device,
                            })
                            .collect(),
                        roster.owner == device,
                    ),
                    None if asked => (TeamStanding::Asked, Vec::new(), false),
                    None => (TeamStanding::Open, Vec::new(), false),
                };
                teams.push(TeamView {
                    name: target.name.strip_prefix("team-").unwrap_or(&target.name).to_owned(),
                    remote: target.remote,
                    shared_trees,
                    last: target.last_result_json.and_then(|json| serde_json::from_str(&json).ok()),
                    standing,
                    members,
                    owned,
                });
            }
            Ok(teams)
        })
        .await
    }

    /// The invitation to team `team`: a text holding its name and remote, which a colleague
    /// pastes into their Settings → Sync (or gives `pinloom team join`) to join it.
    /// In a team with a roster only its owner invites: the text then also holds the owner's
    /// signing key, the recipient a request to join is encrypted to, and a fresh code that
    /// admits one device within 14 days.
    pub async fn team_invitation(&self, team: String) -> anyhow::Result<String> {
        let name = team_target(&team)?;
        let store = self.store.clone();
        let (target, admission) = blocking(move || {
            let target = store.sync_target(&name)?.ok_or_else(|| not_joined(&team))?;
            let writer = Writer { device: store.sync_device()?, key: DeviceKey::of(&store)? };
            let identity = roster::member_key(&store)?;
            let admission = roster::invite(&store, &name, &writer, &identity, now_ms())?;
            Ok((target, admission))
        })
        .await
        .context("could not make the invitation")?;
        let team = target.name.strip_prefix("team-").unwrap_or(&target.name).to_owned();
        let mut text = format!("{INVITATION_HEAD}\nteam: {team}\nremote: {}\n", target.remote);
        if let Some(Admission { owner, recipient, code }) = admission {
            text.push_str(&format!("owner: {owner}\nrecipient: {recipient}\ncode: {code}\n"));
        }
        Ok(text)
    }

    /// Joins the team an invitation names (see [`Pinloom::team_invitation`]) as `your_name`
    /// (git's user name when absent). A team with a roster is asked: its owner's next sync
    /// admits this machine, and the sync after that brings the team's trees.
    pub async fn join_by_invitation(
        &self,
        invitation: String,
        your_name: Option<String>,
    ) -> anyhow::Result<SyncReport> {
        let invited = read_invitation(&invitation)?;
        let name = team_target(&invited.team)?;
        let store = self.store.clone();
        let unlock = self.unlock(None);
        let team = invited.team.clone();
        let report = blocking(move || {
            start_over_if_moved(&store, &name, &invited.remote)?;
            joining(&store, &name, || {
                keep_member_name(&store, &name, your_name)?;
                if let Some(admission) = &invited.admission {
                    roster::accept(&store, &name, admission)?;
                }
                sync_target(&store, &name, Some(invited.remote), true, &unlock)
            })
        })
        .await;
        self.snapshot_cache.forget();
        report.with_context(|| format!("could not join the team {team}"))
    }

    /// Removes the member `member` (a name, or a device id `pinloom team list` shows) from team
    /// `team`, which this machine owns, and syncs the team: what is written from then on is
    /// not encrypted to them, and their packs written after are refused on every machine.
    pub async fn remove_team_member(
        &self,
        team: String,
        member: String,
    ) -> anyhow::Result<SyncReport> {
        let name = team_target(&team)?;
        let store = self.store.clone();
        let unlock = self.unlock(None);
        let report = blocking(move || {
            if store.sync_target(&name)?.is_none() {
                return Err(not_joined(&team));
            }
            let writer = Writer { device: store.sync_device()?, key: DeviceKey::of(&store)? };
            let folder = sync_folder(store.path(), &name);
            let removed = roster::remove_member(&store, &name, &folder, &writer, &member)?;
            let mut report = sync_target(&store, &name, None, true, &unlock)?;
            report.text = format!("Removed {removed} from the team {team}.\n{}", report.text);
            Ok(report)
        })
        .await;
        self.snapshot_cache.forget();
        report.context("could not remove the member")
    }

    /// Leaves team `team`: it is no longer synced, and its folder here is removed; the trees that
    /// came through it stay on this machine, as they are.
    pub async fn leave_team(&self, team: String) -> anyhow::Result<Vec<TeamView>> {
        let name = team_target(&team)?;
        let store = self.store.clone();
        blocking(move || {
            if store.sync_target(&name)?.is_none() {
                return Err(not_joined(&team));
            }
            forget_team(&store, &name).context("left the team, but its folder stays")
        })
        .await
        .context("could not leave the team")?;
        self.teams().await
    }
}

fn not_joined(team: &str) -> anyhow::Error {
    ApiError::invalid_input(format!("this database has not joined the team {team:?}")).into()
}

/// A team joined again at another remote is another team: what this machine kept of the first
/// (its roster and owner, the name it went by, its shares, its folder) is forgotten before the
/// new one is joined, as when leaving.
pub(in crate::sync) fn start_over_if_moved(
    store: &pinloom_store::Store,
    name: &str,
    remote: &str,
) -> anyhow::Result<()> {
    if let Some(target) = store.sync_target(name)?
        && target.remote != remote.trim()
    {
        forget_team(store, name)?;
    }
    Ok(())
}

/// Forgets team `name` here, as leaving does: its target, shares and what was kept of it, and
/// its folder. The trees that came through it stay.
fn forget_team(store: &pinloom_store::Store, name: &str) -> anyhow::Result<()> {
    store.forget_sync_target(name)?;
    remove_folder(&sync_folder(store.path(), name))
}

/// Runs `join`, a first sync of team `name`. A join that fails leaves nothing behind when the
/// team was not joined before: no target that every later sync would fail on, no folder.
pub(in crate::sync) fn joining(
    store: &pinloom_store::Store,
    name: &str,
    join: impl FnOnce() -> anyhow::Result<SyncReport>,
) -> anyhow::Result<SyncReport> {
    let joined_before = store.sync_target(name)?.is_some();
    let error = match join() {
        Ok(report) => return Ok(report),
        Err(error) => error,
    };
    if joined_before {
        return Err(error);
    }
    match forget_team(store, name) {
        Ok(()) => Err(error),
        Err(left) => {
            Err(error.context(format!("(and what the join left could not be removed: {left:#})")))
        }
    }
}

/// Keeps the name this machine's member goes by in team `name` (when given).
pub(in crate::sync) fn keep_member_name(
    store: &pinloom_store::Store,
    name: &str,
    your_name: Option<String>,
) -> anyhow::Result<()> {
    if let Some(given) =
        your_name.map(|given| roster::shown(&given)).filter(|given| given != "someone")
    {
        store.set_sync_team_state(name, "name", Some(&given))?;
    }
    Ok(())
}

/// What an invitation says.
#[derive(Debug)]
struct Invited {
    team: String,
    remote: String,
    /// For a team with a roster: its owner's keys and the code.
    admission: Option<Admission>,
}

/// The team and remote an invitation names; a text that is not one says what is missing.
fn read_invitation(text: &str) -> anyhow::Result<Invited> {
    if text.len() > MAX_INVITATION_BYTES {
        anyhow::bail!(ApiError::invalid_input(
            "that is too long to be a Pinloom team invitation: paste the invitation's text as it was sent"
        ));
    }
    let value = |key: &str| {
        text.lines().find_map(|line| {
            let (name, value) = line.trim().split_once(':')?;
            (name.trim().eq_ignore_ascii_case(key)).then(|| value.trim().to_owned())
        })
    };
    let (Some(team), Some(remote)) = (value("team"), value("remote")) else {
        anyhow::bail!(ApiError::invalid_input(
            "that is not a Pinloom team invitation: it has lines `team: …` and `remote: …`; paste it whole"
        ));
    };
    if remote.is_empty() || remote.chars().any(char::is_control) {
        anyhow::bail!(ApiError::invalid_input(
            "the invitation's remote is empty or holds control characters: ask for a new one"
        ));
    }
    team_target(&team)?;
    let admission = match (value("owner"), value("recipient"), value("code")) {
        (None, None, None) => None,
        (Some(owner), Some(recipient), Some(code))
            if owner.len() == 64
                && code.len() == 32
                && [&owner, &code].iter().all(|hex| hex.chars().all(|c| c.is_ascii_hexdigit()))
                && recipient.parse::<age::x25519::Recipient>().is_ok() =>
        {
            Some(Admission { owner, recipient, code })
        }
        _ => anyhow::bail!(ApiError::invalid_input(
            "the invitation's lines `owner:`, `recipient:` and `code:` are missing or changed: paste it whole, or ask for a new one"
        )),
    };
    Ok(Invited { team, remote, admission })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invitation_reads_back_and_other_text_says_what_it_lacks() {
        let text = format!("{INVITATION_HEAD}\nteam: geo\nremote: git@host:lab/trees.git\n");
        let invited = read_invitation(&text).unwrap();
        assert_eq!(
            (invited.team.as_str(), invited.remote.as_str()),
            ("geo", "git@host:lab/trees.git")
        );
        assert_eq!(invited.admission, None);
        // Pasted with the mail's indentation and line ends.
        let pasted = "  Pinloom team invitation\r\n  Team: geo\r\n  Remote: /srv/trees.git\r\n";
        assert_eq!(read_invitation(pasted).unwrap().remote, "/srv/trees.git");
        // A team with a roster: the owner's keys and a code, each checked.
        let recipient = age::x25519::Identity::generate().to_public().to_string();
        let owner = "ab".repeat(32);
        let code = "0f".repeat(16);
        let full = format!("{text}owner: {owner}\nrecipient: {recipient}\ncode: {code}\n");
        let admission = read_invitation(&full).unwrap().admission.unwrap();
        assert_eq!((admission.owner, admission.code), (owner.clone(), code));
        let cut = format!("{text}owner: {owner}\nrecipient: {recipient}\n");
        let error = read_invitation(&cut).unwrap_err().to_string();
        assert!(error.contains("missing or changed"), "{error}");
        let error = read_invitation("team geo at /srv").unwrap_err().to_string();
        assert!(error.contains("not a Pinloom team invitation"), "{error}");
        let error = read_invitation("team: ../../etc\nremote: /srv").unwrap_err().to_string();
        assert!(error.contains("cannot name a team"), "{error}");
        let error = read_invitation("team: geo\nremote: /srv\u{1b}[2J").unwrap_err().to_string();
        assert!(error.contains("control characters"), "{error}");
    }
}
