// One owner for the messages picked for a question over several branches, since a message's
// menu, the map (both its picture and its outline) and the tray all pick, unpick and read them.
import { PinloomError } from "./backend";
import { MOST_PICKS, type PickInput } from "./bindings";
import type { ConversationState } from "./conversation-state";
import { withoutMarkup } from "./markdown";
import type { Sending } from "./sending.svelte";

/// How much of a message's opening its label shows: enough to tell two picks apart in the tray.
const LABEL_OPENING = 60;

/// A message picked for the question, as the tray lists it.
export type QuestionPick = {
  nodeId: number;
  /// Its thread: a pin's id, absent for the root thread (a jump back to it opens the pins).
  pinId: number | null;
  /// "#12 — how it opens", from whatever text the place it was picked from had at hand.
  label: string;
  /// Whether its branch's summary up to it goes with it.
  withSummary: boolean;
};

/// "#12 — how it opens", as plain words (no Markdown marks) cut short; "#12" when nothing of it is
/// known (the map had not read its preview yet).
export function pickLabel(nodeId: number, opening: string): string {
  const folded = withoutMarkup(opening);
  if (!folded) return `#${nodeId}`;
  const cut = folded.length > LABEL_OPENING ? `${folded.slice(0, LABEL_OPENING - 1).trimEnd()}…` : folded;
  return `#${nodeId} — ${cut}`;
}

/// The messages picked, in the order picked (the request numbers them so), and the question asked
/// over them: it starts a thread of its own at the tree's top that sees only these messages.
export class QuestionPicks {
  picks = $state<QuestionPick[]>([]);
  /// Why the last pick or question was refused; shown in the tray, which keeps the picks.
  error = $state<PinloomError | null>(null);
  /// A question is on its way: the tray does not send it twice.
  asking = $state(false);

  /// `conversation`: its root column, whose failure moves to the tray when nothing was saved;
  /// `sending`: what asks.
  constructor(
    private readonly conversation: Pick<ConversationState, "columns">,
    private readonly sending: Pick<Sending, "overPicked">,
  ) {}

  /// Whether message `nodeId` is picked.
  has(nodeId: number): boolean {
    return this.picks.some((pick) => pick.nodeId === nodeId);
  }

  /// Picks message `nodeId` (of pin `pinId`'s thread, or the root thread when null), labelled
  /// with `opening`, or unpicks it when it is picked. A pick past the most a question may be
  /// asked over is refused in the tray.
  toggle(nodeId: number, pinId: number | null, opening: string): void {
    this.error = null;
    if (this.has(nodeId)) {
      this.remove(nodeId);
      return;
    }
    if (this.picks.length >= MOST_PICKS) {
      this.error = new PinloomError({
        code: "invalidInput",
        message: `a question is asked over at most ${MOST_PICKS} messages: remove one before picking #${nodeId}`,
      });
      return;
    }
    this.picks = [...this.picks, { nodeId, pinId, label: pickLabel(nodeId, opening), withSummary: false }];
  }

  /// Unpicks message `nodeId`.
  remove(nodeId: number): void {
    this.picks = this.picks.filter((pick) => pick.nodeId !== nodeId);
  }

  /// Sends message `nodeId`'s branch summary (up to it) with it, or not.
  setWithSummary(nodeId: number, on: boolean): void {
    this.picks = this.picks.map((pick) => (pick.nodeId === nodeId ? { ...pick, withSummary: on } : pick));
  }

  /// Forgets every pick and the last failure: another tree is open, or the person starts over.
  clear(): void {
    this.picks = [];
    this.error = null;
  }

  /// Asks `text` over the picks; the root column then shows the new thread. True once the
  /// question is saved (answered, or saved and waiting to be answered again from the thread,
  /// which says why there): the picks are done with. When nothing was saved, the picks stay and
  /// the tray says why.
  async ask(text: string): Promise<boolean> {
    if (this.asking || this.picks.length === 0 || !text.trim()) return false;
    this.asking = true;
    this.error = null;
    try {
      const picks: PickInput[] = this.picks.map(({ nodeId, withSummary }) => ({ nodeId, withSummary }));
      const outcome = await this.sending.overPicked(picks, text);
      if (outcome !== "unsaved") {
        this.picks = [];
        return true;
      }
      // The send shows its failure in the root column, which still shows the thread it showed;
      // it belongs beside the picks it was about.
      const root = this.conversation.columns[0];
      this.error = root?.error ?? new PinloomError({ code: "internal", message: "the question was not sent" });
      if (root) root.error = null;
      return false;
    } finally {
      this.asking = false;
    }
  }
}
