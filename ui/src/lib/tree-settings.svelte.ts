// The open tree's conversation settings with one owner. The settings form edits a copy and saves
// it; the search box changes one chosen hit through the backend, which reads and writes the list
// in one step. A form saved later keeps the hits chosen since it was opened.
import { backend, PinloomError } from "./backend";
import type { TreeSettings } from "./bindings";

export class TreeSettingsState {
  treeId = $state<number | null>(null);
  settings = $state<TreeSettings | null>(null);
  error = $state<PinloomError | null>(null);

  /// The messages chosen from searches to stand in every plan's search slice.
  get searchHits(): number[] {
    return this.settings?.searchHits ?? [];
  }

  /// Reads the settings of `treeId`; null when they could not be read (see `error`).
  async load(treeId: number): Promise<TreeSettings | null> {
    this.treeId = treeId;
    try {
      const loaded = await backend.treeSettingsGet(treeId);
      if (this.treeId === treeId) {
        this.settings = loaded;
        this.error = null;
      }
      return loaded;
    } catch (thrown) {
      if (this.treeId === treeId) this.settings = null;
      this.error = PinloomError.from(thrown);
      return null;
    }
  }

  /// Saves a form's settings, with the chosen search hits as they stand now (the form does not
  /// edit them). Throws what the backend refused, for the form to show.
  async save(edited: TreeSettings): Promise<TreeSettings> {
    const treeId = this.treeId;
    if (treeId === null) throw new PinloomError({ code: "invalidInput", message: "open a tree first" });
    const saved = await backend.treeSettingsSet(treeId, { ...edited, searchHits: this.searchHits });
    if (this.treeId === treeId) this.settings = saved;
    return saved;
  }

  /// Chooses a search hit for every plan of the tree, or takes it out; true when it was saved.
  async toggleSearchHit(nodeId: number): Promise<boolean> {
    const treeId = this.treeId;
    if (treeId === null) return false;
    try {
      const saved = await backend.searchHitSet(treeId, nodeId, !this.searchHits.includes(nodeId));
      if (this.treeId === treeId) this.settings = saved;
      this.error = null;
      return true;
    } catch (thrown) {
      this.error = PinloomError.from(thrown);
      return false;
    }
  }
}
