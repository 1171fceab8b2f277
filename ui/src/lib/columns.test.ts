import { describe, expect, it } from "vitest";

import { COLUMN_MIN_PX, foldedColumns, RAIL_PX } from "./columns";

describe("foldedColumns", () => {
  it("folds nothing while every column has its room, or before the layout is known", () => {
    expect(foldedColumns(1, 300)).toBe(0);
    expect(foldedColumns(2, 2 * COLUMN_MIN_PX)).toBe(0);
    expect(foldedColumns(3, 0)).toBe(0);
  });

  it("folds the oldest first, as few as make the rest fit", () => {
    // The default window with the inspector: 590 px for the columns.
    expect(foldedColumns(2, 590)).toBe(0);
    expect(foldedColumns(3, 590)).toBe(1);
    expect(RAIL_PX + 2 * COLUMN_MIN_PX).toBeLessThanOrEqual(590);
    // The smallest window: 540 px.
    expect(foldedColumns(3, 540)).toBe(2);
    expect(foldedColumns(6, 590)).toBe(5);
  });

  it("never folds the newest column, however narrow the window", () => {
    expect(foldedColumns(1, 100)).toBe(0);
    expect(foldedColumns(4, 100)).toBe(3);
  });
});
