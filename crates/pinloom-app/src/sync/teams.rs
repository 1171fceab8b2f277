//! Teams as Settings → Sync shows them: the teams joined, an invitation to one (its name and
//! remote, as text to send a colleague), joining by such a text, and leaving.

use anyhow::Context;

use crate::base::pinloom::Pinloom;
use crate::error::ApiError;
use crate::json::{SyncReport, TeamView};
use crate::runtime::blocking;
use crate::sync::{remove_folder, sync_folder, team_target};

/// The first line of an invitation, which says what the text is.
const INVITATION_HEAD: &str = "Pinloom team invitation";

/// The longest invitation read (a pasted one carries a name and an address).
const MAX_INVITATION_BYTES: usize = 4096;

impl Pinloom {
    /// Every team this database has joined, by name.
    pub async fn teams(&self) -> anyhow::Result<Vec<TeamView>> {
        self.read("could not read the teams", |store| {
            let shares = store.sync_shares()?;
            let mut teams = Vec::new();
            for target in store.sync_targets()?.into_iter().filter(|target| target.shared_only) {
                let mut shared_trees = Vec::new();
                for share in shares.iter().filter(|share| share.target == target.name) {
                    shared_trees.extend(store.tree_by_global_id(&share.tree)?.map(|id| id.0));
                }
                teams.push(TeamView {
                    name: target.name.strip_prefix("team-").unwrap_or(&target.name).to_owned(),
                    remote: target.remote,
                    shared_trees,
                    last: target.last_result_json.and_then(|json| serde_json::from_str(&json).ok()),
                });
            }
            Ok(teams)
        })
        .await
    }

    /// The invitation to team `team`: a text holding its name and remote, which a colleague
    /// pastes into their Settings → Sync (or gives `pinloom team join`) to join it.
    pub async fn team_invitation(&self, team: String) -> anyhow::Result<String> {
        let name = team_target(&team)?;
        let target = self
            .read("could not read the team", move |store| Ok(store.sync_target(&name)?))
            .await?
            .ok_or_else(|| not_joined(&team))?;
        let team = target.name.strip_prefix("team-").unwrap_or(&target.name).to_owned();
        Ok(format!("{INVITATION_HEAD}\nteam: {team}\nremote: {}\n", target.remote))
    }

    /// Joins the team an invitation names (see [`Pinloom::team_invitation`]).
    pub async fn join_by_invitation(&self, invitation: String) -> anyhow::Result<SyncReport> {
        let (team, remote) = read_invitation(&invitation)?;
        self.join_team(team, remote).await
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
            store.forget_sync_target(&name)?;
            remove_folder(&sync_folder(store.path(), &name))
                .context("left the team, but its folder stays")
        })
        .await
        .context("could not leave the team")?;
        self.teams().await
    }
}

fn not_joined(team: &str) -> anyhow::Error {
    ApiError::invalid_input(format!("this database has not joined the team {team:?}")).into()
}

/// The team and remote an invitation names; a text that is not one says what is missing.
fn read_invitation(text: &str) -> anyhow::Result<(String, String)> {
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
    Ok((team, remote))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invitation_reads_back_and_other_text_says_what_it_lacks() {
        let text = format!("{INVITATION_HEAD}\nteam: geo\nremote: git@host:lab/trees.git\n");
        let (team, remote) = read_invitation(&text).unwrap();
        assert_eq!((team.as_str(), remote.as_str()), ("geo", "git@host:lab/trees.git"));
        // Pasted with the mail's indentation and line ends.
        let pasted = "  Pinloom team invitation\r\n  Team: geo\r\n  Remote: /srv/trees.git\r\n";
        assert_eq!(read_invitation(pasted).unwrap().1, "/srv/trees.git");
        let error = read_invitation("team geo at /srv").unwrap_err().to_string();
        assert!(error.contains("not a Pinloom team invitation"), "{error}");
        let error = read_invitation("team: ../../etc\nremote: /srv").unwrap_err().to_string();
        assert!(error.contains("cannot name a team"), "{error}");
        let error = read_invitation("team: geo\nremote: /srv\u{1b}[2J").unwrap_err().to_string();
        assert!(error.contains("control characters"), "{error}");
    }
}
