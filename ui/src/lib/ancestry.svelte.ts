// What a pin knows of where it came from, as its column's panel shows it: every ancestor thread
// with what a send from the pin carries of it (a summary, a fitted or cut one, or the thread's
// last messages while no summary can be had), and the person's edits and regenerations of those
// summaries. A summary being written in the background shows as such until it lands.
import { backend, showingFailure, type PinloomError } from "./backend";
import type { AncestorView } from "./bindings";

/// In words: who wrote a summary and what became of it to fit.
export function describeAncestor(ancestor: AncestorView): string {
  const writer = (() => {
    switch (ancestor.writtenBy) {
      case "person":
        return "written by you";
      case "agent":
        return "written by an agent";
      case "file":
        return "from an imported file";
      default:
        return ancestor.summarizer ? `written by ${ancestor.summarizer}` : "written by the summariser";
    }
  })();
  const whole = ancestor.wholeThread ? " (the whole thread)" : "";
  switch (ancestor.state) {
    case "summary":
      return `Summary ${writer}${whole}`;
    case "fitted":
      return `Summary ${writer}${whole}, ${ancestor.writtenTokens ?? "?"} tokens as written, fitted to its budget by ${ancestor.summarizer ?? "the summariser"}`;
    case "cut":
      return `Summary ${writer}${whole}, ${ancestor.writtenTokens ?? "?"} tokens as written, cut at a sentence to fit${ancestor.pending ? " (a fitted one is being written)" : ""}`;
    case "excerpt":
      if (ancestor.stale) {
        return `Stale summary, not sent: it was ${ancestor.stale}. Its last messages before the pin are sent instead${ancestor.pending ? " while a new one is written" : " until the summariser writes it again"}`;
      }
      return `${capitalised(ancestor.unavailable ?? "summary not available")}: its last messages before the pin are sent instead`;
    case "rootGoal":
      return "Its first message, the goal (task frames)";
  }
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/// Where an ancestor sits, in words: "the parent thread", "2 threads up".
export function placeOf(ancestor: AncestorView): string {
  return ancestor.distance === 1 ? "parent thread" : `${ancestor.distance} threads up`;
}

export class PinAncestry {
  ancestors = $state<AncestorView[]>([]);
  loaded = $state(false);
  error = $state<PinloomError | null>(null);
  /// The ancestor whose summary is being edited (its index), and the text being written.
  editing = $state<number | null>(null);
  draft = $state("");
  /// The ancestor being saved or written again.
  working = $state<number | null>(null);
  /// The newest load asked for: an older answer arriving late is dropped.
  private asked = 0;

  constructor(
    readonly treeId: number,
    readonly pinId: number,
  ) {}

  /// Whether a summary is being written for any ancestor.
  get pending(): boolean {
    return this.ancestors.some((ancestor) => ancestor.pending);
  }

  /// Reads what the pin knows under `profile`; summaries not written yet start in the
  /// background, and the window hears when they land.
  async load(profile: string): Promise<void> {
    if (!profile) return;
    const asked = ++this.asked;
    const newest = (error: PinloomError) => {
      if (asked === this.asked) this.error = error;
    };
    try {
      await showingFailure(newest, undefined, async () => {
        const ancestors = await backend.pinAncestry(this.pinId, profile);
        if (asked !== this.asked) return;
        this.ancestors = ancestors;
        this.error = null;
      });
    } finally {
      if (asked === this.asked) this.loaded = true;
    }
  }

  /// Opens the editor on ancestor `index`, starting from the summary as written (or, with none,
  /// from what is sent in its place).
  edit(index: number): void {
    const ancestor = this.ancestors[index];
    if (!ancestor) return;
    this.editing = index;
    this.draft = ancestor.state === "excerpt" ? "" : (ancestor.writtenText ?? ancestor.text);
  }

  cancel(): void {
    this.editing = null;
    this.draft = "";
  }

  /// Saves the person's summary of the ancestor being edited: the next request carries it.
  async save(profile: string): Promise<boolean> {
    const index = this.editing;
    const ancestor = index === null ? undefined : this.ancestors[index];
    if (index === null || !ancestor) return false;
    return this.change(index, profile, async () => {
      await backend.summaryWrite(this.treeId, ancestor.pinId, ancestor.upTo, this.draft);
      this.cancel();
    });
  }

  /// Has the summariser (the tree's, else `profile`) write ancestor `index`'s summary again.
  async regenerate(index: number, profile: string): Promise<boolean> {
    const ancestor = this.ancestors[index];
    if (!ancestor) return false;
    return this.change(index, profile, async () => {
      await backend.summaryRegenerate(this.treeId, ancestor.pinId, ancestor.upTo, ancestor.budget, profile);
    });
  }

  /// Runs `write` on ancestor `index`'s summary, then reads the ancestry again; a failure is
  /// shown and `false` returned.
  private async change(index: number, profile: string, write: () => Promise<void>): Promise<boolean> {
    this.working = index;
    try {
      return await showingFailure(this, false, async () => {
        await write();
        await this.load(profile);
        return true;
      });
    } finally {
      this.working = null;
    }
  }
}
