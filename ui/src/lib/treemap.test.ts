import { describe, expect, it } from "vitest";

import type { OutlineEntry } from "./bindings";
import { TreeLayout } from "./treemap";

function entry(id: number, parentId: number | null, pinId: number | null = null): OutlineEntry {
  return {
    id,
    parentId,
    pinId,
    author: "human",
    preview: `m${id}`,
    childCount: 0,
    excluded: false,
    bookmarked: false,
    deleted: false,
  };
}

describe("TreeLayout", () => {
  // 1 ─ 2 ─ 4
  //   └ 3 (a regeneration of 2)  └ 5 (first node of a pin on 4)
  const layout = new TreeLayout([entry(1, null), entry(2, 1), entry(3, 1), entry(4, 2), entry(5, 4, 9)]);

  it("lays messages out depth first with their depth", () => {
    expect(layout.rows.map((row) => [row.entry.id, row.depth])).toEqual([
      [1, 0],
      [2, 1],
      [4, 2],
      [5, 3],
      [3, 1],
    ]);
  });

  it("moves to parent, child and siblings with the arrow keys", () => {
    expect(layout.move(4, "ArrowLeft")).toBe(2);
    expect(layout.move(1, "ArrowRight")).toBe(2);
    expect(layout.move(2, "ArrowDown")).toBe(3);
    expect(layout.move(3, "ArrowUp")).toBe(2);
    expect(layout.move(1, "ArrowLeft")).toBe(1);
    expect(layout.move(5, "ArrowRight")).toBe(5);
  });

  it("handles 10,000 levels without recursion", () => {
    const deep = Array.from({ length: 10_000 }, (_, i) => entry(i + 1, i === 0 ? null : i));
    const big = new TreeLayout(deep);
    expect(big.rows).toHaveLength(10_000);
    expect(big.rows.at(-1)!.depth).toBe(9_999);
    expect(big.position(10_000)).toBe(9_999);
  });
});
