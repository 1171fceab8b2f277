import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { afterEach, describe, expect, it } from "vitest";

import Inspector from "./components/Inspector.svelte";
import type { PlanView, SliceView } from "./lib/bindings";
import { Conversation } from "./lib/conversation.svelte";
import { installFakeBackend } from "./lib/fake-backend";

afterEach(() => {
  cleanup();
});

function line(first: number, count: number, extra: Partial<SliceView> = {}): SliceView {
  return {
    kind: "oldHistory",
    source: "node",
    provenance: "path",
    sourceId: first,
    priority: 9,
    tokens: 10 * count,
    included: false,
    reason: "truncated",
    cutFrom: null,
    kept: false,
    preview: `Old message ${first}`,
    excludeToFit: false,
    count,
    first,
    ...extra,
  };
}

describe("the inspector", () => {
  it("shows a folded run as one line and lists its slices 200 at a time when opened", async () => {
    installFakeBackend();
    const conversation = new Conversation();
    const plan: PlanView = {
      nodeId: 7,
      profile: "Local",
      available: 1000,
      used: 30,
      tokenizer: "o200k",
      truncated: true,
      omittedMessages: 250,
      slices: [
        line(0, 1, { kind: "system", source: "treeSystemContext", sourceId: null, included: true, reason: null }),
        line(1, 250),
        line(251, 1, { kind: "prompt", included: true, reason: null }),
      ],
      missingSummaries: 0,
      providerCut: null,
      refusal: null,
      url: "",
      body: "",
    };
    conversation.plan = plan;
    render(Inspector, { conversation });

    expect(screen.getByTestId("slice-run-summary").textContent).toBe("250 slices in a row, all cut: truncated");
    expect(screen.queryAllByTestId("pruned-slice")).toHaveLength(0);
    await fireEvent.click(screen.getByTestId("slice-run-toggle"));
    await waitFor(() => expect(screen.queryAllByTestId("pruned-slice")).toHaveLength(200));
    await fireEvent.click(screen.getByText("Show 50 more of 250"));
    await waitFor(() => expect(screen.queryAllByTestId("pruned-slice")).toHaveLength(250));
    expect(screen.getAllByTestId("pruned-slice").at(-1)?.textContent).toContain("Old message 250");
    await fireEvent.click(screen.getByTestId("slice-run-toggle"));
    await waitFor(() => expect(screen.queryAllByTestId("pruned-slice")).toHaveLength(0));
  });
});
