// One owner for a comparison's pick and result, since a message's menu, the map and the lanes all pick.
import { backend, showingFailure } from "./backend";
import type { CompareReach, Comparison } from "./bindings";
import type { ConversationState } from "./conversation-state";

/// Two branches side by side: the first message picked, then, with the second, the comparison of
/// the branches through the two, shown over the columns.
export class BranchComparison {
  /// The first message picked, until the second is.
  picked = $state<number | null>(null);
  /// The comparison on show; replaced whole, never changed in place.
  shown = $state.raw<Comparison | null>(null);

  /// `error`: where a failure shows, above the columns.
  constructor(private readonly conversation: Pick<ConversationState, "profile" | "error">) {}

  /// Picks a message for comparison; the second pick compares the branches ending at the two.
  async pick(nodeId: number): Promise<void> {
    if (this.picked === null || this.picked === nodeId) {
      this.picked = nodeId;
      return;
    }
    const first = this.picked;
    this.picked = null;
    await this.compare(first, nodeId, "picked");
  }

  /// Compares the branches through messages `left` and `right`; with "branches", each goes on
  /// down its newest continuation (two siblings of a fork, compared as what they started). A
  /// failure shows above the columns, where the comparison would have opened.
  async compare(left: number, right: number, reach: CompareReach): Promise<void> {
    const conversation = this.conversation;
    await showingFailure(conversation, undefined, async () => {
      this.shown = await backend.nodesCompare(left, right, conversation.profile, reach);
    });
  }

  /// Closes the comparison on show.
  close(): void {
    this.shown = null;
  }

  /// Forgets the pick and the comparison: another tree is open.
  clear(): void {
    this.picked = null;
    this.shown = null;
  }
}
