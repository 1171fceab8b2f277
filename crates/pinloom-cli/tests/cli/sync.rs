//! `pinloom sync` with real git and a bare repository on disk as the remote: no network, and
//! `HOME` and git's configuration isolated in a temporary folder, so the person's own settings
//! neither help nor hinder.

use std::path::{Path, PathBuf};
use std::process::Command;

use pinloom_app::Pinloom;
use pinloom_app::json::{NodeAction, TreeMode};

/// Two machines (data folders) and one bare repository, with git isolated from this machine's.
struct Machines {
    root: tempfile::TempDir,
}

impl Machines {
    fn new() -> Machines {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("home")).unwrap();
        let machines = Machines { root };
        machines.bare("trees.git");
        machines
    }

    /// A new bare repository `name` in the test's folder: its path.
    fn bare(&self, name: &str) -> String {
        let path = self.root.path().join(name);
        let init = self.git(&["init", "-q", "--bare", "-b", "main"]).arg(&path).output().unwrap();
        assert!(init.status.success(), "{init:?}");
        path.to_str().unwrap().to_owned()
    }

    fn remote(&self) -> PathBuf {
        self.root.path().join("trees.git")
    }

    fn data(&self, machine: &str) -> PathBuf {
        self.root.path().join(machine)
    }

    fn db(&self, machine: &str) -> PathBuf {
        self.data(machine).join(pinloom_app::DATABASE_FILE_NAME)
    }

    fn isolate(&self, command: &mut Command) {
        let home = self.root.path().join("home");
        command
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", home.join(".gitconfig"))
            .env_remove("PINLOOM_DATA_DIR")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE");
    }

    fn git(&self, args: &[&str]) -> Command {
        let mut command = Command::new("git");
        command.args(args);
        self.isolate(&mut command);
        command
    }

    /// Runs `pinloom --db <machine's> args…`: (stdout, stderr, exit code).
    fn pinloom(&self, machine: &str, args: &[&str]) -> (String, String, i32) {
        let mut command = Command::new(env!("CARGO_BIN_EXE_pinloom"));
        command.arg("--db").arg(self.db(machine)).args(args);
        self.isolate(&mut command);
        let output = command.output().unwrap();
        (
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
            output.status.code().unwrap_or(-1),
        )
    }

    /// `joiner` joins team `team` of `owner` as `name`, as a colleague does: `owner` makes an
    /// invitation, `joiner` joins with it (which asks), `owner` syncs (which admits), `joiner`
    /// syncs. The report of that last sync.
    fn invite(&self, owner: &str, joiner: &str, team: &str, name: &str) -> String {
        let (invitation, err, code) = self.pinloom(owner, &["team", "invite", team]);
        assert_eq!(code, 0, "{err}");
        assert!(invitation.contains("code: "), "{invitation}");
        let file = self.root.path().join(format!("invitation-{joiner}.txt"));
        std::fs::write(&file, &invitation).unwrap();
        let (out, err, code) =
            self.pinloom(joiner, &["team", "join", file.to_str().unwrap(), "--as", name]);
        assert_eq!(code, 0, "{out}{err}");
        assert!(out.contains("Asked to join the team"), "{out}");
        let admitted = self.sync(owner);
        assert!(admitted.contains(&format!("Admitted to the team: {name}")), "{admitted}");
        self.sync(joiner)
    }

    /// `pinloom sync` that must succeed; its report.
    fn sync(&self, machine: &str) -> String {
        let (out, err, code) = self.pinloom(machine, &["sync"]);
        assert_eq!(code, 0, "{machine}: {out}{err}");
        out
    }

    fn first_sync(&self, machine: &str) -> String {
        let remote = self.remote();
        let (out, err, code) =
            self.pinloom(machine, &["sync", "--remote", remote.to_str().unwrap()]);
        assert_eq!(code, 0, "{machine}: {out}{err}");
        out
    }

    fn commits(&self) -> usize {
        let output = self
            .git(&["--git-dir"])
            .arg(self.remote())
            .args(["rev-list", "--count", "main"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).trim().parse().unwrap_or(0)
    }

    /// Every file on the branch of the bare repository `remote`, as text: a plain pack opened
    /// (decompressed), anything else as its bytes are, a sealed pack too.
    fn remote_text(&self, remote: &str) -> String {
        self.remote_text_as(remote, None)
    }

    /// [`Machines::remote_text`] as a member of a team reads it: each pack encrypted to
    /// `reader`'s member key opened (one not for it is left as it is).
    fn remote_text_as(&self, remote: &str, reader: Option<&str>) -> String {
        let identity = reader.map(|machine| {
            let store = pinloom_store::Store::open(&self.db(machine)).unwrap();
            let secret = store.sync_member_key().unwrap().expect("a member's key");
            secret.parse::<age::x25519::Identity>().unwrap()
        });
        let listed = self
            .git(&["--git-dir", remote, "ls-tree", "-r", "--name-only", "main"])
            .output()
            .unwrap();
        let mut text = String::new();
        for path in String::from_utf8_lossy(&listed.stdout).lines() {
            let blob = self
                .git(&["--git-dir", remote, "cat-file", "blob", &format!("main:{path}")])
                .output()
                .unwrap()
                .stdout;
            let blob = match &identity {
                Some(identity) => open_age(&blob, identity).unwrap_or(blob),
                None => blob,
            };
            let opened = zstd::stream::decode_all(blob.as_slice()).unwrap_or(blob);
            text.push_str(path);
            text.push('\n');
            text.push_str(&String::from_utf8_lossy(&opened));
            text.push('\n');
        }
        text
    }

    /// Whether the branch of the bare repository `remote` holds `text` in any file.
    fn remote_holds(&self, remote: &str, text: &str) -> bool {
        self.remote_text(remote).contains(text)
    }

    /// Whether a team's remote holds `text` for member `reader`, its packs opened with their key.
    fn team_holds(&self, remote: &str, reader: &str, text: &str) -> bool {
        self.remote_text_as(remote, Some(reader)).contains(text)
    }

    async fn open(&self, machine: &str) -> Pinloom {
        Pinloom::open(self.data(machine)).await.unwrap()
    }

    fn sync_folder(&self, machine: &str) -> PathBuf {
        self.data(machine).join("pinloom-sync").join("origin")
    }
}

/// Ana's tree "Rivers" with its first question, shared as "Ana" with team geo at `team`, which
/// the share creates (her machine owns it): her Pinloom and the tree.
async fn ana_shares_rivers(
    machines: &Machines,
    team: &str,
) -> (Pinloom, pinloom_app::json::TreeSummary) {
    let ana = machines.open("ana").await;
    let rivers = ana.create_tree("Rivers".into(), TreeMode::Dialogue).await.unwrap();
    ana.append_message(rivers.id, None, "Why do rivers meander?".into()).await.unwrap();
    let (out, err, code) = machines
        .pinloom("ana", &["share", "rivers", "--team", "geo", "--remote", team, "--as", "Ana"]);
    assert_eq!(code, 0, "{out}{err}");
    (ana, rivers)
}

/// `bytes` opened with age's `identity`, when they are encrypted to it.
fn open_age(bytes: &[u8], identity: &age::x25519::Identity) -> Option<Vec<u8>> {
    let decryptor = age::Decryptor::new_buffered(bytes).ok()?;
    let mut reader = decryptor.decrypt(std::iter::once(identity as &dyn age::Identity)).ok()?;
    let mut plain = Vec::new();
    std::io::Read::read_to_end(&mut reader, &mut plain).ok()?;
    Some(plain)
}

/// A remote given as a path from where the person stands (`../trees.git`) is the folder they
/// meant, though git runs in the sync folder.
#[test]
fn a_remote_path_is_read_from_where_the_person_stands() {
    let machines = Machines::new();
    let mut command = Command::new(env!("CARGO_BIN_EXE_pinloom"));
    command
        .current_dir(machines.root.path().join("home"))
        .arg("--db")
        .arg(machines.db("laptop"))
        .args(["sync", "--remote", "../trees.git"]);
    machines.isolate(&mut command);
    let output = command.output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.status.code(), Some(0), "{said}");
    let whole = machines.remote().canonicalize().unwrap();
    assert!(said.contains(&format!("Synced with {}", whole.display())), "{said}");
    // Remembered whole: the next sync, from anywhere, finds it.
    assert!(machines.sync("laptop").contains(&format!("Synced with {}", whole.display())));
}

/// The text of a tree as `pinloom tree <global id>` prints it (the same words on every machine).
fn tree_text(machines: &Machines, machine: &str, global_id: &str) -> String {
    let (out, err, code) = machines.pinloom(machine, &["tree", global_id]);
    assert_eq!(code, 0, "{err}");
    // Message numbers are each database's own; the words and the shape are what must agree.
    out.lines()
        .map(|line| {
            let trimmed = line.trim_start();
            let indent = &line[..line.len() - trimmed.len()];
            let words = trimmed.split_once(' ').map_or(trimmed, |(number, rest)| {
                if number.starts_with('#') { rest } else { trimmed }
            });
            format!("{indent}{words}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn two_machines_share_their_trees_through_a_bare_repository() {
    let machines = Machines::new();
    let laptop = machines.open("laptop").await;
    let tree = laptop.create_tree("Rivers".into(), TreeMode::Dialogue).await.unwrap();
    let question =
        laptop.append_message(tree.id, None, "Why do rivers meander?".into()).await.unwrap();
    laptop
        .append_message(tree.id, Some(question.id), "Because the outer bank erodes.".into())
        .await
        .unwrap();
    let pin = laptop.pin_range(question.id, 7, 13, "rivers".into(), String::new()).await.unwrap();
    laptop.ask_in_pin(pin.id, "Which rivers?".into()).await.unwrap();

    let sent = machines.first_sync("laptop");
    assert!(sent.contains("sent 5 records and 0 changes; received 0 records"), "{sent}");
    let received = machines.first_sync("desktop");
    assert!(received.contains("received 5 records"), "{received}");
    let global_id = laptop.list_trees().await.unwrap()[0].global_id.clone();
    assert_eq!(
        tree_text(&machines, "laptop", &global_id),
        tree_text(&machines, "desktop", &global_id)
    );
    let (list, _, _) = machines.pinloom("desktop", &["tree"]);
    assert!(list.contains(&global_id), "the tree list shows the global id: {list}");

    // The desktop answers and renames; the laptop gets both on its next sync, with no remote
    // given: the database remembered it.
    let desktop = machines.open("desktop").await;
    let there = desktop.list_trees().await.unwrap()[0].id;
    let newest = newest(&desktop, there).await;
    desktop
        .append_message(there, Some(newest), "And the inner bank silts up.".into())
        .await
        .unwrap();
    desktop.rename_tree(there, "Rivers and their banks".into()).await.unwrap();
    let sent = machines.sync("desktop");
    assert!(sent.contains("sent 1 record and 1 change"), "{sent}");
    let received = machines.sync("laptop");
    assert!(received.contains("received 1 record and 1 change"), "{received}");
    assert_eq!(laptop.list_trees().await.unwrap()[0].title, "Rivers and their banks");
    assert_eq!(
        tree_text(&machines, "laptop", &global_id),
        tree_text(&machines, "desktop", &global_id)
    );

    // Nothing new: no commit is written, on either side.
    let commits = machines.commits();
    assert!(machines.sync("laptop").contains("nothing new on either side"));
    assert!(machines.sync("desktop").contains("nothing new on either side"));
    assert_eq!(machines.commits(), commits);
}

/// The laptop with a tree "Rivers" of one question, synced once: (laptop, tree, question).
async fn rivers(
    machines: &Machines,
) -> (Pinloom, pinloom_app::json::TreeSummary, pinloom_app::json::Message) {
    let laptop = machines.open("laptop").await;
    let tree = laptop.create_tree("Rivers".into(), TreeMode::Dialogue).await.unwrap();
    let first =
        laptop.append_message(tree.id, None, "Why do rivers meander?".into()).await.unwrap();
    machines.first_sync("laptop");
    (laptop, tree, first)
}

/// The newest message of a small tree: the outline's last line, "#N …".
async fn newest(pinloom: &Pinloom, tree: i64) -> i64 {
    let text = pinloom.tree_text(tree).await.unwrap();
    let last = text.lines().last().unwrap().trim_start();
    last.trim_start_matches('#').split_once(' ').unwrap().0.parse().unwrap()
}

#[tokio::test]
async fn a_delete_on_one_machine_and_an_append_on_the_other_keep_the_append_restorable() {
    let machines = Machines::new();
    let laptop = machines.open("laptop").await;
    let tree = laptop.create_tree("Rivers".into(), TreeMode::Dialogue).await.unwrap();
    let question =
        laptop.append_message(tree.id, None, "Why do rivers meander?".into()).await.unwrap();
    let branch =
        laptop.append_message(tree.id, Some(question.id), "A branch".into()).await.unwrap();
    machines.first_sync("laptop");
    machines.first_sync("desktop");

    laptop.mark_node(branch.id, NodeAction::Delete).await.unwrap();
    let desktop = machines.open("desktop").await;
    let there = desktop.list_trees().await.unwrap()[0].id;
    let on_desktop = newest(&desktop, there).await;
    desktop.append_message(there, Some(on_desktop), "More on the branch".into()).await.unwrap();
    machines.sync("laptop");
    machines.sync("desktop");
    let report = machines.sync("laptop");
    assert!(report.contains("continue a branch deleted here"), "{report}");
    // In the laptop's trash with its branch (the branch is the one deleted message listed);
    // restoring brings it back, on both machines.
    let trash = laptop.trash().await.unwrap();
    let deleted: Vec<_> = trash.branches.iter().map(|branch| branch.id).collect();
    assert_eq!(deleted, [branch.id]);
    assert!(laptop.tree_text(tree.id).await.unwrap().contains("More on the branch"));
    laptop.mark_node(branch.id, NodeAction::Restore).await.unwrap();
    machines.sync("laptop");
    machines.sync("desktop");
    let global_id = laptop.list_trees().await.unwrap()[0].global_id.clone();
    let text = tree_text(&machines, "desktop", &global_id);
    assert!(text.contains("More on the branch"), "{text}");
    assert_eq!(text, tree_text(&machines, "laptop", &global_id));
}

#[tokio::test]
async fn two_pushes_racing_both_land() {
    let machines = Machines::new();
    let laptop = machines.open("laptop").await;
    let tree = laptop.create_tree("Rivers".into(), TreeMode::Dialogue).await.unwrap();
    let first = laptop.append_message(tree.id, None, "From the laptop".into()).await.unwrap();
    machines.first_sync("laptop");
    machines.first_sync("desktop");
    let desktop = machines.open("desktop").await;
    let other = desktop.create_tree("Estuaries".into(), TreeMode::Dialogue).await.unwrap();
    desktop.append_message(other.id, None, "From the desktop".into()).await.unwrap();
    laptop.append_message(tree.id, Some(first.id), "More from the laptop".into()).await.unwrap();

    // The desktop's push waits until the laptop has pushed: a hook in the desktop's sync
    // folder runs the laptop's sync between the desktop's fetch and its push, once.
    let hook = machines.sync_folder("desktop").join(".git/hooks/pre-push");
    let marker = machines.root.path().join("raced");
    let script = format!(
        "#!/bin/sh\nif [ ! -e '{marker}' ]; then touch '{marker}'; '{pinloom}' --db '{db}' sync >/dev/null || exit 1; fi\nexit 0\n",
        marker = marker.display(),
        pinloom = env!("CARGO_BIN_EXE_pinloom"),
        db = machines.db("laptop").display(),
    );
    std::fs::write(&hook, script).unwrap();
    make_executable(&hook);
    let report = machines.sync("desktop");
    assert!(marker.exists(), "the race ran");
    assert!(report.contains("received 1 record"), "the desktop merged the laptop's push: {report}");
    machines.sync("laptop");
    let titles = |list: Vec<pinloom_app::json::TreeSummary>| {
        let mut titles: Vec<_> =
            list.into_iter().map(|tree| (tree.title, tree.message_count)).collect();
        titles.sort();
        titles
    };
    assert_eq!(
        titles(laptop.list_trees().await.unwrap()),
        titles(desktop.list_trees().await.unwrap())
    );
    assert_eq!(
        titles(laptop.list_trees().await.unwrap()),
        [("Estuaries".to_owned(), 1), ("Rivers".to_owned(), 2)]
    );
}

#[tokio::test]
async fn a_sync_that_stopped_between_commit_and_push_is_finished_by_the_next() {
    let machines = Machines::new();
    let (laptop, tree, first) = rivers(&machines).await;
    laptop
        .append_message(tree.id, Some(first.id), "Written before the push failed".into())
        .await
        .unwrap();
    // The push fails after the commit (as a crash or a lost connection would leave it).
    let hook = machines.sync_folder("laptop").join(".git/hooks/pre-push");
    std::fs::write(&hook, "#!/bin/sh\nexit 1\n").unwrap();
    make_executable(&hook);
    let (_, err, code) = machines.pinloom("laptop", &["sync"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("git could not push"), "{err}");
    std::fs::remove_file(&hook).unwrap();
    let finished = machines.sync("laptop");
    assert!(finished.contains("pushed what an interrupted sync had committed"), "{finished}");
    machines.first_sync("desktop");
    let desktop = machines.open("desktop").await;
    assert_eq!(desktop.list_trees().await.unwrap()[0].message_count, 2);
}

#[tokio::test]
async fn damaged_and_unknown_files_are_skipped_and_reported_and_the_rest_arrives() {
    let machines = Machines::new();
    let (laptop, tree, first) = rivers(&machines).await;
    // Another tool (or a newer Pinloom) adds files to the laptop's folder and syncs them out.
    let folder = machines.sync_folder("laptop");
    let damaged = folder.join("records/messages/01/0190aaaa-0000-7000-8000-000000000001.json");
    std::fs::create_dir_all(damaged.parent().unwrap()).unwrap();
    std::fs::write(&damaged, "{\"kind\": \"message\", \"id\": ").unwrap();
    let unknown = folder.join("records/images/02/0190aaaa-0000-7000-8000-000000000002.json");
    std::fs::create_dir_all(unknown.parent().unwrap()).unwrap();
    std::fs::write(&unknown, "{\"kind\": \"image\"}").unwrap();
    laptop.append_message(tree.id, Some(first.id), "Still arrives".into()).await.unwrap();
    machines.sync("laptop");

    let report = machines.first_sync("desktop");
    assert!(
        report.contains(
            "Skipped a damaged file: records/messages/01/0190aaaa-0000-7000-8000-000000000001.json"
        ),
        "{report}"
    );
    assert!(report.contains("1 files are of a kind this Pinloom does not know"), "{report}");
    let desktop = machines.open("desktop").await;
    assert_eq!(desktop.list_trees().await.unwrap()[0].message_count, 2);
    // Reported once: the damaged file will not read better, so the next sync is quiet about it.
    assert!(!machines.sync("desktop").contains("damaged"));
}

#[tokio::test]
async fn a_folder_from_a_newer_pinloom_or_no_git_or_no_remote_stop_with_what_to_do() {
    let machines = Machines::new();
    let (_, err, code) = machines.pinloom("laptop", &["sync"]);
    assert_eq!(code, 2);
    assert!(err.contains("no sync remote yet") && err.contains("--remote"), "{err}");

    // No git on the PATH.
    let empty = machines.root.path().join("no-git");
    std::fs::create_dir_all(&empty).unwrap();
    let remote = machines.remote();
    let mut command = Command::new(env!("CARGO_BIN_EXE_pinloom"));
    command.arg("--db").arg(machines.db("laptop")).args([
        "sync",
        "--remote",
        remote.to_str().unwrap(),
    ]);
    machines.isolate(&mut command);
    let output = command.env("PATH", &empty).output().unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("git is not installed"), "{err}");

    // A remote whose folder a newer Pinloom wrote.
    machines.first_sync("laptop");
    let clone = machines.root.path().join("newer");
    let status = machines.git(&["clone", "-q"]).arg(&remote).arg(&clone).status().unwrap();
    assert!(status.success());
    std::fs::write(clone.join("format.json"), "{\"format\": \"pinloom-sync\", \"version\": 3}\n")
        .unwrap();
    for args in [
        &["add", "-A"][..],
        &[
            "-c",
            "user.name=Newer",
            "-c",
            "user.email=newer@localhost",
            "commit",
            "-q",
            "-m",
            "newer",
        ],
        &["push", "-q", "origin", "HEAD:main"],
    ] {
        let status = machines.git(&["-C"]).arg(&clone).args(args).status().unwrap();
        assert!(status.success(), "{args:?}");
    }
    let (_, err, code) = machines.pinloom("laptop", &["sync"]);
    assert_eq!(code, 2);
    assert!(err.contains("newer Pinloom") && err.contains("update Pinloom"), "{err}");
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test]
async fn one_sync_at_a_time_and_a_sync_that_died_leaves_no_lock() {
    let machines = Machines::new();
    let (laptop, tree, first) = rivers(&machines).await;
    laptop
        .append_message(tree.id, Some(first.id), "Waiting for the other sync".into())
        .await
        .unwrap();
    let lock = machines.data("laptop").join("pinloom-sync/origin.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    // Another process holds the lock (as a running sync does) until it is killed.
    let mut holder = Command::new("flock")
        .arg("--no-fork")
        .arg(&lock)
        .args(["sh", "-c", "echo held; exec sleep 60"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(holder.stdout.take().unwrap()),
        &mut said,
    )
    .unwrap();
    assert_eq!(said.trim(), "held");
    let (_, err, code) = machines.pinloom("laptop", &["sync"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("another sync of this database is running"), "{err}");
    // Killed mid-sync: the file stays behind, the lock does not.
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert!(lock.exists());
    assert!(machines.sync("laptop").contains("sent 1 record"));
}

#[tokio::test]
async fn a_tree_shared_with_a_team_reaches_its_members_and_their_additions_come_back() {
    let machines = Machines::new();
    let team_remote = machines.bare("team.git");

    let ana = machines.open("ana").await;
    let rivers = ana.create_tree("Rivers".into(), TreeMode::Dialogue).await.unwrap();
    ana.append_message(rivers.id, None, "Why do rivers meander?".into()).await.unwrap();
    let private = ana.create_tree("Private notes".into(), TreeMode::Dialogue).await.unwrap();
    ana.append_message(private.id, None, "Not for the team".into()).await.unwrap();
    let (out, err, code) = machines.pinloom(
        "ana",
        &["share", "rivers", "--team", "geo", "--remote", &team_remote, "--as", "Ana"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("sent 2 records"), "{out}");

    // Ben joins the team with Ana's invitation: the shared tree arrives, marked with who shared
    // it; nothing else does.
    let out = machines.invite("ana", "ben", "geo", "Ben");
    assert!(out.contains("received 2 records"), "{out}");
    let (list, _, _) = machines.pinloom("ben", &["tree"]);
    assert_eq!(list.lines().count(), 1, "{list}");
    assert!(list.contains("Rivers") && list.ends_with("shared by Ana\n"), "{list}");
    let in_the_team = machines
        .git(&["--git-dir", &team_remote, "grep", "-c", "Not for the team", "main"])
        .output()
        .unwrap();
    assert!(!in_the_team.status.success(), "the private tree never reached the team's remote");
    // The team's remote holds the shared tree encrypted to its members: not a word of it either.
    assert!(!machines.remote_holds(&team_remote, "Why do rivers meander?"));

    // Ben answers in the shared tree; Ana's next plain `pinloom sync` brings it back, his.
    let ben = machines.open("ben").await;
    let there = ben.list_trees().await.unwrap()[0].id;
    let on_ben = newest(&ben, there).await;
    ben.append_message(there, Some(on_ben), "Because the outer bank erodes.".into()).await.unwrap();
    assert!(machines.sync("ben").contains("sent 1 record"));
    assert!(machines.sync("ana").contains("received 1 record"));
    let text = ana.tree_text(rivers.id).await.unwrap();
    assert!(text.contains("Ben: Because the outer bank erodes."), "{text}");
    assert!(text.contains("you: Why do rivers meander?"), "{text}");
    let (members, _, _) = machines.pinloom("ana", &["team", "list"]);
    assert!(members.contains("Ana") && members.contains("owner, you"), "{members}");
    assert!(members.contains("\n    Ben  "), "{members}");
}

#[tokio::test]
async fn a_person_in_a_team_on_two_machines_gets_the_teams_additions_on_both() {
    let machines = Machines::new();
    let team = machines.bare("team.git");
    let laptop = machines.open("laptop").await;
    let rivers = laptop.create_tree("Rivers".into(), TreeMode::Dialogue).await.unwrap();
    laptop.append_message(rivers.id, None, "Why do rivers meander?".into()).await.unwrap();
    machines.first_sync("laptop");
    let (out, err, code) =
        machines.pinloom("laptop", &["share", "rivers", "--team", "geo", "--remote", &team]);
    assert_eq!(code, 0, "{out}{err}");
    machines.sync("laptop");
    // The desktop has the tree through the person's own remote, and with it that it is shared
    // with geo; then it joins geo too, invited by the laptop (each machine is a member).
    machines.first_sync("desktop");
    let out = machines.invite("laptop", "desktop", "geo", "Ana on her desktop");
    assert!(!out.contains("not shared") && !out.contains("Skipped"), "{out}");
    // Ben answers in the team; the desktop takes it in, and its own answer goes back.
    machines.invite("laptop", "ben", "geo", "Ben");
    let ben = machines.open("ben").await;
    let there = ben.list_trees().await.unwrap()[0].id;
    let on_ben = newest(&ben, there).await;
    ben.append_message(there, Some(on_ben), "Because the outer bank erodes.".into()).await.unwrap();
    machines.sync("ben");
    let got = machines.sync("desktop");
    assert!(!got.contains("not shared"), "{got}");
    let desktop = machines.open("desktop").await;
    let here = desktop.list_trees().await.unwrap()[0].id;
    assert!(desktop.tree_text(here).await.unwrap().contains("outer bank erodes"));
    let on_desktop = newest(&desktop, here).await;
    desktop.append_message(here, Some(on_desktop), "And meanders migrate.".into()).await.unwrap();
    machines.sync("desktop");
    machines.sync("ben");
    let text = ben.tree_text(there).await.unwrap();
    assert!(text.contains("Ana on her desktop: And meanders migrate."), "{text}");
    assert!(!machines.remote_holds(&team, "And meanders migrate."), "encrypted to the members");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_arrives_with_its_receipt_naming_the_other_machines_messages() {
    use pinloom_test_server::{Answer, Server, chat_stream};
    let server = Server::start(vec![Answer::sse(&chat_stream(&["Oxbow ", "lakes."], 31), 0)]).await;
    let machines = Machines::new();
    // The desktop holds a tree of its own first, so the machines number their messages apart.
    let desktop = machines.open("desktop").await;
    let own = desktop.create_tree("Own".into(), TreeMode::Dialogue).await.unwrap();
    desktop.append_message(own.id, None, "A tree of the desktop's".into()).await.unwrap();
    let laptop = machines.open("laptop").await;
    let mut profile =
        pinloom_app::json::ModelProfile::new("Local", "vllm", "local-model", 8_192, 1_024, "o200k");
    profile.base_url = Some(format!("{}/v1", server.base));
    laptop.save_model_profile(profile).await.unwrap();
    let asked = {
        let machines = &machines;
        tokio::task::block_in_place(|| {
            machines.pinloom("laptop", &["ask", "--profile", "Local", "And oxbows?"])
        })
    };
    assert_eq!(asked.2, 0, "{}{}", asked.0, asked.1);
    let receipts: i64 = rusqlite::Connection::open(machines.db("laptop"))
        .unwrap()
        .query_row("SELECT count(*) FROM receipts", [], |row| row.get(0))
        .unwrap();
    assert_eq!(receipts, 1, "the laptop's reply has its receipt");
    let (sent, received) = tokio::task::block_in_place(|| {
        (machines.first_sync("laptop"), machines.first_sync("desktop"))
    });
    assert!(
        sent.contains("sent 4 records"),
        "a tree, the question, the reply and its receipt: {sent}"
    );
    assert!(received.contains("received 4 records"), "{received}");

    let trees = desktop.list_trees().await.unwrap();
    let arrived = trees.iter().find(|tree| tree.title != "Own").unwrap().id;
    let reply = newest(&desktop, arrived).await;
    let receipt = desktop.receipt(reply).await.unwrap().expect("the receipt came with the reply");
    assert_eq!(receipt.counted, Some(31));
    assert_eq!(receipt.profile, "Local");
    let question = desktop.tree_text(arrived).await.unwrap();
    let question_id: i64 = question
        .lines()
        .find(|line| line.trim_start().starts_with('#') && line.contains("And oxbows?"))
        .and_then(|line| line.trim_start().trim_start_matches('#').split_once(' '))
        .map(|(id, _)| id.parse().unwrap())
        .unwrap();
    let named: Vec<i64> = receipt.sent.iter().filter_map(|slice| slice.source_id).collect();
    assert_eq!(named, [question_id], "the receipt names the desktop's own message");
}

#[tokio::test]
async fn model_profiles_and_prices_travel_only_when_chosen_and_never_to_a_team() {
    let machines = Machines::new();
    let (laptop, tree, _) = rivers(&machines).await;
    let mut profile =
        pinloom_app::json::ModelProfile::new("Lab server", "vllm", "qwen", 32_768, 2_048, "o200k");
    profile.base_url = Some("http://127.0.0.1:8000/v1".into());
    laptop.save_model_profile(profile.clone()).await.unwrap();
    let names = |profiles: Vec<pinloom_app::json::ModelProfile>| -> Vec<String> {
        profiles.into_iter().map(|profile| profile.name).collect()
    };

    // Not chosen: the trees go, the profile does not.
    machines.first_sync("desktop");
    let desktop = machines.open("desktop").await;
    assert!(!names(desktop.model_profiles().await.unwrap()).contains(&"Lab server".to_owned()));

    // Chosen on the laptop: it goes, and a later change follows it.
    let (out, err, code) = machines.pinloom("laptop", &["sync", "--with-profiles"]);
    assert_eq!(code, 0, "{out}{err}");
    // The profiles the app starts with go too; the desktop has its own, as new.
    assert!(out.contains("sent "), "{out}");
    // Not chosen on the desktop yet: nothing comes. Chosen: it comes, new here, so it waits to
    // be enabled (a remote's profile could name a model and a system prompt of anyone's choice).
    machines.sync("desktop");
    assert!(!names(desktop.model_profiles().await.unwrap()).contains(&"Lab server".to_owned()));
    let (got, err, code) = machines.pinloom("desktop", &["sync", "--with-profiles"]);
    assert_eq!(code, 0, "{got}{err}");
    assert!(!got.contains("Skipped"), "{got}");
    assert!(got.contains("\"Lab server\"") && got.contains("not enabled"), "{got}");
    let rows: i64 = rusqlite::Connection::open(machines.db("desktop"))
        .unwrap()
        .query_row("SELECT count(*) FROM model_profiles WHERE name = 'Lab server'", [], |row| {
            row.get(0)
        })
        .unwrap();
    assert_eq!(rows, 1, "{got}");
    let there = desktop.model_profiles().await.unwrap();
    let arrived = there.iter().find(|profile| profile.name == "Lab server").expect("it arrived");
    assert_eq!(arrived.context_window, 32_768);
    assert!(arrived.imported_from.is_some(), "{arrived:?}");
    desktop.enable_model_profile("Lab server".into()).await.unwrap();
    machines.sync("desktop");
    machines.sync("laptop");
    // A later version with the same provider, address and system prompt stays enabled.
    profile.context_window = 65_536;
    std::thread::sleep(std::time::Duration::from_millis(5));
    laptop.save_model_profile(profile.clone()).await.unwrap();
    machines.sync("laptop");
    machines.sync("desktop");
    let there = desktop.model_profiles().await.unwrap();
    let changed = there.iter().find(|profile| profile.name == "Lab server").unwrap();
    assert_eq!((changed.context_window, changed.imported_from.clone()), (65_536, None));

    // A team's remote gets no profile, even with profiles chosen: a member receives the tree
    // and nothing else (a profile in the team's folder would be reported as skipped).
    let team_remote = machines.bare("team.git");
    let (out, err, code) = machines
        .pinloom("laptop", &["share", &tree.global_id, "--team", "geo", "--remote", &team_remote]);
    assert_eq!(code, 0, "{out}{err}");
    let out = machines.invite("laptop", "ben", "geo", "Ben");
    assert!(out.contains("received 2 records") && !out.contains("Skipped"), "{out}");
    let ben = machines.open("ben").await;
    assert_eq!(ben.list_trees().await.unwrap().len(), 1);
    assert!(!names(ben.model_profiles().await.unwrap()).contains(&"Lab server".to_owned()));
}

#[tokio::test]
async fn a_tree_exported_and_imported_elsewhere_keeps_its_global_ids_and_syncs_as_the_same_tree() {
    let machines = Machines::new();
    let (laptop, tree, first) = rivers(&machines).await;
    laptop.append_message(tree.id, Some(first.id), "An answer".into()).await.unwrap();
    machines.sync("laptop");
    let file = machines.root.path().join("rivers.openloom");
    let (out, err, code) = machines.pinloom(
        "laptop",
        &["export", "--tree", "rivers", "--format", "openloom", "--output", file.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{out}{err}");
    let exported = std::fs::read_to_string(&file).unwrap();
    assert!(exported.contains(&tree.global_id), "the export shows the tree's global id");

    let (out, err, code) = machines.pinloom("desktop", &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let desktop = machines.open("desktop").await;
    assert_eq!(desktop.list_trees().await.unwrap()[0].global_id, tree.global_id);
    // The same tree: the sync finds its records here already and makes no second copy.
    let report = machines.first_sync("desktop");
    assert!(report.contains("received 0 records"), "{report}");
    assert_eq!(desktop.list_trees().await.unwrap().len(), 1);

    // Imported again, it is a copy, said so, with ids of its own.
    let (out, err, code) = machines.pinloom("desktop", &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("is already here") && out.contains("imported as a copy"), "{out}");
    let trees = desktop.list_trees().await.unwrap();
    assert_eq!(trees.len(), 2);
    assert_ne!(trees[0].global_id, trees[1].global_id);
}

mod hostile;
mod roster;
mod sealed;
