import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { installFakeBackend, teamView, type FakeState } from "./fake-backend";
import { SYNC_EVERY_MS, SyncState } from "./sync.svelte";
import { RIVERS } from "./test-fixtures";
import { Workspace } from "./workspace.svelte";

let fake: FakeState;

beforeEach(() => {
  fake = installFakeBackend();
});

afterEach(() => {
  vi.useRealTimers();
});

const arrived = {
  remote: "/srv/trees.git",
  sentRecords: 0,
  sentChanges: 0,
  receivedRecords: 2,
  receivedChanges: 1,
  treesChanged: [7],
  committed: false,
  pushed: false,
  notes: [],
  atMs: 0,
  text: "Synced with /srv/trees.git: sent 0 records and 0 changes; received 2 records and 1 change.",
};

describe("SyncState", () => {
  it("remembers the remote of the first sync and says what the last one did", async () => {
    const sync = new SyncState();
    await sync.load();
    expect(sync.status?.remote).toBeNull();
    const report = await sync.syncNow("  /srv/trees.git  ");
    expect(report?.text).toContain("nothing new");
    expect(sync.status?.remote).toBe("/srv/trees.git");
    expect(sync.status?.last?.text).toContain("nothing new");
    expect(sync.running).toBe(false);
  });

  it("sends the passphrase typed with Sync now, and none otherwise", async () => {
    const sync = new SyncState();
    await sync.syncNow("/srv/trees.git", "correct horse");
    await sync.syncNow();
    expect(fake.syncPassphrases).toEqual(["correct horse", null]);
  });

  it("tells the workspace after each sync that ran, so the teams' members are read again", async () => {
    const sync = new SyncState();
    let synced = 0;
    sync.onsynced = () => {
      synced++;
    };
    await sync.syncNow("/srv/trees.git");
    expect(synced).toBe(1);
    // A sync that fails tells nothing (nothing changed).
    fake.failure = { code: "syncFailed", message: "the remote refused the push" };
    await sync.syncNow();
    fake.failure = null;
    expect(synced).toBe(1);
    expect(sync.error?.message).toContain("refused");
  });

  it("syncs the teams with Sync now when there is no remote of its own", async () => {
    fake.teams.push(teamView("geo", "/srv/team.git"));
    const sync = new SyncState();
    await sync.load();
    expect(sync.status?.teams).toBe(1);
    const report = await sync.syncNow();
    expect(report?.text).toContain("/srv/team.git");
    expect(sync.status?.remote).toBeNull();
  });

  it("shows a failure where the person synced, and keeps the remote unset", async () => {
    const sync = new SyncState();
    expect(await sync.syncNow(null)).toBeNull();
    expect(sync.error?.code).toBe("invalidInput");
    expect(sync.status?.remote).toBeNull();
  });

  it("tells the workspace when something arrived, which shows it", async () => {
    const workspace = new Workspace();
    await workspace.start();
    fake.sync.remote = "/srv/trees.git";
    fake.syncReports.push(arrived);
    fake.trees.push({ ...RIVERS, id: 7, globalId: "0190aaaa-0000-7000-8000-000000000007" });
    const before = workspace.restored;
    await workspace.sync.syncNow();
    expect(workspace.trees.map((tree) => tree.title)).toEqual(["Rivers"]);
    expect(workspace.restored).toBe(before + 1);
  });

  it("syncs after a reply and every few minutes only when it syncs on its own", async () => {
    vi.useFakeTimers();
    fake.sync.remote = "/srv/trees.git";
    const sync = new SyncState();
    await sync.load();
    await sync.afterReply();
    await vi.advanceTimersByTimeAsync(SYNC_EVERY_MS);
    expect(fake.calls.filter((call) => call === "sync_now")).toHaveLength(0);

    await sync.setAutomatic(true);
    await sync.afterReply();
    expect(fake.calls.filter((call) => call === "sync_now")).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(SYNC_EVERY_MS);
    expect(fake.calls.filter((call) => call === "sync_now")).toHaveLength(2);
    sync.stop();
    await vi.advanceTimersByTimeAsync(SYNC_EVERY_MS);
    expect(fake.calls.filter((call) => call === "sync_now")).toHaveLength(2);
  });
});
