//! Sync round 2 against real git and bare repositories: an encrypted remote that holds no word of
//! the trees, a remote whose history was rewritten, a folder an earlier Pinloom wrote one file per
//! record, converted into packs, and a team joined by invitation.

use std::path::Path;

use pinloom_app::json::TreeMode;
use serde_json::json;

use super::Machines;
use super::hostile::{message_record, new_id, now_clock, op, tree_record};

const PASSPHRASE: &str = "correct horse battery staple";

impl Machines {
    /// `pinloom sync [args]` on `machine` with the kernel's keyring (which keeps a remote's key
    /// between runs here) and, when given, the passphrase: (stdout, stderr, exit code).
    fn sync_sealed(
        &self,
        machine: &str,
        args: &[&str],
        passphrase: Option<&str>,
    ) -> (String, String, i32) {
        let mut env: Vec<(&str, &Path)> = vec![("PINLOOM_KEYRING", Path::new("kernel"))];
        let mut all = vec!["sync"];
        all.extend_from_slice(args);
        if let Some(passphrase) = passphrase {
            env.push(("PINLOOM_SYNC_PASSPHRASE", Path::new(passphrase)));
            all.push("--passphrase");
        }
        let (out, err, code) = self.pinloom_with(machine, &all, &env);
        (String::from_utf8(out).unwrap(), err, code)
    }

    /// Every object the bare repository `remote` holds, as git gives it back (decompressed),
    /// with each pack opened where it is plain zstd: what anyone holding the remote can read.
    fn every_object(&self, remote: &str) -> String {
        let all = self
            .git(&["--git-dir", remote, "cat-file", "--batch-all-objects", "--batch"])
            .output()
            .unwrap();
        assert!(all.status.success());
        let mut text = String::from_utf8_lossy(&all.stdout).into_owned();
        text.push_str(&self.remote_text(remote));
        text
    }
}

#[tokio::test]
async fn an_encrypted_remote_holds_no_word_and_a_new_machine_joins_with_the_passphrase() {
    let machines = Machines::new();
    let remote = machines.remote();
    let remote = remote.to_str().unwrap();
    let laptop = machines.open("laptop").await;
    let tree =
        laptop.create_tree("Rivers of the Ardennes".into(), TreeMode::Dialogue).await.unwrap();
    let question =
        laptop.append_message(tree.id, None, "Why does the Semois meander?".into()).await.unwrap();
    laptop
        .append_message(tree.id, Some(question.id), "Because its outer bank erodes.".into())
        .await
        .unwrap();
    laptop.pin_range(question.id, 13, 19, "Semois".into(), String::new()).await.unwrap();
    let words = ["Rivers of the Ardennes", "Semois", "outer bank erodes", &tree.global_id];

    let (out, err, code) = machines.sync_sealed("laptop", &["--remote", remote], Some(PASSPHRASE));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("sent 4 records"), "{out}");
    assert!(laptop.sync_status().await.unwrap().encrypted, "Settings → Sync says so");
    let held = machines.every_object(remote);
    for word in words {
        assert!(!held.contains(word), "the remote holds {word:?}");
    }
    // Packed by git as a hosting service would: still nothing.
    let gc = machines.git(&["--git-dir", remote, "gc", "-q", "--aggressive"]).output().unwrap();
    assert!(gc.status.success());
    let held = machines.every_object(remote);
    for word in words {
        assert!(!held.contains(word), "the packed remote holds {word:?}");
    }

    // A new machine: without the passphrase, or with a wrong one, one line and nothing written.
    let commits = machines.commits();
    let (_, err, code) = machines.sync_sealed("desktop", &["--remote", remote], None);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("encrypted") && err.contains("--passphrase"), "{err}");
    let (_, err, code) =
        machines.sync_sealed("desktop", &["--remote", remote], Some("wrong horse"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("does not open"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(machines.commits(), commits, "nothing was pushed");
    let desktop = machines.open("desktop").await;
    assert!(desktop.list_trees().await.unwrap().is_empty());

    // With it, everything arrives. The key is kept in the keyring where one keeps it; the
    // kernel's keyring of a test run outside a login session may not give it to the next
    // process, so each sync here gives the passphrase again.
    let (out, err, code) = machines.sync_sealed("desktop", &["--remote", remote], Some(PASSPHRASE));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("received 4 records"), "{out}");
    let there = desktop.list_trees().await.unwrap();
    assert_eq!(there[0].title, "Rivers of the Ardennes");
    let newest = super::newest(&desktop, there[0].id).await;
    desktop.append_message(there[0].id, Some(newest), "And the Ourthe?".into()).await.unwrap();
    let (out, err, code) = machines.sync_sealed("desktop", &[], Some(PASSPHRASE));
    assert_eq!(code, 0, "{out}{err}");
    let (out, err, code) = machines.sync_sealed("laptop", &[], Some(PASSPHRASE));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("received 1 record"), "{out}");
    assert!(!machines.every_object(remote).contains("Ourthe"));
    // Someone with push access rewrites format.json to say the remote is not encrypted: a
    // machine that knew it encrypted writes nothing to it in the clear.
    let work = machines.root.path().join("downgrader");
    let cloned = machines.git(&["clone", "-q", remote]).arg(&work).output().unwrap();
    assert!(cloned.status.success());
    let format = std::fs::read_to_string(work.join("format.json")).unwrap();
    std::fs::write(
        work.join("format.json"),
        format.replace("\"sealed\": true", "\"sealed\": false"),
    )
    .unwrap();
    for args in [
        &["-c", "user.name=D", "-c", "user.email=d@localhost", "commit", "-q", "-am", "plain"][..],
        &["push", "-q", "origin", "HEAD:main"],
    ] {
        let done = machines.git(&["-C"]).arg(&work).args(args).output().unwrap();
        assert!(done.status.success(), "{args:?}: {done:?}");
    }
    let newest = super::newest(&laptop, tree.id).await;
    laptop.append_message(tree.id, Some(newest), "The Lesse too.".into()).await.unwrap();
    let (_, err, code) = machines.sync_sealed("laptop", &[], Some(PASSPHRASE));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("now says it is not"), "{err}");
    assert!(!machines.every_object(remote).contains("The Lesse too"));
    let restored = machines
        .git(&["-C"])
        .arg(&work)
        .args(["-c", "user.name=D", "-c", "user.email=d@localhost", "revert", "--no-edit", "HEAD"])
        .output();
    assert!(restored.unwrap().status.success());
    let pushed =
        machines.git(&["-C"]).arg(&work).args(["push", "-q", "origin", "HEAD:main"]).output();
    assert!(pushed.unwrap().status.success());

    // A team joined beside it is synced with the same command; the passphrase is the own
    // remote's, not the team's.
    let team = machines.bare("team.git");
    let (out, err, code) =
        machines.pinloom("laptop", &["share", &tree.global_id, "--team", "geo", "--remote", &team]);
    assert_eq!(code, 0, "{out}{err}");
    let (out, err, code) = machines.sync_sealed("laptop", &[], Some(PASSPHRASE));
    assert_eq!(code, 0, "{out}{err}");

    // A passphrase for a remote that already holds plain text is refused: it could not hide
    // what the history holds.
    let plain = machines.bare("plain.git");
    let (out, err, code) = machines.sync_sealed("other", &["--remote", &plain], None);
    assert_eq!(code, 0, "{out}{err}");
    let other = machines.open("other").await;
    assert!(!other.sync_status().await.unwrap().encrypted);
    other.create_tree("Plain".into(), TreeMode::Dialogue).await.unwrap();
    machines.sync_sealed("other", &[], None);
    let (_, err, code) = machines.sync_sealed("other", &[], Some(PASSPHRASE));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unencrypted"), "{err}");
    // A new, empty remote with the passphrase takes everything encrypted, and nothing of the
    // plain remote's history.
    let sealed = machines.bare("sealed.git");
    let (out, err, code) = machines.sync_sealed("other", &["--remote", &sealed], Some(PASSPHRASE));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("sent 1 record"), "{out}");
    assert!(machines.remote_holds(&plain, "Plain"));
    assert!(!machines.every_object(&sealed).contains("Plain"), "no plain text went along");
}

#[tokio::test]
async fn a_remote_whose_history_was_rewritten_is_refused_and_nothing_here_is_lost() {
    let machines = Machines::new();
    let laptop = machines.open("laptop").await;
    let tree = laptop.create_tree("Rivers".into(), TreeMode::Dialogue).await.unwrap();
    let first =
        laptop.append_message(tree.id, None, "Why do rivers meander?".into()).await.unwrap();
    machines.first_sync("laptop");
    // Someone replaces the branch with a history of their own.
    let remote = machines.remote();
    let work = machines.root.path().join("rewriter");
    let made = machines.git(&["init", "-q", "-b", "main"]).arg(&work).output().unwrap();
    assert!(made.status.success());
    std::fs::write(work.join("format.json"), "{\"format\": \"pinloom-sync\", \"version\": 2}\n")
        .unwrap();
    for args in [
        &["add", "-A"][..],
        &["-c", "user.name=R", "-c", "user.email=r@localhost", "commit", "-q", "-m", "new start"],
        &["push", "-q", "--force", remote.to_str().unwrap(), "HEAD:main"],
    ] {
        let done = machines.git(&["-C"]).arg(&work).args(args).output().unwrap();
        assert!(done.status.success(), "{args:?}: {done:?}");
    }
    laptop.append_message(tree.id, Some(first.id), "A second question".into()).await.unwrap();
    for _ in 0..2 {
        let (out, err, code) = machines.pinloom("laptop", &["sync"]);
        assert_eq!(code, 2, "{out}{err}");
        assert!(err.contains("history was rewritten"), "{err}");
    }
    assert_eq!(machines.commits(), 1, "nothing was pushed onto the rewritten branch");
    let text = laptop.tree_text(tree.id).await.unwrap();
    assert!(text.contains("Why do rivers meander?") && text.contains("A second question"));
    // Another remote is a new start: all the trees go there.
    let fresh = machines.bare("fresh.git");
    let (out, err, code) = machines.pinloom("laptop", &["sync", "--remote", &fresh]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("sent 3 records"), "{out}");
}

#[tokio::test]
async fn a_folder_an_earlier_pinloom_wrote_is_read_and_converted_into_packs() {
    let machines = Machines::new();
    // The layout an earlier Pinloom wrote: one file per record and per change.
    let remote = machines.remote();
    let work = machines.root.path().join("earlier");
    let made = machines.git(&["init", "-q", "-b", "main"]).arg(&work).output().unwrap();
    assert!(made.status.success());
    let write = |relative: &str, text: String| {
        let path = work.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("format.json", "{\"format\": \"pinloom-sync\", \"version\": 1}\n".into());
    let tree = new_id(1);
    let first = new_id(2);
    let records = [
        tree_record(&tree, "Deltas"),
        message_record(&first, &tree, None, "human", "How do deltas form?"),
        message_record(&new_id(3), &tree, Some(&first), "model", "Sediment settles."),
    ];
    for record in &records {
        let id = record.id();
        let relative =
            format!("records/{}/{}/{id}.json", record.kind().folder(), &id[id.len() - 2..]);
        write(&relative, serde_json::to_string(record).unwrap());
    }
    let rename = op(&tree, "tree", "title", json!("Deltas and fans"), now_clock());
    write(
        &format!("ops/{}/{}.json", rename.device, rename.id),
        serde_json::to_string(&rename).unwrap(),
    );
    for args in [
        &["add", "-A"][..],
        &["-c", "user.name=E", "-c", "user.email=e@localhost", "commit", "-q", "-m", "earlier"],
        &["push", "-q", remote.to_str().unwrap(), "HEAD:main"],
    ] {
        let done = machines.git(&["-C"]).arg(&work).args(args).output().unwrap();
        assert!(done.status.success(), "{args:?}: {done:?}");
    }

    let report = machines.first_sync("laptop");
    assert!(report.contains("received 3 records and 1 change"), "{report}");
    assert!(report.contains("4 files in the layout of an earlier Pinloom"), "{report}");
    let listed = machines
        .git(&["--git-dir", remote.to_str().unwrap(), "ls-tree", "-r", "--name-only", "main"])
        .output()
        .unwrap();
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert!(!listed.contains("records/") && !listed.contains("ops/"), "{listed}");
    assert!(listed.contains("packs/"), "{listed}");
    let format = machines.remote_text(remote.to_str().unwrap());
    assert!(format.contains("\"version\": 2"), "{format}");

    // A new machine reads it all from the packs, the rename too.
    let report = machines.first_sync("desktop");
    assert!(report.contains("received 3 records and 1 change"), "{report}");
    let desktop = machines.open("desktop").await;
    assert_eq!(desktop.list_trees().await.unwrap()[0].title, "Deltas and fans");
    // And the machine that converted it has nothing new to read again, nor anything to skip.
    let again = machines.sync("laptop");
    assert!(again.contains("nothing new on either side") && !again.contains("Skipped"), "{again}");
}

#[tokio::test]
async fn a_colleague_joins_a_team_by_invitation_and_leaving_keeps_the_trees() {
    let machines = Machines::new();
    let team = machines.bare("team.git");
    super::ana_shares_rivers(&machines, &team).await;
    let (invitation, err, code) = machines.pinloom("ana", &["team", "invite", "geo"]);
    assert_eq!(code, 0, "{err}");
    assert!(invitation.contains("team: geo") && invitation.contains(&team), "{invitation}");
    assert!(invitation.contains("recipient: age1"), "{invitation}");
    let (listed, _, _) = machines.pinloom("ana", &["team", "list"]);
    assert!(listed.contains("geo") && listed.contains("1 shared tree"), "{listed}");

    // Ben joins: his machine asks, Ana's next sync admits him, his next sync brings the tree.
    let file = machines.root.path().join("invitation.txt");
    std::fs::write(&file, &invitation).unwrap();
    let (out, err, code) =
        machines.pinloom("ben", &["team", "join", file.to_str().unwrap(), "--as", "Ben"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Asked to join the team geo"), "{out}");
    let (listed, _, _) = machines.pinloom("ben", &["team", "list"]);
    assert!(listed.contains("asked to join"), "{listed}");
    let admitted = machines.sync("ana");
    assert!(admitted.contains("Admitted to the team: Ben."), "{admitted}");
    // The same invitation a second time (forwarded, copied): it admitted Ben, no one else.
    let (out, err, code) =
        machines.pinloom("cleo", &["team", "join", file.to_str().unwrap(), "--as", "Cleo"]);
    assert_eq!(code, 0, "{out}{err}");
    let refused = machines.sync("ana");
    assert!(refused.contains("Cleo asked to join with an invitation that is not one"), "{refused}");
    let out = machines.sync("ben");
    assert!(out.contains("received 2 records"), "{out}");
    let (trees, _, _) = machines.pinloom("ben", &["tree"]);
    assert!(trees.contains("Rivers"), "{trees}");
    let (listed, _, _) = machines.pinloom("ben", &["team", "list"]);
    assert!(listed.contains("Ana") && listed.contains("  owner\n"), "{listed}");
    assert!(listed.contains("Ben") && listed.contains("  you"), "{listed}");
    // Cleo is not admitted: her sync says so (and blocks no other of her syncs), reading nothing.
    let out = machines.sync("cleo");
    assert!(out.contains("did not admit this machine") && out.contains("new invitation"), "{out}");
    let (trees, _, _) = machines.pinloom("cleo", &["tree"]);
    assert!(!trees.contains("Rivers"), "{trees}");
    // Only the owner invites; joining a team with a roster by its remote alone is refused.
    let (_, err, code) = machines.pinloom("ben", &["team", "invite", "geo"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("only the team's owner (Ana)"), "{err}");
    let (_, err, code) = machines.pinloom("dan", &["sync", "--team", "geo", "--remote", &team]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("join it with an invitation"), "{err}");
    // The refused join leaves nothing behind: Dan's later syncs do not trip on it.
    let (listed, _, _) = machines.pinloom("dan", &["team", "list"]);
    assert!(listed.contains("No team joined yet"), "{listed}");
    assert!(!machines.data("dan").join("pinloom-sync/team-geo").exists());

    // Text that is no invitation is refused, saying what an invitation holds.
    std::fs::write(&file, "geo at the lab").unwrap();
    let (_, err, code) = machines.pinloom("cleo", &["team", "join", file.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("team: …") && err.contains("remote: …"), "{err}");

    let (out, err, code) = machines.pinloom("ben", &["team", "leave", "geo"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Left the team geo"), "{out}");
    let (listed, _, _) = machines.pinloom("ben", &["team", "list"]);
    assert!(listed.contains("No team joined yet"), "{listed}");
    let (trees, _, _) = machines.pinloom("ben", &["tree"]);
    assert!(trees.contains("Rivers"), "the tree stays: {trees}");
    assert!(!machines.data("ben").join("pinloom-sync/team-geo").exists());
}
