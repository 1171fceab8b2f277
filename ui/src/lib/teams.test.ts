import { beforeEach, describe, expect, it } from "vitest";

import { FAKE_DEVICE, installFakeBackend, teamView, treeSummary, type FakeState } from "./fake-backend";
import { TeamsState } from "./teams.svelte";
import { RIVERS, installRiversBackend } from "./test-fixtures";
import { Workspace } from "./workspace.svelte";

let fake: FakeState;

beforeEach(() => {
  fake = installRiversBackend();
});

/// A tree a member shared with the team, as it arrives from the team's repository.
const DELTAS = treeSummary(7, "deltas", "Deltas", { globalId: "0190aaaa-0000-7000-8000-000000000007", sharedBy: "Ana" });

/// Team geo as its owner's machine lists it: Ines here, and Ben's machine admitted.
const GEO_OWNED = teamView("geo", "/srv/trees.git", {
  standing: "member",
  owned: true,
  members: [
    { name: "Ines", device: FAKE_DEVICE, owner: true, you: true },
    { name: "Ben", device: "device-ben", owner: false, you: false },
  ],
});

/// Team geo as Ben's machine lists it: Ana owns it, and Cleo is a member too.
const GEO_AS_MEMBER = teamView("geo", "/srv/trees.git", {
  standing: "member",
  owned: false,
  members: [
    { name: "Ana", device: "device-ana", owner: true, you: false },
    { name: "Ben", device: FAKE_DEVICE, owner: false, you: true },
    { name: "Cleo", device: "device-cleo", owner: false, you: false },
  ],
});

describe("TeamsState", () => {
  it("lists a team once it is created, owned here with this machine its one member, and says what joining it did", async () => {
    const teams = new TeamsState();
    expect(await teams.create("  geo ", " /srv/trees.git ", "  Ines ")).toBe(true);
    expect(teams.teams).toEqual([
      {
        name: "geo",
        remote: "/srv/trees.git",
        sharedTrees: [],
        last: teams.last,
        standing: "member",
        members: [{ name: "Ines", device: FAKE_DEVICE, owner: true, you: true }],
        owned: true,
      },
    ]);
    expect(fake.teamJoinNames).toEqual(["Ines"]);
    expect(teams.last?.text).toContain("nothing new");
    expect(teams.error).toBeNull();
    expect(teams.running).toBe(false);
  });

  it("creates a team as git's user name when no name is given", async () => {
    const teams = new TeamsState();
    await teams.create("geo", "/srv/trees.git", "   ");
    expect(fake.teamJoinNames).toEqual([null]);
    // The fake stands for git's user name with "You".
    expect(teams.teams[0]?.members.map((member) => member.name)).toEqual(["You"]);
  });

  it("shows why a name cannot name a team, and lists nothing", async () => {
    const teams = new TeamsState();
    expect(await teams.create("geo lab", "/srv/trees.git", null)).toBe(false);
    expect(teams.error?.code).toBe("invalidInput");
    expect(teams.error?.message).toContain("cannot name a team");
    expect(teams.teams).toEqual([]);
  });

  it("gives an owner's invitation that asks to join the team elsewhere, as the name given, bringing nothing yet", async () => {
    const teams = new TeamsState();
    await teams.create("geo", "/srv/trees.git", "Ines");
    await teams.invite("geo");
    const invitation = teams.invitation?.text ?? "";
    expect(invitation).toContain("code: ");

    // A colleague's database, where a member's tree waits in the team's repository.
    fake = installFakeBackend({ teamArrivals: [DELTAS] });
    const workspace = new Workspace();
    await workspace.start();
    expect(await workspace.teams.join(invitation, " Ben ")).toBe(true);
    expect(fake.teamJoinNames).toEqual(["Ben"]);
    expect(workspace.teams.teams.map((team) => [team.name, team.standing, team.owned, team.members])).toEqual([["geo", "asked", false, []]]);
    // Sync now counts the team at once: it syncs it, with no remote of this database's own.
    expect(workspace.sync.status?.teams).toBe(1);
    // The team's trees are encrypted to its members: they come once the owner admits this machine.
    expect(workspace.trees).toEqual([]);
    expect(workspace.teams.last?.treesChanged).toEqual([]);
  });

  it("gives an invitation to a team made before rosters that joins it elsewhere, bringing its trees into the list", async () => {
    fake = installRiversBackend({ teams: [teamView("geo", "/srv/trees.git")] });
    const teams = new TeamsState();
    await teams.load();
    await teams.invite("geo");
    expect(teams.invitation).toEqual({ team: "geo", text: "Pinloom team invitation\nteam: geo\nremote: /srv/trees.git\n" });
    const invitation = teams.invitation?.text ?? "";

    // A colleague's database, where a member's tree waits in the team's repository.
    fake = installFakeBackend({ teamArrivals: [DELTAS] });
    const workspace = new Workspace();
    await workspace.start();
    expect(workspace.trees).toEqual([]);
    const restored = workspace.restored;
    // Pasted from a mail, indented and with its line ends.
    expect(await workspace.teams.join(`  ${invitation.replaceAll("\n", "\r\n  ")}`, null)).toBe(true);
    expect(workspace.teams.teams.map((team) => [team.name, team.remote, team.sharedTrees, team.standing])).toEqual([
      ["geo", "/srv/trees.git", [7], "open"],
    ]);
    expect(workspace.teams.last?.treesChanged).toEqual([7]);
    expect(workspace.trees.map((tree) => [tree.title, tree.sharedBy])).toEqual([["Deltas", "Ana"]]);
    expect(workspace.restored).toBe(restored + 1);
  });

  it("shares a tree with a team, and the tree list says who shared it", async () => {
    const workspace = new Workspace();
    await workspace.start();
    await workspace.teams.create("geo", "/srv/trees.git", null);
    expect(await workspace.teams.share(RIVERS.id, "geo", "  Ines ")).toBe(true);
    expect(workspace.teams.teams[0]?.sharedTrees).toEqual([RIVERS.id]);
    expect(workspace.trees.find((tree) => tree.id === RIVERS.id)?.sharedBy).toBe("Ines");
    expect(workspace.teams.last?.sentRecords).toBe(1);
  });

  it("shares as git's user name when no name is given", async () => {
    const workspace = new Workspace();
    await workspace.start();
    await workspace.teams.create("geo", "/srv/trees.git", null);
    await workspace.teams.share(RIVERS.id, "geo", "   ");
    // The fake stands for git's user name with "You".
    expect(workspace.trees[0]?.sharedBy).toBe("You");
  });

  it("leaves a team, and the invitation to it goes", async () => {
    const teams = new TeamsState();
    await teams.create("geo", "/srv/trees.git", null);
    await teams.create("sea", "/srv/sea.git", null);
    await teams.invite("geo");
    expect(await teams.leave("geo")).toBe(true);
    expect(teams.teams.map((team) => team.name)).toEqual(["sea"]);
    expect(teams.invitation).toBeNull();
    expect(fake.teams.map((team) => team.name)).toEqual(["sea"]);
  });

  it("says a pasted text is not an invitation, and joins nothing", async () => {
    const teams = new TeamsState();
    expect(await teams.join("come join geo at /srv/trees.git", null)).toBe(false);
    expect(teams.error?.code).toBe("invalidInput");
    expect(teams.error?.message).toContain("not a Pinloom team invitation");
    expect(teams.teams).toEqual([]);
  });

  it("cannot invite to a team it has not joined", async () => {
    const teams = new TeamsState();
    await teams.invite("geo");
    expect(teams.invitation).toBeNull();
    expect(teams.error?.message).toContain("has not joined the team");
  });

  it("removes a member by their device, and the list and its last sync say so", async () => {
    fake = installRiversBackend({ teams: [structuredClone(GEO_OWNED)] });
    const teams = new TeamsState();
    await teams.load();
    expect(await teams.remove("geo", "device-ben")).toBe(true);
    expect(teams.teams[0]?.members.map((member) => member.name)).toEqual(["Ines"]);
    expect(fake.teams[0]?.members.map((member) => member.device)).toEqual([FAKE_DEVICE]);
    expect(teams.last?.text.split("\n")[0]).toBe("Removed Ben from the team geo.");
    expect(teams.running).toBe(false);
  });

  it("shows why a member who does not own the team cannot remove one, or invite", async () => {
    fake = installRiversBackend({ teams: [structuredClone(GEO_AS_MEMBER)] });
    const teams = new TeamsState();
    await teams.load();
    expect(await teams.remove("geo", "device-cleo")).toBe(false);
    expect(teams.error?.message).toBe("only the team's owner removes members");
    expect(teams.teams[0]?.members).toHaveLength(3);

    await teams.invite("geo");
    expect(teams.invitation).toBeNull();
    expect(teams.error?.message).toContain("only the team's owner (Ana) admits members");
  });
});
