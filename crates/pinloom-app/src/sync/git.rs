//! Git, run as the person's own `git` command in the sync folder: their credentials, SSH agent
//! and hosting permissions apply, and Pinloom speaks no git protocol of its own. This is the one
//! place besides the providers that reaches the network, and it does so only through `git`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The branch every sync folder commits to.
const BRANCH: &str = "main";

/// Where the folder keeps the remote's branch as this machine last saw it: every later fetch
/// must bring a branch that still holds it, or the remote rewrote its history.
const SEEN: &str = "refs/pinloom/seen";

/// What git could not do.
#[derive(Debug, thiserror::Error)]
pub(in crate::sync) enum GitError {
    /// No `git` on the PATH.
    #[error(
        "git is not installed (or not on the PATH), and Pinloom syncs through it: install git (Debian and Ubuntu: `sudo apt install git`; macOS: `xcode-select --install`; Windows: Git for Windows) and sync again"
    )]
    Missing,
    /// The remote's branch no longer holds what this machine saw there before.
    #[error(
        "the remote's history was rewritten: its branch no longer holds what this machine synced there before (a force-push, or another repository at that address). Nothing was read from it or sent to it, and everything here is kept; if the rewrite was meant, sync to a new, empty remote, which gets all your trees"
    )]
    Rewritten,
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
pub(in crate::sync) enum Pushed {
    /// The remote took the commits.
    Yes,
    /// The remote already had everything.
    NothingNew,
    /// Another machine pushed first: fetch, merge and push again.
    Refused,
}

/// The sync folder's repository.
pub(in crate::sync) struct Git {
    folder: PathBuf,
}

impl Git {
    pub(in crate::sync) fn new(folder: &Path) -> Git {
        Git { folder: folder.to_owned() }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new("git");
        isolated(&mut command);
        command
            .arg("-C")
            .arg(&self.folder)
            // What a remote holds is data: a link it committed is checked out as a small file
            // holding the link's text, never as a link the sync could read or write through.
            .args(["-c", "core.symlinks=false"])
            .args(args)
            .stdin(Stdio::null());
        if let Some(parent) = self.folder.parent() {
            // Git never looks above the sync folder for a repository: a folder whose own
            // repository went missing is made one again, not taken for an enclosing one's.
            command.env("GIT_CEILING_DIRECTORIES", parent);
        }
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
    pub(in crate::sync) fn prepare(&self, remote: &str) -> Result<(), GitError> {
        std::fs::create_dir_all(&self.folder).map_err(|error| GitError::Failed {
            doing: "create the sync folder",
            detail: format!("{}: {error}", self.folder.display()),
        })?;
        if !self.folder.join(".git").is_dir() {
            self.run("create the sync folder's repository", &["init", "-q", "-b", BRANCH])?;
        }
        self.run("configure the sync folder", &["config", "core.symlinks", "false"])?;
        // Packs are compressed already: zlib would spend a second of a first sync on them for
        // nothing (git's own objects, a few hundred bytes a sync, go uncompressed too).
        self.run("configure the sync folder", &["config", "core.compression", "0"])?;
        // A remote's .gitattributes could filter, convert or rewrite what is checked out and
        // committed; this repository's own attributes, which git reads before the work tree's,
        // turn every such attribute off.
        let info = self.folder.join(".git").join("info");
        std::fs::create_dir_all(&info)
            .and_then(|()| {
                crate::base::safe_files::replace_whole(&info.join("attributes"), NEUTRAL_ATTRIBUTES)
            })
            .map_err(|error| GitError::Failed {
                doing: "configure the sync folder",
                detail: format!("{}: {error}", info.display()),
            })?;
        let current = self.output(&["remote", "get-url", "origin"])?;
        if !current.status.success() {
            self.run("remember the remote", &["remote", "add", "origin", remote])?;
        } else if String::from_utf8_lossy(&current.stdout).trim() != remote {
            self.run("change the remote", &["remote", "set-url", "origin", remote])?;
            // Another remote's history is its own: what was seen of the old one, and fetched from
            // it, says nothing of the new one.
            let _ = self.output(&["update-ref", "-d", SEEN])?;
            let _ = self.output(&["update-ref", "-d", &format!("refs/remotes/origin/{BRANCH}")])?;
        }
        Ok(())
    }

    /// Commits every file written and not committed yet; `false` when there were none.
    pub(in crate::sync) fn commit(&self, message: &str) -> Result<bool, GitError> {
        // Forced: a .gitignore a remote committed does not keep this machine's files out.
        self.run("add the new files", &["add", "--all", "--force", "."])?;
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

    /// Fetches the remote; `true` when it has the branch. A branch that no longer holds what
    /// this machine saw there before is refused ([`GitError::Rewritten`]) before anything of it
    /// is merged, and again on every later sync until the person chooses another remote.
    pub(in crate::sync) fn fetch(&self) -> Result<bool, GitError> {
        // Pruned: a branch deleted on the remote is gone here too, and is seen as a rewrite.
        self.run("fetch from the remote", &["fetch", "-q", "--prune", "origin"])?;
        let tracking = format!("refs/remotes/origin/{BRANCH}");
        let found = self.output(&["rev-parse", "-q", "--verify", &tracking])?;
        if !found.status.success() {
            let seen = self.output(&["rev-parse", "-q", "--verify", SEEN])?;
            return if seen.status.success() { Err(GitError::Rewritten) } else { Ok(false) };
        }
        self.check_seen(&tracking)?;
        Ok(true)
    }

    /// Checks that `commit` holds what was seen of the remote before, and remembers it as seen.
    fn check_seen(&self, commit: &str) -> Result<(), GitError> {
        let seen = self.output(&["rev-parse", "-q", "--verify", SEEN])?;
        if seen.status.success() {
            let before = String::from_utf8_lossy(&seen.stdout).trim().to_owned();
            let holds = self.output(&["merge-base", "--is-ancestor", &before, commit])?;
            if !holds.status.success() {
                return Err(GitError::Rewritten);
            }
        }
        self.run("remember the remote's branch", &["update-ref", SEEN, commit])?;
        Ok(())
    }

    /// Merges what was fetched. Files are only ever added under unique names, so this never
    /// conflicts; two folders started apart (two machines' first syncs) merge too.
    pub(in crate::sync) fn merge(&self) -> Result<(), GitError> {
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

    /// Takes out of the index every path the repository holds as a symbolic link (mode 120000)
    /// and returns them. With `core.symlinks` off they are checked out as small files holding the
    /// link's text, but git would go on committing whatever file takes their place as a link; out
    /// of the index, the work tree's files (removed by the caller, or Pinloom's own written in
    /// their place) are committed as the files they are, and no machine that syncs checks them
    /// out as links again.
    pub(in crate::sync) fn forget_links(&self) -> Result<Vec<PathBuf>, GitError> {
        let output = self.output(&["ls-files", "--stage", "-z"])?;
        if !output.status.success() {
            return Err(failed("list the folder's files", &output));
        }
        let links: Vec<&[u8]> = output
            .stdout
            .split(|byte| *byte == 0)
            .filter_map(|entry| {
                let tab = entry.iter().position(|byte| *byte == b'\t')?;
                entry.starts_with(b"120000 ").then(|| &entry[tab + 1..])
            })
            .collect();
        if links.is_empty() {
            return Ok(Vec::new());
        }
        let mut forget = self.command(&["update-index", "--force-remove", "-z", "--stdin"]);
        forget.stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped());
        let mut running = forget.spawn().map_err(|error| GitError::Failed {
            doing: "forget the links in the folder",
            detail: error.to_string(),
        })?;
        if let Some(mut input) = running.stdin.take() {
            for link in &links {
                std::io::Write::write_all(&mut input, link)
                    .and_then(|()| std::io::Write::write_all(&mut input, b"\0"))
                    .map_err(|error| GitError::Failed {
                        doing: "forget the links in the folder",
                        detail: error.to_string(),
                    })?;
            }
        }
        let done = running.wait_with_output().map_err(|error| GitError::Failed {
            doing: "forget the links in the folder",
            detail: error.to_string(),
        })?;
        if !done.status.success() {
            return Err(failed("forget the links in the folder", &done));
        }
        Ok(links
            .into_iter()
            .map(|link| PathBuf::from(String::from_utf8_lossy(link).into_owned()))
            .collect())
    }

    /// Pushes the branch.
    pub(in crate::sync) fn push(&self) -> Result<Pushed, GitError> {
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
            self.check_seen(&format!("refs/remotes/origin/{BRANCH}"))?;
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

/// The attributes the sync folder's repository gives every path: no text conversion, filter,
/// encoding, identifier expansion or merge driver of a remote's choosing. Packs are compressed
/// (and sealed ones encrypted) already, and never edited: git looks for no deltas between them.
const NEUTRAL_ATTRIBUTES: &[u8] =
    b"* -text !eol -filter -ident !working-tree-encoding -export-subst !merge\n*.pack -delta\n";

/// Environment variables that point git at another repository, index, object store or
/// configuration than the one it is run in (set inside a git hook, or by a shell): none of them
/// reaches a sync's git, which would otherwise commit or push another repository's files.
const REDIRECTING: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_INDEX_VERSION",
    "GIT_REPLACE_REF_BASE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_GRAFT_FILE",
    "GIT_SHALLOW_FILE",
    "GIT_QUARANTINE_PATH",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
];

/// Runs git in an environment of its own: nothing inherited redirects it ([`REDIRECTING`], and
/// the numbered `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`), it never waits for a password typed
/// into a terminal nobody watches (the window's: credentials come from the person's agent or
/// credential helper), and it speaks in the C locale, whose words `push` is read for.
fn isolated(command: &mut Command) {
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if REDIRECTING.contains(&name.as_ref())
            || name.starts_with("GIT_CONFIG_KEY_")
            || name.starts_with("GIT_CONFIG_VALUE_")
        {
            command.env_remove(name.as_ref());
        }
    }
    command.env("GIT_TERMINAL_PROMPT", "0").env("LC_ALL", "C");
}

/// The git this machine would sync with, as it names itself (`git version 2.47.3`); `None` when
/// there is none to run.
pub(in crate::sync) fn version() -> Option<String> {
    let mut command = Command::new("git");
    isolated(&mut command);
    let output = command.arg("--version").stdin(Stdio::null()).output().ok()?;
    let said = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (output.status.success() && !said.is_empty()).then_some(said)
}

/// The person's name as git knows it (`user.name`), to mark what they share.
pub(in crate::sync) fn configured_name() -> Option<String> {
    let mut command = Command::new("git");
    isolated(&mut command);
    let output =
        command.args(["config", "--get", "user.name"]).stdin(Stdio::null()).output().ok()?;
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
