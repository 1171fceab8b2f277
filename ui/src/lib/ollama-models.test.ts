import { beforeEach, describe, expect, it } from "vitest";

import { Conversation } from "./conversation.svelte";
import { installFakeBackend, type FakeState } from "./fake-backend";
import { OllamaModels } from "./ollama-models.svelte";
import { profile } from "./test-fixtures";

let fake: FakeState;

beforeEach(() => {
  fake = installFakeBackend({ profiles: [profile("Local")] });
});

describe("OllamaModels", () => {
  it("finds the server's models and adds one to the models to choose from", async () => {
    fake.ollama = [profile("llama3.2", { provider: "ollama", contextWindow: 131_072 })];
    const conversation = new Conversation();
    await conversation.loadProfiles("Local");
    const ollama = new OllamaModels(conversation);
    expect(await ollama.discover("  ")).toBe(true);
    expect(ollama.found.map((one) => one.name)).toEqual(["llama3.2"]);
    expect(await ollama.add(ollama.found[0]!)).toBe(true);
    expect(conversation.profiles.map((one) => one.name)).toEqual(["Local", "llama3.2"]);
    // The model chosen stays chosen.
    expect(conversation.profile).toBe("Local");
  });

  it("says when nothing answers at the address, and keeps what it found before", async () => {
    fake.ollama = [profile("llama3.2", { provider: "ollama" })];
    const ollama = new OllamaModels(new Conversation());
    await ollama.discover("");
    fake.ollama = null;
    expect(await ollama.discover("http://127.0.0.1:9")).toBe(false);
    expect(ollama.error?.message).toBe("nothing answers at http://127.0.0.1:9");
    expect(ollama.found.map((one) => one.name)).toEqual(["llama3.2"]);
  });

  it("says why a model could not be added, and lists nothing new", async () => {
    const conversation = new Conversation();
    await conversation.loadProfiles(null);
    const ollama = new OllamaModels(conversation);
    expect(await ollama.add(profile(" "))).toBe(false);
    expect(ollama.error?.message).toBe("a profile needs a name");
    expect(conversation.profiles.map((one) => one.name)).toEqual(["Local"]);
  });
});
