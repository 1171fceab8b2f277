import { beforeEach, describe, expect, it } from "vitest";

import { Conversation } from "./conversation.svelte";
import { installFakeBackend, type FakeState } from "./fake-backend";
import { profile } from "./test-fixtures";

let fake: FakeState;

beforeEach(() => {
  fake = installFakeBackend();
});

/// Until the readiness the conversation started loading has arrived.
async function settled(conversation: Conversation) {
  for (let i = 0; i < 50 && (conversation.readiness.looking || !conversation.readiness.looked); i++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("ModelsReadiness", () => {
  it("says which models can answer, offers a local server's model, and chooses it once used", async () => {
    fake.profiles = [profile("Cloud")];
    const qwen = { ...profile("qwen.gguf (llama.cpp server)"), provider: "llamacpp", modelId: "qwen.gguf" };
    fake.localModels = [{ server: "llama.cpp server at http://127.0.0.1:8080/v1", profile: qwen }];
    const conversation = new Conversation();
    await conversation.loadProfiles(null);
    await settled(conversation);
    expect(conversation.readiness.ready).toEqual(["Cloud"]);
    expect(conversation.readiness.found.map((found) => found.profile.name)).toEqual([qwen.name]);

    expect(await conversation.useFoundModel(conversation.readiness.found[0]!)).toBe(true);
    expect(conversation.profile).toBe(qwen.name);
    await settled(conversation);
    expect(conversation.readiness.found).toEqual([]);
    expect(conversation.readiness.ready).toContain(qwen.name);
  });

  it("keeps what was said when a look fails, and says why", async () => {
    fake.profiles = [profile("Cloud")];
    const conversation = new Conversation();
    await conversation.loadProfiles(null);
    await settled(conversation);
    fake.failure = { code: "internal", message: "the look failed" };
    expect(await conversation.readiness.load()).toBe(false);
    expect(conversation.readiness.error?.message).toBe("the look failed");
    expect(conversation.readiness.ready).toEqual(["Cloud"]);
  });
});
