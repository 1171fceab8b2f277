import { beforeEach, describe, expect, it } from "vitest";

import { describeAncestor, PinAncestry, placeOf } from "./ancestry.svelte";
import type { AncestorView } from "./bindings";
import { installFakeBackend, type FakeState } from "./fake-backend";

function ancestor(overrides: Partial<AncestorView>): AncestorView {
  return {
    pinId: null,
    title: "Rivers",
    distance: 2,
    upTo: 11,
    budget: 500,
    tokens: 120,
    included: true,
    reason: null,
    state: "summary",
    writtenBy: "model",
    summarizer: "gpt-4o (OpenAI)",
    wholeThread: false,
    text: "Rivers bend where the outer bank erodes.",
    writtenText: null,
    writtenTokens: null,
    unavailable: null,
    stale: null,
    pending: false,
    ...overrides,
  };
}

let fake: FakeState;

beforeEach(() => {
  fake = installFakeBackend({
    ancestry: new Map([
      [
        7,
        [
          ancestor({}),
          ancestor({
            pinId: 3,
            title: "Meanders",
            distance: 1,
            upTo: 21,
            budget: 800,
            state: "excerpt",
            writtenBy: null,
            summarizer: null,
            text: "Person: why oxbows?\n\nModel: cut-offs.",
            unavailable: "summary not available: the summariser failed (401)",
            stale: null,
            pending: true,
          }),
        ],
      ],
    ]),
  });
});

describe("what a pin knows", () => {
  it("lists every ancestor with who wrote it, or why its messages stand in", async () => {
    const knowledge = new PinAncestry(1, 7);
    await knowledge.load("gpt-4o (OpenAI)");
    expect(knowledge.loaded).toBe(true);
    expect(knowledge.ancestors.map((a) => a.title)).toEqual(["Rivers", "Meanders"]);
    expect(knowledge.pending).toBe(true);
    const [root, parent] = knowledge.ancestors;
    expect(describeAncestor(root!)).toBe("Summary written by gpt-4o (OpenAI)");
    expect(placeOf(root!)).toBe("2 threads up");
    expect(describeAncestor(parent!)).toBe(
      "Summary not available: the summariser failed (401): its last messages before the pin are sent instead",
    );
    expect(placeOf(parent!)).toBe("parent thread");
  });

  it("says a stale summary is not sent, and why", () => {
    const stale = ancestor({
      state: "excerpt",
      writtenBy: null,
      summarizer: null,
      unavailable: "summary not available: the one there was written before message #4 was excluded, so it is not sent; it is written again",
      stale: "written before message #4 was excluded",
      pending: true,
    });
    expect(describeAncestor(stale)).toBe(
      "Stale summary, not sent: it was written before message #4 was excluded. Its last messages before the pin are sent instead while a new one is written",
    );
    expect(describeAncestor({ ...stale, pending: false })).toMatch(/until the summariser writes it again$/);
  });

  it("saves the person's own summary at the point the pin hangs off, then reads it back", async () => {
    const knowledge = new PinAncestry(1, 7);
    await knowledge.load("gpt-4o (OpenAI)");
    knowledge.edit(1);
    // An excerpt is no summary to start from.
    expect(knowledge.draft).toBe("");
    knowledge.draft = "Oxbows are meanders the river cut off.";
    expect(await knowledge.save("gpt-4o (OpenAI)")).toBe(true);
    expect(fake.summaryWrites).toEqual([
      { kind: "write", args: { treeId: 1, pinId: 3, upTo: 21, text: "Oxbows are meanders the river cut off." } },
    ]);
    expect(knowledge.editing).toBeNull();
    expect(knowledge.ancestors[1]!.text).toBe("Oxbows are meanders the river cut off.");
    expect(describeAncestor(knowledge.ancestors[1]!)).toBe("Summary written by you");
  });

  it("edits a fitted summary from the text as written, not the fitted one", async () => {
    fake.ancestry.set(8, [ancestor({ state: "fitted", writtenBy: "person", text: "short", writtenText: "the long one", writtenTokens: 900 })]);
    const knowledge = new PinAncestry(1, 8);
    await knowledge.load("m");
    knowledge.edit(0);
    expect(knowledge.draft).toBe("the long one");
    expect(describeAncestor(knowledge.ancestors[0]!)).toContain("900 tokens as written, fitted to its budget");
  });

  it("refuses an empty summary and keeps the editor open", async () => {
    const knowledge = new PinAncestry(1, 7);
    await knowledge.load("m");
    knowledge.edit(0);
    knowledge.draft = "   ";
    expect(await knowledge.save("m")).toBe(false);
    expect(knowledge.error?.code).toBe("invalidInput");
    expect(knowledge.editing).toBe(0);
  });

  it("regenerates with the chosen model at the ancestor's budget", async () => {
    const knowledge = new PinAncestry(1, 7);
    await knowledge.load("local (Ollama)");
    expect(await knowledge.regenerate(0, "local (Ollama)")).toBe(true);
    expect(fake.summaryWrites[0]).toEqual({
      kind: "regenerate",
      args: { treeId: 1, pinId: null, upTo: 11, budget: 500, profile: "local (Ollama)" },
    });
    expect(knowledge.ancestors[0]!.text).toBe("Written again by local (Ollama).");
  });
});
