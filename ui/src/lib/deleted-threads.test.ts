import { beforeEach, describe, expect, it } from "vitest";

import { Conversation } from "./conversation.svelte";
import { DeletedThreads } from "./deleted-threads.svelte";
import type { FakeState } from "./fake-backend";
import { installRiversBackend } from "./test-fixtures";

let fake: FakeState;

beforeEach(() => {
  fake = installRiversBackend({
    deletedThreads: new Map([
      [
        1,
        [
          { id: 4, title: "Sediment", deletedAtMs: 0 },
          { id: 5, title: "Meanders", deletedAtMs: 0 },
        ],
      ],
    ]),
  });
});

describe("DeletedThreads", () => {
  it("offers the open tree's deleted threads and brings one back", async () => {
    const conversation = new Conversation();
    await conversation.open(1);
    const deleted = new DeletedThreads(conversation);
    expect(await deleted.load(1)).toBe(true);
    expect(deleted.list.map((thread) => thread.title)).toEqual(["Sediment", "Meanders"]);
    expect(await deleted.restore(deleted.list[0]!)).toBe(1);
    expect(deleted.list.map((thread) => thread.title)).toEqual(["Meanders"]);
    // The root column was read again, to show the pin's chip.
    expect(fake.calls.filter((call) => call === "thread_view")).toHaveLength(2);
    expect(deleted.error).toBeNull();
  });

  it("says why a thread could not be restored, and still offers it", async () => {
    const conversation = new Conversation();
    await conversation.open(1);
    const deleted = new DeletedThreads(conversation);
    await deleted.load(1);
    fake.failure = { code: "internal", message: "database is locked" };
    expect(await deleted.restore(deleted.list[1]!)).toBeNull();
    expect(deleted.error?.message).toBe("database is locked");
    expect(deleted.list.map((thread) => thread.title)).toEqual(["Sediment", "Meanders"]);
  });

  it("restores nothing without an open tree", async () => {
    const deleted = new DeletedThreads(new Conversation());
    expect(await deleted.restore({ id: 4, title: "Sediment", deletedAtMs: 0 })).toBeNull();
    expect(fake.calls).not.toContain("thread_restore");
  });
});
