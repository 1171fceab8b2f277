import { beforeEach, describe, expect, it } from "vitest";

import type { KeyStatus } from "./bindings";
import { installFakeBackend, type FakeState } from "./fake-backend";
import { ProviderKeys } from "./provider-keys.svelte";
import { profile } from "./test-fixtures";

let fake: FakeState;

const openai: KeyStatus = {
  provider: "openai",
  displayName: "OpenAI",
  variable: "OPENAI_API_KEY",
  fromEnvironment: false,
  inKeyring: false,
  problem: null,
};

beforeEach(() => {
  fake = installFakeBackend({ keys: [structuredClone(openai)], profiles: [profile("Local")] });
});

describe("ProviderKeys", () => {
  it("stores a key in the keyring and removes it, reading where each key is after each", async () => {
    const keys = new ProviderKeys();
    expect(await keys.load()).toBe(true);
    expect(keys.keys.map((key) => [key.displayName, key.inKeyring])).toEqual([["OpenAI", false]]);
    expect(await keys.save("openai", "sk-1")).toBe(true);
    expect(keys.keys[0]?.inKeyring).toBe(true);
    expect(await keys.forget("openai")).toBe(true);
    expect(keys.keys[0]?.inKeyring).toBe(false);
    expect(keys.error).toBeNull();
  });

  it("says why a key was refused and keeps the keys it showed", async () => {
    const keys = new ProviderKeys();
    await keys.load();
    expect(await keys.save("openai", "   ")).toBe(false);
    expect(keys.error?.message).toBe("the key is empty");
    expect(keys.keys.map((key) => key.provider)).toEqual(["openai"]);
    // The next action starts without the last one's failure.
    expect(await keys.save("openai", "sk-1")).toBe(true);
    expect(keys.error).toBeNull();
  });

  it("says when the keys cannot be read", async () => {
    fake.failure = { code: "internal", message: "the keyring is locked" };
    const keys = new ProviderKeys();
    expect(await keys.load()).toBe(false);
    expect(keys.error?.message).toBe("the keyring is locked");
    expect(keys.keys).toEqual([]);
  });

  it("tests the connection to a model, and says why it did not answer", async () => {
    const keys = new ProviderKeys();
    expect(await keys.check("Local")).toEqual({ reply: "pong", milliseconds: 12 });
    fake.providerDown = { code: "providerUnavailable", message: "connection refused" };
    expect(await keys.check("Local")).toBeNull();
    expect(keys.error?.code).toBe("providerUnavailable");
    expect(keys.error?.message).toBe("connection refused");
  });
});
