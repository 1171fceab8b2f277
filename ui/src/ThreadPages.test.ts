import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { afterEach, describe, expect, it } from "vitest";

import App from "./App.svelte";
import type { Message, TreeSummary } from "./lib/bindings";
import { installFakeBackend } from "./lib/fake-backend";

afterEach(() => {
  cleanup();
});

describe("a long thread", () => {
  it("shows its newest 200 messages and reads the earlier ones 200 at a time", async () => {
    const tree: TreeSummary = {
      id: 1,
      slug: "long",
      title: "Long",
      mode: "dialogue",
      createdAtMs: 0,
      updatedAtMs: 0,
      messageCount: 450,
      globalId: "g450",
      sharedBy: null,
    };
    const messages: Message[] = Array.from({ length: 450 }, (_, i) => ({
      id: 10 + i,
      parentId: i === 0 ? null : 9 + i,
      author: i % 2 === 0 ? "human" : "model",
      text: `Message ${i}`,
      createdAtMs: 0,
      tokenEstimate: 3,
    }));
    installFakeBackend({
      trees: [tree],
      messages: new Map([[1, messages]]),
      preferences: { lastTreeId: 1, defaultModel: null, theme: null, inspectorHidden: null },
    });
    render(App);
    await waitFor(() => expect(screen.getAllByTestId("message-text")).toHaveLength(200));
    const drawn = () => screen.getAllByTestId("message-text").map((element) => element.textContent?.trim());
    expect(drawn()[0]).toBe("Message 250");
    expect(drawn().at(-1)).toBe("Message 449");
    expect(screen.getByTestId("hidden-count").textContent).toContain("250 earlier messages not shown");

    await fireEvent.click(screen.getByTestId("show-earlier"));
    await waitFor(() => expect(screen.getAllByTestId("message-text")).toHaveLength(400));
    await fireEvent.click(screen.getByTestId("show-earlier"));
    await waitFor(() => expect(screen.getAllByTestId("message-text")).toHaveLength(450));
    expect(drawn()[0]).toBe("Message 0");
    expect(screen.queryByTestId("show-earlier")).toBeNull();
  });
});
