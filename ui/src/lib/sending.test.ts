import { beforeEach, describe, expect, it } from "vitest";

import { Conversation } from "./conversation.svelte";
import { installFakeBackend, PIXEL_PNG, type FakeState } from "./fake-backend";
import { profile } from "./test-fixtures";
import { Workspace } from "./workspace.svelte";

let fake: FakeState;

beforeEach(() => {
  fake = installFakeBackend();
});

/// A new tree open in a conversation with a model chosen.
async function opened(mode: "dialogue" | "buffer" = "dialogue"): Promise<Conversation> {
  const workspace = new Workspace();
  await workspace.createTree("Rivers", mode);
  const conversation = new Conversation();
  await conversation.open(workspace.open?.tree.id ?? -1);
  conversation.profile = "Local";
  return conversation;
}

/// The texts on show in column `index`, root first.
function shown(conversation: Conversation, index = 0) {
  return conversation.columns[index]?.view.messages.map(({ node: { message } }) => message.text) ?? [];
}

describe("Sending", () => {
  it("keeps the text of a reply that arrived but could not be saved", async () => {
    const conversation = await opened();
    fake.replyThenFailure = {
      pieces: ["Rivers bend ", "where the outer bank erodes."],
      error: { code: "internal", message: "could not save the reply: database is locked" },
    };

    expect(await conversation.sending.ask(0, "Why do rivers bend?")).toBe("unsaved");
    const column = conversation.columns[0];
    expect(column?.error?.message).toBe("could not save the reply: database is locked");
    expect(column?.unsaved).toBe("Rivers bend where the outer bank erodes.");
    expect(column?.streaming).toBeNull();

    // The next reply starts clean.
    fake.replyThenFailure = { pieces: [], error: { code: "providerUnavailable", message: "Local did not answer" } };
    await conversation.sending.ask(0, "Again?");
    expect(conversation.columns[0]?.unsaved).toBeNull();
  });

  it("adds a message after the reply on show, not after the message the tree opened at", async () => {
    const conversation = await opened();
    expect(await conversation.sending.add(0, "First")).toBe(true);
    fake.replies = ["A reply"];
    expect(await conversation.sending.ask(0, "A question")).toBe("answered");
    expect(await conversation.sending.add(0, "Added after the reply")).toBe(true);

    expect(shown(conversation)).toEqual(["First", "A question", "A reply", "Added after the reply"]);
    const [, , reply, added] = conversation.columns[0]?.view.messages ?? [];
    expect(added?.node.message.parentId).toBe(reply?.node.message.id);
  });

  it("continues a document from what was just typed, each time", async () => {
    const conversation = await opened("buffer");
    fake.replies = [" continued once.", " continued twice."];
    await conversation.sending.add(0, "Once upon a time");
    expect(await conversation.sending.continueDocument(0)).toBe(true);
    await conversation.sending.add(0, " Then");
    expect(await conversation.sending.continueDocument(0)).toBe(true);
    expect(shown(conversation)).toEqual(["Once upon a time", " continued once.", " Then", " continued twice."]);
    // A loom's length: the tree's until one is chosen.
    expect(fake.continueLengths).toEqual([null, null]);
  });

  it("refuses an empty message beside the composer and saves nothing", async () => {
    const conversation = await opened();
    expect(await conversation.sending.add(0, "   ")).toBe(false);
    expect(conversation.columns[0]?.composerError?.code).toBe("invalidInput");
    expect(shown(conversation)).toEqual([]);
  });

  it("says a failed send saved the person's message, and answers it again without a copy", async () => {
    const conversation = await opened();
    fake.providerDown = { code: "providerUnavailable", message: "Local is not running" };
    expect(await conversation.sending.ask(0, "Why do rivers bend?")).toBe("unanswered");
    expect(shown(conversation)).toEqual(["Why do rivers bend?"]);
    expect(conversation.columns[0]?.error?.code).toBe("providerUnavailable");

    fake.replies = ["Because the outer bank erodes."];
    const question = conversation.columns[0]?.view.messages[0]?.node.message.id ?? -1;
    expect(await conversation.sending.regenerate(0, question)).toBe(true);
    expect(shown(conversation)).toEqual(["Why do rivers bend?", "Because the outer bank erodes."]);
    expect(conversation.columns[0]?.error).toBeNull();
  });

  it("sends an edit as a new branch beside the original", async () => {
    const conversation = await opened();
    fake.replies = ["Erosion.", "Deposition."];
    await conversation.sending.ask(0, "What shapes the outer bank?");
    const original = conversation.columns[0]?.view.messages[0]?.node.message.id ?? -1;
    expect(await conversation.sending.edit(0, original, "What shapes the inner bank?")).toBe(true);

    expect(shown(conversation)).toEqual(["What shapes the inner bank?", "Deposition."]);
    const edited = conversation.columns[0]?.view.messages[0];
    expect(edited?.alternatives).toEqual([original, edited?.node.message.id]);

    await conversation.switchTo(0, original);
    expect(shown(conversation)).toEqual(["What shapes the outer bank?", "Erosion."]);
  });

  it("sends one prompt to several models, each failure on its own side, and shows the first answer", async () => {
    const conversation = await opened();
    fake.replies = ["Erosion on the outside.", "Silt on the inside."];
    fake.fanOutFailures.set("Refusing", { code: "providerKey", message: "Refusing refused the key" });
    for (const name of ["Local", "Refusing", "Third"]) conversation.sending.toggleFanOutProfile(name);

    expect(await conversation.sending.askMany(0, "Why do rivers bend?")).toBe("answered");
    expect(shown(conversation)).toEqual(["Why do rivers bend?", "Erosion on the outside."]);
    const lanes = conversation.columns[0]?.fanOut?.lanes ?? [];
    expect(lanes.map((lane) => [lane.profile, lane.done, lane.error?.code ?? null])).toEqual([
      ["Local", true, null],
      ["Refusing", true, "providerKey"],
      ["Third", true, null],
    ]);
    expect(lanes[0]?.text).toBe("Erosion on the outside.");
    const [answer] = conversation.columns[0]?.view.messages.slice(-1) ?? [];
    expect(answer?.alternatives).toEqual([lanes[0]?.replyId, lanes[2]?.replyId]);
    expect(conversation.columns[0]?.requestId).toBeNull();

    // An ordinary send afterwards clears the fan-out's summary.
    fake.replies = ["Oxbows."];
    await conversation.sending.ask(0, "And then?");
    expect(conversation.columns[0]?.fanOut).toBeNull();
  });

  it("answers a message again with several models as siblings of its reply", async () => {
    const conversation = await opened();
    fake.replies = ["Erosion.", "Erosion again.", "Sediment."];
    await conversation.sending.ask(0, "Why?");
    const reply = conversation.columns[0]?.view.messages[1]?.node.message.id ?? -1;
    expect(await conversation.sending.regenerateWith(0, reply, ["Local", "Other"])).toBe(true);
    expect(conversation.columns[0]?.view.messages[1]?.alternatives.length).toBe(3);
  });

  it("asks for at most eight answers at once, models times samples, and a second click takes a model back", () => {
    const conversation = new Conversation();
    conversation.profile = "A";
    expect(conversation.sending.fanOutLanes).toEqual(["A"]);
    conversation.sending.setSamplesEach(3);
    expect(conversation.sending.fanOutLanes).toEqual(["A", "A", "A"]);
    conversation.sending.toggleFanOutProfile("B");
    conversation.sending.toggleFanOutProfile("C");
    expect(conversation.sending.fanOutLanes).toEqual(["B", "B", "B", "C", "C", "C"]);
    conversation.sending.toggleFanOutProfile("D");
    // A third model would make nine answers.
    expect(conversation.sending.fanOutProfiles).toEqual(["B", "C"]);
    conversation.sending.setSamplesEach(8);
    expect(conversation.sending.samplesEach).toBe(4);
    conversation.sending.setSamplesEach(1);
    for (const name of ["D", "E", "F", "G", "H", "I", "J"]) conversation.sending.toggleFanOutProfile(name);
    expect(conversation.sending.fanOutProfiles).toEqual(["B", "C", "D", "E", "F", "G", "H", "I"]);
    conversation.sending.toggleFanOutProfile("C");
    expect(conversation.sending.fanOutProfiles).toEqual(["B", "D", "E", "F", "G", "H", "I"]);
  });

  it("asks one model for several answers as siblings, then fuses two of them into a new sibling", async () => {
    const conversation = await opened();
    fake.replies = ["Erosion.", "Uplift.", "Sediment.", "Erosion [1] and sediment [2]."];
    conversation.sending.setSamplesEach(3);
    expect(await conversation.sending.askMany(0, "Why?")).toBe("answered");
    const answer = conversation.columns[0]?.view.messages[1];
    expect(answer?.alternatives.length).toBe(3);
    const [first, , third] = answer?.alternatives ?? [];
    expect(await conversation.sending.fuse(0, [first!, third!])).toBe(true);
    const fused = conversation.columns[0]?.view.messages[1];
    expect(fused?.node.message.text).toBe("Erosion [1] and sediment [2].");
    expect(fused?.node.fusedFrom).toEqual([first, third]);
    expect(fused?.alternatives.length).toBe(4);
  });

  it("continues a document three ways at once, each continuation an alternative of the others", async () => {
    const conversation = await opened("buffer");
    fake.replies = [" slowly.", " past the mill.", " under the ice."];
    expect(await conversation.sending.add(0, "The river ran")).toBe(true);
    conversation.sending.continuationLength = 64;
    expect(await conversation.sending.continueDocument(0, 3)).toBe(true);
    const continuation = conversation.columns[0]?.view.messages[1];
    expect(continuation?.alternatives.length).toBe(3);
    expect(fake.continueLengths).toEqual([64]);
    expect(shown(conversation)[0]).toBe("The river ran");
    expect(fake.replies).toEqual([]);
  });

  it("continues a document with two models at once, two ways each, never more than eight in all", async () => {
    const conversation = await opened("buffer");
    fake.replies = [" slowly.", " past the mill.", " under the ice.", " to the sea."];
    expect(await conversation.sending.add(0, "The river ran")).toBe(true);
    for (const name of ["Local", "Second"]) conversation.sending.toggleFanOutProfile(name);
    expect(conversation.sending.continuationLanes(2)).toEqual(["Local", "Local", "Second", "Second"]);
    expect(conversation.sending.continuationLanes(8)).toEqual([...Array(4).fill("Local"), ...Array(4).fill("Second")]);
    expect(await conversation.sending.continueDocument(0, 2)).toBe(true);
    const lanes = conversation.columns[0]?.fanOut?.lanes.map((lane) => lane.profile);
    expect(lanes).toEqual(["Local", "Local", "Second", "Second"]);
    expect(conversation.columns[0]?.view.messages[1]?.alternatives.length).toBe(4);
    // One model chosen is no choice of several: the model picker's continues.
    conversation.sending.toggleFanOutProfile("Second");
    expect(conversation.sending.continuationLanes(1)).toEqual(["Local"]);
  });

  it("saves a rewritten reply beside the model's, marked as edited, without sending", async () => {
    const conversation = await opened();
    fake.replies = ["Rivers meander by gravity."];
    await conversation.sending.ask(0, "Why?");
    const reply = conversation.columns[0]?.view.messages[1]?.node.message.id ?? -1;
    expect(await conversation.sending.editReply(0, reply, "Rivers meander as the outer bank erodes.")).toBe(true);
    const edited = conversation.columns[0]?.view.messages[1];
    expect(shown(conversation)).toEqual(["Why?", "Rivers meander as the outer bank erodes."]);
    expect(edited?.node.editedFrom).toBe(reply);
    expect(edited?.alternatives).toContain(reply);
    expect(fake.replies).toEqual([]);
    expect(await conversation.sending.editReply(0, reply, "  ")).toBe(false);
    expect(conversation.columns[0]?.error?.code).toBe("invalidInput");
  });
});

describe("images sent with a message", () => {
  const heron = { name: "heron.png", dataUrl: PIXEL_PNG };
  const egret = { name: "egret.png", dataUrl: PIXEL_PNG };

  it("go with the new message, and its card finds them among the tree's attachments", async () => {
    const conversation = await opened();
    fake.replies = ["A heron and an egret."];
    expect(await conversation.sending.ask(0, "What birds are these?", [heron, egret])).toBe("answered");
    const question = conversation.columns[0]?.view.messages[0]?.node.message.id ?? -1;
    expect(conversation.attachments.imagesByNode.get(question)?.map((image) => [image.name, image.dataUrl])).toEqual([
      ["heron.png", PIXEL_PNG],
      ["egret.png", PIXEL_PNG],
    ]);
    // The reply has none of its own.
    const reply = conversation.columns[0]?.view.messages[1]?.node.message.id ?? -1;
    expect(conversation.attachments.imagesByNode.get(reply)).toBeUndefined();
  });

  it("are refused, with nothing written, when the model does not see images", async () => {
    const conversation = await opened();
    fake.profiles = [profile("Blind", { assembly: { seesImages: false } })];
    conversation.profile = "Blind";
    expect(await conversation.sending.ask(0, "What bird is this?", [heron])).toBe("unsaved");
    expect(conversation.columns[0]?.error?.message).toBe("Blind (m) does not see images: choose a model that does");
    expect(shown(conversation)).toEqual([]);
    expect(conversation.attachments.list).toEqual([]);
  });

  it("go with a prompt sent to several models at once", async () => {
    const conversation = await opened();
    fake.replies = ["A heron.", "A grey heron."];
    for (const name of ["Local", "Other"]) conversation.sending.toggleFanOutProfile(name);
    expect(await conversation.sending.askMany(0, "What bird is this?", [heron])).toBe("answered");
    const question = conversation.columns[0]?.view.messages[0]?.node.message.id ?? -1;
    expect(conversation.attachments.imagesByNode.get(question)?.map((image) => image.name)).toEqual(["heron.png"]);

    fake.profiles = [profile("Other", { assembly: { seesImages: false } })];
    expect(await conversation.sending.askMany(0, "And this one?", [egret])).toBe("unsaved");
    expect(conversation.columns[0]?.error?.message).toContain("Other (m) does not see images");
  });
});
