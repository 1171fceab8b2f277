import { beforeEach, describe, expect, it } from "vitest";

import type { Message, TreeMapView } from "./bindings";
import { installFakeBackend, type FakeState } from "./fake-backend";
import { RIVERS } from "./test-fixtures";
import { OUTLINE_PAGE, TreeOutline, TreePicture } from "./tree-map.svelte";

let fake: FakeState;

/// A thread of `count` messages, 1 to `count`, then a second reply to the first.
function thread(count: number): Message[] {
  const messages: Message[] = Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    parentId: i === 0 ? null : i,
    author: i % 2 === 0 ? "human" : "model",
    writtenBy: null,
    text: `Message  ${i + 1}\nwith a second line`,
    createdAtMs: 0,
    tokenEstimate: 3,
  }));
  messages.push({ id: count + 1, parentId: 1, author: "model", writtenBy: null, text: "Another answer", createdAtMs: 0, tokenEstimate: 2 });
  return messages;
}

const map: TreeMapView = {
  ids: [1, 2, 3],
  authors: "hmm",
  runs: [
    { first: 0, len: 2, lane: 0, depth: 0, from: null, pinId: null },
    { first: 2, len: 1, lane: 1, depth: 1, from: 0, pinId: null },
  ],
  pins: [],
  lanes: 2,
  depths: 2,
};

beforeEach(() => {
  fake = installFakeBackend({ trees: [RIVERS], messages: new Map([[1, thread(2)]]), maps: new Map([[1, map]]) });
});

describe("TreeOutline", () => {
  it("reads the whole outline page by page, and knows the message written last", async () => {
    fake.messages.set(1, thread(OUTLINE_PAGE + 10));
    const outline = new TreeOutline();
    expect(await outline.load(1)).toBe(true);
    expect(outline.layout?.rows).toHaveLength(OUTLINE_PAGE + 11);
    expect(fake.calls.filter((call) => call === "tree_outline")).toHaveLength(2);
    // Depth first, the second answer comes last in the outline, but it was written last.
    expect(outline.layout?.rows.at(-1)?.entry.id).toBe(OUTLINE_PAGE + 11);
    expect(outline.newest).toBe(OUTLINE_PAGE + 11);
  });

  it("says why the outline could not be read", async () => {
    const outline = new TreeOutline();
    expect(await outline.load(99)).toBe(false);
    expect(outline.error?.code).toBe("notFound");
    expect(outline.layout).toBeNull();
  });
});

describe("TreePicture", () => {
  it("reads the picture, and each message's preview once, on one line", async () => {
    const picture = new TreePicture();
    expect(await picture.load(1)).toBe(true);
    expect(picture.picture?.count).toBe(3);
    await picture.preview(2);
    await picture.preview(2);
    expect(picture.previews[2]).toBe("Message 2 with a second line");
    expect(fake.calls.filter((call) => call === "tree_outline")).toHaveLength(1);
  });

  it("shows no preview of a message it could not read, and says why", async () => {
    const picture = new TreePicture();
    await picture.load(1);
    fake.failure = { code: "internal", message: "database is locked" };
    await picture.preview(3);
    expect(picture.previews[3]).toBe("");
    expect(picture.error?.message).toBe("database is locked");
    expect(await picture.load(1)).toBe(false);
    // The picture it had stays on show.
    expect(picture.picture?.count).toBe(3);
  });

  it("says why the picture could not be read", async () => {
    const picture = new TreePicture();
    expect(await picture.load(2)).toBe(false);
    expect(picture.error?.code).toBe("notFound");
    expect(picture.picture).toBeNull();
  });
});
