import { beforeEach, describe, expect, it } from "vitest";

import type { Receipt } from "./bindings";
import type { FakeState } from "./fake-backend";
import { ReplyReceipt } from "./receipts.svelte";
import { installRiversBackend } from "./test-fixtures";

let fake: FakeState;

const receipt: Receipt = {
  profile: "Local",
  model: "m",
  provider: "vllm",
  tokenizer: "o200k",
  exactCounts: true,
  available: 7168,
  planned: 40,
  byKind: [{ kind: "history", slices: 1, tokens: 6 }],
  sent: [],
  counted: 41,
  cacheRead: null,
  cacheWrite: null,
  output: 7,
  expectedAtLeast: 40,
  serverContext: 8192,
  verdict: "matched",
  message: null,
  cost: null,
  firstTextMs: 80,
  tookMs: 400,
};

beforeEach(() => {
  fake = installRiversBackend();
});

describe("ReplyReceipt", () => {
  it("reads a reply's receipt and how its request differed from the one before", async () => {
    fake.receipts.set(11, receipt);
    fake.diffs.set(11, { later: 11, earlier: null, came: [], went: [], changed: [], unchanged: 0 });
    const reply = new ReplyReceipt();
    const reading = reply.load(11);
    expect(reply.receipt).toBeUndefined();
    expect(await reading).toBe(true);
    expect(reply.receipt?.verdict).toBe("matched");
    expect(await reply.compare()).toBe(true);
    expect(reply.diff?.earlier).toBeNull();
  });

  it("tells a reply written before receipts from one that could not be read", async () => {
    const reply = new ReplyReceipt();
    expect(await reply.load(10)).toBe(true);
    expect(reply.receipt).toBeNull();
    expect(await reply.compare()).toBe(false);
    expect(reply.diffError?.message).toBe("message 10 has no receipt");
    expect(await reply.load(99)).toBe(false);
    expect(reply.error?.code).toBe("notFound");
    expect(reply.receipt).toBeUndefined();
    expect(reply.diffError).toBeNull();
  });

  it("shows only the receipt of the reply asked about last", async () => {
    fake.receipts.set(11, receipt);
    const reply = new ReplyReceipt();
    const first = reply.load(11);
    await reply.load(10);
    await first;
    expect(reply.receipt).toBeNull();
  });
});
