import { describe, expect, it } from "vitest";

import { budgetBars, kindColour } from "./budgetbar";

describe("budget bars", () => {
  it("stack what is kept by kind, in the order a context is built, against the room", () => {
    const bars = budgetBars(
      [
        { kind: "prompt", tokens: 100, included: true },
        { kind: "recentHistory", tokens: 300, included: true },
        { kind: "system", tokens: 50, included: true },
        { kind: "recentHistory", tokens: 150, included: true },
        { kind: "recentHistory", tokens: 400, included: false },
        { kind: "searchResult", tokens: 60, included: false },
      ],
      1_000,
    );
    expect(bars.kept).toEqual([
      { kind: "system", tokens: 50, percent: 5 },
      { kind: "recentHistory", tokens: 450, percent: 45 },
      { kind: "prompt", tokens: 100, percent: 10 },
    ]);
    expect(bars.cut).toEqual([
      { kind: "searchResult", tokens: 60, percent: 6 },
      { kind: "recentHistory", tokens: 400, percent: 40 },
    ]);
    expect([bars.keptTokens, bars.cutTokens, bars.cutOverflows]).toEqual([600, 460, false]);
  });

  it("never draw past the end, and say when the cut is larger than the room", () => {
    const bars = budgetBars(
      [
        { kind: "recentHistory", tokens: 900, included: true },
        { kind: "recentHistory", tokens: 5_000, included: false },
        { kind: "oldHistory", tokens: 3_000, included: false },
      ],
      1_000,
    );
    const width = (list: { percent: number }[]) => list.reduce((sum, segment) => sum + segment.percent, 0);
    expect(width(bars.kept)).toBe(90);
    expect(width(bars.cut)).toBe(100);
    expect(bars.cutOverflows).toBe(true);
    expect(bars.cut.map((segment) => segment.kind)).toEqual(["oldHistory", "recentHistory"]);
  });

  it("put the messages picked for a question after the pins' results, in a colour of their own", () => {
    const bars = budgetBars(
      [
        { kind: "prompt", tokens: 10, included: true },
        { kind: "picked", tokens: 30, included: true },
        { kind: "pinResult", tokens: 20, included: true },
      ],
      100,
    );
    expect(bars.kept.map((segment) => segment.kind)).toEqual(["pinResult", "picked", "prompt"]);
    expect(kindColour("picked")).toBe("hsl(330 60% 50%)");
  });

  it("leave out empty kinds and give every kind a colour", () => {
    const bars = budgetBars([{ kind: "anchor", tokens: 0, included: true }], 100);
    expect(bars.kept).toEqual([]);
    expect(kindColour("prompt")).not.toEqual(kindColour("system"));
    expect(kindColour("someNewKind")).toMatch(/^hsl\(\d+ 45% 50%\)$/);
  });
});
