// A question over several branches in the window: messages picked from their menus gather in the
// tray above the columns, the question is asked there, and the thread it starts shows at its top
// what it was asked over, each leading back to where it came from.
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

import App from "./App.svelte";
import Inspector from "./components/Inspector.svelte";
import PickedSources from "./components/PickedSources.svelte";
import TreeMap from "./components/TreeMap.svelte";
import { Conversation } from "./lib/conversation.svelte";
import { oldHistorySlice, planView, type FakeState } from "./lib/fake-backend";
import { installRiversBackend, profile, RIVERS } from "./lib/test-fixtures";

let fake: FakeState;

beforeEach(() => {
  fake = installRiversBackend({
    profiles: [profile("Local")],
    preferences: { lastTreeId: 1, defaultModel: "Local", theme: null, inspectorHidden: null },
  });
});

afterEach(() => {
  cleanup();
});

/// The texts of the messages on show, root first.
const drawn = () => screen.queryAllByTestId("message-text").map((element) => element.textContent?.trim());

/// Picks the message drawn `place`th (from 0) from its menu.
async function pick(place: number) {
  await fireEvent.click(screen.getAllByTestId("pick-for-question")[place]!);
}

describe("a question over picked messages", () => {
  it("gathers the picks in the tray, asks over them, and shows the new thread with its sources", async () => {
    render(App);
    await waitFor(() => expect(drawn()).toEqual(["Why do rivers bend?", "Erosion on the outer bank."]));
    expect(screen.queryByTestId("question-picks")).toBeNull();

    await pick(1);
    await pick(0);
    const tray = screen.getByTestId("question-picks");
    expect(within(tray).getByRole("heading").textContent).toBe("Ask over 2 picked messages");
    const picks = () => screen.getAllByTestId("question-pick");
    expect(picks().map((item) => item.getAttribute("data-node-id"))).toEqual(["11", "10"]);
    expect(picks()[0]?.textContent).toContain("#11 — Erosion on the outer bank.");
    // The menu offers to take a picked message back.
    expect(screen.getAllByTestId("pick-for-question").map((button) => button.textContent)).toEqual([
      "Unpick for the question",
      "Unpick for the question",
    ]);

    await fireEvent.click(within(picks()[0]!).getByTestId("question-pick-summary"));
    const ask = screen.getByTestId("question-over-picked-ask") as HTMLButtonElement;
    expect(ask.disabled).toBe(true);
    const text = screen.getByTestId("question-over-picked-text");
    await fireEvent.input(text, { target: { value: "What do these agree on?" } });
    expect(ask.disabled).toBe(false);
    fake.replies = ["Both say the outer bank wears away."];
    await fireEvent.keyDown(text, { key: "Enter", ctrlKey: true });

    await waitFor(() => expect(drawn()).toEqual(["What do these agree on?", "Both say the outer bank wears away."]));
    expect(fake.sent.at(-1)).toEqual({
      kind: "overPicked",
      picks: [
        { nodeId: 11, withSummary: true },
        { nodeId: 10, withSummary: false },
      ],
      text: "What do these agree on?",
    });
    await waitFor(() => expect(screen.queryByTestId("question-picks")).toBeNull());

    // The thread says what it was asked over, and each leads back to its message.
    const sources = within(screen.getByTestId("picked-sources")).getAllByTestId("picked-source");
    expect(sources.map((source) => source.getAttribute("data-node-id"))).toEqual(["11", "10"]);
    expect(sources[0]?.textContent).toBe("the main thread, an answer by Fake — Erosion on the outer bank.");
    await fireEvent.click(sources[1]!);
    await waitFor(() => expect(drawn()).toEqual(["Why do rivers bend?", "Erosion on the outer bank."]));
    expect(screen.queryByTestId("picked-sources")).toBeNull();
  });

  it("says in the tray why a question was refused, keeping the picks and the question", async () => {
    render(App);
    await waitFor(() => expect(drawn()).toHaveLength(2));
    await pick(1);
    await fireEvent.input(screen.getByTestId("question-over-picked-text"), { target: { value: "Why?" } });
    fake.replyThenFailure = { pieces: [], error: { code: "invalidInput", message: "message 11 is deleted: pick another" } };
    await fireEvent.click(screen.getByTestId("question-over-picked-ask"));

    expect((await screen.findByTestId("question-picks-error")).textContent).toBe("message 11 is deleted: pick another");
    expect(screen.getAllByTestId("question-pick")).toHaveLength(1);
    expect((screen.getByTestId("question-over-picked-text") as HTMLTextAreaElement).value).toBe("Why?");
    expect(screen.queryByTestId("column-error")).toBeNull();

    // Removing the last pick folds the tray away; Clear forgets them all.
    await fireEvent.click(screen.getByTestId("question-pick-remove"));
    expect(screen.queryByTestId("question-picks")).toBeNull();
    await pick(0);
    await pick(1);
    await fireEvent.click(screen.getByTestId("question-picks-clear"));
    expect(screen.queryByTestId("question-picks")).toBeNull();
  });
});

describe("the tree map", () => {
  it("picks the current message for a question with Shift+P, in the picture and the outline", async () => {
    const conversation = new Conversation();
    await conversation.open(RIVERS.id);
    conversation.inspector.focus = 11;
    fake.maps.set(1, { ids: [10, 11], authors: "hm", runs: [{ first: 0, len: 2, lane: 0, depth: 0, from: null, pinId: null }], pins: [], lanes: 1, depths: 2 });
    render(TreeMap, { conversation, onclose: () => undefined });
    await waitFor(() => expect(screen.getByTestId("map-current").textContent).toContain("Erosion on the outer bank."));
    const picture = screen.getByRole("application");
    await fireEvent.keyDown(picture, { key: "P", shiftKey: true });
    expect(conversation.questionPicks.picks.map((pick) => pick.label)).toEqual(["#11 — Erosion on the outer bank."]);
    expect(screen.getByTestId("map-current").textContent).toContain("picked for a question");
    // Plain P is still the comparison's.
    await fireEvent.keyDown(picture, { key: "p" });
    expect(conversation.comparison.picked).toBe(11);
    expect(conversation.questionPicks.picks).toHaveLength(1);

    await fireEvent.click(screen.getByTestId("map-view-outline"));
    // The row in focus is chosen a moment after the rows are drawn.
    await waitFor(() => expect(screen.getAllByTestId("map-row").find((row) => row.getAttribute("aria-selected") === "true")).toBeDefined());
    expect(screen.getAllByTestId("map-row")[1]?.textContent).toContain("picked for a question");
    await fireEvent.keyDown(screen.getByRole("tree"), { key: "P", shiftKey: true });
    expect(conversation.questionPicks.picks).toEqual([]);
  });
});

describe("the sources of a thread asked over picked messages", () => {
  it("say what was left out since, and jump to a message in its pin", async () => {
    const conversation = new Conversation();
    await conversation.open(RIVERS.id);
    const jumps: [number, number | null][] = [];
    conversation.jumpTo = async (nodeId, pinId) => void jumps.push([nodeId, pinId]);
    render(PickedSources, {
      conversation,
      picked: [
        { nodeId: 11, pinId: null, cameFrom: "the main thread, an answer by qwen3", opening: "Erosion", withSummary: true, leftOut: null },
        { nodeId: 42, pinId: 9, cameFrom: "the pin “Oxbows”, your message", opening: "Cut off", withSummary: false, leftOut: "excluded since" },
      ],
    });
    const sources = screen.getAllByTestId("picked-source");
    expect(sources[1]?.textContent).toBe("the pin “Oxbows”, your message — Cut off (excluded since)");
    expect(screen.getByTestId("picked-sources").textContent).toContain("with its branch's summary");
    await fireEvent.click(sources[1]!);
    expect(jumps).toEqual([[42, 9]]);
  });
});

describe("the inspector", () => {
  it("names a picked message and a picked branch's summary as the person's", () => {
    const conversation = new Conversation();
    const picked = { kind: "picked", provenance: "addedByPerson", included: true, reason: null } as const;
    conversation.inspector.plan = planView(30, "Local", 1000, {
      slices: [
        oldHistorySlice(11, 1, { ...picked, source: "picked" }),
        oldHistorySlice(12, 1, { ...picked, source: "pickedSummary" }),
      ],
    });
    render(Inspector, { conversation });
    expect(screen.getAllByTestId("slice-origin").map((origin) => origin.textContent)).toEqual([
      "picked by you",
      "summary of a picked branch",
    ]);
  });
});
