// One owner for the message in focus and its plan, which sends, marks and settings all plan again.
import { backend, showingFailure, type PinloomError } from "./backend";
import type { PlanView } from "./bindings";
import type { ContextInspection, ConversationState } from "./conversation-state";

/// The context inspector's subject: the message in focus, and the plan of what a send from it
/// would carry under the chosen model (or why none can be made).
export class ContextInspector implements ContextInspection {
  /// The message the inspector explains.
  focus = $state<number | null>(null);
  /// Replaced whole, never changed in place: held raw, since a plan of a 100,000-message thread
  /// has as many slices and deep reactivity cost a proxy for each.
  plan = $state.raw<PlanView | null>(null);
  /// Why there is no plan, or why a change to it was undone.
  error = $state<PinloomError | null>(null);

  constructor(private readonly conversation: Pick<ConversationState, "columns" | "profile">) {}

  /// Explains the context a send from `nodeId` would make under the chosen model.
  async inspect(nodeId: number | null): Promise<void> {
    const { columns, profile } = this.conversation;
    // Nothing chosen yet (a first send failed before any reply was written): the message on
    // show in the newest column.
    const target = nodeId ?? columns.at(-1)?.view.end ?? null;
    this.focus = target;
    this.error = null;
    if (target === null || !profile) {
      this.plan = null;
      return;
    }
    const unplanned = (error: PinloomError) => {
      this.plan = null;
      this.error = error;
    };
    await showingFailure(unplanned, undefined, async () => {
      this.plan = await backend.contextPreview(target, profile, null);
    });
  }

  /// Plans the message in focus again: something its context holds has changed.
  refresh(): Promise<void> {
    return this.inspect(this.focus);
  }
}
