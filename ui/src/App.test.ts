import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

import App from "./App.svelte";
import { installFakeBackend } from "./lib/fake-backend";
import { profile } from "./lib/test-fixtures";

beforeEach(() => {
  installFakeBackend();
});

afterEach(() => {
  cleanup();
});

describe("App", () => {
  it("teaches the first step when there are no trees", async () => {
    render(App);
    expect(await screen.findByTestId("no-trees")).toBeTruthy();
    expect((await screen.findByTestId("welcome")).textContent).toContain("pin it");
  });

  it("shows the trees the window was given at once, and reads them again behind", async () => {
    const given = (title: string, id: number) => ({
      id,
      slug: title.toLowerCase(),
      title,
      mode: "dialogue" as const,
      createdAtMs: 0,
      updatedAtMs: 0,
      messageCount: 0,
      globalId: `g-${id}`,
      sharedBy: null,
    });
    // The database now holds a tree the window was not given: the list read behind shows it.
    const fake = installFakeBackend({ trees: [given("Estuaries", 2), given("Rivers", 1)] });
    (window as unknown as Record<string, unknown>).__PINLOOM_START__ = {
      trees: [given("Rivers", 1)],
      preferences: { lastTreeId: 1, defaultModel: null, theme: "dark", inspectorHidden: null },
    };
    render(App);
    await waitFor(() => expect(screen.getAllByTestId("tree-title").map((title) => title.textContent)).toEqual(["Estuaries", "Rivers"]));
    expect(fake.calls).not.toContain("preferences_get");
    expect(fake.calls).toContain("tree_list");
    expect(document.documentElement.dataset.theme).toBe("dark");
    expect((await screen.findByTestId("thread-title")).textContent).toBe("Rivers");
    // Taken once: a second start asks.
    expect((window as unknown as Record<string, unknown>).__PINLOOM_START__).toBeUndefined();
    delete document.documentElement.dataset.theme;
  });

  it("creates a tree and adds a message to it", async () => {
    render(App);
    await screen.findByTestId("no-trees");
    await fireEvent.input(screen.getByTestId("new-tree-title"), { target: { value: "Rivers" } });
    await fireEvent.click(screen.getByTestId("new-tree-submit"));
    expect((await screen.findByTestId("thread-title")).textContent).toBe("Rivers");

    const composer = (await screen.findByTestId("composer-input")) as HTMLTextAreaElement;
    await fireEvent.input(composer, { target: { value: "Why do they meander?" } });
    await fireEvent.click(screen.getByTestId("composer-send"));
    expect((await screen.findByTestId("message-text")).textContent?.trim()).toBe("Why do they meander?");
    await waitFor(() => expect(composer.value).toBe(""));
  });

  it("has the backend load what a message is counted with once the person starts writing", async () => {
    const fake = installFakeBackend();
    render(App);
    await screen.findByTestId("no-trees");
    await fireEvent.input(screen.getByTestId("new-tree-title"), { target: { value: "Rivers" } });
    await fireEvent.click(screen.getByTestId("new-tree-submit"));
    const composer = (await screen.findByTestId("composer-input")) as HTMLTextAreaElement;
    expect(fake.calls).not.toContain("counters_load_ahead");
    await fireEvent.input(composer, { target: { value: "W" } });
    await fireEvent.input(composer, { target: { value: "Wh" } });
    await waitFor(() => expect(fake.calls.filter((call) => call === "counters_load_ahead")).toHaveLength(1));
  });

  it("keeps the draft and shows the error when a message is refused", async () => {
    render(App);
    await screen.findByTestId("no-trees");
    await fireEvent.input(screen.getByTestId("new-tree-title"), { target: { value: "Rivers" } });
    await fireEvent.click(screen.getByTestId("new-tree-submit"));
    await screen.findByTestId("thread-title");

    const composer = (await screen.findByTestId("composer-input")) as HTMLTextAreaElement;
    await fireEvent.input(composer, { target: { value: "  " } });
    await fireEvent.click(screen.getByTestId("composer-send"));
    expect((await screen.findByTestId("composer-error")).textContent).toContain("empty");
    expect(composer.value).toBe("  ");
  });

  it("keeps the branch on show when another model is chosen", async () => {
    const fake = installFakeBackend({
      trees: [{ id: 1, slug: "rivers", title: "Rivers", mode: "dialogue", createdAtMs: 0, updatedAtMs: 0, messageCount: 3, globalId: "g3", sharedBy: null }],
      messages: new Map([
        [
          1,
          [
            { id: 1000, parentId: null, author: "human", writtenBy: null, text: "Why?", createdAtMs: 0, tokenEstimate: 1 },
            { id: 1001, parentId: 1000, author: "model", writtenBy: null, text: "The first answer", createdAtMs: 0, tokenEstimate: 1 },
            { id: 1002, parentId: 1000, author: "model", writtenBy: null, text: "The second answer", createdAtMs: 0, tokenEstimate: 1 },
          ],
        ],
      ]),
      preferences: { lastTreeId: 1, defaultModel: "One", theme: null, inspectorHidden: null },
    });
    fake.profiles = [profile("One"), profile("Two")];
    render(App);
    const texts = () => screen.getAllByTestId("message-text").map((element) => element.textContent?.trim());
    await waitFor(() => expect(texts()).toEqual(["Why?", "The second answer"]));
    await fireEvent.click(screen.getByLabelText("Previous alternative"));
    await waitFor(() => expect(texts()).toEqual(["Why?", "The first answer"]));

    const reads = () => fake.calls.filter((call) => call === "thread_view").length;
    const before = reads();
    const picker = screen.getByTestId("model-picker") as HTMLSelectElement;
    picker.value = "Two";
    await fireEvent.change(picker);
    await waitFor(() => expect(fake.preferences.defaultModel).toBe("Two"));
    await new Promise((settle) => setTimeout(settle, 50));
    expect(reads()).toBe(before);
    expect(texts()).toEqual(["Why?", "The first answer"]);
  });
});
