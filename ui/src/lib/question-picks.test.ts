import { beforeEach, describe, expect, it } from "vitest";

import { Conversation } from "./conversation.svelte";
import type { FakeState } from "./fake-backend";
import { MOST_PICKS } from "./bindings";
import { pickLabel } from "./question-picks.svelte";
import { installRiversBackend, profile, RIVERS, RIVERS_MESSAGES } from "./test-fixtures";

let fake: FakeState;

beforeEach(() => {
  fake = installRiversBackend({ profiles: [profile("Local")] });
});

/// Rivers open, with a model chosen unless `model` is empty.
async function opened(model = "Local"): Promise<Conversation> {
  const conversation = new Conversation();
  await conversation.open(RIVERS.id);
  conversation.profile = model;
  return conversation;
}

/// The texts on show in the root column, root first.
function shown(conversation: Conversation): string[] {
  return conversation.columns[0]?.view.messages.map(({ node: { message } }) => message.text) ?? [];
}

describe("the messages picked for a question", () => {
  it("keeps the picks in the order picked, each with or without its branch's summary", async () => {
    const { questionPicks } = await opened();
    questionPicks.toggle(11, null, "Erosion on the **outer**\n bank.");
    questionPicks.toggle(10, 4, "Why do rivers bend?");
    questionPicks.setWithSummary(11, true);
    expect(questionPicks.picks).toEqual([
      { nodeId: 11, pinId: null, label: "#11 — Erosion on the outer bank.", withSummary: true },
      { nodeId: 10, pinId: 4, label: "#10 — Why do rivers bend?", withSummary: false },
    ]);
    expect(questionPicks.has(10)).toBe(true);

    // Picked again, a message is unpicked; picked once more, it goes last.
    questionPicks.toggle(11, null, "Erosion");
    expect(questionPicks.picks.map((pick) => pick.nodeId)).toEqual([10]);
    questionPicks.toggle(11, null, "Erosion");
    questionPicks.remove(10);
    expect(questionPicks.picks.map((pick) => [pick.nodeId, pick.withSummary])).toEqual([[11, false]]);
    questionPicks.clear();
    expect(questionPicks.picks).toEqual([]);
  });

  it("labels a pick by its number alone until its words are known, and cuts long ones short", () => {
    expect(pickLabel(7, "  ")).toBe("#7");
    const label = pickLabel(7, "word ".repeat(40));
    expect(label.length).toBeLessThan(70);
    expect(label.endsWith("…")).toBe(true);
  });

  it("refuses a pick past the most one question is asked over, and says so", async () => {
    const { questionPicks } = await opened();
    for (let id = 1; id <= MOST_PICKS; id++) questionPicks.toggle(id, null, `Message ${id}`);
    questionPicks.toggle(99, null, "One too many");
    expect(questionPicks.picks).toHaveLength(MOST_PICKS);
    expect(questionPicks.error?.message).toContain(`at most ${MOST_PICKS} messages`);
    // Unpicking one makes room, and the refusal goes.
    questionPicks.toggle(1, null, "");
    questionPicks.toggle(99, null, "One too many");
    expect(questionPicks.picks.at(-1)?.nodeId).toBe(99);
    expect(questionPicks.error).toBeNull();
  });

  it("asks over the picks in a new thread the root column then shows, and forgets them", async () => {
    const conversation = await opened();
    const { questionPicks } = conversation;
    // A pin open beside the root thread closes: the new thread is the root column's.
    conversation.columns = [...conversation.columns, { ...conversation.columns[0]! }];
    questionPicks.toggle(11, null, "Erosion on the outer bank.");
    questionPicks.toggle(10, null, "Why do rivers bend?");
    questionPicks.setWithSummary(11, true);
    fake.replies = ["Both say the outer bank wears away."];

    expect(await questionPicks.ask("What do these agree on?")).toBe(true);
    expect(fake.sent.at(-1)).toEqual({
      kind: "overPicked",
      picks: [
        { nodeId: 11, withSummary: true },
        { nodeId: 10, withSummary: false },
      ],
      text: "What do these agree on?",
    });
    expect(questionPicks.picks).toEqual([]);
    expect(questionPicks.error).toBeNull();
    expect(conversation.columns).toHaveLength(1);
    expect(shown(conversation)).toEqual(["What do these agree on?", "Both say the outer bank wears away."]);
    const view = conversation.columns[0]!.view;
    expect(view.messages[0]?.node.message.parentId).toBeNull();
    expect(view.picked.map((pick) => [pick.nodeId, pick.withSummary])).toEqual([
      [11, true],
      [10, false],
    ]);
  });

  it("keeps the picks and says why in the tray when the question is refused", async () => {
    const conversation = await opened();
    const { questionPicks } = conversation;
    questionPicks.toggle(11, null, "Erosion on the outer bank.");
    questionPicks.toggle(404, null, "A message gone meanwhile");

    expect(await questionPicks.ask("What do these agree on?")).toBe(false);
    expect(questionPicks.error?.message).toBe("message 404 does not exist");
    expect(questionPicks.picks.map((pick) => pick.nodeId)).toEqual([11, 404]);
    // Said once, beside the picks, and the column still shows what it showed.
    expect(conversation.columns[0]?.error).toBeNull();
    expect(shown(conversation)).toEqual(RIVERS_MESSAGES.map((message) => message.text));
    expect(questionPicks.asking).toBe(false);
  });

  it("says a model must be chosen first, keeping the picks", async () => {
    const { questionPicks } = await opened("");
    questionPicks.toggle(11, null, "Erosion on the outer bank.");
    expect(await questionPicks.ask("Why?")).toBe(false);
    expect(questionPicks.error?.message).toContain("choose a model first");
    expect(questionPicks.picks).toHaveLength(1);
    expect(fake.sent).toEqual([]);
  });

  it("shows a question saved but not answered in the root column, to be answered again there", async () => {
    const conversation = await opened();
    const { questionPicks } = conversation;
    questionPicks.toggle(11, null, "Erosion on the outer bank.");
    fake.providerDown = { code: "providerUnavailable", message: "Local is not running" };

    expect(await questionPicks.ask("What does this rest on?")).toBe(true);
    expect(questionPicks.picks).toEqual([]);
    expect(shown(conversation)).toEqual(["What does this rest on?"]);
    expect(conversation.columns[0]?.view.picked.map((pick) => pick.nodeId)).toEqual([11]);
    expect(conversation.columns[0]?.error?.code).toBe("providerUnavailable");
    expect(questionPicks.error).toBeNull();
  });

  it("forgets the picks when another tree opens, not when the same one opens again", async () => {
    const conversation = await opened();
    conversation.questionPicks.toggle(11, null, "Erosion");
    await conversation.open(RIVERS.id);
    expect(conversation.questionPicks.picks).toHaveLength(1);
    await conversation.open(2);
    expect(conversation.questionPicks.picks).toEqual([]);
  });
});
