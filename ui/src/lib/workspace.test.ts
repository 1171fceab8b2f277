import { beforeEach, describe, expect, it } from "vitest";

import { backend, PinloomError } from "./backend";
import { installFakeBackend, type FakeState } from "./fake-backend";
import { Workspace } from "./workspace.svelte";

let fake: FakeState;

beforeEach(() => {
  fake = installFakeBackend();
});

describe("backend", () => {
  it("turns a command's { code, message } into a PinloomError with that code", async () => {
    fake.failure = { code: "notFound", message: "tree 9 does not exist" };
    const error = await backend.treeOpen(9).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(PinloomError);
    expect((error as PinloomError).code).toBe("notFound");
    expect((error as PinloomError).message).toBe("tree 9 does not exist");
  });
});

describe("Workspace", () => {
  it("creates a tree, opens it and remembers it", async () => {
    const workspace = new Workspace();
    await workspace.start();
    expect(await workspace.createTree("Rivers", "dialogue")).toBe(true);
    expect(workspace.open?.tree.title).toBe("Rivers");
    expect(workspace.trees.map((tree) => tree.title)).toEqual(["Rivers"]);
    expect(fake.preferences.lastTreeId).toBe(workspace.open?.tree.id);
  });

  it("remembers the theme and the layout for the next start", async () => {
    const workspace = new Workspace();
    await workspace.start();
    await workspace.setTheme("dark");
    await workspace.toggleInspector();
    expect(document.documentElement.dataset.theme).toBe("dark");
    expect(fake.preferences).toMatchObject({ theme: "dark", inspectorHidden: true });

    const next = new Workspace();
    await next.start();
    expect(next.theme).toBe("dark");
    expect(next.inspectorShown).toBe(false);
    await next.setTheme("system");
    expect(document.documentElement.dataset.theme).toBeUndefined();
    expect(fake.preferences.theme).toBeNull();
  });

  it("keeps the tree chosen last when an earlier, slower open finishes after it", async () => {
    const workspace = new Workspace();
    await workspace.createTree("The long walk", "dialogue");
    const slow = workspace.open?.tree.id ?? -1;
    await workspace.createTree("Rivers", "dialogue");
    const quick = workspace.open?.tree.id ?? -1;
    fake.openDelayMs.set(slow, 50);
    const first = workspace.select(slow);
    await workspace.select(quick);
    await first;
    expect(workspace.open?.tree.title).toBe("Rivers");
    expect(fake.preferences.lastTreeId).toBe(quick);
  });

  it("reopens the tree that was open last time", async () => {
    fake.trees = [
      { id: 1, slug: "a", title: "A", mode: "dialogue", createdAtMs: 0, updatedAtMs: 0, messageCount: 0, globalId: "g0", sharedBy: null },
      { id: 2, slug: "b", title: "B", mode: "buffer", createdAtMs: 0, updatedAtMs: 0, messageCount: 0, globalId: "g0", sharedBy: null },
    ];
    fake.preferences = { lastTreeId: 2, defaultModel: null };
    const workspace = new Workspace();
    await workspace.start();
    expect(workspace.open?.tree.title).toBe("B");
    expect(workspace.starting).toBe(false);
  });

  it("switches to the unusable-database notice when the database cannot be used", async () => {
    fake.failure = { code: "databaseUnusable", message: "/x/pinloom.sqlite3 is not a Pinloom database" };
    const workspace = new Workspace();
    await workspace.start();
    expect(workspace.unusable?.message).toContain("/x/pinloom.sqlite3");
    expect(workspace.starting).toBe(false);
  });
});
