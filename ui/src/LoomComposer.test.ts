// A buffer tree speaks of a document and its continuations: its welcome and its composer offer
// Continue and adding to the document, never a Send that would ask for a reply it has none of.
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import { afterEach, describe, expect, it } from "vitest";

import App from "./App.svelte";
import { installFakeBackend, treeSummary, type FakeState } from "./lib/fake-backend";
import { profile } from "./lib/test-fixtures";

afterEach(() => {
  cleanup();
});

/// An empty tree of `mode`, open with Local chosen.
function opened(mode: "dialogue" | "buffer"): FakeState {
  const fake = installFakeBackend({
    trees: [treeSummary(1, "sea", "Sea", { mode })],
    preferences: { lastTreeId: 1, defaultModel: "Local", theme: null, inspectorHidden: null },
  });
  fake.profiles = [profile("Local")];
  return fake;
}

describe("a buffer tree", () => {
  it("welcomes the person to a document the model continues, with no replies to pin from", async () => {
    opened("buffer");
    render(App);
    const welcome = (await screen.findByTestId("thread-empty")).textContent ?? "";
    expect(welcome).toContain("opening of the document");
    expect(welcome).toContain("Continue");
    expect(welcome).not.toContain("in a reply");
  });

  it("offers Continue and adding to the document, with a line on ways, and no Send", async () => {
    opened("buffer");
    render(App);
    await screen.findByTestId("composer-input");
    expect(screen.queryByTestId("composer-ask")).toBeNull();
    expect(screen.getByTestId("composer-send").textContent).toBe("Add to the document");
    expect(screen.getByTestId("continue").textContent).toBe("Continue");
    expect(screen.getByTestId("continue-hint").textContent).toMatch(/more ways write\s+alternatives/);
  });

  it("continues the document from what was typed on Ctrl+Enter", async () => {
    const fake = opened("buffer");
    fake.replies = [" the tide turned."];
    render(App);
    const composer = await screen.findByTestId("composer-input");
    await fireEvent.input(composer, { target: { value: "Once" } });
    await fireEvent.keyDown(composer, { key: "Enter", ctrlKey: true });
    const document = await screen.findByTestId("document");
    await waitFor(() =>
      expect(within(document).getAllByTestId("message-text").map((piece) => piece.textContent)).toEqual(["Once", " the tide turned."]),
    );
    expect(fake.continueLengths).toEqual([null]);
  });
});

describe("a dialogue tree", () => {
  it("keeps Send and Add message, and says nothing of continuing", async () => {
    opened("dialogue");
    render(App);
    await screen.findByTestId("composer-input");
    expect(screen.getByTestId("composer-ask").textContent).toBe("Send");
    expect(screen.getByTestId("composer-send").textContent).toBe("Add message");
    expect(screen.queryByTestId("continue")).toBeNull();
    expect(screen.queryByTestId("continue-hint")).toBeNull();
    expect((await screen.findByTestId("thread-empty")).textContent).toContain("highlight any sentence in a reply");
  });
});
