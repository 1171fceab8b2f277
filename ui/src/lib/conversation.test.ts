import { beforeEach, describe, expect, it } from "vitest";

import { backend } from "./backend";
import { Conversation, THREAD_PAGE } from "./conversation.svelte";
import { installFakeBackend, type FakeState } from "./fake-backend";

let fake: FakeState;

beforeEach(() => {
  fake = installFakeBackend();
});

/// The texts on show in column `index`, root first.
function shown(conversation: Conversation, index = 0) {
  return conversation.columns[index]?.view.messages.map(({ node: { message } }) => message.text) ?? [];
}

describe("Conversation", () => {
  it("never offers or defaults to a profile that came with an imported file until it is enabled", async () => {
    const profile = (name: string, importedFrom: string | null = null) => ({
      name,
      provider: "openai",
      modelId: "o1-pro",
      baseUrl: null,
      contextWindow: 128_000,
      reserve: 4_096,
      nativeSystem: true,
      completionEndpoint: false,
      tokenizer: "o200k",
      agentSystemPrompt: "",
      importedFrom,
    });
    // It sorts first by name, as the file's author meant it to.
    fake.profiles = [profile("(Recommended) gpt-4o", "shared.json"), profile("Local")];
    const conversation = new Conversation();
    await conversation.loadProfiles(null);
    expect(conversation.profiles.map((one) => one.name)).toEqual(["Local"]);
    expect(conversation.importedProfiles.map((one) => one.name)).toEqual(["(Recommended) gpt-4o"]);
    expect(conversation.profile).toBe("Local");
    // Even named as the last choice, it is not chosen.
    await conversation.loadProfiles("(Recommended) gpt-4o");
    expect(conversation.profile).toBe("Local");

    await backend.profileEnable("(Recommended) gpt-4o");
    await conversation.loadProfiles("(Recommended) gpt-4o");
    expect(conversation.profile).toBe("(Recommended) gpt-4o");
    expect(conversation.importedProfiles).toEqual([]);
  });

  it("opens a message far back in a long thread as its page, and a send still continues the end", async () => {
    // Nine pages; ids far above those the fake gives new messages.
    const total = 9 * THREAD_PAGE;
    const messages = Array.from({ length: total }, (_, i) => ({
      id: 10_000 + i,
      parentId: i === 0 ? null : 9_999 + i,
      author: (i % 2 === 0 ? "human" : "model") as "human" | "model",
      writtenBy: null,
      text: `Message ${i}`,
      createdAtMs: 0,
      tokenEstimate: 3,
    }));
    fake = installFakeBackend({
      trees: [{ id: 1, slug: "long", title: "Long", mode: "dialogue", createdAtMs: 0, updatedAtMs: 0, messageCount: total, globalId: "g-long", sharedBy: null }],
      messages: new Map([[1, messages]]),
    });
    const conversation = new Conversation();
    await conversation.open(1);
    conversation.profile = "Local";
    expect(conversation.columns[0]?.view.first).toBe(total - THREAD_PAGE);

    // The message jumped to, two pages in: its page starts a quarter page before it.
    const jumped = 2 * THREAD_PAGE;
    const first = jumped - Math.floor(THREAD_PAGE / 4);
    await conversation.jumpTo(10_000 + jumped, null);
    const view = () => conversation.columns[0]!.view;
    expect([view().first, view().messages.length, view().total]).toEqual([first, THREAD_PAGE, total]);
    expect(shown(conversation)[0]).toBe(`Message ${first}`);
    await conversation.showLater(0);
    expect(view().messages.length).toBe(2 * THREAD_PAGE);
    await conversation.showEarlier(0);
    expect([view().first, view().messages.length]).toEqual([first - THREAD_PAGE, 3 * THREAD_PAGE]);

    await conversation.jumpTo(10_000 + jumped, null);
    fake.replies = ["An answer at the end."];
    expect(await conversation.sending.ask(0, "A question")).toBe("answered");
    const end = shown(conversation).slice(-3);
    expect(end).toEqual([`Message ${total - 1}`, "A question", "An answer at the end."]);
  });
});
