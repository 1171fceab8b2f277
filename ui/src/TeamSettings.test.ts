// Teams in Settings → Sync: a team's invitation on show to copy and send, a tree shared with it,
// and leaving it only on a second click.
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import TeamSettings from "./components/TeamSettings.svelte";
import type { FakeState } from "./lib/fake-backend";
import { installRiversBackend, RIVERS } from "./lib/test-fixtures";
import { Workspace } from "./lib/workspace.svelte";

let fake: FakeState;

beforeEach(() => {
  fake = installRiversBackend({ teams: [{ name: "geo", remote: "/srv/trees.git", sharedTrees: [], last: null }] });
});

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
  await screen.findByTestId("team-row");
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
});
