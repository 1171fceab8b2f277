import { beforeEach, describe, expect, it } from "vitest";

import { Conversation } from "./conversation.svelte";
import { installFakeBackend, type FakeState } from "./fake-backend";
import { Workspace } from "./workspace.svelte";

let fake: FakeState;

beforeEach(() => {
  fake = installFakeBackend();
});

describe("Conversation", () => {
  it("keeps the text of a reply that arrived but could not be saved", async () => {
    const workspace = new Workspace();
    await workspace.createTree("Rivers", "dialogue");
    const treeId = workspace.open?.tree.id ?? -1;
    const conversation = new Conversation();
    await conversation.open(treeId);
    conversation.profile = "Local";
    fake.replyThenFailure = {
      pieces: ["Rivers bend ", "where the outer bank erodes."],
      error: { code: "internal", message: "could not save the reply: database is locked" },
    };

    expect(await conversation.ask(0, "Why do rivers bend?")).toBe(false);
    const column = conversation.columns[0];
    expect(column?.error?.message).toBe("could not save the reply: database is locked");
    expect(column?.unsaved).toBe("Rivers bend where the outer bank erodes.");
    expect(column?.streaming).toBeNull();

    // The next reply starts clean.
    fake.replyThenFailure = { pieces: [], error: { code: "providerUnavailable", message: "Local did not answer" } };
    await conversation.ask(0, "Again?");
    expect(conversation.columns[0]?.unsaved).toBeNull();
  });
});
