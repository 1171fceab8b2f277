//! A team of three under its owner's roster: who wrote what is shown, a member's change of what
//! another wrote is refused on every machine, and a removed member's later packs are refused and
//! what is written after the removal is not encrypted to them.

use pinloom_store::Store;
use serde_json::json;

use super::Machines;
use super::hostile::{message_record, new_id, now_clock, op};

/// Whether `bytes`, an age file, opens with the member key of `machine`.
fn opens_for(machines: &Machines, machine: &str, bytes: &[u8]) -> bool {
    let store = Store::open(&machines.db(machine)).unwrap();
    let identity: age::x25519::Identity =
        store.sync_member_key().unwrap().unwrap().parse().unwrap();
    super::open_age(bytes, &identity).is_some()
}

/// The newest pack of `machine`'s device on the branch of `remote`, as its bytes.
fn newest_pack_of(machines: &Machines, remote: &str, machine: &str) -> Vec<u8> {
    let device = Store::open(&machines.db(machine)).unwrap().sync_device().unwrap();
    let listed = machines
        .git(&["--git-dir", remote, "ls-tree", "-r", "--name-only", "main"])
        .output()
        .unwrap();
    let listed = String::from_utf8(listed.stdout).unwrap();
    let newest = listed
        .lines()
        .filter(|path| path.starts_with(&format!("packs/{device}/")))
        .max()
        .expect("a pack of the device");
    machines
        .git(&["--git-dir", remote, "cat-file", "blob", &format!("main:{newest}")])
        .output()
        .unwrap()
        .stdout
}

#[tokio::test]
async fn a_team_of_three_refuses_a_members_change_of_what_another_wrote_and_a_removed_members_packs()
 {
    let machines = Machines::new();
    let team = machines.bare("team.git");
    let (ana, rivers) = super::ana_shares_rivers(&machines, &team).await;
    machines.invite("ana", "ben", "geo", "Ben");
    let joined = machines.invite("ana", "cleo", "geo", "Cleo");
    assert!(joined.contains("received 2 records"), "{joined}");

    // Ben answers; everyone sees it as his.
    let ben = machines.open("ben").await;
    let on_ben = ben.list_trees().await.unwrap()[0].id;
    let first = super::newest(&ben, on_ben).await;
    ben.append_message(on_ben, Some(first), "Because the outer bank erodes.".into()).await.unwrap();
    machines.sync("ben");
    machines.sync("ana");
    machines.sync("cleo");
    for machine in ["ana", "cleo"] {
        let (text, _, _) = machines.pinloom(machine, &["tree", "rivers"]);
        assert!(text.contains("Ben: Because the outer bank erodes."), "{machine}: {text}");
    }
    // On Ben's own machine, renaming Ana's tree is refused with what to do.
    let error = ben.rename_tree(on_ben, "Ben's rivers".into()).await.unwrap_err();
    let error = format!("{error:#}");
    assert!(error.contains("Ana shared this tree") && error.contains("only they"), "{error}");

    // Cleo's machine writes, by hand, a rename of Ana's tree and the deletion of Ben's answer,
    // signed with her own key (what a member's machine can do whatever its Pinloom says).
    let (tree_gid, ben_answer_gid) = {
        let store = Store::open(&machines.db("cleo")).unwrap();
        let tree = store.list_trees().unwrap()[0].clone();
        let ids = store.node_global_ids(tree.id).unwrap();
        let answer = ids
            .iter()
            .find(|(node, _)| store.node(**node).unwrap().text == "Because the outer bank erodes.")
            .map(|(_, gid)| gid.clone())
            .unwrap();
        (tree.global_id, answer)
    };
    let cleo = machines.member(&team, "cleo-work", "cleo", "geo");
    let clock = now_clock();
    cleo.op(&op(&tree_gid, "tree", "title", json!("Cleo's now"), clock));
    cleo.op(&op(&ben_answer_gid, "message", "deleted", json!(clock >> 16), clock + 1));
    // Adding to the tree is hers to do: a message of her own arrives as hers.
    cleo.record(&message_record(
        &new_id(40),
        &tree_gid,
        Some(&ben_answer_gid),
        "human",
        "And meanders migrate downstream.",
    ));
    cleo.push();
    for machine in ["ana", "ben"] {
        let report = machines.sync(machine);
        assert!(report.contains("only whoever shares a tree decides"), "{machine}: {report}");
        assert!(report.contains("a member changes only what they wrote"), "{machine}: {report}");
        let (text, _, _) = machines.pinloom(machine, &["tree", "rivers"]);
        assert!(text.starts_with("Rivers ("), "{machine}: {text}");
        assert!(text.contains("Because the outer bank erodes.") && !text.contains("[deleted]"));
        assert!(text.contains("Cleo: And meanders migrate downstream."), "{machine}: {text}");
        // Reported once.
        let again = machines.sync(machine);
        assert!(!again.contains("only whoever"), "{machine}: {again}");
    }

    // Ana removes Cleo. Cleo's Pinloom learns it; what her machine writes after is refused by
    // every member, and what Ana writes after is not encrypted to her.
    let (out, err, code) = machines.pinloom("ana", &["team", "remove", "geo", "Cleo"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Removed Cleo from the team geo"), "{out}");
    let (listed, _, _) = machines.pinloom("ana", &["team", "list"]);
    assert!(!listed.contains("Cleo"), "{listed}");
    let told = machines.sync("cleo");
    assert!(told.contains("The team's owner (Ana) removed this machine"), "{told}");
    let newest = super::newest(&ana, rivers.id).await;
    ana.append_message(rivers.id, Some(newest), "Oxbow lakes form.".into()).await.unwrap();
    machines.sync("ana");
    let after = newest_pack_of(&machines, &team, "ana");
    assert!(opens_for(&machines, "ben", &after), "Ben reads Ana's new pack");
    assert!(!opens_for(&machines, "cleo", &after), "Cleo does not");
    cleo.record(&message_record(
        &new_id(41),
        &tree_gid,
        Some(&ben_answer_gid),
        "human",
        "Written after my removal.",
    ));
    cleo.push();
    for machine in ["ana", "ben"] {
        let report = machines.sync(machine);
        assert!(report.contains("was removed from the team"), "{machine}: {report}");
        let (text, _, _) = machines.pinloom(machine, &["tree", "rivers"]);
        assert!(!text.contains("Written after my removal."), "{machine}: {text}");
        // What she wrote while a member stays, hers.
        assert!(text.contains("Cleo: And meanders migrate downstream."), "{machine}: {text}");
    }
    let (text, _, _) = machines.pinloom("ben", &["tree", "rivers"]);
    assert!(text.contains("Ana: Oxbow lakes form."), "{text}");

    // A stranger with push access who learned whom packs are encrypted to writes a pack of a
    // device of their own, signed by a key no roster names: refused, and named once.
    let stranger = machines.member(&team, "stranger", "ben", "geo").turned_stranger();
    stranger.record(&message_record(
        &new_id(42),
        &tree_gid,
        Some(&ben_answer_gid),
        "human",
        "From nobody.",
    ));
    stranger.push();
    let report = machines.sync("ana");
    assert!(report.contains("is not a member of the team"), "{report}");
    let (text, _, _) = machines.pinloom("ana", &["tree", "rivers"]);
    assert!(!text.contains("From nobody."), "{text}");
    assert!(!machines.sync("ana").contains("not a member"), "reported once");
}

#[tokio::test]
async fn a_team_joined_again_at_another_remote_starts_over_there() {
    let machines = Machines::new();
    let first = machines.bare("first.git");
    let (ana, _) = super::ana_shares_rivers(&machines, &first).await;
    machines.invite("ana", "ben", "geo", "Ben");
    // A new team geo at another remote: Ana shares another tree there, which makes the team
    // (hers), and Ben joins it with a new invitation; neither machine holds the first team's
    // owner, roster or name against the second. (Rivers, which reached Ben through the first,
    // stays his as it came: a team speaks only for the trees it brings or he shares.)
    let deltas = ana.create_tree("Deltas".into(), pinloom_app::json::TreeMode::Dialogue).await;
    ana.append_message(deltas.unwrap().id, None, "Why do deltas fan out?".into()).await.unwrap();
    let second = machines.bare("second.git");
    let (out, err, code) = machines
        .pinloom("ana", &["share", "deltas", "--team", "geo", "--remote", &second, "--as", "Ana"]);
    assert_eq!(code, 0, "{out}{err}");
    let joined = machines.invite("ana", "ben", "geo", "Ben");
    assert!(joined.contains(&second) && joined.contains("received 2 records"), "{joined}");
    let (trees, _, _) = machines.pinloom("ben", &["tree"]);
    assert!(trees.contains("Deltas") && trees.contains("Rivers"), "{trees}");
    let (listed, _, _) = machines.pinloom("ben", &["team", "list"]);
    assert!(listed.contains(&second) && !listed.contains(&first), "{listed}");
    assert!(listed.contains("Ana") && listed.contains("  owner\n"), "{listed}");
}
