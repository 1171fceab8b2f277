import { beforeEach, describe, expect, it } from "vitest";

import { installFakeBackend, type FakeState } from "./fake-backend";
import { MessageNotes } from "./notes.svelte";

let fake: FakeState;

beforeEach(() => {
  fake = installFakeBackend({
    trees: [{ id: 1, slug: "rivers", title: "Rivers", mode: "dialogue", createdAtMs: 0, updatedAtMs: 0, messageCount: 2, globalId: "g2", sharedBy: null }],
    messages: new Map([
      [
        1,
        [
          { id: 10, parentId: null, author: "human", writtenBy: null, text: "Why do rivers bend?", createdAtMs: 0, tokenEstimate: 6 },
          { id: 11, parentId: 10, author: "model", writtenBy: null, text: "Erosion.", createdAtMs: 0, tokenEstimate: 3 },
        ],
      ],
    ]),
  });
});

describe("MessageNotes", () => {
  it("opens one message's notes at a time and closes them on a second toggle", async () => {
    fake.notes.set(10, [{ id: 1, text: "ask about meanders", included: false }]);
    const notes = new MessageNotes();
    await notes.toggle(10);
    expect(notes.of).toBe(10);
    expect(notes.list.map((note) => note.text)).toEqual(["ask about meanders"]);
    await notes.toggle(11);
    expect(notes.of).toBe(11);
    expect(notes.list).toEqual([]);
    await notes.toggle(11);
    expect(notes.of).toBeNull();
  });

  it("adds a note and puts it into context, reading the list again each time", async () => {
    const notes = new MessageNotes();
    await notes.toggle(11);
    expect(await notes.add("check the source", false)).toBe(true);
    expect(notes.list.map((note) => [note.text, note.included])).toEqual([["check the source", false]]);
    const [added] = notes.list;
    expect(await notes.setIncluded(added!, true)).toBe(true);
    expect(notes.list.map((note) => note.included)).toEqual([true]);
    expect(notes.error).toBeNull();
  });

  it("says what failed and keeps the notes it had", async () => {
    const notes = new MessageNotes();
    await notes.toggle(11);
    await notes.add("first", false);
    expect(await notes.add("   ", false)).toBe(false);
    expect(notes.error).toBe("Could not add the note: a note needs some text");
    expect(notes.list.map((note) => note.text)).toEqual(["first"]);
    fake.failure = { code: "internal", message: "database is locked" };
    expect(await notes.setIncluded(notes.list[0]!, true)).toBe(false);
    expect(notes.error).toBe("Could not change the note: database is locked");
  });

  it("does not show notes read for a message that was closed meanwhile", async () => {
    fake.notes.set(10, [{ id: 1, text: "old", included: false }]);
    const notes = new MessageNotes();
    const opening = notes.toggle(10);
    await notes.toggle(10);
    await opening;
    expect(notes.of).toBeNull();
    expect(notes.list).toEqual([]);
  });
});
