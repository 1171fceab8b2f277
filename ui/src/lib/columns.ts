// How many of a tree's columns fold into rails: a column is read at 270 px at the narrowest, a
// folded one is a 40 px rail, the oldest fold first and the newest never does.

/// The narrowest a column is read at, in CSS pixels.
export const COLUMN_MIN_PX = 270;
/// A folded column's width (as `.column.folded` in styles.css).
export const RAIL_PX = 40;

/// How many of `count` columns, from the root down, fold so that the rest fit in `width` pixels.
/// A width of 0 (not laid out yet) folds nothing.
export function foldedColumns(count: number, width: number): number {
  if (width <= 0) return 0;
  let folded = 0;
  while (folded < count - 1 && folded * RAIL_PX + (count - folded) * COLUMN_MIN_PX > width) folded += 1;
  return folded;
}
