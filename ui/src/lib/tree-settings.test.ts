import { beforeEach, describe, expect, it } from "vitest";

import { installFakeBackend, type FakeState } from "./fake-backend";
import { TreeSettingsState } from "./tree-settings.svelte";

let fake: FakeState;

beforeEach(() => {
  fake = installFakeBackend({
    trees: [
      { id: 1, slug: "rivers", title: "Rivers", mode: "dialogue", createdAtMs: 0, updatedAtMs: 0, messageCount: 2, globalId: "g2", sharedBy: null },
      { id: 2, slug: "tides", title: "Tides", mode: "dialogue", createdAtMs: 0, updatedAtMs: 0, messageCount: 1, globalId: "g1", sharedBy: null },
    ],
    messages: new Map([
      [
        1,
        [
          { id: 10, parentId: null, author: "human", writtenBy: null, text: "Why do rivers bend?", createdAtMs: 0, tokenEstimate: 6 },
          { id: 11, parentId: 10, author: "model", writtenBy: null, text: "Erosion.", createdAtMs: 0, tokenEstimate: 3 },
        ],
      ],
      [2, [{ id: 20, parentId: null, author: "human", writtenBy: null, text: "Moon?", createdAtMs: 0, tokenEstimate: 2 }]],
    ]),
  });
});

describe("TreeSettingsState", () => {
  it("chooses and unchooses a search hit through the backend's toggle, not by writing every setting", async () => {
    const settings = new TreeSettingsState();
    await settings.load(1);
    expect(await settings.toggleSearchHit(11)).toBe(true);
    expect(await settings.toggleSearchHit(10)).toBe(true);
    expect(settings.searchHits).toEqual([11, 10]);
    expect(await settings.toggleSearchHit(11)).toBe(true);
    expect(settings.searchHits).toEqual([10]);
    expect(fake.treeSettings.get(1)?.searchHits).toEqual([10]);
    expect(fake.calls.filter((call) => call === "tree_settings_set")).toEqual([]);
  });

  it("keeps hits chosen after a settings form was opened when the form is saved", async () => {
    const settings = new TreeSettingsState();
    const form = structuredClone(await settings.load(1))!;
    await settings.toggleSearchHit(11);
    form.tokenBuffer = 2048;
    const saved = await settings.save(form);
    expect(saved.searchHits).toEqual([11]);
    expect(fake.treeSettings.get(1)).toEqual({ searchHits: [11], summaryWriting: "whenPinned", tokenBuffer: 2048 });
  });

  it("refuses a message of another tree and says so", async () => {
    const settings = new TreeSettingsState();
    await settings.load(1);
    expect(await settings.toggleSearchHit(20)).toBe(false);
    expect(settings.error?.message).toBe("message #20 is not in this tree");
    expect(settings.searchHits).toEqual([]);
  });

  it("reports a failed read instead of keeping another tree's settings", async () => {
    const settings = new TreeSettingsState();
    await settings.load(1);
    await settings.toggleSearchHit(11);
    expect(await settings.load(99)).toBeNull();
    expect(settings.error?.code).toBe("notFound");
    expect(settings.searchHits).toEqual([]);
  });

  it("saves the form's settings with the system context, and whether buffer mode sends it", async () => {
    const settings = new TreeSettingsState();
    const form = structuredClone(await settings.load(1))!;
    expect(await settings.loadContext(1)).toEqual({ systemContext: "", bufferIncludesSystem: false });
    form.tokenBuffer = 512;
    const saved = await settings.saveForm(form, "Answer as a geologist.", true);
    expect(saved?.tokenBuffer).toBe(512);
    expect(settings.context).toEqual({ systemContext: "Answer as a geologist.", bufferIncludesSystem: true });
    expect(fake.treeContexts.get(1)).toEqual({ systemContext: "Answer as a geologist.", bufferIncludesSystem: true });
    // A tree not in buffer mode leaves that choice as it was; an empty context clears it.
    expect(await settings.saveForm(form, "", null)).not.toBeNull();
    expect(fake.treeContexts.get(1)).toEqual({ systemContext: "", bufferIncludesSystem: true });
    expect(fake.calls.filter((call) => call === "buffer_system_set")).toHaveLength(1);
  });

  it("says why the form was not saved", async () => {
    const settings = new TreeSettingsState();
    const form = structuredClone(await settings.load(1))!;
    fake.failure = { code: "internal", message: "database is locked" };
    expect(await settings.saveForm(form, "Answer briefly.", null)).toBeNull();
    expect(settings.error?.message).toBe("database is locked");
    expect(await settings.loadContext(1)).toBeNull();
    expect(settings.context).toBeNull();
  });
});
