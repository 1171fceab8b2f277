// The tree map's layout: every message of a tree in depth-first order with its depth, and the
// moves the arrow keys make (parent, first child, previous and next sibling), as the Loom family
// of tree-writing tools navigates. Pure, so it is tested without a window.
import type { OutlineEntry } from "./bindings";

export type MapRow = { entry: OutlineEntry; depth: number };

export class TreeLayout {
  readonly rows: MapRow[] = [];
  private readonly index = new Map<number, number>();
  private readonly byId = new Map<number, OutlineEntry>();
  private readonly children = new Map<number | null, number[]>();

  constructor(entries: OutlineEntry[]) {
    for (const entry of entries) {
      this.byId.set(entry.id, entry);
      // Messages come in write order, so a parent is met before its children.
      const parent = entry.parentId !== null && this.byId.has(entry.parentId) ? entry.parentId : null;
      const siblings = this.children.get(parent) ?? [];
      siblings.push(entry.id);
      this.children.set(parent, siblings);
    }
    // Depth first, without recursion: a 10,000-message thread is 10,000 levels deep.
    const stack: { id: number; depth: number }[] = (this.children.get(null) ?? [])
      .slice()
      .reverse()
      .map((id) => ({ id, depth: 0 }));
    while (stack.length > 0) {
      const { id, depth } = stack.pop()!;
      const entry = this.byId.get(id)!;
      this.index.set(id, this.rows.length);
      this.rows.push({ entry, depth });
      const below = this.children.get(id) ?? [];
      for (let i = below.length - 1; i >= 0; i--) stack.push({ id: below[i]!, depth: depth + 1 });
    }
  }

  position(id: number): number | undefined {
    return this.index.get(id);
  }

  /// Where an arrow key moves from `id`: left to the parent, right to the first child, up and down
  /// to the previous and next sibling. `id` itself when there is nowhere to go.
  move(id: number, key: "ArrowLeft" | "ArrowRight" | "ArrowUp" | "ArrowDown"): number {
    const entry = this.byId.get(id);
    if (!entry) return id;
    if (key === "ArrowLeft") return entry.parentId ?? id;
    if (key === "ArrowRight") return this.children.get(id)?.[0] ?? id;
    const parent = entry.parentId !== null && this.byId.has(entry.parentId) ? entry.parentId : null;
    const siblings = this.children.get(parent) ?? [id];
    const at = siblings.indexOf(id);
    const next = key === "ArrowUp" ? siblings[at - 1] : siblings[at + 1];
    return next ?? id;
  }
}
