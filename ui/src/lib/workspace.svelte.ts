// What the window shows: the tree list, the open tree, and where each failure happened. Views read
// these fields and call the methods; every backend call goes through `backend`.
import { backend, PinloomError } from "./backend";
import type { TreeMode, TreeSummary, TreeView } from "./bindings";
import { Transfers } from "./transfers.svelte";

export class Workspace {
  trees = $state<TreeSummary[]>([]);
  open = $state<TreeView | null>(null);
  starting = $state(true);
  /// Set when the database cannot be used at all; the window shows only this.
  unusable = $state<PinloomError | null>(null);
  /// The failure of the last tree-list action (create, open), shown in the sidebar.
  listError = $state<PinloomError | null>(null);
  /// The failure of the last message write, shown under the composer.
  composerError = $state<PinloomError | null>(null);
  /// The model profile chosen last time, if any.
  defaultModel = $state<string | null>(null);
  /// The colour theme: following the system, or chosen.
  theme = $state<"system" | "light" | "dark">("system");
  /// The layout: whether the context inspector is beside the columns.
  inspectorShown = $state(true);
  /// Counts tree choices, so an older, slower open cannot replace a newer one.
  private choices = 0;
  /// Imports and exports of whole trees.
  readonly transfers = new Transfers();

  constructor() {
    // What an import wrote shows in the list at once, and its first tree opens.
    this.transfers.onimported = async (treeIds) => {
      await this.refreshList();
      if (treeIds[0] !== undefined) await this.select(treeIds[0]);
    };
  }

  /// Loads the trees and reopens the one that was open last time.
  async start(): Promise<void> {
    try {
      this.trees = await backend.treeList();
      const { lastTreeId, defaultModel, theme, inspectorHidden } = await backend.preferencesGet();
      this.defaultModel = defaultModel ?? null;
      this.inspectorShown = !inspectorHidden;
      this.applyTheme(theme === "light" || theme === "dark" ? theme : "system");
      const last = this.trees.find((tree) => tree.id === lastTreeId) ?? this.trees[0];
      if (last) await this.select(last.id);
    } catch (thrown) {
      this.fail(thrown, "list");
    } finally {
      this.starting = false;
    }
  }

  async createTree(title: string, mode: TreeMode): Promise<boolean> {
    this.listError = null;
    try {
      const tree = await backend.treeCreate(title, mode);
      this.trees = [tree, ...this.trees.filter((other) => other.id !== tree.id)];
      await this.select(tree.id);
      return true;
    } catch (thrown) {
      this.fail(thrown, "list");
      return false;
    }
  }

  async select(treeId: number): Promise<void> {
    this.listError = null;
    this.composerError = null;
    const choice = ++this.choices;
    try {
      const open = await backend.treeOpen(treeId);
      // Opening a big tree takes a while; if another was chosen meanwhile, that one wins.
      if (choice !== this.choices) return;
      this.open = open;
      await backend.preferencesSet(this.preferences(treeId));
    } catch (thrown) {
      if (choice === this.choices) this.fail(thrown, "list");
    }
  }

  /// Writes a message continuing the last one on show. Returns whether it was saved, so the
  /// composer keeps the text when it was not.
  async append(text: string): Promise<boolean> {
    const open = this.open;
    if (!open) return false;
    this.composerError = null;
    const parentId = open.messages.at(-1)?.id ?? null;
    try {
      const message = await backend.messageAppend(open.tree.id, parentId, text);
      if (this.open?.tree.id === open.tree.id) {
        this.open = { ...this.open, messages: [...this.open.messages, message] };
      }
      // The message is saved; the sidebar's counts catch up without holding the composer.
      void this.refreshList();
      return true;
    } catch (thrown) {
      this.fail(thrown, "composer");
      return false;
    }
  }

  /// Remembers the chosen model for the next start.
  async rememberModel(name: string): Promise<void> {
    this.defaultModel = name;
    await backend.preferencesSet(this.preferences(this.open?.tree.id ?? null)).catch(() => undefined);
  }

  /// Switches the theme and remembers it.
  async setTheme(theme: "system" | "light" | "dark"): Promise<void> {
    this.applyTheme(theme);
    await backend.preferencesSet(this.preferences(this.open?.tree.id ?? null)).catch(() => undefined);
  }

  /// Shows or hides the context inspector, and remembers it.
  async toggleInspector(): Promise<void> {
    this.inspectorShown = !this.inspectorShown;
    await backend.preferencesSet(this.preferences(this.open?.tree.id ?? null)).catch(() => undefined);
  }

  private applyTheme(theme: "system" | "light" | "dark"): void {
    this.theme = theme;
    if (typeof document === "undefined") return;
    if (theme === "system") delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = theme;
  }

  private preferences(lastTreeId: number | null) {
    return {
      lastTreeId,
      defaultModel: this.defaultModel,
      theme: this.theme === "system" ? null : this.theme,
      inspectorHidden: !this.inspectorShown,
    };
  }

  /// Re-reads the tree list (another window or process may have changed it).
  async refreshList(): Promise<void> {
    try {
      this.trees = await backend.treeList();
    } catch (thrown) {
      this.fail(thrown, "list");
    }
  }

  private fail(thrown: unknown, where: "list" | "composer"): void {
    const error = PinloomError.from(thrown);
    if (error.code === "databaseUnusable") {
      this.unusable = error;
    } else if (where === "composer") {
      this.composerError = error;
    } else {
      this.listError = error;
    }
  }
}
