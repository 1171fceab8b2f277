// Settings → Deleted threads: threads of the open tree deleted whole (an agent's `tm:delete`,
// say), offered back. Nothing was erased; restoring one brings back the threads below it too.
import { backend, showingFailure, type PinloomError } from "./backend";
import type { DeletedThreadView } from "./bindings";
import type { Conversation } from "./conversation.svelte";

export class DeletedThreads {
  list = $state<DeletedThreadView[]>([]);
  error = $state<PinloomError | null>(null);
  private readonly conversation: Conversation;

  constructor(conversation: Conversation) {
    this.conversation = conversation;
  }

  /// Reads the threads of `treeId` deleted whole; true when they could be read.
  load(treeId: number): Promise<boolean> {
    return showingFailure(this, false, async () => {
      this.list = await backend.threadsDeleted(treeId);
      return true;
    });
  }

  /// Restores `thread` with the threads below it, and shows the root column again (its pins'
  /// chips come back); how many threads came back, or null when it failed (see `error`).
  async restore(thread: DeletedThreadView): Promise<number | null> {
    const treeId = this.conversation.treeId;
    if (treeId === null) return null;
    this.error = null;
    const restored = await showingFailure(this, null, async () => (await backend.threadRestore(thread.id)).length);
    if (restored === null) return null;
    if (!(await this.load(treeId))) return null;
    return showingFailure(this, null, async () => {
      await this.conversation.reload(0);
      return restored;
    });
  }
}
