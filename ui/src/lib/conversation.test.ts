import { beforeEach, describe, expect, it } from "vitest";

import { Conversation } from "./conversation.svelte";
import { installFakeBackend, type FakeState } from "./fake-backend";
import { Workspace } from "./workspace.svelte";

let fake: FakeState;

beforeEach(() => {
  fake = installFakeBackend();
});

/// A new tree open in a conversation with a model chosen.
async function opened(mode: "dialogue" | "buffer" = "dialogue"): Promise<Conversation> {
  const workspace = new Workspace();
  await workspace.createTree("Rivers", mode);
  const conversation = new Conversation();
  await conversation.open(workspace.open?.tree.id ?? -1);
  conversation.profile = "Local";
  return conversation;
}

/// The texts on show in column `index`, root first.
function shown(conversation: Conversation, index = 0) {
  return conversation.columns[index]?.view.messages.map(({ node: { message } }) => message.text) ?? [];
}

describe("Conversation", () => {
  it("keeps the text of a reply that arrived but could not be saved", async () => {
    const conversation = await opened();
    fake.replyThenFailure = {
      pieces: ["Rivers bend ", "where the outer bank erodes."],
      error: { code: "internal", message: "could not save the reply: database is locked" },
    };

    expect(await conversation.ask(0, "Why do rivers bend?")).toBe("unsaved");
    const column = conversation.columns[0];
    expect(column?.error?.message).toBe("could not save the reply: database is locked");
    expect(column?.unsaved).toBe("Rivers bend where the outer bank erodes.");
    expect(column?.streaming).toBeNull();

    // The next reply starts clean.
    fake.replyThenFailure = { pieces: [], error: { code: "providerUnavailable", message: "Local did not answer" } };
    await conversation.ask(0, "Again?");
    expect(conversation.columns[0]?.unsaved).toBeNull();
  });

  it("adds a message after the reply on show, not after the message the tree opened at", async () => {
    const conversation = await opened();
    expect(await conversation.add(0, "First")).toBe(true);
    fake.replies = ["A reply"];
    expect(await conversation.ask(0, "A question")).toBe("answered");
    expect(await conversation.add(0, "Added after the reply")).toBe(true);

    expect(shown(conversation)).toEqual(["First", "A question", "A reply", "Added after the reply"]);
    const [, , reply, added] = conversation.columns[0]?.view.messages ?? [];
    expect(added?.node.message.parentId).toBe(reply?.node.message.id);
  });

  it("continues a document from what was just typed, each time", async () => {
    const conversation = await opened("buffer");
    fake.replies = [" continued once.", " continued twice."];
    await conversation.add(0, "Once upon a time");
    expect(await conversation.continueDocument(0)).toBe(true);
    await conversation.add(0, " Then");
    expect(await conversation.continueDocument(0)).toBe(true);
    expect(shown(conversation)).toEqual(["Once upon a time", " continued once.", " Then", " continued twice."]);
  });

  it("refuses an empty message beside the composer and saves nothing", async () => {
    const conversation = await opened();
    expect(await conversation.add(0, "   ")).toBe(false);
    expect(conversation.columns[0]?.composerError?.code).toBe("invalidInput");
    expect(shown(conversation)).toEqual([]);
  });

  it("says a failed send saved the person's message, and answers it again without a copy", async () => {
    const conversation = await opened();
    fake.providerDown = { code: "providerUnavailable", message: "Local is not running" };
    expect(await conversation.ask(0, "Why do rivers bend?")).toBe("unanswered");
    expect(shown(conversation)).toEqual(["Why do rivers bend?"]);
    expect(conversation.columns[0]?.error?.code).toBe("providerUnavailable");

    fake.replies = ["Because the outer bank erodes."];
    const question = conversation.columns[0]?.view.messages[0]?.node.message.id ?? -1;
    expect(await conversation.regenerate(0, question)).toBe(true);
    expect(shown(conversation)).toEqual(["Why do rivers bend?", "Because the outer bank erodes."]);
    expect(conversation.columns[0]?.error).toBeNull();
  });

  it("sends an edit as a new branch beside the original", async () => {
    const conversation = await opened();
    fake.replies = ["Erosion.", "Deposition."];
    await conversation.ask(0, "What shapes the outer bank?");
    const original = conversation.columns[0]?.view.messages[0]?.node.message.id ?? -1;
    expect(await conversation.edit(0, original, "What shapes the inner bank?")).toBe(true);

    expect(shown(conversation)).toEqual(["What shapes the inner bank?", "Deposition."]);
    const edited = conversation.columns[0]?.view.messages[0];
    expect(edited?.alternatives).toEqual([original, edited?.node.message.id]);

    await conversation.switchTo(0, original);
    expect(shown(conversation)).toEqual(["What shapes the outer bank?", "Erosion."]);
  });
});
