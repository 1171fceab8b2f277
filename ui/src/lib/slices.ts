// The inspector's list of a plan's slices as runs: a long run of alike slices in a row (the
// thousands of old messages truncation cut from a long thread) is one line that opens on demand,
// so a plan of 100,000 slices is listed in a few dozen lines instead of 900,000 elements that
// froze the window for most of a minute.
import type { SliceView } from "./bindings";

/// A run shorter than this is listed slice by slice.
export const RUN_AT_LEAST = 12;

/// One line of the list: a slice, or a run of alike slices (`first` to `first + count - 1`).
export type SliceRun =
  | { kind: "one"; index: number }
  | { kind: "run"; first: number; count: number; sliceKind: string; included: boolean; reason: string | null; tokens: number };

/// Slices that stand alone whatever is around them: what the person is asked to act on, or
/// marked for it.
const standsAlone = (slice: SliceView) => slice.excludeToFit || slice.kept || slice.cutFrom !== null || slice.kind === "prompt";

const alike = (a: SliceView, b: SliceView) =>
  a.kind === b.kind && a.included === b.included && a.reason === b.reason && !standsAlone(a) && !standsAlone(b);

/// The plan's slices in order, long runs of alike slices folded into one line each.
export function sliceRuns(slices: SliceView[]): SliceRun[] {
  const runs: SliceRun[] = [];
  let start = 0;
  while (start < slices.length) {
    let end = start + 1;
    while (end < slices.length && alike(slices[start]!, slices[end]!)) end++;
    const first = slices[start]!;
    if (end - start >= RUN_AT_LEAST) {
      let tokens = 0;
      for (let index = start; index < end; index++) tokens += slices[index]!.tokens;
      runs.push({ kind: "run", first: start, count: end - start, sliceKind: first.kind, included: first.included, reason: first.reason, tokens });
    } else {
      for (let index = start; index < end; index++) runs.push({ kind: "one", index });
    }
    start = end;
  }
  return runs;
}
