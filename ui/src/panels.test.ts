// The panels drawn from their state owners: each section in its place, and what an action did
// said once, at the top of Settings.
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

import BudgetPanel from "./components/BudgetPanel.svelte";
import ReceiptPanel from "./components/ReceiptPanel.svelte";
import RequestsPanel from "./components/RequestsPanel.svelte";
import SettingsPanel from "./components/SettingsPanel.svelte";
import TrashPanel from "./components/TrashPanel.svelte";
import TreeMap from "./components/TreeMap.svelte";
import { Conversation } from "./lib/conversation.svelte";
import type { FakeState } from "./lib/fake-backend";
import { RIVERS, installRiversBackend, profile } from "./lib/test-fixtures";
import { Workspace } from "./lib/workspace.svelte";

let fake: FakeState;

beforeEach(() => {
  fake = installRiversBackend({
    profiles: [profile("Local"), profile("gpt-4o", { importedFrom: "shared.json" })],
    keys: [{ provider: "openai", displayName: "OpenAI", variable: "OPENAI_API_KEY", fromEnvironment: false, inKeyring: false, problem: null }],
    deletedThreads: new Map([[1, [{ id: 4, title: "Sediment", deletedAtMs: 0 }]]]),
  });
});

afterEach(() => {
  cleanup();
});

async function opened(): Promise<{ workspace: Workspace; conversation: Conversation }> {
  const workspace = new Workspace();
  await workspace.start();
  const conversation = new Conversation();
  await conversation.loadProfiles("Local");
  await conversation.open(1);
  return { workspace, conversation };
}

describe("Settings", () => {
  it("shows every section in order, each with what its owner read", async () => {
    const { workspace, conversation } = await opened();
    render(SettingsPanel, { workspace, conversation, onclose: () => undefined });
    await screen.findByTestId("tree-settings-save");
    await screen.findByTestId("deleted-thread");
    await screen.findByTestId("about-version");
    const headings = [...screen.getByTestId("settings-panel").querySelectorAll("h3")].map((h) => h.textContent);
    expect(headings).toEqual([
      "Provider keys",
      "Models from imported files",
      "Local models (Ollama)",
      "This tree",
      "Deleted threads",
      "Sync",
      "Teams",
      "About",
      "Appearance",
    ]);
    expect(screen.getAllByTestId("key-row")).toHaveLength(1);
    expect(screen.getByTestId("about-version").textContent).toBe("Pinloom 0.1.0");
  });

  it("sets when the tree's summaries are written, and its truncation step", async () => {
    const { workspace, conversation } = await opened();
    render(SettingsPanel, { workspace, conversation, onclose: () => undefined });
    const writing = (await screen.findByTestId("tree-summary-writing")) as HTMLSelectElement;
    expect(writing.value).toBe("whenPinned");
    await fireEvent.change(writing, { target: { value: "whenAsked" } });
    // And the step truncation cuts in, for this tree over the model's.
    await fireEvent.change(screen.getByTestId("tree-truncation-step"), { target: { value: "0" } });
    await fireEvent.click(screen.getByTestId("tree-settings-save"));
    await waitFor(() => expect(fake.treeSettings.get(1)?.summaryWriting).toBe("whenAsked"));
    expect(fake.treeSettings.get(1)?.truncationStepPercent).toBe(0);
  });

  it("sets when a thread's history is compacted, its share and the turns kept, and a daily limit", async () => {
    const { workspace, conversation } = await opened();
    render(SettingsPanel, { workspace, conversation, onclose: () => undefined });
    const when = (await screen.findByTestId("tree-compaction")) as HTMLSelectElement;
    expect(when.value).toBe("ask");
    expect(screen.queryByTestId("tree-compact-at")).toBeNull();
    await fireEvent.change(when, { target: { value: "automatic" } });
    await fireEvent.change(await screen.findByTestId("tree-compact-at"), { target: { value: "70" } });
    await fireEvent.change(screen.getByTestId("tree-compaction-keep"), { target: { value: "3" } });
    // And a daily limit on what is written on its own.
    await fireEvent.change(screen.getByTestId("tree-daily-tokens"), { target: { value: "50000" } });
    await fireEvent.click(screen.getByTestId("tree-settings-save"));
    await waitFor(() => expect(fake.treeSettings.get(1)?.compaction).toBe("automatic"));
    expect(fake.treeSettings.get(1)).toMatchObject({ compactAtPercent: 70, compactionKeepTurns: 3, dailyTokenLimit: 50000 });
  });

  it("turns on task frames with seed 001's shares, and keeps messages out of the search", async () => {
    const { workspace, conversation } = await opened();
    render(SettingsPanel, { workspace, conversation, onclose: () => undefined });
    await fireEvent.click(await screen.findByTestId("task-frames"));
    expect((screen.getByTestId("task-frames-goal") as HTMLInputElement).value).toBe("5");
    await fireEvent.input(screen.getByTestId("task-frames-summaries"), { target: { value: "20" } });
    await fireEvent.click(screen.getByTestId("tree-retrieval-custom"));
    await fireEvent.change(screen.getByTestId("retrieval-exclude"), { target: { value: "#12, 40" } });
    await fireEvent.click(screen.getByTestId("tree-settings-save"));
    await waitFor(() =>
      expect(fake.treeSettings.get(1)?.taskFrames).toEqual({ rootGoalPercent: 5, pathSummariesPercent: 20, siblingResultsPercent: 10 }),
    );
    expect(fake.treeSettings.get(1)?.retrieval?.exclude).toEqual([12, 40]);
  });

  it("says at the top what the last action did, in whichever section", async () => {
    const { workspace, conversation } = await opened();
    render(SettingsPanel, { workspace, conversation, onclose: () => undefined });
    await fireEvent.input(await screen.findByTestId("system-context"), { target: { value: "Answer as a geologist." } });
    await fireEvent.click(screen.getByTestId("tree-settings-save"));
    await waitFor(() => expect(screen.getByTestId("settings-message").textContent).toBe("Tree settings saved."));
    expect(fake.treeContexts.get(1)?.systemContext).toBe("Answer as a geologist.");

    await fireEvent.click(screen.getByText("Store"));
    await waitFor(() => expect(screen.getByTestId("settings-error").textContent).toBe("the key is empty"));
    expect(screen.queryByTestId("settings-message")).toBeNull();

    await fireEvent.click(await screen.findByTestId("thread-restore"));
    await waitFor(() => expect(screen.getByTestId("settings-message").textContent).toBe("“Sediment” is back."));
    expect(screen.queryByTestId("settings-error")).toBeNull();
    await waitFor(() => expect(screen.queryByTestId("deleted-thread")).toBeNull());

    await fireEvent.click(screen.getByTestId("profile-enable"));
    await waitFor(() => expect(screen.getByTestId("settings-message").textContent).toBe("gpt-4o is enabled: it can be chosen and sent to."));
    expect(screen.queryByTestId("imported-profiles")).toBeNull();
  });
});

describe("the trash", () => {
  it("lists what is in it and says what emptying it erased", async () => {
    fake.trash = { trees: [{ ...RIVERS, id: 2, title: "Tides" }], branches: [] };
    const { workspace } = await opened();
    render(TrashPanel, { workspace, onclose: () => undefined });
    expect((await screen.findByTestId("trashed-tree-title")).textContent).toBe("Tides");
    await fireEvent.click(screen.getByTestId("empty-trash"));
    await fireEvent.click(screen.getByTestId("empty-trash-yes"));
    expect((await screen.findByTestId("trash-said")).textContent).toContain("Erased 1 tree");
    expect(await screen.findByTestId("trash-empty")).toBeTruthy();
  });
});

describe("a receipt", () => {
  it("says a reply written before receipts has none", async () => {
    render(ReceiptPanel, { nodeId: 11 });
    expect((await screen.findByTestId("receipt-none")).textContent).toContain("No receipt");
  });
});

describe("the budget panel", () => {
  it("edits the chosen profile, previews it as edited, and saves it", async () => {
    const { conversation } = await opened();
    conversation.inspector.focus = 11;
    render(BudgetPanel, { conversation, onclose: () => undefined });
    expect(((await screen.findByTestId("budget-name")) as HTMLInputElement).value).toBe("Local");
    await waitFor(() => expect(screen.getByTestId("budget-preview").textContent).toContain("of 7,168 tokens"));
    await fireEvent.input(screen.getByTestId("budget-window"), { target: { value: "4096" } });
    await waitFor(() => expect(screen.getByTestId("budget-preview").textContent).toContain("of 3,072 tokens"));
    await fireEvent.click(screen.getByTestId("budget-save"));
    await screen.findByTestId("budget-saved");
    expect(fake.profiles.find((one) => one.name === "Local")?.contextWindow).toBe(4096);
  });

  it("sets the step truncation cuts in, the setting the report's hint names", async () => {
    const { conversation } = await opened();
    render(BudgetPanel, { conversation, onclose: () => undefined });
    const step = (await screen.findByTestId("budget-step")) as HTMLInputElement;
    expect(step.closest("label")?.textContent).toContain("Cut in steps of");
    await fireEvent.change(step, { target: { value: "0" } });
    await fireEvent.click(screen.getByTestId("budget-save"));
    await screen.findByTestId("budget-saved");
    expect(fake.profiles.find((one) => one.name === "Local")?.assembly?.truncationStepPercent).toBe(0);
  });

  it("says whether the model sees images, or leaves it to the model's name", async () => {
    const { conversation } = await opened();
    render(BudgetPanel, { conversation, onclose: () => undefined });
    const seesImages = (await screen.findByTestId("profile-sees-images")) as HTMLSelectElement;
    expect(seesImages.value).toBe("byName");
    await fireEvent.change(seesImages, { target: { value: "no" } });
    await fireEvent.click(screen.getByTestId("budget-save"));
    await screen.findByTestId("budget-saved");
    expect(fake.profiles.find((one) => one.name === "Local")?.assembly?.seesImages).toBe(false);
    await fireEvent.change(seesImages, { target: { value: "byName" } });
    await fireEvent.click(screen.getByTestId("budget-save"));
    await waitFor(() => expect(fake.profiles.find((one) => one.name === "Local")?.assembly?.seesImages).toBeNull());
  });
});

describe("the tree map", () => {
  it("reads the outline when it is asked for, and starts at the message in focus", async () => {
    const { conversation } = await opened();
    conversation.inspector.focus = 10;
    fake.maps.set(1, { ids: [10, 11], authors: "hm", runs: [{ first: 0, len: 2, lane: 0, depth: 0, from: null, pinId: null }], pins: [], lanes: 1, depths: 2 });
    render(TreeMap, { conversation, onclose: () => undefined });
    expect((await screen.findByTestId("map-size")).textContent).toContain("2 messages");
    await fireEvent.click(screen.getByTestId("map-view-outline"));
    await waitFor(() => expect(screen.getAllByTestId("map-row")).toHaveLength(2));
    // The row in focus is chosen once the outline is read, a moment after its rows are drawn.
    await waitFor(() =>
      expect(screen.getAllByTestId("map-row").find((row) => row.getAttribute("aria-selected") === "true")?.textContent).toContain("Why do rivers bend?"),
    );
  });
});

describe("the requests made on their own", () => {
  it("lists the tree's with their figures, and opens one with its body", async () => {
    fake.requests = [
      {
        id: 5,
        treeId: 1,
        kind: "summary",
        model: "Local",
        pinId: null,
        upTo: 11,
        plannedTokens: 320,
        promptTokens: 330,
        replyTokens: 40,
        costUsd: null,
        startedAtMs: Date.now() - 5_000,
        durationMs: 1_500,
        failure: null,
        body: JSON.stringify({ messages: [{ role: "user", content: "Person: Why do rivers bend?" }] }),
      },
    ];
    const { conversation } = await opened();
    render(RequestsPanel, { conversation, treeId: 1, onclose: () => undefined });
    expect((await screen.findByTestId("requests-summary")).textContent).toBe("1 request · 320 tokens planned · no price set");
    expect(screen.getByTestId("request-facts").textContent).toMatch(/^320 planned, counted 330 \+ 40 reply · no price set · just now, 1\.5 s$/);
    await fireEvent.click(screen.getByTestId("request-open"));
    expect((await screen.findByTestId("request-body")).textContent).toBe("user: Person: Why do rivers bend?");
    // A provider's words are data: a failure that looks like markup is shown as text.
    fake.requests = [{ ...fake.requests[0]!, id: 6, failure: '<img src="x" onerror="window.__pwned = 1">refused' }];
    await conversation.summariesChanged(1);
    const failure = await screen.findByTestId("request-failure");
    expect(failure.textContent).toContain('<img src="x"');
    expect(screen.getByTestId("requests-panel").querySelector("img")).toBeNull();
    // A summary landing reads the list again.
    fake.requests = [];
    await conversation.summariesChanged(1);
    await waitFor(() => expect(screen.getByTestId("requests-summary").textContent).toMatch(/no request on its own/));
  });
});
