import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import type { FakeState } from "./fake-backend";
import { installRiversBackend } from "./test-fixtures";
import { ThreadMindExport } from "./threadmind-export.svelte";

let fake: FakeState;

beforeEach(() => {
  fake = installRiversBackend();
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("ThreadMindExport", () => {
  it("copies the thread's markdown and keeps it on show", async () => {
    const writeText = vi.fn(async () => undefined);
    vi.stubGlobal("navigator", { clipboard: { writeText } });
    const threadmind = new ThreadMindExport();
    expect(await threadmind.copy(11)).toBe(true);
    expect(threadmind.text).toContain("Erosion on the outer bank.");
    expect(writeText).toHaveBeenCalledWith(threadmind.text);
    expect(threadmind.error).toBeNull();
  });

  it("keeps the text on show to copy by hand when the clipboard refuses it", async () => {
    vi.stubGlobal("navigator", { clipboard: { writeText: async () => Promise.reject(new Error("not allowed")) } });
    const threadmind = new ThreadMindExport();
    expect(await threadmind.copy(11)).toBe(false);
    expect(threadmind.text).toContain("Why do rivers bend?");
    expect(threadmind.error).toBe("Not copied to the clipboard (not allowed); select the text below instead.");
  });

  it("says why the thread could not be exported, and shows no text", async () => {
    fake.failure = { code: "internal", message: "database is locked" };
    const threadmind = new ThreadMindExport();
    expect(await threadmind.copy(11)).toBe(false);
    expect(threadmind.error).toBe("database is locked");
    expect(threadmind.text).toBeNull();
  });
});
