import { describe, expect, it } from "vitest";

import type { SliceView } from "./bindings";
import { RUN_AT_LEAST, sliceRuns } from "./slices";

function slice(kind: string, included: boolean, reason: string | null = null, extra: Partial<SliceView> = {}): SliceView {
  return {
    kind,
    source: "node",
    provenance: "path",
    sourceId: 1,
    priority: 5,
    tokens: 10,
    included,
    reason,
    cutFrom: null,
    kept: false,
    preview: "",
    excludeToFit: false,
    ...extra,
  };
}

describe("sliceRuns", () => {
  it("folds a long run of alike slices into one line with their tokens, and lists short runs whole", () => {
    const cut = Array.from({ length: 5000 }, () => slice("oldHistory", false, "truncated"));
    const kept = Array.from({ length: RUN_AT_LEAST - 1 }, () => slice("recentHistory", true));
    const runs = sliceRuns([slice("system", true, null, { source: "agentPrompt" }), ...cut, ...kept, slice("prompt", true)]);
    expect(runs[0]).toEqual({ kind: "one", index: 0 });
    expect(runs[1]).toEqual({ kind: "run", first: 1, count: 5000, sliceKind: "oldHistory", included: false, reason: "truncated", tokens: 50_000 });
    expect(runs.slice(2).map((run) => (run.kind === "one" ? run.index : -1))).toEqual(
      Array.from({ length: RUN_AT_LEAST }, (_, i) => 5001 + i),
    );
  });

  it("keeps every slice exactly once, in order", () => {
    const slices = [
      ...Array.from({ length: 30 }, () => slice("oldHistory", false, "truncated")),
      ...Array.from({ length: 20 }, () => slice("oldHistory", false, "excluded")),
      ...Array.from({ length: 3 }, () => slice("recentHistory", true)),
    ];
    const covered = sliceRuns(slices).flatMap((run) =>
      run.kind === "one" ? [run.index] : Array.from({ length: run.count }, (_, i) => run.first + i),
    );
    expect(covered).toEqual(slices.map((_, i) => i));
    expect(sliceRuns([])).toEqual([]);
  });

  it("never folds what the person is asked to act on", () => {
    const slices = Array.from({ length: 40 }, (_, i) => slice("oldHistory", false, "truncated", { excludeToFit: i === 20, kept: i === 30 }));
    const runs = sliceRuns(slices);
    expect(runs.filter((run) => run.kind === "run").map((run) => (run.kind === "run" ? run.count : 0))).toEqual([20]);
    expect(runs).toContainEqual({ kind: "one", index: 20 });
    expect(runs).toContainEqual({ kind: "one", index: 30 });
  });
});
