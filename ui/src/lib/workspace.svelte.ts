// What the window shows: the tree list, the open tree, and where each failure happened. Views read
// these fields and call the methods; every backend call goes through `backend`.
import { tick } from "svelte";

import { backend, PinloomError, showingFailure } from "./backend";
import type { TreeMode, TreeSummary } from "./bindings";
import { SyncState } from "./sync.svelte";
import { TeamsState } from "./teams.svelte";
import { Transfers } from "./transfers.svelte";

/// Resolves once the window has had the chance to draw what changed (and to handle what waited).
function afterNextPaint(): Promise<void> {
  return new Promise((resolve) => {
    // A frame callback runs before the drawing; the timer it starts runs after it.
    if (typeof requestAnimationFrame === "function") requestAnimationFrame(() => setTimeout(resolve, 0));
    else setTimeout(resolve, 0);
  });
}

export class Workspace {
  trees = $state<TreeSummary[]>([]);
  /// The open tree; its messages are the conversation's (`Conversation`), read there.
  open = $state<{ tree: TreeSummary } | null>(null);
  /// Until the list of trees is read the list says "Loading…"; until the last tree is open too,
  /// the thread area shows nothing (not the welcome that an empty window shows).
  listed = $state(false);
  starting = $state(true);
  /// Set when the database cannot be used at all; the window shows only this.
  unusable = $state<PinloomError | null>(null);
  /// The failure of the last tree-list action (create, open), shown in the sidebar.
  listError = $state<PinloomError | null>(null);
  /// The model profile chosen last time, if any.
  defaultModel = $state<string | null>(null);
  /// The colour theme: following the system, or chosen.
  theme = $state<"system" | "light" | "dark">("system");
  /// The layout: whether the context inspector is beside the columns.
  inspectorShown = $state(true);
  /// The last deletion, which Undo (or Ctrl+Z) takes back: what it was, in words, and how.
  undoable = $state<{ what: string; undo: () => Promise<void> } | null>(null);
  /// Bumped when something restored outside the open columns may be on show there (a branch
  /// brought back from the trash), so the columns read again.
  restored = $state(0);
  /// Counts tree choices, so an older, slower open cannot replace a newer one.
  private choices = 0;
  /// Imports and exports of whole trees.
  readonly transfers = new Transfers();
  /// Sync with the person's other machines through git.
  readonly sync = new SyncState();
  /// The teams this database shares trees with, each through its own git repository; what a
  /// join or a share brought or changed shows as a sync's arrivals do.
  readonly teams = new TeamsState(() => this.showArrivals());

  constructor() {
    // What an import wrote shows in the list at once, and its first tree opens.
    this.transfers.onimported = async (treeIds) => {
      await this.refreshList();
      if (treeIds[0] !== undefined) await this.select(treeIds[0]);
    };
    this.sync.onarrived = () => this.showArrivals();
    this.sync.onsynced = () => this.teams.load();
    this.teams.onchanged = () => this.sync.load();
  }

  /// What another machine or a team member wrote shows in the list, and in the open tree's
  /// columns.
  private async showArrivals(): Promise<void> {
    await this.refreshList();
    this.restored++;
  }

  /// Loads the trees and reopens the one that was open last time. The list shows as soon as it
  /// is read; the last tree opens after it.
  async start(): Promise<void> {
    try {
      await showingFailure(this.failure, undefined, async () => {
        // The marks are read by tests/perf/startup.mjs: where the window's start goes.
        performance.mark("pinloom-start-begun");
        // Given with the window, or else asked for.
        const given = backend.windowStart();
        const [trees, { lastTreeId, defaultModel, theme, inspectorHidden }] = given
          ? [given.trees, given.preferences]
          : await Promise.all([backend.treeList(), backend.preferencesGet()]);
        // What was given is as old as the window: a page loaded again reads the list again.
        if (given) void this.refreshList();
        this.trees = trees;
        this.listed = true;
        this.defaultModel = defaultModel ?? null;
        this.inspectorShown = !inspectorHidden;
        this.applyTheme(theme === "light" || theme === "dark" ? theme : "system");
        await tick();
        performance.mark("pinloom-list-shown");
        // The list is drawn, and the window answers a click, before the last tree opens (reading
        // and drawing a long thread takes a while).
        await afterNextPaint();
        const last = this.trees.find((tree) => tree.id === lastTreeId) ?? this.trees[0];
        if (last) await this.select(last.id);
        void this.sync.load();
      });
    } finally {
      this.listed = true;
      this.starting = false;
    }
  }

  async createTree(title: string, mode: TreeMode): Promise<boolean> {
    this.listError = null;
    return showingFailure(this.failure, false, async () => {
      const tree = await backend.treeCreate(title, mode);
      this.trees = [tree, ...this.trees.filter((other) => other.id !== tree.id)];
      await this.select(tree.id);
      return true;
    });
  }

  async select(treeId: number): Promise<void> {
    this.listError = null;
    const choice = ++this.choices;
    const newest = (error: PinloomError) => {
      if (choice === this.choices) this.failure(error);
    };
    await showingFailure(newest, undefined, async () => {
      const tree = await backend.treeOpen(treeId);
      // Another tree chosen meanwhile wins.
      if (choice !== this.choices) return;
      this.open = { tree };
      await backend.preferencesSet(this.preferences(treeId));
    });
  }

  /// Gives tree `treeId` a new title. Returns whether it was saved.
  async renameTree(treeId: number, title: string): Promise<boolean> {
    this.listError = null;
    return showingFailure(this.failure, false, async () => {
      const renamed = await backend.treeRename(treeId, title);
      this.trees = this.trees.map((tree) => (tree.id === treeId ? renamed : tree));
      if (this.open?.tree.id === treeId) this.open = { ...this.open, tree: renamed };
      return true;
    });
  }

  /// Puts tree `treeId` in the trash, opens the next tree, and offers Undo.
  async trashTree(treeId: number): Promise<void> {
    this.listError = null;
    await showingFailure(this.failure, undefined, async () => {
      const trashed = await backend.treeTrash(treeId);
      this.trees = this.trees.filter((tree) => tree.id !== treeId);
      this.offerUndo(`“${trashed.title}” is in the trash.`, () => this.restoreTree(treeId));
      if (this.open?.tree.id === treeId) {
        this.open = null;
        const next = this.trees[0];
        if (next) await this.select(next.id);
      }
    });
  }

  /// Takes tree `treeId` out of the trash and opens it.
  async restoreTree(treeId: number): Promise<void> {
    this.listError = null;
    // Whatever Undo offered is older than this; taking it back now could surprise.
    this.undoable = null;
    await showingFailure(this.failure, undefined, async () => {
      await backend.treeRestore(treeId);
      await this.refreshList();
      await this.select(treeId);
    });
  }

  /// Offers to take back a deletion that just happened; a newer one replaces it.
  offerUndo(what: string, undo: () => Promise<void>): void {
    this.undoable = { what, undo };
  }

  /// Takes back the last deletion, once.
  async undo(): Promise<void> {
    const last = this.undoable;
    if (!last) return;
    this.undoable = null;
    await last.undo();
  }

  /// Remembers the chosen model for the next start.
  async rememberModel(name: string): Promise<void> {
    this.defaultModel = name;
    await this.savePreferences("the chosen model");
  }

  /// Switches the theme and remembers it.
  async setTheme(theme: "system" | "light" | "dark"): Promise<void> {
    this.applyTheme(theme);
    await this.savePreferences("the theme");
  }

  /// Shows or hides the context inspector, and remembers it.
  async toggleInspector(): Promise<void> {
    this.inspectorShown = !this.inspectorShown;
    await this.savePreferences("whether the inspector is shown");
  }

  /// Saves the window's preferences; a failure changes nothing on show but is said, since the
  /// next start would forget `what`.
  private async savePreferences(what: string): Promise<void> {
    const forgotten = (error: PinloomError) => {
      this.listError = new PinloomError({
        code: error.code,
        message: `Pinloom could not remember ${what} for the next start: ${error.message}`,
      });
    };
    await showingFailure(forgotten, undefined, async () => {
      await backend.preferencesSet(this.preferences(this.open?.tree.id ?? null));
    });
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
    await showingFailure(this.failure, undefined, async () => {
      this.trees = await backend.treeList();
    });
  }

  /// Another window, or another process (an agent over MCP, the command-line program), changed a
  /// tree: the list is read again. Returns the function that stops listening.
  listenForChanges(): () => void {
    const stops = [
      backend.onTreesChanged(() => void this.refreshList()),
      backend.onDatabaseChanged(() => void this.refreshList()),
    ];
    return () => stops.forEach((stop) => stop());
  }

  /// Shows a failure of the tree list's actions in the sidebar, or the unusable-database notice.
  private readonly failure = (error: PinloomError): void => {
    if (error.code === "databaseUnusable") this.unusable = error;
    else this.listError = error;
  };
}
