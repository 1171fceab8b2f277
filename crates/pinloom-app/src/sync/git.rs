//! Git, run as the person's own `git` command in the sync folder: their credentials, SSH agent
//! and hosting permissions apply, and Pinloom speaks no git protocol of its own. This is the one
//! place besides the providers that reaches the network, and it does so only through `git`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The branch every sync folder commits to.
const BRANCH: &str = "main";

/// What git could not do.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GitError {
    /// No `git` on the PATH.
    #[error(
        "git is not installed (or not on the PATH), and Pinloom syncs through it: install git (Debian and Ubuntu: `sudo apt install git`; macOS: `xcode-select --install`; Windows: Git for Windows) and sync again"
    )]
    Missing,
    /// A git command failed.
    #[error("git could not {doing}: {detail}")]
    Failed {
        /// What was being done.
        doing: &'static str,
        /// What git said.
        detail: String,
    },
}

/// How a push went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pushed {
    /// The remote took the commits.
    Yes,
    /// The remote already had everything.
    NothingNew,
    /// Another machine pushed first: fetch, merge and push again.
    Refused,
}

/// The sync folder's repository.
pub(crate) struct Git {
    folder: PathBuf,
}

impl Git {
    pub(crate) fn new(folder: &Path) -> Git {
        Git { folder: folder.to_owned() }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new("git");
        command
            .arg("-C")
            .arg(&self.folder)
            .args(args)
            // A sync never waits for a password typed into a terminal nobody watches (the
            // window's): credentials come from the person's agent or credential helper.
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("LC_ALL", "C")
            .stdin(Stdio::null());
        command
    }

    fn output(&self, args: &[&str]) -> Result<Output, GitError> {
        self.command(args).output().map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => GitError::Missing,
            _ => GitError::Failed { doing: "start", detail: error.to_string() },
        })
    }

    fn run(&self, doing: &'static str, args: &[&str]) -> Result<String, GitError> {
        let output = self.output(args)?;
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
        } else {
            Err(failed(doing, &output))
        }
    }

    /// Makes the folder a repository whose `origin` is `remote` (a URL or a path).
    pub(crate) fn prepare(&self, remote: &str) -> Result<(), GitError> {
        std::fs::create_dir_all(&self.folder).map_err(|error| GitError::Failed {
            doing: "create the sync folder",
            detail: format!("{}: {error}", self.folder.display()),
        })?;
        if !self.folder.join(".git").exists() {
            self.run("create the sync folder's repository", &["init", "-q", "-b", BRANCH])?;
        }
        let current = self.output(&["remote", "get-url", "origin"])?;
        if !current.status.success() {
            self.run("remember the remote", &["remote", "add", "origin", remote])?;
        } else if String::from_utf8_lossy(&current.stdout).trim() != remote {
            self.run("change the remote", &["remote", "set-url", "origin", remote])?;
        }
        Ok(())
    }

    /// Commits every file written and not committed yet; `false` when there were none.
    pub(crate) fn commit(&self, message: &str) -> Result<bool, GitError> {
        self.run("add the new files", &["add", "-A"])?;
        let unchanged = self.output(&["diff", "--cached", "--quiet"])?.status.success();
        if unchanged {
            return Ok(false);
        }
        let mut args = self.identity()?;
        args.extend(["commit", "-q", "--no-verify", "-m", message]);
        self.run("commit", &args)?;
        Ok(true)
    }

    /// Commits carry the person's own name where git has one; a machine where git was never told
    /// a name still syncs, as "Pinloom".
    fn identity(&self) -> Result<Vec<&'static str>, GitError> {
        let named = self.output(&["config", "user.email"])?.status.success();
        Ok(if named {
            Vec::new()
        } else {
            vec!["-c", "user.name=Pinloom", "-c", "user.email=pinloom@localhost"]
        })
    }

    /// Fetches the remote; `true` when it has the branch.
    pub(crate) fn fetch(&self) -> Result<bool, GitError> {
        self.run("fetch from the remote", &["fetch", "-q", "origin"])?;
        let found = self.output(&[
            "rev-parse",
            "-q",
            "--verify",
            &format!("refs/remotes/origin/{BRANCH}"),
        ])?;
        Ok(found.status.success())
    }

    /// Merges what was fetched. Files are only ever added under unique names, so this never
    /// conflicts; two folders started apart (two machines' first syncs) merge too.
    pub(crate) fn merge(&self) -> Result<(), GitError> {
        let born = self.output(&["rev-parse", "-q", "--verify", "HEAD"])?.status.success();
        let remote = format!("origin/{BRANCH}");
        if !born {
            self.run("take the remote's files", &["reset", "-q", "--hard", &remote])?;
            return Ok(());
        }
        let mut args = self.identity()?;
        args.extend(["merge", "-q", "--no-edit", "--allow-unrelated-histories", &remote]);
        self.run("merge the remote's files", &args)?;
        Ok(())
    }

    /// Pushes the branch.
    pub(crate) fn push(&self) -> Result<Pushed, GitError> {
        let local = self.output(&["rev-parse", "-q", "--verify", "HEAD"])?;
        if !local.status.success() {
            return Ok(Pushed::NothingNew);
        }
        let remote = self.output(&[
            "rev-parse",
            "-q",
            "--verify",
            &format!("refs/remotes/origin/{BRANCH}"),
        ])?;
        if remote.status.success() && remote.stdout == local.stdout {
            return Ok(Pushed::NothingNew);
        }
        let output =
            self.output(&["push", "-q", "origin", &format!("HEAD:refs/heads/{BRANCH}")])?;
        if output.status.success() {
            // The remote-tracking branch follows, so the next sync knows what the remote holds.
            self.run("fetch from the remote", &["fetch", "-q", "origin"])?;
            return Ok(Pushed::Yes);
        }
        let said = String::from_utf8_lossy(&output.stderr);
        // Refused because the branch moved: another machine pushed between this fetch and this
        // push (before the push began, or while it ran: the remote then fails to update the ref).
        let moved = [
            "[rejected]",
            "fetch first",
            "non-fast-forward",
            "failed to update ref",
            "cannot lock ref",
        ];
        if moved.iter().any(|sign| said.contains(sign)) {
            Ok(Pushed::Refused)
        } else {
            Err(failed("push to the remote", &output))
        }
    }
}

/// The person's name as git knows it (`user.name`), to mark what they share.
pub(crate) fn configured_name() -> Option<String> {
    let output = Command::new("git")
        .args(["config", "--get", "user.name"])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let name = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (output.status.success() && !name.is_empty()).then_some(name)
}

fn failed(doing: &'static str, output: &Output) -> GitError {
    let said = String::from_utf8_lossy(&output.stderr);
    let detail = said.trim();
    let detail = if detail.is_empty() {
        format!("it exited with {}", output.status)
    } else {
        detail.lines().take(6).collect::<Vec<_>>().join(" ")
    };
    GitError::Failed { doing, detail }
}
