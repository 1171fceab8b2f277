import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

import App from "./App.svelte";
import { installFakeBackend } from "./lib/fake-backend";

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
    expect(screen.getByTestId("welcome").textContent).toContain("pin it");
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
});
