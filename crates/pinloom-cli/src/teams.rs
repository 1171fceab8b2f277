//! `pinloom team …`: the teams joined and their members, an invitation to one, joining by an
//! invitation, removing a member, leaving.

use clap::Subcommand;
use pinloom_app::json::TeamStanding;
use pinloom_app::{ApiError, Pinloom};

/// What `pinloom team` does.
#[derive(Debug, Subcommand)]
pub(crate) enum TeamAction {
    /// The teams this database has joined, with their remotes, members and shared trees.
    List,
    /// Print an invitation to a team you own (its name, remote, your keys and a code that
    /// admits one device within 14 days) to send a colleague, who joins with `pinloom team
    /// join` or in Settings → Sync.
    Invite {
        /// The team's name here.
        team: String,
    },
    /// Join the team an invitation names: the file it was saved to, or - for standard input.
    /// The owner's next sync admits you; your sync after that brings the team's trees.
    Join {
        /// The invitation's file, or - to read it from standard input.
        invitation: String,
        /// Your name, as the team's members see it (git's user.name by default).
        #[arg(long = "as", value_name = "NAME")]
        your_name: Option<String>,
    },
    /// Remove a member from a team you own: nothing written from then on is encrypted to them,
    /// and what their device writes after is refused by every member.
    Remove {
        /// The team's name here.
        team: String,
        /// The member's name, or their device id (`pinloom team list`).
        member: String,
    },
    /// Leave a team: it is no longer synced; the trees that came through it stay here.
    Leave {
        /// The team's name here.
        team: String,
    },
}

/// Runs `pinloom team …`; its output.
pub(crate) async fn team(pinloom: &Pinloom, action: TeamAction) -> anyhow::Result<String> {
    match action {
        TeamAction::List => Ok(listed(&pinloom.teams().await?)),
        TeamAction::Invite { team } => {
            Ok(pinloom.team_invitation(team).await?.trim_end().to_owned())
        }
        TeamAction::Join { invitation, your_name } => {
            let text = if invitation == "-" {
                crate::sending::words_or_stdin("-", "the invitation")?
            } else {
                read_invitation_file(&invitation)?
            };
            Ok(pinloom.join_by_invitation(text, your_name).await?.text)
        }
        TeamAction::Remove { team, member } => {
            Ok(pinloom.remove_team_member(team, member).await?.text)
        }
        TeamAction::Leave { team } => {
            let left = pinloom.leave_team(team.clone()).await?;
            let rest = if left.is_empty() { "no other team".to_owned() } else { listed(&left) };
            Ok(format!("Left the team {team}; its trees stay here.\n{rest}"))
        }
    }
}

fn listed(teams: &[pinloom_app::json::TeamView]) -> String {
    if teams.is_empty() {
        return "No team joined yet: `pinloom sync --team NAME --remote URL` creates or joins one."
            .into();
    }
    teams
        .iter()
        .map(|team| {
            let trees = team.shared_trees.len();
            let plural = if trees == 1 { "" } else { "s" };
            let standing = match team.standing {
                TeamStanding::Open => "  (made before rosters: open to every member's device)",
                TeamStanding::Member if team.owned => "  (yours: you invite and remove members)",
                TeamStanding::Member => "",
                TeamStanding::Asked => "  (asked to join: waiting for its owner's Pinloom)",
                TeamStanding::Removed => "  (its owner removed this machine)",
            };
            let mut line =
                format!("{}  {}  {trees} shared tree{plural}{standing}", team.name, team.remote);
            for member in &team.members {
                let role = match (member.owner, member.you) {
                    (true, true) => "  owner, you",
                    (true, false) => "  owner",
                    (false, true) => "  you",
                    (false, false) => "",
                };
                line.push_str(&format!(
                    "\n    {}  {}{role}",
                    crate::terminal::shown(&member.name),
                    member.device
                ));
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// An invitation saved to a file: small, and text.
fn read_invitation_file(path: &str) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).map_err(|error| {
        ApiError::invalid_input(format!("could not read the invitation {path}: {error}"))
    })?;
    if bytes.len() > 4096 {
        anyhow::bail!(ApiError::invalid_input(format!(
            "{path} is too long to be a Pinloom team invitation"
        )));
    }
    String::from_utf8(bytes).map_err(|_| {
        ApiError::invalid_input(format!("{path} is not text: it is no Pinloom team invitation"))
            .into()
    })
}
