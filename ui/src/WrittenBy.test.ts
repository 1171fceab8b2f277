// Messages that came from a team say which member wrote them (a reply: who asked for it), where
// the person's own say "You": in the thread's columns, the map's outline and a comparison of two
// branches.
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import { afterEach, describe, expect, it } from "vitest";

import App from "./App.svelte";
import CompareView from "./components/CompareView.svelte";
import TreeMap from "./components/TreeMap.svelte";
import type { ComparedSide, Message } from "./lib/bindings";
import { Conversation } from "./lib/conversation.svelte";
import { installFakeBackend, nodeOf } from "./lib/fake-backend";
import { RIVERS } from "./lib/test-fixtures";

afterEach(() => {
  cleanup();
});

/// A message of Rivers, from team member `writtenBy` (null: the person's own).
function message(id: number, parentId: number | null, author: Message["author"], writtenBy: string | null, text: string): Message {
  return { id, parentId, author, writtenBy, text, createdAtMs: 0, tokenEstimate: 3 };
}

/// Ben's question and the reply he asked for, then the person's own question and its reply.
const FROM_BEN_THEN_OWN: Message[] = [
  message(10, null, "human", "Ben", "Why do rivers bend?"),
  message(11, 10, "model", "Ben", "Erosion on the outer bank."),
  message(12, 11, "human", null, "And oxbows?"),
  message(13, 12, "model", null, "A bend cut off."),
];

/// Each message on show, as its toolbar names who wrote it and as the written-by label does.
function authors(): { author: string | undefined; writtenBy: string | null }[] {
  return screen.getAllByTestId("message").map((shown) => ({
    author: shown.querySelector(".toolbar-author")?.textContent?.trim(),
    writtenBy: within(shown).queryByTestId("message-written-by")?.textContent ?? null,
  }));
}

describe("who wrote a message", () => {
  it("names the team member in place of You, and beside a reply the member who asked for it", async () => {
    installFakeBackend({
      trees: [{ ...RIVERS, messageCount: 4 }],
      messages: new Map([[RIVERS.id, FROM_BEN_THEN_OWN]]),
      preferences: { lastTreeId: RIVERS.id, defaultModel: null, theme: null, inspectorHidden: null },
    });
    render(App);
    await waitFor(() => expect(screen.getAllByTestId("message")).toHaveLength(4));
    expect(authors()).toEqual([
      { author: "Ben", writtenBy: "Ben" },
      { author: "Model · Fake · for Ben", writtenBy: "for Ben" },
      { author: "You", writtenBy: null },
      { author: "Model · Fake", writtenBy: null },
    ]);
  });

  it("names the team member in the map's outline too", async () => {
    const fake = installFakeBackend({
      trees: [{ ...RIVERS, messageCount: 4 }],
      messages: new Map([[RIVERS.id, FROM_BEN_THEN_OWN]]),
    });
    fake.maps.set(RIVERS.id, {
      ids: [10, 11, 12, 13],
      authors: "hmhm",
      runs: [{ first: 0, len: 4, lane: 0, depth: 0, from: null, pinId: null }],
      pins: [],
      lanes: 1,
      depths: 4,
    });
    const conversation = new Conversation();
    await conversation.open(RIVERS.id);
    render(TreeMap, { conversation, onclose: () => undefined });
    await fireEvent.click(await screen.findByTestId("map-view-outline"));
    await waitFor(() => expect(screen.getAllByTestId("map-row")).toHaveLength(4));
    const labels = screen.getAllByTestId("map-row").map((row) => row.querySelector("[role=img]")?.getAttribute("aria-label"));
    expect(labels).toEqual(["Ben:", "Model, for Ben:", "You:", "Model:"]);
  });

  it("names the team member in a comparison of two branches too", () => {
    installFakeBackend();
    const side: ComparedSide = {
      end: 0,
      model: "Fake",
      contextSource: "planned",
      contextTokens: 0,
      contextAvailable: 0,
      contextProfile: "Fake",
      replyTokens: null,
      firstTextMs: null,
      tookMs: null,
      cost: null,
      pricedReplies: 0,
      replies: 0,
      settings: null,
    };
    const [bensQuestion, bensReply, ownQuestion, ownReply] = FROM_BEN_THEN_OWN.map(nodeOf);
    const conversation = new Conversation();
    conversation.comparison.shown = {
      commonAncestor: null,
      shared: 0,
      rows: [
        { left: bensQuestion!, right: ownQuestion!, diff: [], differs: false },
        { left: bensReply!, right: ownReply!, diff: [], differs: false },
      ],
      left: side,
      right: side,
      context: { leftOnly: [], rightOnly: [], changed: [], shared: 0 },
      settingsDiffer: [],
    };
    render(CompareView, { conversation });
    const cells = screen.getAllByTestId("compare-cell").map((cell) => ({
      author: cell.querySelector(".compare-author")?.textContent?.replace(/\s+/g, " ").trim(),
      writtenBy: within(cell).queryByTestId("message-written-by")?.textContent ?? null,
    }));
    expect(cells).toEqual([
      { author: "Ben", writtenBy: "Ben" },
      { author: "You", writtenBy: null },
      { author: "Fake · for Ben", writtenBy: "for Ben" },
      { author: "Fake", writtenBy: null },
    ]);
  });
});
