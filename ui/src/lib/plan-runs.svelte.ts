// The inspector's folded runs. The backend folds long runs of alike slices into one line (a
// 100,000-message thread's plan has as many slices); this holds the members of the runs the
// person opened, read a page at a time, for one plan: another plan folds them all again.
import { backend, showingFailure, type PinloomError } from "./backend";
import type { PlanView, SliceView } from "./bindings";

/// How many members of a run are read at a time.
export const RUN_PAGE = 200;

export class PlanRuns {
  /// The members read of each run opened, by the run's first slice.
  opened = $state<Record<number, SliceView[]>>({});
  error = $state<PinloomError | null>(null);
  /// The plan whose runs these are.
  private plan: PlanView | null = null;

  /// Folds every run of `plan`, which the inspector now shows.
  showing(plan: PlanView | null): void {
    this.plan = plan;
    this.opened = {};
    this.error = null;
  }

  /// Reads the next page of run `line`'s members; true when it was read.
  async readMore(line: SliceView): Promise<boolean> {
    const plan = this.plan;
    if (!plan) return false;
    const have = this.opened[line.first] ?? [];
    return showingFailure(this, false, async () => {
      const more = await backend.contextSlices(plan.nodeId, plan.profile, line.first + have.length, Math.min(RUN_PAGE, line.count - have.length));
      // The plan changed meanwhile: its runs are read afresh.
      if (this.plan !== plan) return false;
      this.opened[line.first] = [...have, ...more];
      return true;
    });
  }

  /// Opens run `line` (its first page), or folds it again.
  async toggle(line: SliceView): Promise<void> {
    if (this.opened[line.first]) delete this.opened[line.first];
    else await this.readMore(line);
  }
}
