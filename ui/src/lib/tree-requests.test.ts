import { beforeEach, describe, expect, it } from "vitest";

import type { ApiError, BackgroundRequestView } from "./bindings";
import { installFakeBackend, treeSummary, type FakeState } from "./fake-backend";
import { describeServed, describeSpending, describeTokens, readableBody, TreeRequests } from "./tree-requests.svelte";

function request(overrides: Partial<BackgroundRequestView>): BackgroundRequestView {
  return {
    id: 1,
    treeId: 1,
    kind: "summary",
    model: "Local test model",
    pinId: null,
    upTo: 4,
    plannedTokens: 1_200,
    promptTokens: 1_214,
    replyTokens: 80,
    costUsd: 0.0021,
    startedAtMs: 1_700_000_000_000,
    durationMs: 2_300,
    failure: null,
    body: JSON.stringify({ model: "m", messages: [{ role: "system", content: "Summarise." }, { role: "user", content: "Person: why?" }] }),
    ...overrides,
  };
}

let fake: FakeState;

beforeEach(() => {
  fake = installFakeBackend({
    trees: [treeSummary(1, "rivers", "Rivers"), treeSummary(2, "other", "Other")],
    requests: [
      request({ id: 3, kind: "condensation", pinId: 7, upTo: 9, costUsd: null, promptTokens: null, replyTokens: null }),
      request({ id: 2, treeId: 2 }),
      request({ id: 1, failure: "the model 'local-model' was not found (404)" }),
    ],
  });
});

describe("the requests Pinloom made on its own", () => {
  it("lists a tree's, without bodies, and adds them up", async () => {
    const list = new TreeRequests(1);
    await list.load();
    expect(list.loaded).toBe(true);
    expect(list.requests.map((one) => one.id)).toEqual([3, 1]);
    expect(list.requests.every((one) => one.body === null)).toBe(true);
    expect(list.totals).toEqual({ count: 2, failed: 1, planned: 2_400, costUsd: 0.0021, priced: 1 });
    expect(list.summary).toBe("2 requests, 1 failed · 2,400 tokens planned · $0.0021 for the 1 with a price");
    expect(describeServed(list.requests[0]!)).toBe("condensation of pin 7 up to #9");
    expect(describeServed(list.requests[1]!)).toBe("summary of the main thread up to #4");
    expect(describeTokens(list.requests[0]!)).toBe("1,200 planned, not counted by the provider");
    expect(describeTokens(list.requests[1]!)).toBe("1,200 planned, counted 1,214 + 80 reply");
    expect(describeServed(request({ kind: "pinResult", pinId: 7 }))).toBe("suggested result of pin 7 up to #4");
    // Beside them, what the whole tree cost: no reply has a receipt here.
    expect(describeSpending(list.spending!)).toBe(
      "This tree cost $0.0021 in all: 0 replies (no price set), 2 requests $0.0021 (the 1 with a price) made on their own.",
    );
  });

  it("opens one with its body as sent, and closes it again", async () => {
    const list = new TreeRequests(1);
    await list.load();
    await list.open(1);
    expect(list.opened?.id).toBe(1);
    expect(readableBody(list.opened!.body!)).toBe("system: Summarise.\n\nuser: Person: why?");
    await list.open(1);
    expect(list.opened).toBeNull();
  });

  it("says so when a request is no longer kept, and when the tree is gone", async () => {
    const list = new TreeRequests(1);
    await list.load();
    fake.requests = [];
    await list.open(3);
    expect(list.openError?.message).toMatch(/is not kept/);
    const gone = new TreeRequests(9);
    await gone.load();
    expect(gone.error?.message).toMatch(/tree 9 does not exist/);
    expect(gone.summary).toBe("Pinloom has made no request on its own in this tree yet.");
  });

  it("says what Tauri itself refused, which comes as a bare string", async () => {
    fake.failure = "requests_list not allowed. Permissions associated with this command: allow-requests-list" as unknown as ApiError;
    const list = new TreeRequests(1);
    await list.load();
    expect(list.error?.code).toBe("internal");
    expect(list.error?.message).toMatch(/^requests_list not allowed/);
  });

  it("shows a body that is not a chat request as it is", () => {
    expect(readableBody('{"prompt":"Once upon"}')).toBe("Once upon");
    expect(readableBody("not json")).toBe("not json");
  });
});
