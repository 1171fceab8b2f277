// The open tree's conversation settings and system context with one owner. The settings form edits
// copies and saves them; the search box changes one chosen hit through the backend, which reads
// and writes the list in one step. A form saved later keeps the hits chosen since it was opened.
import { backend, PinloomError, showingFailure } from "./backend";
import type { TreeContext, TreeSettings } from "./bindings";

export class TreeSettingsState {
  treeId = $state<number | null>(null);
  settings = $state<TreeSettings | null>(null);
  /// Its system context, and whether buffer-mode continuations are sent it.
  context = $state<TreeContext | null>(null);
  error = $state<PinloomError | null>(null);

  /// The messages chosen from searches to stand in every plan's search slice.
  get searchHits(): number[] {
    return this.settings?.searchHits ?? [];
  }

  /// Reads the settings of `treeId`; null when they could not be read (see `error`).
  async load(treeId: number): Promise<TreeSettings | null> {
    this.treeId = treeId;
    const unread = (error: PinloomError) => {
      if (this.treeId === treeId) this.settings = null;
      this.error = error;
    };
    return showingFailure(unread, null, async () => {
      const loaded = await backend.treeSettingsGet(treeId);
      if (this.treeId === treeId) {
        this.settings = loaded;
        this.error = null;
      }
      return loaded;
    });
  }

  /// Reads the system context of `treeId`; null when it could not be read (see `error`).
  async loadContext(treeId: number): Promise<TreeContext | null> {
    this.treeId = treeId;
    const unread = (error: PinloomError) => {
      if (this.treeId === treeId) this.context = null;
      this.error = error;
    };
    return showingFailure(unread, null, async () => {
      const loaded = await backend.treeContextGet(treeId);
      if (this.treeId === treeId) this.context = loaded;
      return loaded;
    });
  }

  /// Saves the settings form: its settings (as `save` does), the system context as it stands
  /// (emptied, it clears the tree's), and whether buffer-mode continuations are sent it (null
  /// for a tree not in buffer mode: left as it is). Returns the settings saved, or null when
  /// something was refused (see `error`; what was saved before it stays saved).
  async saveForm(edited: TreeSettings, systemContext: string, bufferIncludesSystem: boolean | null): Promise<TreeSettings | null> {
    const treeId = this.treeId;
    return showingFailure(this, null, async () => {
      const saved = await this.save(edited);
      await backend.systemContextSet(treeId!, systemContext);
      if (bufferIncludesSystem !== null) await backend.bufferSystemSet(treeId!, bufferIncludesSystem);
      if (this.treeId === treeId) {
        this.context = { systemContext, bufferIncludesSystem: bufferIncludesSystem ?? this.context?.bufferIncludesSystem ?? false };
      }
      this.error = null;
      return saved;
    });
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
    return showingFailure(this, false, async () => {
      const saved = await backend.searchHitSet(treeId, nodeId, !this.searchHits.includes(nodeId));
      if (this.treeId === treeId) this.settings = saved;
      this.error = null;
      return true;
    });
  }
}
