import { beforeEach, describe, expect, it } from "vitest";

import type { FakeState } from "./fake-backend";
import { RIVERS, installRiversBackend } from "./test-fixtures";
import { Trash } from "./trash.svelte";
import { Workspace } from "./workspace.svelte";

let fake: FakeState;

const TIDES = { ...RIVERS, id: 2, slug: "tides", title: "Tides", messageCount: 5 };

beforeEach(() => {
  fake = installRiversBackend({
    trash: {
      trees: [TIDES],
      branches: [{ id: 11, treeId: 1, treeTitle: "Rivers", author: "model", preview: "Erosion", deletedAtMs: 0 }],
    },
  });
});

/// A workspace started, with something to undo that the trash makes stale.
async function started(): Promise<Workspace> {
  const workspace = new Workspace();
  await workspace.start();
  workspace.offerUndo("Deleted “Erosion”.", async () => undefined);
  return workspace;
}

describe("Trash", () => {
  it("brings a tree back into the list and opens it", async () => {
    const workspace = await started();
    const trash = new Trash(workspace);
    await trash.load();
    expect(trash.contents?.trees.map((tree) => tree.title)).toEqual(["Tides"]);
    expect(await trash.restoreTree(2)).toBe(true);
    expect(trash.contents?.trees).toEqual([]);
    expect(workspace.trees.map((tree) => tree.title)).toEqual(["Tides", "Rivers"]);
    expect(workspace.open?.tree.title).toBe("Tides");
  });

  it("brings a branch back, and tells the columns to read again", async () => {
    const workspace = await started();
    const trash = new Trash(workspace);
    await trash.load();
    const before = workspace.restored;
    expect(await trash.restoreBranch(11)).toBe(true);
    expect(trash.contents?.branches).toEqual([]);
    expect(workspace.restored).toBe(before + 1);
    expect(workspace.undoable).toBeNull();
  });

  it("says what emptying it erased", async () => {
    const workspace = await started();
    const trash = new Trash(workspace);
    await trash.load();
    expect(await trash.empty()).toBe(true);
    expect(trash.said).toBe("Erased 1 tree, 1 deleted message with their branches and 0 deleted threads.");
    expect(trash.contents).toEqual({ trees: [], branches: [] });
    expect(workspace.undoable).toBeNull();
  });

  it("says why it was not emptied, and keeps what it shows and Undo", async () => {
    const workspace = await started();
    const trash = new Trash(workspace);
    await trash.load();
    fake.failure = { code: "internal", message: "database is locked" };
    expect(await trash.empty()).toBe(false);
    expect(trash.error?.message).toBe("database is locked");
    expect(trash.said).toBeNull();
    expect(trash.contents?.trees.map((tree) => tree.title)).toEqual(["Tides"]);
    expect(workspace.undoable?.what).toBe("Deleted “Erosion”.");
    expect(await trash.restoreBranch(11)).toBe(false);
    expect(trash.contents?.branches).toHaveLength(1);
  });
});
