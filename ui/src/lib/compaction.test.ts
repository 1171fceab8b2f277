import { beforeEach, describe, expect, it } from "vitest";

import type { CompactionNote } from "./bindings";
import { ThreadCompaction } from "./compaction.svelte";
import { Conversation } from "./conversation.svelte";
import type { FakeState } from "./fake-backend";
import { installRiversBackend, profile } from "./test-fixtures";

let fake: FakeState;

beforeEach(() => {
  fake = installRiversBackend({ profiles: [profile("Local")] });
});

async function focused(): Promise<Conversation> {
  const conversation = new Conversation();
  await conversation.loadProfiles("Local");
  await conversation.open(1);
  conversation.inspector.focus = 11;
  return conversation;
}

const note: CompactionNote = {
  id: 1,
  first: 10,
  upTo: 10,
  messages: 1,
  tokens: 20,
  writtenBy: "Local",
  included: true,
  reason: null,
  stale: null,
  pinId: null,
  text: "Earlier: why rivers bend.",
};

describe("ThreadCompaction", () => {
  it("compacts the focused message's thread with the chosen model, keeping the turns asked for", async () => {
    const compaction = new ThreadCompaction(await focused());
    expect(await compaction.compact(3)).toBe(true);
    expect(fake.compactions).toEqual([{ id: 1, treeId: 1, nodeId: 11, keep: 3, undone: false }]);
    expect(compaction.working).toBeNull();
  });

  it("keeps the tree's number of turns when none is chosen", async () => {
    const conversation = await focused();
    fake.treeSettings.set(1, { searchHits: [], compactionKeepTurns: 6 });
    expect(await new ThreadCompaction(conversation).compact(null)).toBe(true);
    expect(fake.compactions[0]?.keep).toBe(6);
  });

  it("undoes it, and says so when it is no longer in effect", async () => {
    const compaction = new ThreadCompaction(await focused());
    await compaction.compact(2);
    expect(await compaction.undo(note)).toBe(true);
    expect(fake.compactions[0]?.undone).toBe(true);
    expect(await compaction.undo(note)).toBe(false);
    expect(compaction.error?.message).toMatch(/not in effect/);
  });

  it("saves the person's own summary where the compaction ends", async () => {
    const compaction = new ThreadCompaction(await focused());
    compaction.edit(note);
    expect(compaction.draft).toBe("Earlier: why rivers bend.");
    compaction.draft = "The person asked why rivers bend.";
    expect(await compaction.save(note)).toBe(true);
    expect(compaction.draft).toBeNull();
    expect(fake.summaryWrites.at(-1)).toEqual({ kind: "write", args: { treeId: 1, pinId: null, upTo: 10, text: "The person asked why rivers bend." } });
  });
});
