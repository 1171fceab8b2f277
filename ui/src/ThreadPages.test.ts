import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { afterEach, describe, expect, it } from "vitest";

import App from "./App.svelte";
import { THREAD_PAGE, type Message, type TreeSummary } from "./lib/bindings";
import { installFakeBackend, planView } from "./lib/fake-backend";
import { profile } from "./lib/test-fixtures";

afterEach(() => {
  cleanup();
});

/// Tree 1, titled `title`: one thread of `count` messages, ids from 10, saying their places.
function dialogueOf(title: string, count: number): { tree: TreeSummary; messages: Message[] } {
  const slug = title.toLowerCase();
  const tree: TreeSummary = {
    id: 1,
    slug,
    title,
    mode: "dialogue",
    createdAtMs: 0,
    updatedAtMs: 0,
    messageCount: count,
    globalId: `g-${slug}`,
    sharedBy: null,
  };
  const messages: Message[] = Array.from({ length: count }, (_, i) => ({
    id: 10 + i,
    parentId: i === 0 ? null : 9 + i,
    author: i % 2 === 0 ? "human" : "model",
    writtenBy: null,
    text: `Message ${i}`,
    createdAtMs: 0,
    tokenEstimate: 3,
  }));
  return { tree, messages };
}

describe("a long thread", () => {
  it("shows its newest page of messages and reads the earlier ones a page at a time", async () => {
    // Two pages and a half.
    const total = 2 * THREAD_PAGE + THREAD_PAGE / 2;
    const { tree, messages } = dialogueOf("Long", total);
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

describe("a compacted thread", () => {
  it("marks the compaction in the thread after the last message it stands for", async () => {
    const { tree, messages } = dialogueOf("Rivers", 6);
    const compaction = { id: 4, first: 10, upTo: 13, messages: 4, tokens: 120, writtenBy: "Qwen", included: true, reason: null, stale: null, pinId: null, text: "Earlier: the banks. <img src=x onerror=alert(1)>" };
    installFakeBackend({
      trees: [tree],
      messages: new Map([[1, messages]]),
      preferences: { lastTreeId: 1, defaultModel: "Local", theme: null, inspectorHidden: null },
      profiles: [profile("Local")],
      preview: planView(15, "Local", 4096, { compaction }),
    });
    render(App);
    const marker = await screen.findByTestId("thread-compaction-note", {}, { timeout: 5000 });
    expect(marker.textContent?.replace(/\s+/g, " ")).toContain("Messages #10–#13 (4) are compacted into 120 tokens by Qwen.");
    expect(marker.closest("li")?.previousElementSibling?.getAttribute("data-node-id")).toBe("13");
    await fireEvent.click(screen.getByTestId("thread-compaction-show"));
    // The summariser's words are text, whatever they look like.
    const shown = screen.getByTestId("thread-compaction-text");
    expect(shown.textContent).toBe("Earlier: the banks. <img src=x onerror=alert(1)>");
    expect(shown.querySelector("img")).toBeNull();
  });
});
