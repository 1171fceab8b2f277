// One owner for pinning, opening, closing and bringing back, since each reshapes the columns on show.
import { backend, PinloomError, showingFailure } from "./backend";
import type { Promotion, ThreadMessage } from "./bindings";
import { columnOf, type ConversationState } from "./conversation-state";
import { withoutMarkup } from "./markdown";

/// Why nothing can be brought back from the first column: it has no parent to go to.
const NO_PARENT_END = "The parent thread has no message to bring it back after.";

/// A passage pinned and its sub-thread opened to the right, a pin opened again from its chip,
/// closed with a result (written by hand or suggested by the chosen model), and a passage of a pin
/// brought back to the thread it came from. They work on the conversation's columns and keep no
/// state of their own.
export class Pins {
  constructor(
    private readonly conversation: Pick<
      ConversationState,
      "columns" | "profile" | "inspector" | "inColumn" | "reload" | "onchanged"
    >,
  ) {}

  /// Pins a passage of a message shown in column `index` and opens its sub-thread to the right.
  async pin(index: number, message: ThreadMessage, start: number, end: number): Promise<void> {
    const conversation = this.conversation;
    const text = message.node.message.text.slice(start, end);
    // A passage across formatting is titled as it reads, without its markup; a blank title
    // lets the store title it from the passage.
    const plain = withoutMarkup(text);
    const title = plain === text ? "" : plain.length > 60 ? `${plain.slice(0, 60).replace(/\s+\S*$/, "")}…` : plain;
    await showingFailure(conversation.inColumn(index), undefined, async () => {
      const pin = await backend.pinCreate(message.node.message.id, start, end, text, title, conversation.profile || null);
      await conversation.reload(index, message.node.message.id);
      await this.open(index, pin.id);
    });
  }

  /// Opens pin `pinId` as the column after `index`, closing the columns beyond it.
  async open(index: number, pinId: number): Promise<void> {
    const conversation = this.conversation;
    await showingFailure(conversation.inColumn(index), undefined, async () => {
      const view = await backend.pinView(pinId, null);
      conversation.columns = [...conversation.columns.slice(0, index + 1), columnOf(view)];
    });
  }

  /// Closes the pin of column `index` with `result`, which its parent's next request carries;
  /// true when it was closed.
  async close(index: number, result: string): Promise<boolean> {
    const conversation = this.conversation;
    const pin = conversation.columns[index]?.view.pin;
    if (!pin) return false;
    return showingFailure(conversation.inColumn(index), false, async () => {
      await backend.pinClose(pin.id, result);
      await conversation.reload(index);
      if (index > 0) await conversation.reload(index - 1);
      return true;
    });
  }

  /// A result for the pin of column `index` written by the chosen model from its thread, for the
  /// person to edit before closing; null (the column says why) when none could be written.
  async suggestResult(index: number): Promise<string | null> {
    const conversation = this.conversation;
    const pin = conversation.columns[index]?.view.pin;
    if (!pin) return null;
    const profile = conversation.profile;
    const shown = conversation.inColumn(index);
    if (!profile) {
      shown(new PinloomError({ code: "invalidInput", message: "choose a model first to suggest a result, or write it by hand" }));
      return null;
    }
    return showingFailure(shown, null, () => backend.pinResultSuggest(pin.id, profile));
  }

  /// What bringing `passage` of message `fromId` (all of it when null), in the pin of column
  /// `index`, back to the end of the column before it would add. Throws what refused it.
  async promotionPreview(index: number, fromId: number, passage: string | null): Promise<Promotion> {
    return backend.promotionPreview(fromId, this.parentEnd(index), passage, this.conversation.profile);
  }

  /// Writes the promotion previewed for column `index` at the end of the column before it, and
  /// shows it there. Throws what refused it.
  async promote(index: number, fromId: number, passage: string | null): Promise<void> {
    const conversation = this.conversation;
    const written = await backend.promote(fromId, this.parentEnd(index), passage);
    await conversation.reload(index - 1, written.id);
    await conversation.inspector.inspect(written.id);
    conversation.onchanged();
  }

  /// The last message of the column before column `index`: where a promotion is written.
  private parentEnd(index: number): number {
    const end = this.conversation.columns[index - 1]?.view.end ?? null;
    if (end === null) throw new PinloomError({ code: "invalidInput", message: NO_PARENT_END });
    return end;
  }
}
