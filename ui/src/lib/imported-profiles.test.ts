import { beforeEach, describe, expect, it } from "vitest";

import { Conversation } from "./conversation.svelte";
import { installFakeBackend, type FakeState } from "./fake-backend";
import { ImportedProfiles } from "./imported-profiles.svelte";
import { profile } from "./test-fixtures";

let fake: FakeState;

beforeEach(() => {
  fake = installFakeBackend({
    profiles: [profile("Local"), profile("gpt-4o", { importedFrom: "shared.json" }), profile("o1", { importedFrom: "shared.json" })],
  });
});

describe("ImportedProfiles", () => {
  it("enables one, which can then be chosen, and deletes another", async () => {
    const conversation = new Conversation();
    await conversation.loadProfiles("Local");
    const imported = new ImportedProfiles(conversation);
    expect(await imported.enable("gpt-4o")).toBe(true);
    expect(conversation.profiles.map((one) => one.name)).toEqual(["Local", "gpt-4o"]);
    expect(conversation.importedProfiles.map((one) => one.name)).toEqual(["o1"]);
    expect(await imported.remove("o1")).toBe(true);
    expect(conversation.importedProfiles).toEqual([]);
    expect(fake.profiles.map((one) => one.name)).toEqual(["Local", "gpt-4o"]);
    expect(conversation.profile).toBe("Local");
  });

  it("says why a profile could not be enabled, and keeps it waiting", async () => {
    const conversation = new Conversation();
    await conversation.loadProfiles("Local");
    const imported = new ImportedProfiles(conversation);
    fake.profiles = fake.profiles.filter((one) => one.name !== "gpt-4o");
    expect(await imported.enable("gpt-4o")).toBe(false);
    expect(imported.error?.code).toBe("notFound");
    expect(conversation.importedProfiles.map((one) => one.name)).toEqual(["gpt-4o", "o1"]);
    expect(await imported.remove("o1")).toBe(true);
    expect(imported.error).toBeNull();
  });
});
