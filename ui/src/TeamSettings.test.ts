// Teams in Settings → Sync: a team's invitation on show to copy and send, a tree shared with it,
// this machine's standing in it and its members, removing a member or leaving the team only on a
// second click, and the name members see on what is created, joined and shared.
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import TeamSettings from "./components/TeamSettings.svelte";
import type { TeamView } from "./lib/bindings";
import { FAKE_DEVICE, teamView, type FakeState } from "./lib/fake-backend";
import { installRiversBackend, RIVERS } from "./lib/test-fixtures";
import { Workspace } from "./lib/workspace.svelte";

let fake: FakeState;

beforeEach(() => {
  fake = installRiversBackend({ teams: [teamView("geo", "/srv/trees.git")] });
});

/// Team `name` as its owner's machine lists it: Ines here, and Ben's machine admitted.
function owned(name: string): TeamView {
  return teamView(name, `/srv/${name}.git`, {
    standing: "member",
    owned: true,
    members: [
      { name: "Ines", device: FAKE_DEVICE, owner: true, you: true },
      { name: "Ben", device: "device-ben", owner: false, you: false },
    ],
  });
}

/// Team `name` as a member's machine lists it: Ana owns it, Ben is this machine, Cleo is another.
function joined(name: string): TeamView {
  return teamView(name, `/srv/${name}.git`, {
    standing: "member",
    members: [
      { name: "Ana", device: "device-ana", owner: true, you: false },
      { name: "Ben", device: FAKE_DEVICE, owner: false, you: true },
      { name: "Cleo", device: "device-cleo", owner: false, you: false },
    ],
  });
}

/// The row of team `name`.
function rowOf(name: string): HTMLElement {
  const row = screen.getAllByTestId("team-row").find((one) => within(one).getByTestId("team-name").textContent === name);
  if (!row) throw new Error(`no row for the team ${name}`);
  return row;
}

afterEach(() => {
  cleanup();
  Reflect.deleteProperty(navigator, "clipboard");
});

/// Gives the window a clipboard (jsdom has none) that copies with `writeText`.
function clipboardCopying(writeText: (text: string) => Promise<void>) {
  Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
}

async function drawn(): Promise<Workspace> {
  const workspace = new Workspace();
  await workspace.start();
  render(TeamSettings, { teams: workspace.teams, trees: workspace.trees });
  await screen.findAllByTestId("team-row");
  return workspace;
}

describe("TeamSettings", () => {
  it("lists the teams joined, and shows the invitation to one to copy", async () => {
    const writeText = vi.fn((_text: string) => Promise.resolve());
    clipboardCopying(writeText);
    await drawn();
    expect(screen.getByTestId("team-name").textContent).toBe("geo");
    expect(screen.queryByTestId("team-invitation")).toBeNull();

    await fireEvent.click(screen.getByTestId("team-invite"));
    const invitation = (await screen.findByTestId("team-invitation")) as HTMLTextAreaElement;
    expect(invitation.value).toBe("Pinloom team invitation\nteam: geo\nremote: /srv/trees.git\n");
    expect(invitation.readOnly).toBe(true);

    await fireEvent.click(screen.getByTestId("team-invitation-copy"));
    expect(writeText).toHaveBeenCalledWith(invitation.value);
    expect((await screen.findByTestId("team-invitation-copied")).textContent).toBe("Copied");
  });

  it("keeps the invitation on show when the clipboard refuses it", async () => {
    clipboardCopying(() => Promise.reject(new Error("denied")));
    await drawn();
    await fireEvent.click(screen.getByTestId("team-invite"));
    await fireEvent.click(await screen.findByTestId("team-invitation-copy"));
    expect(screen.getByTestId("team-invitation")).toBeTruthy();
    expect(screen.queryByTestId("team-invitation-copied")).toBeNull();
    expect(screen.queryByTestId("team-error")).toBeNull();
  });

  it("shares the chosen tree as the name typed, and offers it no more", async () => {
    await drawn();
    const choice = screen.getByTestId("team-share-tree") as HTMLSelectElement;
    expect([...choice.options].map((option) => option.textContent)).toEqual(["Rivers"]);
    await fireEvent.input(screen.getByTestId("team-your-name"), { target: { value: "Ines" } });
    await fireEvent.click(screen.getByTestId("team-share"));
    await waitFor(() => expect(screen.getByTestId("team-shared").textContent).toBe("1 tree shared"));
    expect(screen.queryByTestId("team-share-tree")).toBeNull();
    expect(fake.trees.find((tree) => tree.id === RIVERS.id)?.sharedBy).toBe("Ines");
    expect(screen.getByTestId("team-last").textContent).toContain("Synced with /srv/trees.git");
  });

  it("leaves a team on the second click only", async () => {
    await drawn();
    const leave = screen.getByTestId("team-leave");
    await fireEvent.click(leave);
    expect(leave.textContent?.trim()).toBe("Leave team geo?");
    expect(fake.teams).toHaveLength(1);
    await fireEvent.click(leave);
    await waitFor(() => expect(screen.queryByTestId("team-row")).toBeNull());
    expect(fake.teams).toEqual([]);
  });

  it("creates a team, and says why a name cannot name one", async () => {
    await drawn();
    await fireEvent.input(screen.getByTestId("team-create-name"), { target: { value: "sea lab" } });
    await fireEvent.input(screen.getByTestId("team-create-remote"), { target: { value: "/srv/sea.git" } });
    await fireEvent.click(screen.getByTestId("team-create"));
    expect((await screen.findByTestId("team-error")).textContent).toContain("cannot name a team");
    await fireEvent.input(screen.getByTestId("team-create-name"), { target: { value: "sea" } });
    await fireEvent.click(screen.getByTestId("team-create"));
    await waitFor(() => expect(screen.getAllByTestId("team-name").map((name) => name.textContent)).toEqual(["geo", "sea"]));
    expect(screen.queryByTestId("team-error")).toBeNull();
    await waitFor(() => expect((screen.getByTestId("team-create-name") as HTMLInputElement).value).toBe(""));
  });

  it("says a pasted text is not an invitation", async () => {
    await drawn();
    await fireEvent.input(screen.getByTestId("team-join-text"), { target: { value: "join us at /srv/sea.git" } });
    await fireEvent.click(screen.getByTestId("team-join"));
    expect((await screen.findByTestId("team-error")).textContent).toContain("not a Pinloom team invitation");
    expect(screen.getAllByTestId("team-row")).toHaveLength(1);
  });

  it("says this machine's standing in each team, and offers Invite only to the owner and in teams made before rosters", async () => {
    fake.teams = [
      owned("geo"),
      joined("sea"),
      teamView("lake", "/srv/lake.git", { standing: "asked" }),
      teamView("bay", "/srv/bay.git", { standing: "removed", members: [{ name: "Ana", device: "device-ana", owner: true, you: false }] }),
      teamView("old", "/srv/old.git"),
    ];
    await drawn();
    const standing = (name: string) => within(rowOf(name)).getByTestId("team-standing").textContent;
    expect(standing("geo")).toBe("You own this team: you invite and remove members.");
    expect(standing("sea")).toBe("Member.");
    expect(standing("lake")).toBe("Asked to join: once the team's owner syncs, Sync now brings its trees.");
    expect(standing("bay")).toBe(
      "The team's owner removed this machine: nothing is sent to or read from it. Leave the team to stop syncing it.",
    );
    expect(standing("old")).toBe("Made before teams had rosters: every member's machine writes to it, unencrypted.");
    const invites = (name: string) => within(rowOf(name)).queryByTestId("team-invite") !== null;
    expect(["geo", "sea", "lake", "bay", "old"].map(invites)).toEqual([true, false, false, false, true]);
  });

  it("lists each team's members, with Remove only for those not owning a team owned here", async () => {
    fake.teams = [owned("geo"), joined("sea")];
    await drawn();
    const members = (name: string) => within(rowOf(name)).getAllByTestId("team-member");
    expect(members("geo").map((member) => member.firstElementChild?.textContent)).toEqual(["Ines (owner) (you)", "Ben"]);
    expect(members("sea").map((member) => member.firstElementChild?.textContent)).toEqual(["Ana (owner)", "Ben (you)", "Cleo"]);
    expect(members("geo").map((member) => within(member).queryByTestId("team-member-remove") !== null)).toEqual([false, true]);
    expect(within(rowOf("sea")).queryByTestId("team-member-remove")).toBeNull();
  });

  it("removes a member by their device on the second click only", async () => {
    fake.teams = [owned("geo")];
    await drawn();
    const remove = screen.getByTestId("team-member-remove");
    await fireEvent.click(remove);
    expect(remove.textContent?.trim()).toBe("Remove Ben?");
    expect(fake.teams[0]?.members).toHaveLength(2);
    await fireEvent.click(remove);
    await waitFor(() => expect(screen.getAllByTestId("team-member").map((member) => member.textContent?.trim())).toEqual(["Ines (owner) (you)"]));
    expect(fake.teams[0]?.members.map((member) => member.device)).toEqual([FAKE_DEVICE]);
    expect(screen.getByTestId("team-last").textContent).toContain("Removed Ben from the team geo.");
    expect(screen.queryByTestId("team-error")).toBeNull();
  });

  it("creates a team and asks to join another as the name typed", async () => {
    fake.teams = [owned("geo")];
    await drawn();
    await fireEvent.input(screen.getByTestId("team-your-name"), { target: { value: "  Ines " } });
    await fireEvent.input(screen.getByTestId("team-create-name"), { target: { value: "sea" } });
    await fireEvent.input(screen.getByTestId("team-create-remote"), { target: { value: "/srv/sea.git" } });
    await fireEvent.click(screen.getByTestId("team-create"));
    await waitFor(() => expect(within(rowOf("sea")).getByTestId("team-member").textContent?.trim()).toBe("Ines (owner) (you)"));
    expect(within(rowOf("sea")).queryByTestId("team-member-remove")).toBeNull();

    const invitation = "Pinloom team invitation\nteam: lake\nremote: /srv/lake.git\nowner: key-of-lake\nrecipient: age-of-lake\ncode: code-for-lake\n";
    await fireEvent.input(screen.getByTestId("team-join-text"), { target: { value: invitation } });
    await fireEvent.click(screen.getByTestId("team-join"));
    await waitFor(() => expect(screen.getAllByTestId("team-row")).toHaveLength(3));
    expect(within(rowOf("lake")).getByTestId("team-standing").textContent).toContain("Asked to join");
    expect(fake.teamJoinNames).toEqual(["Ines", "Ines"]);
  });

  it("creates a team as git's user name when no name is typed", async () => {
    await drawn();
    await fireEvent.input(screen.getByTestId("team-create-name"), { target: { value: "sea" } });
    await fireEvent.input(screen.getByTestId("team-create-remote"), { target: { value: "/srv/sea.git" } });
    await fireEvent.click(screen.getByTestId("team-create"));
    await waitFor(() => expect(screen.getAllByTestId("team-row")).toHaveLength(2));
    expect(fake.teamJoinNames).toEqual([null]);
  });
});
