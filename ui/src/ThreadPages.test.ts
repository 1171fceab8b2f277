import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { afterEach, describe, expect, it } from "vitest";

import App from "./App.svelte";
import { THREAD_PAGE, type Message, type TreeSummary } from "./lib/bindings";
import { installFakeBackend } from "./lib/fake-backend";

afterEach(() => {
  cleanup();
});

describe("a long thread", () => {
  it("shows its newest page of messages and reads the earlier ones a page at a time", async () => {
    // Two pages and a half.
    const total = 2 * THREAD_PAGE + THREAD_PAGE / 2;
    const tree: TreeSummary = {
      id: 1,
      slug: "long",
      title: "Long",
      mode: "dialogue",
      createdAtMs: 0,
      updatedAtMs: 0,
      messageCount: total,
      globalId: "g-long",
      sharedBy: null,
    };
    const messages: Message[] = Array.from({ length: total }, (_, i) => ({
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
    await waitFor(() => expect(screen.getAllByTestId("message-text")).toHaveLength(THREAD_PAGE));
    const drawn = () => screen.getAllByTestId("message-text").map((element) => element.textContent?.trim());
    expect(drawn()[0]).toBe(`Message ${total - THREAD_PAGE}`);
    expect(drawn().at(-1)).toBe(`Message ${total - 1}`);
    expect(screen.getByTestId("hidden-count").textContent).toContain(`${total - THREAD_PAGE} earlier messages not shown`);

    await fireEvent.click(screen.getByTestId("show-earlier"));
    await waitFor(() => expect(screen.getAllByTestId("message-text")).toHaveLength(2 * THREAD_PAGE));
    // A click while a page is still being read is let go (one page at a time): clicked until
    // the last page comes.
    await waitFor(async () => {
      const button = screen.queryByTestId("show-earlier");
      if (button) await fireEvent.click(button);
      expect(screen.getAllByTestId("message-text")).toHaveLength(total);
    });
    expect(drawn()[0]).toBe("Message 0");
    expect(screen.queryByTestId("show-earlier")).toBeNull();
  });
});
