//! `pinloom team …`: the teams joined, an invitation to one, joining by an invitation, leaving.

use clap::Subcommand;
use pinloom_app::{ApiError, Pinloom};

/// What `pinloom team` does.
#[derive(Debug, Subcommand)]
pub(crate) enum TeamAction {
    /// The teams this database has joined, with their remotes and how many trees are shared.
    List,
    /// Print an invitation to a team (its name and remote) to send a colleague, who joins with
    /// `pinloom team join` or in Settings → Sync.
    Invite {
        /// The team's name here.
        team: String,
    },
    /// Join the team an invitation names: the file it was saved to, or - for standard input.
    Join {
        /// The invitation's file, or - to read it from standard input.
        invitation: String,
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
        TeamAction::Join { invitation } => {
            let text = if invitation == "-" {
                crate::sending::words_or_stdin("-", "the invitation")?
            } else {
                read_invitation_file(&invitation)?
            };
            Ok(pinloom.join_by_invitation(text).await?.text)
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
            format!("{}  {}  {trees} shared tree{plural}", team.name, team.remote)
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
