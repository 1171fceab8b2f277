import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { Attachments } from "./attachments.svelte";
import { backend } from "./backend";
import { Conversation } from "./conversation.svelte";
import { PIXEL_PNG, type FakeState } from "./fake-backend";
import { installRiversBackend } from "./test-fixtures";

let fake: FakeState;

beforeEach(() => {
  fake = installRiversBackend();
});

afterEach(() => {
  vi.restoreAllMocks();
});

/// Tree 1 open, with a model chosen so the inspector plans.
async function opened(): Promise<Conversation> {
  const conversation = new Conversation();
  conversation.profile = "Local";
  await conversation.open(1);
  return conversation;
}

describe("Attachments", () => {
  it("attaches what was chosen in the dialog, where the person said, and plans again", async () => {
    const conversation = await opened();
    const attachments = new Attachments(conversation);
    fake.dialogAnswer = ["/notes/meanders.md", "/notes/figures"];
    const inspected = fake.calls.filter((call) => call === "context_preview").length;
    expect(await attachments.choose(false, () => ({ on: "node", id: 11 }))).toBe(true);
    expect(attachments.list.map((one) => [one.name, one.role])).toEqual([
      ["/notes/meanders.md", "file"],
      ["/notes/figures", "folder"],
    ]);
    expect(fake.attachments.get(1)?.map((one) => one.to)).toEqual([
      { on: "node", id: 11 },
      { on: "node", id: 11 },
    ]);
    expect(fake.calls.filter((call) => call === "context_preview").length).toBeGreaterThan(inspected);
    expect(await attachments.remove(attachments.list[0]!.id)).toBe(true);
    expect(attachments.list.map((one) => one.name)).toEqual(["/notes/figures"]);
  });

  it("attaches the files it may and says why one was refused", async () => {
    const attachments = new Attachments(await opened());
    fake.chosen.add("/notes/meanders.md");
    expect(await attachments.attach(["/etc/passwd", "/notes/meanders.md"], { on: "tree" })).toBe(false);
    expect(attachments.error?.message).toBe("/etc/passwd was not chosen in this window");
    expect(attachments.list.map((one) => one.name)).toEqual(["/notes/meanders.md"]);
    // The next attach starts without the last one's failure.
    expect(await attachments.attach([], { on: "tree" })).toBe(true);
    expect(attachments.error).toBeNull();
  });

  it("attaches a file's text as an instruction or a context, and refuses a folder or an image as one", async () => {
    const attachments = new Attachments(await opened());
    fake.chosen.add("/notes/style.md");
    fake.chosen.add("/notes/background.md");
    const attachPath = vi.spyOn(backend, "attachPath");
    expect(await attachments.attach(["/notes/style.md"], { on: "tree" }, "instruction")).toBe(true);
    expect(attachPath).toHaveBeenCalledWith(1, { on: "tree" }, "/notes/style.md", "instruction");
    expect(await attachments.attach(["/notes/background.md"], { on: "tree" }, "context")).toBe(true);
    expect(attachments.error).toBeNull();
    expect(attachments.list.map((one) => [one.name, one.role])).toEqual([
      ["/notes/style.md", "instruction"],
      ["/notes/background.md", "context"],
    ]);

    fake.chosen.add("/notes/figures");
    fake.chosen.add("/photos/heron.png");
    expect(await attachments.attach(["/notes/figures"], { on: "tree" }, "instruction")).toBe(false);
    expect(attachments.error?.code).toBe("invalidInput");
    expect(attachments.error?.message).toBe(
      "/notes/figures is a folder, attached only as its listing: choose files to attach as an instruction or a context",
    );
    expect(await attachments.attach(["/photos/heron.png"], { on: "tree" }, "context")).toBe(false);
    expect(attachments.error?.message).toBe("/photos/heron.png is an image: an instruction or a context is text; attach it as a file");
    expect(attachments.list).toHaveLength(2);
  });

  it("says why an attachment was not removed, and still lists it", async () => {
    const attachments = new Attachments(await opened());
    fake.chosen.add("/notes/meanders.md");
    await attachments.attach(["/notes/meanders.md"], { on: "tree" });
    expect(await attachments.remove(999)).toBe(false);
    expect(attachments.error?.code).toBe("notFound");
    expect(attachments.list).toHaveLength(1);
  });

  it("lists images and PDFs as such, and finds the images attached to each message", async () => {
    const conversation = await opened();
    const attachments = conversation.attachments;
    fake.dialogAnswer = ["/photos/heron.png", "/papers/meanders.pdf"];
    expect(await attachments.choose(false, () => ({ on: "node", id: 10 }))).toBe(true);
    expect(attachments.list.map(({ role, nodeId, image, pages }) => ({ role, nodeId, image, pages }))).toEqual([
      { role: "image", nodeId: 10, image: PIXEL_PNG, pages: null },
      { role: "pdf", nodeId: 10, image: null, pages: 3 },
    ]);
    expect([...attachments.imagesByNode.entries()]).toEqual([
      [10, [{ id: attachments.list[0]!.id, name: "/photos/heron.png", dataUrl: PIXEL_PNG }]],
    ]);
    expect(await attachments.remove(attachments.list[0]!.id)).toBe(true);
    expect(attachments.imagesByNode.size).toBe(0);
  });

  it("drops a list read for a tree that is no longer open", async () => {
    const conversation = await opened();
    fake.chosen.add("/notes/meanders.md");
    await conversation.attachments.attach(["/notes/meanders.md"], { on: "tree" });
    const reading = conversation.attachments.refresh();
    conversation.treeId = 2;
    expect(await reading).toBe(false);
    expect(conversation.attachments.list).toHaveLength(1);
  });

  it("searches the tree and puts a hit in every plan's search slice, or takes it out", async () => {
    const conversation = await opened();
    const attachments = new Attachments(conversation);
    expect(await attachments.search("   ")).toBe(false);
    expect(attachments.results).toBeNull();
    expect(await attachments.search("outer bank")).toBe(true);
    expect(attachments.results?.map((hit) => hit.nodeId)).toEqual([11]);
    expect(await attachments.toggleHit(11)).toBe(true);
    expect(conversation.treeSettings.searchHits).toEqual([11]);
    expect(await attachments.toggleHit(11)).toBe(true);
    expect(conversation.treeSettings.searchHits).toEqual([]);
  });

  it("says why a search or a hit failed", async () => {
    const attachments = new Attachments(await opened());
    await attachments.search("bend");
    expect(await attachments.toggleHit(404)).toBe(false);
    expect(attachments.error?.code).toBe("notFound");
    fake.failure = { code: "internal", message: "the index is being rebuilt" };
    expect(await attachments.search("bend")).toBe(false);
    expect(attachments.error?.message).toBe("the index is being rebuilt");
    expect(attachments.results?.map((hit) => hit.nodeId)).toEqual([10]);
  });
});
