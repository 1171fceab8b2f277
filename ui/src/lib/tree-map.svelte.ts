// What the tree map shows, read from the backend: the outline, read only when asked for and page
// by page (at 100,000 messages it is 20 pages), and the picture, with the previews of the
// messages pointed at, read one at a time as the pointer or the keys reach them.
import { backend, showingFailure, type PinloomError } from "./backend";
import type { OutlineEntry } from "./bindings";
import { MapPicture, TreeLayout } from "./treemap";

/// How many outline entries are read at a time.
export const OUTLINE_PAGE = 5_000;

export class TreeOutline {
  layout = $state<TreeLayout | null>(null);
  /// The message written last, where the outline starts when no message is in focus.
  newest = $state<number | null>(null);
  error = $state<PinloomError | null>(null);

  /// Reads the whole outline of `treeId`; true when it was read.
  load(treeId: number): Promise<boolean> {
    return showingFailure(this, false, async () => {
      const entries: OutlineEntry[] = [];
      for (;;) {
        const page = await backend.treeOutline(treeId, entries.at(-1)?.id ?? null, OUTLINE_PAGE);
        entries.push(...page);
        if (page.length < OUTLINE_PAGE) break;
      }
      this.layout = new TreeLayout(entries);
      this.newest = entries.at(-1)?.id ?? null;
      return true;
    });
  }
}

export class TreePicture {
  picture = $state<MapPicture | null>(null);
  /// The start of each message's text, by id, once read: empty when it could not be.
  previews = $state<Record<number, string>>({});
  error = $state<PinloomError | null>(null);
  private treeId: number | null = null;

  /// Reads the picture of `treeId`; true when it was read.
  load(treeId: number): Promise<boolean> {
    this.treeId = treeId;
    return showingFailure(this, false, async () => {
      const view = await backend.treeMap(treeId);
      if (this.treeId === treeId) this.picture = new MapPicture(view);
      return true;
    });
  }

  /// Reads the start of message `id`'s text, unless it was read already.
  async preview(id: number): Promise<void> {
    const treeId = this.treeId;
    if (this.previews[id] !== undefined || treeId === null) return;
    // The hover card shows no text for this message, and the map says why.
    const noPreview = (error: PinloomError) => {
      this.previews[id] = "";
      this.error = error;
    };
    await showingFailure(noPreview, undefined, async () => {
      const [entry] = await backend.treeOutline(treeId, id - 1, 1);
      this.previews[id] = entry?.id === id ? entry.preview.replace(/\s+/g, " ").trim() : "";
    });
  }
}
