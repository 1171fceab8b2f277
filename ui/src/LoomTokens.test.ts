import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import { afterEach, describe, expect, it } from "vitest";

import App from "./App.svelte";
import { installFakeBackend, treeSummary, type FakeState } from "./lib/fake-backend";
import { profile } from "./lib/test-fixtures";

afterEach(() => {
  cleanup();
});

/// A buffer document of the person's opening and a model's continuation, open with Local chosen.
function sea(): FakeState {
  const fake = installFakeBackend({
    trees: [treeSummary(1, "sea", "Sea", { mode: "buffer" })],
    messages: new Map([
      [
        1,
        [
          { id: 10, parentId: null, author: "human", writtenBy: null, text: "Once", createdAtMs: 0, tokenEstimate: 1 },
          { id: 11, parentId: 10, author: "model", writtenBy: null, text: " The tide ran seaward.", createdAtMs: 0, tokenEstimate: 5 },
        ],
      ],
    ]),
    preferences: { lastTreeId: 1, defaultModel: "Local", theme: null, inspectorHidden: null },
  });
  fake.profiles = [profile("Local")];
  return fake;
}

/// The pieces of the document as it reads (the chosen piece's card shows its text again below).
const pieces = () => within(screen.getByTestId("document")).getAllByTestId("message-text");
const texts = () => pieces().map((element) => element.textContent);

/// Chooses the continuation and turns its tokens on.
async function tokensOn() {
  await waitFor(() => expect(texts()).toEqual(["Once", " The tide ran seaward."]));
  await fireEvent.click(pieces()[1]!);
  const toggle = await screen.findByTestId("tokens-toggle");
  expect(toggle.getAttribute("aria-pressed")).toBe("false");
  await fireEvent.click(toggle);
  expect(toggle.getAttribute("aria-pressed")).toBe("true");
}

describe("a loom's token probabilities", () => {
  it("shows a continuation's tokens, their alternatives, and branches at one and continues it", async () => {
    const fake = sea();
    render(App);
    await tokensOn();

    const tokens = await screen.findAllByTestId("token");
    expect(tokens.map((token) => token.textContent)).toEqual([" The", " tide", " ran", " seaward."]);
    // The tokens spell the piece, spaces and all, and the document reads as it did.
    expect(texts()).toEqual(["Once", " The tide ran seaward."]);
    expect(screen.getByTestId("document").textContent).toBe("Once The tide ran seaward.");
    const ran = tokens[2]!;
    expect(ran.getAttribute("aria-label")).toBe('token " ran", 21%');
    expect(ran.getAttribute("title")).toBe('21% · also " down" 47%, " on" 20%');

    await fireEvent.click(ran);
    const list = await screen.findByTestId("token-alternatives");
    expect(list.textContent).toContain('" ran" was 21% likely');
    const choices = within(list).getAllByTestId("token-alternative") as HTMLButtonElement[];
    expect(choices.map((choice) => choice.textContent)).toEqual(['" down" 47%', '" ran" 21% (written)', '" on" 20%']);
    expect(choices[1]!.disabled).toBe(true);
    // The choices take the focus, and Escape gives it back to the token.
    expect(document.activeElement).toBe(choices[0]);
    await fireEvent.keyDown(choices[0]!, { key: "Escape" });
    expect(screen.queryByTestId("token-alternatives")).toBeNull();
    expect(document.activeElement).toBe(screen.getAllByTestId("token")[2]);

    fake.replies = [" and the boats waited."];
    await fireEvent.click(screen.getAllByTestId("token")[2]!);
    await fireEvent.click(within(await screen.findByTestId("token-alternatives")).getAllByTestId("token-alternative")[0]!);

    await waitFor(() => expect(texts()).toEqual(["Once", " The tide down", " and the boats waited."]));
    expect(screen.queryByTestId("token-alternatives")).toBeNull();
    // The branch is on show beside the continuation it was made from.
    expect(screen.getByTestId("piece-position").textContent).toBe("2/2");
    expect(fake.calls).toContain("reply_branch_at_token");
    // The focus, gone with the list, is back on the piece in its place.
    expect(document.activeElement).toBe(pieces()[1]);
    // The branch is the person's choice: no server reported its tokens.
    expect((await screen.findByTestId("tokens-none")).textContent).toContain("by hand");
  });

  it("says when a piece's server reported no tokens, or they no longer spell it", async () => {
    const fake = sea();
    fake.tokens.set(11, null);
    render(App);
    await tokensOn();
    expect((await screen.findByTestId("tokens-none")).textContent).toContain("did not report token probabilities");
    expect(screen.queryByTestId("token")).toBeNull();
    cleanup();

    const edited = sea();
    edited.tokens.set(11, [{ text: " The tide ebbed.", probability: 0.5, alternatives: [] }]);
    render(App);
    await tokensOn();
    expect((await screen.findByTestId("tokens-mismatch")).textContent).toBe("The tokens no longer match this piece's text.");
    expect(screen.queryByTestId("token")).toBeNull();
    expect(texts()).toEqual(["Once", " The tide ran seaward."]);
  });

  it("offers no tokens for the person's own piece, and hides them when turned off", async () => {
    sea();
    render(App);
    await tokensOn();
    await screen.findAllByTestId("token");
    // The document's keys still move between pieces from a token.
    await fireEvent.keyDown(screen.getAllByTestId("token")[0]!, { key: "ArrowUp", altKey: true });
    await waitFor(() => expect(document.activeElement).toBe(pieces()[0]));
    expect(screen.queryByTestId("tokens-toggle")).toBeNull();
    await fireEvent.keyDown(pieces()[0]!, { key: "ArrowDown", altKey: true });
    await waitFor(() => expect(document.activeElement).toBe(pieces()[1]));
    expect(pieces()[1]!.getAttribute("role")).toBe("group");
    await fireEvent.click(screen.getByTestId("tokens-toggle"));
    expect(screen.queryByTestId("token")).toBeNull();
    await fireEvent.click(pieces()[0]!);
    expect(screen.queryByTestId("tokens-toggle")).toBeNull();
  });
});
