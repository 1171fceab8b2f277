// The trash: trees deleted, and messages deleted with the branch below them, each restorable;
// emptying it is the only step that erases anything. What comes back or goes for good the
// workspace shows at once: the tree list, the columns, and Undo, which no longer applies.
import { backend, showingFailure, type PinloomError } from "./backend";
import type { TrashView } from "./bindings";
import { plural } from "./format";
import type { Workspace } from "./workspace.svelte";

export class Trash {
  /// What is in it; null until it was read.
  contents = $state<TrashView | null>(null);
  error = $state<PinloomError | null>(null);
  /// What emptying it erased, in words.
  said = $state<string | null>(null);
  private readonly workspace: Workspace;

  constructor(workspace: Workspace) {
    this.workspace = workspace;
  }

  /// True when it could be read.
  load(): Promise<boolean> {
    return showingFailure(this, false, async () => {
      this.contents = await backend.trashList();
      return true;
    });
  }

  /// Takes tree `treeId` out of the trash and opens it (a failure shows in the tree list, as any
  /// other restore's); true when the trash could be read again.
  async restoreTree(treeId: number): Promise<boolean> {
    this.error = null;
    await this.workspace.restoreTree(treeId);
    return this.load();
  }

  /// Brings back deleted message `nodeId` with its branch; true when it came back.
  async restoreBranch(nodeId: number): Promise<boolean> {
    this.error = null;
    const restored = await showingFailure(this, false, async () => {
      await backend.nodeMark(nodeId, "restore");
      return true;
    });
    if (!restored) return false;
    this.workspace.undoable = null;
    this.workspace.restored++;
    await this.workspace.refreshList();
    return this.load();
  }

  /// Erases everything in the trash for good; true when it was erased.
  async empty(): Promise<boolean> {
    this.error = null;
    const erased = await showingFailure(this, null, () => backend.trashEmpty());
    if (erased === null) return false;
    this.said = `Erased ${plural(erased.trees, "tree")}, ${plural(erased.branches, "deleted message")} with their branches and ${plural(erased.threads, "deleted thread")}.`;
    this.workspace.undoable = null;
    await this.workspace.refreshList();
    return this.load();
  }
}
