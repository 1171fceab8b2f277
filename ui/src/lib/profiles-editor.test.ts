import { beforeEach, describe, expect, it } from "vitest";

import { Conversation } from "./conversation.svelte";
import type { FakeState } from "./fake-backend";
import { ProfileEditor } from "./profiles-editor.svelte";
import { installRiversBackend, profile } from "./test-fixtures";

let fake: FakeState;

beforeEach(() => {
  fake = installRiversBackend({ profiles: [profile("Local"), profile("Remote", { provider: "openai" })] });
});

/// An editor of the chosen profile, "Local", with message 11 in focus.
async function editing(): Promise<{ conversation: Conversation; editor: ProfileEditor }> {
  const conversation = new Conversation();
  await conversation.loadProfiles("Local");
  conversation.inspector.focus = 11;
  const editor = new ProfileEditor(conversation);
  expect(editor.begin()).toBe(true);
  return { conversation, editor };
}

describe("ProfileEditor", () => {
  it("starts from the chosen profile once, and offers what its fields may name", async () => {
    const { conversation, editor } = await editing();
    expect(await editor.loadChoices()).toBe(true);
    expect(editor.providers).toContain("ollama");
    expect(editor.edited?.name).toBe("Local");
    editor.edited!.reserve = 2048;
    conversation.profile = "Remote";
    editor.begin();
    expect([editor.edited?.name, editor.edited?.reserve]).toEqual(["Local", 2048]);
  });

  it("shows one reply limit: a longest reply set apart from the reserve is the one in force, saved as the reserve", async () => {
    fake.profiles = [profile("Local", { reserve: 1024, sampling: { temperature: 0.2, topP: null, maxOutputTokens: 256 } })];
    const { editor } = await editing();
    expect(editor.edited?.reserve).toBe(256);
    expect(editor.edited?.sampling.maxOutputTokens).toBeNull();
    expect(await editor.save()).toBe(true);
    const saved = fake.profiles.find((one) => one.name === "Local");
    expect([saved?.reserve, saved?.sampling?.maxOutputTokens, saved?.sampling?.temperature]).toEqual([256, null, 0.2]);
  });

  it("previews the focused thread under the numbers as edited, and says why they do not work", async () => {
    const { editor } = await editing();
    editor.edited!.contextWindow = 4096;
    expect(await editor.refresh()).toBe(true);
    expect(editor.preview?.available).toBe(4096 - 1024);
    editor.edited!.reserve = 4096;
    expect(await editor.refresh()).toBe(false);
    expect(editor.preview).toBeNull();
    expect(editor.error?.message).toBe("the reserve leaves nothing of the window");
  });

  it("shows only the newest preview, whatever order they come back in", async () => {
    const { editor } = await editing();
    editor.edited!.contextWindow = 4096;
    const older = editor.refresh();
    editor.edited!.contextWindow = 16_384;
    await editor.refresh();
    expect(await older).toBe(false);
    expect(editor.preview?.available).toBe(16_384 - 1024);
  });

  it("counts a Llama 3 model by its own vocabulary until the person chooses a counting", async () => {
    const { editor } = await editing();
    editor.edited!.modelId = "meta-llama/Llama-3.1-8B-Instruct";
    await editor.suggestCounting();
    expect(editor.edited?.tokenizer).toBe("llama3");
    editor.edited!.tokenizer = "fourChars";
    editor.countingChosen = true;
    editor.edited!.modelId = "Llama-3.2";
    await editor.suggestCounting();
    expect(editor.edited?.tokenizer).toBe("fourChars");
  });

  it("leaves a model without prices when both are emptied", async () => {
    const { editor } = await editing();
    editor.setPrice("inputPerMillion", "2.5");
    expect(editor.edited?.prices).toEqual({ inputPerMillion: 2.5 });
    editor.setPrice("inputPerMillion", "");
    expect(editor.edited?.prices).toBeNull();
  });

  it("saves the profile under a new name and chooses it, then deletes it", async () => {
    const { conversation, editor } = await editing();
    editor.edited!.name = "Local, long";
    editor.edited!.contextWindow = 32_768;
    expect(await editor.save()).toBe(true);
    expect(editor.saved).toBe(true);
    expect(conversation.profile).toBe("Local, long");
    expect(fake.profiles.find((one) => one.name === "Local, long")?.contextWindow).toBe(32_768);
    expect(await editor.remove()).toBe(true);
    expect(conversation.profiles.map((one) => one.name)).toEqual(["Local", "Remote"]);
  });

  it("says why the profile was not saved or deleted, and keeps the form", async () => {
    const { conversation, editor } = await editing();
    editor.edited!.name = "";
    expect(await editor.save()).toBe(false);
    expect(editor.saved).toBe(false);
    expect(editor.error?.message).toBe("a profile needs a name");
    expect(await editor.remove()).toBe(false);
    expect(editor.error?.code).toBe("notFound");
    expect(editor.edited?.name).toBe("");
    expect(conversation.profiles.map((one) => one.name)).toEqual(["Local", "Remote"]);
  });
});
