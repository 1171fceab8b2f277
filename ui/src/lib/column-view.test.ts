import { beforeEach, describe, expect, it } from "vitest";

import { ColumnView } from "./column-view.svelte";
import { Conversation } from "./conversation.svelte";
import { installFakeBackend, type FakeState } from "./fake-backend";
import { Workspace } from "./workspace.svelte";

let fake: FakeState;

beforeEach(() => {
  fake = installFakeBackend();
});

/// The root column of a new tree holding one question and its answer.
async function answered(): Promise<ColumnView> {
  const workspace = new Workspace();
  await workspace.createTree("Rivers", "dialogue");
  const conversation = new Conversation();
  await conversation.open(workspace.open?.tree.id ?? -1);
  conversation.profile = "Local";
  fake.replies = ["Erosion on the outer bank."];
  await conversation.sending.ask(0, "Why do rivers bend?");
  return new ColumnView(conversation, 0);
}

function messageAt(columnView: ColumnView, position: number) {
  const message = columnView.conversation.columns[0]?.view.messages[position];
  if (!message) throw new Error(`no message at ${position}`);
  return message;
}

const under = { bottom: 100, left: 40 } as DOMRect;

describe("ColumnView", () => {
  it("keeps images waiting in the composer with the tree they were put on", async () => {
    const columnView = await answered();
    const rivers = columnView.conversation.treeId ?? -1;
    columnView.pendingImages.list = [{ name: "heron.png", dataUrl: "data:image/png;base64,AA==" }];
    const workspace = new Workspace();
    await workspace.createTree("Deltas", "dialogue");
    await columnView.conversation.open(workspace.open?.tree.id ?? -1);
    expect(columnView.pendingImages.list).toEqual([]);
    await columnView.conversation.open(rivers);
    expect(columnView.pendingImages.list.map((image) => image.name)).toEqual(["heron.png"]);
  });

  it("offers a selection within one message for pinning, under it, and says why not otherwise", async () => {
    const columnView = await answered();
    const reply = messageAt(columnView, 1);

    columnView.select(reply, "outer bank", 0.5, under);
    expect(columnView.selection).toMatchObject({ start: 15, end: 25, top: 104, left: 40 });
    expect(columnView.selectionError).toBeNull();

    columnView.select(reply, "Why do rivers bend? Erosion", 0, under);
    expect(columnView.selection).toBeNull();
    expect(columnView.selectionError).toContain("select within one message");
  });

  it("sends an edit as a new branch and closes the form", async () => {
    const columnView = await answered();
    const question = messageAt(columnView, 0);
    columnView.startEdit(question);
    expect(columnView.mode).toEqual({ kind: "editing", nodeId: question.node.message.id, reply: false, draft: "Why do rivers bend?" });

    fake.replies = ["Meanders grow."];
    const editing = columnView.openOn(question.node.message.id);
    if (editing?.kind !== "editing") throw new Error("the edit form is not open");
    editing.draft = "Why do meanders grow?";
    await columnView.sendEdit();
    expect(columnView.mode.kind).toBe("reading");
    expect(columnView.busy).toBe(false);
    expect(messageAt(columnView, 0).node.message.text).toBe("Why do meanders grow?");
  });

  it("starts each Regenerate with… choice empty, and toggles one reply's receipt at a time", async () => {
    const columnView = await answered();
    columnView.toggleRegenerating(11);
    columnView.toggleRegenerateProfile("Local");
    columnView.toggleRegenerateProfile("Other");
    columnView.toggleRegenerateProfile("Local");
    expect(columnView.mode).toEqual({ kind: "regenerating", nodeId: 11, profiles: ["Other"], samples: 1 });
    columnView.toggleRegenerating(12);
    expect(columnView.mode).toEqual({ kind: "regenerating", nodeId: 12, profiles: [], samples: 1 });
    columnView.toggleRegenerating(12);
    expect(columnView.mode.kind).toBe("reading");

    columnView.toggleReceipt(11);
    columnView.toggleReceipt(12);
    expect(columnView.mode).toEqual({ kind: "receipt", nodeId: 12 });
    columnView.toggleReceipt(12);
    expect(columnView.mode.kind).toBe("reading");
  });

  it("has one thing open at a time: opening another closes the one open", async () => {
    const columnView = await answered();
    const reply = messageAt(columnView, 1);
    const id = reply.node.message.id;
    columnView.startEdit(reply);
    columnView.toggleReceipt(id);
    expect(columnView.isOpen("receipt", id)).toBe(true);
    expect(columnView.isOpen("editing", id)).toBe(false);
    columnView.toggleFusing(reply);
    expect(columnView.openOn(id)?.kind).toBe("fusing");
    expect(columnView.isOpen("receipt", id)).toBe(false);
    columnView.togglePinning(messageAt(columnView, 0).node.message.id);
    expect(columnView.openOn(id)).toBeNull();
    columnView.close();
    expect(columnView.mode.kind).toBe("reading");
  });

  it("says why the root thread has nowhere to bring a message back to", async () => {
    const columnView = await answered();
    await columnView.startPromotion(messageAt(columnView, 1).node.message.id, null);
    expect(columnView.mode).toEqual({
      kind: "promoting",
      pending: null,
      error: "The parent thread has no message to bring it back after.",
    });
  });

  it("clears the note being written once it is saved, and keeps it when it is refused", async () => {
    const columnView = await answered();
    await columnView.notes.toggle(messageAt(columnView, 1).node.message.id);
    columnView.noteDraft = "   ";
    await columnView.addNote();
    expect(columnView.noteDraft).toBe("   ");
    expect(columnView.notes.error).toContain("a note needs some text");

    columnView.noteDraft = "check the source";
    await columnView.addNote();
    expect(columnView.noteDraft).toBe("");
    expect(columnView.notes.list.map((note) => note.text)).toEqual(["check the source"]);
  });
});
