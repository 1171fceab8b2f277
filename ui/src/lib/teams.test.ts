import { beforeEach, describe, expect, it } from "vitest";

import { installFakeBackend, treeSummary, type FakeState } from "./fake-backend";
import { TeamsState } from "./teams.svelte";
import { RIVERS, installRiversBackend } from "./test-fixtures";
import { Workspace } from "./workspace.svelte";

let fake: FakeState;

beforeEach(() => {
  fake = installRiversBackend();
});

/// A tree a member shared with the team, as it arrives from the team's repository.
const DELTAS = treeSummary(7, "deltas", "Deltas", { globalId: "0190aaaa-0000-7000-8000-000000000007", sharedBy: "Ana" });

describe("TeamsState", () => {
  it("lists a team once it is created, and says what joining it did", async () => {
    const teams = new TeamsState();
    expect(await teams.create("  geo ", " /srv/trees.git ")).toBe(true);
    expect(teams.teams).toEqual([{ name: "geo", remote: "/srv/trees.git", sharedTrees: [], last: teams.last }]);
    expect(teams.last?.text).toContain("nothing new");
    expect(teams.error).toBeNull();
    expect(teams.running).toBe(false);
  });

  it("shows why a name cannot name a team, and lists nothing", async () => {
    const teams = new TeamsState();
    expect(await teams.create("geo lab", "/srv/trees.git")).toBe(false);
    expect(teams.error?.code).toBe("invalidInput");
    expect(teams.error?.message).toContain("cannot name a team");
    expect(teams.teams).toEqual([]);
  });

  it("gives an invitation that joins the team elsewhere, bringing its trees into the list", async () => {
    const teams = new TeamsState();
    await teams.create("geo", "/srv/trees.git");
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
    expect(await workspace.teams.join(`  ${invitation.replaceAll("\n", "\r\n  ")}`)).toBe(true);
    expect(workspace.teams.teams.map((team) => [team.name, team.remote, team.sharedTrees])).toEqual([["geo", "/srv/trees.git", [7]]]);
    expect(workspace.teams.last?.treesChanged).toEqual([7]);
    expect(workspace.trees.map((tree) => [tree.title, tree.sharedBy])).toEqual([["Deltas", "Ana"]]);
    expect(workspace.restored).toBe(restored + 1);
  });

  it("shares a tree with a team, and the tree list says who shared it", async () => {
    const workspace = new Workspace();
    await workspace.start();
    await workspace.teams.create("geo", "/srv/trees.git");
    expect(await workspace.teams.share(RIVERS.id, "geo", "  Ines ")).toBe(true);
    expect(workspace.teams.teams[0]?.sharedTrees).toEqual([RIVERS.id]);
    expect(workspace.trees.find((tree) => tree.id === RIVERS.id)?.sharedBy).toBe("Ines");
    expect(workspace.teams.last?.sentRecords).toBe(1);
  });

  it("shares as git's user name when no name is given", async () => {
    const workspace = new Workspace();
    await workspace.start();
    await workspace.teams.create("geo", "/srv/trees.git");
    await workspace.teams.share(RIVERS.id, "geo", "   ");
    // The fake stands for git's user name with "You".
    expect(workspace.trees[0]?.sharedBy).toBe("You");
  });

  it("leaves a team, and the invitation to it goes", async () => {
    const teams = new TeamsState();
    await teams.create("geo", "/srv/trees.git");
    await teams.create("sea", "/srv/sea.git");
    await teams.invite("geo");
    expect(await teams.leave("geo")).toBe(true);
    expect(teams.teams.map((team) => team.name)).toEqual(["sea"]);
    expect(teams.invitation).toBeNull();
    expect(fake.teams.map((team) => team.name)).toEqual(["sea"]);
  });

  it("says a pasted text is not an invitation, and joins nothing", async () => {
    const teams = new TeamsState();
    expect(await teams.join("come join geo at /srv/trees.git")).toBe(false);
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
});
