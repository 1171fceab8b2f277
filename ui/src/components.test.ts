import { describe, expect, it } from "vitest";

// A component past this many lines no longer fits in a reader's head: it is split into parts
// that each do one thing, with what they share in a state owner under lib/.
const MOST_LINES = 300;

const sources = import.meta.glob<string>(["./components/**/*.svelte", "./App.svelte"], {
  query: "?raw",
  import: "default",
  eager: true,
});

function lineCount(text: string): number {
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

describe("components", () => {
  it("are read from disk", () => {
    expect(Object.keys(sources)).toContain("./components/ThreadColumn.svelte");
    expect(Object.keys(sources)).toContain("./App.svelte");
  });

  it(`each fit in ${MOST_LINES} lines`, () => {
    const tooLong = Object.entries(sources)
      .filter(([, text]) => lineCount(text) > MOST_LINES)
      .map(([path, text]) => `${path}: ${lineCount(text)} lines`);
    expect(tooLong).toEqual([]);
  });
});
