// One owner for marks on messages, since any mark can change every column, plan and summary shown.
import { backend, PinloomError, showingFailure } from "./backend";
import type { NodeAction } from "./bindings";
import type { ConversationState } from "./conversation-state";

/// Bookmarked, excluded from every context or included again, kept from every cut or released,
/// deleted with the branch below (into the trash) and restored by Undo. After a mark every column,
/// the inspector and the pins' panels read again.
export class MessageMarks {
  constructor(
    private readonly conversation: Pick<
      ConversationState,
      "treeId" | "columns" | "summariesVersion" | "inspector" | "inColumn" | "reload" | "show" | "onchanged" | "ondeleted"
    >,
  ) {}

  /// Changes a message's flags and shows the change wherever the message is on show. A failure
  /// is shown in column `index` when the change was made there, else in the inspector.
  async mark(nodeId: number, action: NodeAction, index: number | null = null): Promise<void> {
    const conversation = this.conversation;
    const inspector = conversation.inspector;
    const shown = index === null ? inspector : conversation.inColumn(index);
    await showingFailure(shown, undefined, async () => {
      await backend.nodeMark(nodeId, action);
      // An exclusion, a deletion or an inclusion can make a summary stale: pins read again what
      // they know.
      conversation.summariesVersion++;
      for (let column = 0; column < conversation.columns.length; column++) await conversation.reload(column);
      await inspector.refresh();
      const refusal = inspector.error;
      if (action === "keep" && refusal?.code === "contextOverBudget") {
        // Keeping it made what may never be cut overflow the budget: undo, and say why in the
        // backend's own words.
        await backend.nodeMark(nodeId, "release");
        await inspector.refresh();
        inspector.error = new PinloomError({
          code: refusal.code,
          message: `That message was not kept, since keeping it would not fit. ${refusal.message}`,
        });
      }
    });
  }

  /// Keeps messages `nodeIds` out of context (what a refusal to cut named), and shows the
  /// change wherever they are on show.
  async exclude(nodeIds: number[]): Promise<void> {
    const conversation = this.conversation;
    await showingFailure(conversation.inspector, undefined, async () => {
      for (const nodeId of nodeIds) await backend.nodeMark(nodeId, "exclude");
      conversation.summariesVersion++;
    });
    for (let column = 0; column < conversation.columns.length; column++) {
      await showingFailure(conversation.inColumn(column), undefined, () => conversation.reload(column));
    }
    await conversation.inspector.refresh();
  }

  /// Deletes message `nodeId` of column `index` and the branch below it (into the trash: the
  /// store keeps it), shows the path up to the message before it, and offers Undo.
  async delete(index: number, nodeId: number): Promise<void> {
    const conversation = this.conversation;
    const column = conversation.columns[index];
    if (!column || conversation.treeId === null) return;
    const message = column.view.messages.find(({ node }) => node.message.id === nodeId)?.node.message;
    if (!message) return;
    // The message before it in this thread, whether or not its page is on show; a thread's
    // first message has none here (a pin's hangs off its parent thread).
    const firstOfThread = column.view.first === 0 && column.view.messages[0]?.node.message.id === nodeId;
    const before = firstOfThread ? null : message.parentId;
    const deleted = await showingFailure(conversation.inColumn(index), false, async () => {
      await backend.nodeMark(nodeId, "delete");
      return true;
    });
    if (!deleted) return;
    conversation.onchanged();
    // Pins opened from what went go with it.
    conversation.columns = conversation.columns.slice(0, index + 1);
    await conversation.show(index, before);
    const opening = message.text.length > 40 ? `${message.text.slice(0, 40)}…` : message.text;
    conversation.ondeleted(`Deleted “${opening}” and what followed it.`, async () => {
      await showingFailure(conversation.inColumn(index), undefined, async () => {
        await backend.nodeMark(nodeId, "restore");
        conversation.onchanged();
        await conversation.show(index, nodeId);
      });
    });
  }
}
