import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { afterEach, describe, expect, it } from "vitest";

import Inspector from "./components/Inspector.svelte";
import type { PlanView } from "./lib/bindings";
import { Conversation } from "./lib/conversation.svelte";
import { installFakeBackend, oldHistorySlice, planView } from "./lib/fake-backend";

afterEach(() => {
  cleanup();
});

/// A plan of a send from message 7 that used 30 of its 1,000 tokens, with what `extra` adds.
function planOf(extra: Partial<PlanView>): PlanView {
  return planView(7, "Local", 1000, { used: 30, ...extra });
}

describe("the inspector", () => {
  it("shows a folded run as one line and lists its slices 200 at a time when opened", async () => {
    installFakeBackend();
    const conversation = new Conversation();
    const plan = planOf({
      truncated: true,
      omittedMessages: 250,
      slices: [
        oldHistorySlice(0, 1, { kind: "system", source: "treeSystemContext", sourceId: null, included: true, reason: null }),
        oldHistorySlice(1, 250),
        oldHistorySlice(251, 1, { kind: "prompt", included: true, reason: null }),
      ],
      keptStart: 2,
      stepCut: { messages: 3, tokens: 639, stepTokens: 4000 },
    });
    conversation.inspector.plan = plan;
    render(Inspector, { conversation });

    // A folded run says how many messages it stands for, and which.
    expect(screen.getByTestId("slice-run-summary").textContent).toBe("250 messages, #1–#250, all cut: truncated");
    expect(screen.getByTestId("kept-start").textContent).toContain("first 2 messages stay");
    expect(screen.getByTestId("step-cut").textContent).toContain("970 tokens unused");
    expect(screen.getByTestId("step-cut").textContent).toContain("left out 3 messages that would fit");
    expect(screen.queryAllByTestId("pruned-slice")).toHaveLength(0);
    await fireEvent.click(screen.getByTestId("slice-run-toggle"));
    await waitFor(() => expect(screen.queryAllByTestId("pruned-slice")).toHaveLength(200));
    await fireEvent.click(screen.getByText("Show 50 more of 250"));
    await waitFor(() => expect(screen.queryAllByTestId("pruned-slice")).toHaveLength(250));
    expect(screen.getAllByTestId("pruned-slice").at(-1)?.textContent).toContain("Old message 250");
    await fireEvent.click(screen.getByTestId("slice-run-toggle"));
    await waitFor(() => expect(screen.queryAllByTestId("pruned-slice")).toHaveLength(0));
  });

  it("names every ancestor thread, what stands for it, and a summary being written", () => {
    installFakeBackend();
    const conversation = new Conversation();
    conversation.inspector.plan = planOf({
      ancestry: [
        {
          pinId: null,
          title: "Rivers",
          distance: 2,
          upTo: 2,
          budget: 500,
          tokens: 0,
          included: false,
          reason: "overBudget",
          state: "summary",
          writtenBy: "agent",
          summarizer: null,
          wholeThread: true,
          text: "The agent's summary.",
          writtenText: null,
          writtenTokens: null,
          unavailable: null,
          stale: null,
          pending: false,
        },
        {
          pinId: 4,
          title: "Meanders",
          distance: 1,
          upTo: 9,
          budget: 800,
          tokens: 90,
          included: true,
          reason: null,
          state: "excerpt",
          writtenBy: null,
          summarizer: null,
          wholeThread: false,
          text: "Person: why?",
          writtenText: null,
          writtenTokens: null,
          unavailable: "summary not available: being written",
          stale: null,
          pending: true,
        },
      ],
      refusal: "the context needs 1,200 tokens, over the 1,000 this model has",
    });
    render(Inspector, { conversation });
    const rows = screen.getAllByTestId("inspector-ancestor");
    expect(rows.map((row) => row.dataset.state)).toEqual(["summary", "excerpt"]);
    expect(rows[0]!.textContent).toContain("Summary written by an agent (the whole thread)");
    expect(rows[0]!.textContent).toContain("left out: over budget");
    expect(rows[1]!.dataset.pending).toBe("true");
    expect(rows[1]!.textContent).toContain("being written, shown here as it lands");
    expect(screen.getByTestId("plan-refusal").textContent).toContain("refused");
  });

  it("says why an image or a PDF's page was cut, and folds a run of pages as pages", () => {
    installFakeBackend();
    const conversation = new Conversation();
    const page = (first: number, count: number, reason: string) =>
      oldHistorySlice(first, count, {
        kind: "file",
        source: "pdfPage",
        sourceId: 40,
        lastSourceId: null,
        reason,
        preview: `--- file: /papers/meanders.pdf, page ${first} of 12 ---`,
      });
    conversation.inspector.plan = planOf({
      slices: [
        oldHistorySlice(0, 1, { kind: "image", source: "attachment", sourceId: 41, reason: "imageNotSeen", preview: "[image: heron.png, 1024×1024, image/png]" }),
        page(1, 1, "overBudget"),
        page(2, 11, "afterCutPage"),
      ],
    });
    render(Inspector, { conversation });
    expect(screen.getAllByTestId("prune-reason").map((reason) => reason.textContent)).toEqual([
      "not sent: this model does not see images (or a document, which is text)",
      "over budget",
    ]);
    expect(screen.getByTestId("slice-run-summary").textContent).toBe("11 pages in a row, all cut: after a page that did not fit");
  });

  it("reads a preview's request only when it is shown, and shows a sent plan's own", async () => {
    const backend = installFakeBackend({ previewRequest: { url: "http://127.0.0.1:9/v1/messages", body: '{"model":"m","messages":[]}' } });
    const conversation = new Conversation();
    conversation.inspector.plan = planOf({ body: null });
    render(Inspector, { conversation });
    expect(backend.calls).not.toContain("context_request");
    await fireEvent.click(screen.getByTestId("show-request"));
    await waitFor(() => expect(screen.getByTestId("request-body").textContent).toBe('{"model":"m","messages":[]}'));
    expect(screen.getByText("http://127.0.0.1:9/v1/messages")).toBeTruthy();
    expect(backend.calls.filter((call) => call === "context_request")).toHaveLength(1);

    // A sent request's plan carries the body it was sent with: shown as it is, nothing read.
    conversation.inspector.plan = planOf({ body: '{"sent":true}', url: "http://127.0.0.1:9/v1/chat/completions" });
    await waitFor(() => expect(screen.getByTestId("request-body").textContent).toBe('{"sent":true}'));
    expect(backend.calls.filter((call) => call === "context_request")).toHaveLength(1);
  });

  it("shows no request body for a refused plan", async () => {
    installFakeBackend();
    const conversation = new Conversation();
    conversation.inspector.plan = planOf({ refusal: "too long", body: "" });
    render(Inspector, { conversation });
    await fireEvent.click(screen.getByTestId("show-request"));
    expect(screen.getByTestId("request-body-refused").textContent).toContain("No request");
    expect(screen.queryByTestId("request-body")).toBeNull();
  });

  it("says which messages a compaction stands for, or that it no longer holds", () => {
    installFakeBackend();
    const conversation = new Conversation();
    const compaction = { id: 1, first: 3, upTo: 120, messages: 118, tokens: 812, writtenBy: "Qwen", included: true, reason: null, stale: null, pinId: null, text: "Earlier: rivers." };
    conversation.inspector.plan = planOf({ compaction });
    const { unmount } = render(Inspector, { conversation });
    expect(screen.getByTestId("compaction-note").querySelector("p")?.textContent?.replace(/\s+/g, " ").trim()).toBe(
      "Messages #3–#120 (118) are compacted into 812 tokens by Qwen.",
    );
    unmount();
    conversation.inspector.plan = planOf({ compaction: { ...compaction, first: null, messages: 0, stale: "written before message #12 was excluded" } });
    render(Inspector, { conversation });
    expect(screen.getByTestId("compaction-note").textContent).toMatch(/no longer holds \(it was written before message #12 was excluded\)/);
  });

  it("says when a small budget gave up the start, the marker and the step, or the first turn was not kept", () => {
    installFakeBackend();
    const conversation = new Conversation();
    conversation.inspector.plan = planOf({ truncated: true, smallBudget: 412 });
    const { unmount } = render(Inspector, { conversation });
    expect(screen.getByTestId("small-budget").textContent).toContain("The budget is small (412 tokens for the history)");
    expect(screen.queryByTestId("start-given-up")).toBeNull();
    unmount();
    conversation.inspector.plan = planOf({ truncated: true, startGivenUp: 2310 });
    render(Inspector, { conversation });
    expect(screen.getByTestId("start-given-up").textContent).toContain("first turn (2,310 tokens) is not kept");
    expect(screen.queryByTestId("small-budget")).toBeNull();
  });

  it("says what the tree's compaction setting does before the send, and offers the tree's turns", () => {
    installFakeBackend();
    const conversation = new Conversation();
    const due = { automatic: true, upTo: 48, messages: 47, tokens: 3995, cut: 12, keepTurns: 2, reason: "the budget cuts 12 of the thread's history" };
    conversation.inspector.plan = planOf({ compactionDue: due });
    const { unmount } = render(Inspector, { conversation });
    expect(screen.getByTestId("compaction-due").textContent).toBe(
      "The budget cuts 12 of the thread's history: sending compacts the 47 messages up to #48 (3,995 tokens) into a summary first, keeping the last 2 turns.",
    );
    expect((screen.getByTestId("compact-keep") as HTMLInputElement).placeholder).toBe("2");
    unmount();
    conversation.inspector.plan = planOf({ compactionDue: { ...due, automatic: false } });
    render(Inspector, { conversation });
    expect(screen.getByTestId("compaction-due").dataset["automatic"]).toBe("false");
    expect(screen.getByTestId("compaction-due").textContent).toMatch(/: compact the 47 messages up to #48 \(3,995 tokens\) into a summary instead, keeping the last 2 turns\?$/);
  });

  it("says when the tree assembles its requests as task frames, with their shares", () => {
    installFakeBackend();
    const conversation = new Conversation();
    conversation.inspector.plan = planOf({});
    const { unmount } = render(Inspector, { conversation });
    expect(screen.queryByTestId("task-frames-note")).toBeNull();
    unmount();
    conversation.inspector.plan = planOf({ taskFrames: { rootGoalPercent: 5, pathSummariesPercent: 15, siblingResultsPercent: 10 } });
    render(Inspector, { conversation });
    expect(screen.getByTestId("task-frames-note").textContent?.replace(/\s+/g, " ")).toContain(
      "the main thread's goal takes at most 5 %, the summaries above 15 %, closed siblings' results 10 %",
    );
  });
});
