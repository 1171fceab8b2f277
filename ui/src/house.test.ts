// House rules the type checker cannot see. Components reach the backend only through the state
// owners in lib/, which hold what it answered and what went wrong; a component that calls it
// itself keeps a second copy of that state, untested.
import { describe, expect, it } from "vitest";

const components = import.meta.glob<string>("./**/*.svelte", { query: "?raw", import: "default", eager: true });

describe("the house rules", () => {
  it("finds the components", () => {
    // As written, not compiled: the imports are there to read.
    expect(components["./components/SettingsPanel.svelte"]).toContain("<Overlay");
  });

  it("has no component import the backend", () => {
    const importing = Object.entries(components)
      .filter(([, source]) => /from\s+["'][./]*lib\/backend(\.ts)?["']/.test(source))
      .map(([path]) => path);
    expect(importing).toEqual([]);
  });
});
