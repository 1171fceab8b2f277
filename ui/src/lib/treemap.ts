// The tree map's two layouts: the outline (every message in depth-first order with its depth, the
// accessible view) and the picture (messages placed by depth and lane, which a canvas draws).
// Both move with the arrow keys as the Loom family of tree-writing tools does (parent, first
// child, previous and next sibling). Pure, so they are tested without a window.
import type { MapPin, OutlineEntry, TreeMapView } from "./bindings";

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

/// A straight stretch of the map to draw: lane, first and last depth, and whether it is in a pin.
export type Stretch = { lane: number; from: number; to: number; inPin: boolean };
/// An elbow to draw: down from `fromLane` at `depth`, then across into `lane` at `depth + 1`.
export type Elbow = { depth: number; fromLane: number; lane: number; inPin: boolean };

/// The tree map as a picture (see `window/map.rs`): where each message is, what is near a point,
/// what is on screen, and the arrow keys' moves, all from the compact view the backend sends.
/// Pure: the canvas component only draws what this returns.
export class MapPicture {
  readonly count: number;
  private readonly position = new Map<number, number>();
  private readonly runOf: Uint32Array;
  /// The runs on each lane, by their first depth.
  private readonly lanes: number[][];
  /// The runs continuing from each message (by its position), in the walk's order.
  private readonly branches = new Map<number, number[]>();
  private readonly pins = new Map<number, MapPin>();

  constructor(readonly view: TreeMapView) {
    this.count = view.ids.length;
    this.runOf = new Uint32Array(this.count);
    this.lanes = Array.from({ length: view.lanes }, () => []);
    view.runs.forEach((run, index) => {
      for (let at = run.first; at < run.first + run.len; at++) {
        this.runOf[at] = index;
        this.position.set(view.ids[at]!, at);
      }
      this.lanes[run.lane]?.push(index);
      if (run.from !== null) {
        const list = this.branches.get(run.from) ?? [];
        list.push(index);
        this.branches.set(run.from, list);
      }
    });
    for (const list of this.lanes) list.sort((a, b) => view.runs[a]!.depth - view.runs[b]!.depth);
    for (const pin of view.pins) this.pins.set(pin.id, pin);
  }

  has(id: number): boolean {
    return this.position.has(id);
  }

  /// Where message `id` is drawn: its depth (across) and lane (down).
  place(id: number): { depth: number; lane: number } | undefined {
    const at = this.position.get(id);
    if (at === undefined) return undefined;
    const run = this.view.runs[this.runOf[at]!]!;
    return { depth: run.depth + (at - run.first), lane: run.lane };
  }

  author(id: number): "human" | "model" | "tool" {
    const letter = this.view.authors[this.position.get(id) ?? -1];
    return letter === "m" ? "model" : letter === "t" ? "tool" : "human";
  }

  /// The pin message `id` is in, absent for the root thread.
  pinOf(id: number): MapPin | undefined {
    const at = this.position.get(id);
    if (at === undefined) return undefined;
    const pinId = this.view.runs[this.runOf[at]!]!.pinId;
    return pinId === null ? undefined : this.pins.get(pinId);
  }

  pinIdOf(id: number): number | null {
    const at = this.position.get(id);
    return at === undefined ? null : this.view.runs[this.runOf[at]!]!.pinId;
  }

  /// The message drawn at (`depth`, `lane`), rounded to the nearest place, if any.
  at(depth: number, lane: number): number | undefined {
    const d = Math.round(depth);
    const runs = this.lanes[Math.round(lane)];
    if (!runs) return undefined;
    // The last run on the lane starting at or before `d`.
    let low = 0;
    let high = runs.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.view.runs[runs[mid]!]!.depth <= d) low = mid + 1;
      else high = mid;
    }
    const run = low > 0 ? this.view.runs[runs[low - 1]!] : undefined;
    if (!run || d >= run.depth + run.len) return undefined;
    return this.view.ids[run.first + (d - run.depth)];
  }

  /// What lies within depths `[fromDepth, toDepth]` and lanes `[fromLane, toLane]`: the stretches
  /// of runs (cut to the range), and the elbows into the runs on those lanes.
  visible(fromDepth: number, toDepth: number, fromLane: number, toLane: number): { stretches: Stretch[]; elbows: Elbow[] } {
    const stretches: Stretch[] = [];
    const elbows: Elbow[] = [];
    const first = Math.max(0, Math.floor(fromLane));
    const last = Math.min(this.lanes.length - 1, Math.ceil(toLane));
    for (let lane = first; lane <= last; lane++) {
      for (const index of this.lanes[lane]!) {
        const run = this.view.runs[index]!;
        const end = run.depth + run.len - 1;
        if (run.depth - 1 > toDepth) break;
        if (end < fromDepth) continue;
        const inPin = run.pinId !== null;
        stretches.push({ lane, from: Math.max(run.depth, Math.floor(fromDepth)), to: Math.min(end, Math.ceil(toDepth)), inPin });
        if (run.from !== null) {
          const parentLane = this.view.runs[this.runOf[run.from]!]!.lane;
          elbows.push({ depth: run.depth - 1, fromLane: parentLane, lane, inPin });
        }
      }
    }
    return { stretches, elbows };
  }

  /// Every run as a stretch with its elbow: the minimap draws the whole tree once.
  all(): { stretches: Stretch[]; elbows: Elbow[] } {
    return this.visible(0, Number.MAX_SAFE_INTEGER, 0, this.lanes.length);
  }

  /// The path from the root to message `id`, as stretches and elbows: the map highlights it.
  path(id: number): { stretches: Stretch[]; elbows: Elbow[] } {
    const stretches: Stretch[] = [];
    const elbows: Elbow[] = [];
    let at = this.position.get(id);
    while (at !== undefined) {
      const run = this.view.runs[this.runOf[at]!]!;
      const inPin = run.pinId !== null;
      stretches.push({ lane: run.lane, from: run.depth, to: run.depth + (at - run.first), inPin });
      if (run.from === null) break;
      const parentLane = this.view.runs[this.runOf[run.from]!]!.lane;
      elbows.push({ depth: run.depth - 1, fromLane: parentLane, lane: run.lane, inPin });
      at = run.from;
    }
    return { stretches, elbows };
  }

  /// The message before `id`, if any.
  parent(id: number): number | undefined {
    const at = this.position.get(id);
    if (at === undefined) return undefined;
    const run = this.view.runs[this.runOf[at]!]!;
    const before = at > run.first ? at - 1 : run.from;
    return before === null ? undefined : this.view.ids[before];
  }

  /// The messages continuing `id`: the one on its run first, then the branches in order.
  children(id: number): number[] {
    const at = this.position.get(id);
    if (at === undefined) return [];
    const run = this.view.runs[this.runOf[at]!]!;
    const next = at + 1 < run.first + run.len ? [this.view.ids[at + 1]!] : [];
    const branches = (this.branches.get(at) ?? []).map((index) => this.view.ids[this.view.runs[index]!.first]!);
    return [...next, ...branches];
  }

  /// Where an arrow key moves from `id`, as the outline moves: left to the parent, right to the
  /// first child, up and down to the previous and next sibling. `id` when there is nowhere to go.
  move(id: number, key: "ArrowLeft" | "ArrowRight" | "ArrowUp" | "ArrowDown"): number {
    if (key === "ArrowLeft") return this.parent(id) ?? id;
    if (key === "ArrowRight") return this.children(id)[0] ?? id;
    const parent = this.parent(id);
    const siblings = parent === undefined ? this.roots() : this.children(parent);
    const at = siblings.indexOf(id);
    return siblings[key === "ArrowUp" ? at - 1 : at + 1] ?? id;
  }

  private roots(): number[] {
    return this.view.runs.filter((run) => run.from === null).map((run) => this.view.ids[run.first]!);
  }
}
