import { beforeEach, describe, expect, it } from "vitest";

import type { PlanView } from "./bindings";
import { installFakeBackend, oldHistorySlice, planView, type FakeState } from "./fake-backend";
import { PlanRuns, RUN_PAGE } from "./plan-runs.svelte";

let fake: FakeState;

beforeEach(() => {
  fake = installFakeBackend();
});

/// The plan of a send from `nodeId` whose truncation folded 250 old messages, from slice 1, into a run.
function planOf(nodeId: number): PlanView {
  return planView(nodeId, "Local", 1000, { used: 30, truncated: true, omittedMessages: 250, slices: [oldHistorySlice(1, 250)] });
}

describe("PlanRuns", () => {
  it("reads a run's members a page at a time, and folds it again", async () => {
    const runs = new PlanRuns();
    const line = oldHistorySlice(1, 250);
    runs.showing(planOf(7));
    await runs.toggle(line);
    expect(runs.opened[1]).toHaveLength(RUN_PAGE);
    expect(await runs.readMore(line)).toBe(true);
    expect(runs.opened[1]?.map((slice) => slice.first).slice(-2)).toEqual([249, 250]);
    await runs.toggle(line);
    expect(runs.opened[1]).toBeUndefined();
  });

  it("folds every run when another plan is shown, and drops pages read for the one before", async () => {
    const runs = new PlanRuns();
    const line = oldHistorySlice(1, 250);
    runs.showing(planOf(7));
    await runs.toggle(line);
    const late = runs.readMore(line);
    runs.showing(planOf(8));
    expect(await late).toBe(false);
    expect(runs.opened).toEqual({});
  });

  it("says why a run could not be read, until another plan is shown", async () => {
    const runs = new PlanRuns();
    expect(await runs.readMore(oldHistorySlice(1, 250))).toBe(false);
    runs.showing(planOf(7));
    fake.failure = { code: "notFound", message: "message 7 does not exist" };
    expect(await runs.readMore(oldHistorySlice(1, 250))).toBe(false);
    expect(runs.error?.message).toBe("message 7 does not exist");
    runs.showing(planOf(8));
    expect(runs.error).toBeNull();
  });
});
