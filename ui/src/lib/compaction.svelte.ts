// Compaction of the thread in focus, as the inspector offers it: its older part replaced in every
// request by a summary the summariser writes, the last turns kept verbatim; the summary shown,
// edited by the person (their text then stands for the messages), or the compaction undone.
// Whatever it does, the inspector plans the focused message again to show what changed.
import { attempt, backend, PinloomError } from "./backend";
import type { CompactionDue, CompactionNote } from "./bindings";
import type { Conversation } from "./conversation.svelte";

/// What the tree's compaction setting does before the send of a plan, in one sentence.
export function dueSentence(due: CompactionDue): string {
  const span = `the ${due.messages} messages up to #${due.upTo} (${due.tokens.toLocaleString("en")} tokens)`;
  const reason = due.reason.charAt(0).toUpperCase() + due.reason.slice(1);
  const kept = due.keepTurns === 1 ? "the last turn" : `the last ${due.keepTurns} turns`;
  return due.automatic
    ? `${reason}: sending compacts ${span} into a summary first, keeping ${kept}.`
    : `${reason}: compact ${span} into a summary instead, keeping ${kept}?`;
}

export class ThreadCompaction {
  error = $state<PinloomError | null>(null);
  /// What is being done, while the backend does it.
  working = $state<"compacting" | "undoing" | "saving" | null>(null);
  /// The summary being edited, when it is.
  draft = $state<string | null>(null);

  constructor(private readonly conversation: Conversation) {}

  /// Compacts the focused message's thread, keeping its last `keep` turns (the tree's number
  /// when `null`); true when done.
  async compact(keep: number | null): Promise<boolean> {
    const focus = this.conversation.inspector.focus;
    const profile = this.conversation.profile;
    if (focus === null || !profile) return false;
    return this.run("compacting", () => backend.threadCompact(focus, keep, profile));
  }

  /// Undoes the compaction the plan met; true when done.
  async undo(note: CompactionNote): Promise<boolean> {
    return this.run("undoing", () => backend.compactionUndo(note.id));
  }

  /// Starts editing the summary, from its text as written.
  edit(note: CompactionNote): void {
    this.draft = note.text;
  }

  /// Saves the person's text as the summary that stands for the compacted messages.
  async save(note: CompactionNote): Promise<boolean> {
    const treeId = this.conversation.treeId;
    const text = this.draft;
    if (treeId === null || text === null || !text.trim()) return false;
    const saved = await this.run("saving", () => backend.summaryWrite(treeId, note.pinId, note.upTo, text));
    if (saved) this.draft = null;
    return saved;
  }

  private async run(what: "compacting" | "undoing" | "saving", work: () => Promise<unknown>): Promise<boolean> {
    this.working = what;
    try {
      const done = await attempt(this, async () => {
        await work();
        await this.conversation.inspector.refresh();
      });
      return done;
    } finally {
      this.working = null;
    }
  }
}
