import { describe, expect, it } from "vitest";

import type { OutlineEntry } from "./bindings";
import { MAP_WITH_BRANCH_AND_PIN } from "./test-fixtures";
import { MapPicture, TreeLayout } from "./treemap";

function entry(id: number, parentId: number | null, pinId: number | null = null): OutlineEntry {
  return {
    id,
    parentId,
    pinId,
    author: "human",
    writtenBy: null,
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

describe("MapPicture", () => {
  const picture = new MapPicture(MAP_WITH_BRANCH_AND_PIN);

  it("places every message by its run", () => {
    expect(picture.place(6)).toEqual({ depth: 3, lane: 0 });
    expect(picture.place(7)).toEqual({ depth: 4, lane: 1 });
    expect(picture.place(3)).toEqual({ depth: 1, lane: 1 });
    expect(picture.place(99)).toBeUndefined();
    expect(picture.author(2)).toBe("model");
    expect(picture.pinOf(7)?.anchor).toBe("oxbow lakes");
    expect(picture.pinOf(6)).toBeUndefined();
  });

  it("finds the message nearest a point, and nothing between runs", () => {
    expect(picture.at(3.2, 0.9)).toBe(5);
    expect(picture.at(1, 1)).toBe(3);
    expect(picture.at(2, 1)).toBeUndefined();
    expect(picture.at(6, 0)).toBeUndefined();
    expect(picture.at(0, 5)).toBeUndefined();
  });

  it("returns only what is on screen, cut to it, with the elbows into it", () => {
    const { stretches, elbows } = picture.visible(2, 3, 0, 0);
    expect(stretches).toEqual([{ lane: 0, from: 2, to: 3, inPin: false }]);
    expect(elbows).toEqual([]);
    const below = picture.visible(3, 9, 1, 1);
    expect(below.stretches).toEqual([{ lane: 1, from: 3, to: 4, inPin: true }]);
    expect(below.elbows).toEqual([{ depth: 2, fromLane: 0, lane: 1, inPin: true }]);
  });

  it("traces the path from the root, through the pin's elbow", () => {
    expect(picture.path(7)).toEqual({
      stretches: [
        { lane: 1, from: 3, to: 4, inPin: true },
        { lane: 0, from: 0, to: 2, inPin: false },
      ],
      elbows: [{ depth: 2, fromLane: 0, lane: 1, inPin: true }],
    });
  });

  it("moves as the outline does", () => {
    expect(picture.move(5, "ArrowLeft")).toBe(4);
    expect(picture.move(4, "ArrowRight")).toBe(6);
    expect(picture.move(6, "ArrowDown")).toBe(5);
    expect(picture.move(5, "ArrowUp")).toBe(6);
    expect(picture.move(2, "ArrowDown")).toBe(3);
    expect(picture.move(1, "ArrowLeft")).toBe(1);
    expect(picture.move(7, "ArrowRight")).toBe(7);
    expect(picture.children(1)).toEqual([2, 3]);
  });
});
