import { beforeEach, describe, expect, it } from "vitest";

import { PIXEL_PNG, type FakeState } from "./fake-backend";
import { imageFilesIn, PendingImages } from "./pending-images.svelte";
import { installRiversBackend } from "./test-fixtures";

let fake: FakeState;

beforeEach(() => {
  fake = installRiversBackend();
});

/// A pasted file of type `type` holding "pixels".
function pasted(name: string, type = "image/png"): File {
  return new File(["pixels"], name, { type });
}

/// A clipboard as a paste event carries it: its file items, and its files.
function clipboard(items: File[], files: File[] = items) {
  return {
    items: items.map((file) => ({ kind: "file", type: file.type, getAsFile: () => file })),
    files,
  } as unknown as DataTransfer;
}

describe("imageFilesIn", () => {
  it("finds the images a paste holds, and nothing in a paste of text", () => {
    const heron = pasted("heron.png");
    const notes = pasted("notes.txt", "text/plain");
    expect(imageFilesIn(clipboard([heron, notes]))).toEqual([heron]);
    // Some engines list copied files only in `files`.
    expect(imageFilesIn(clipboard([], [notes, heron]))).toEqual([heron]);
    expect(imageFilesIn(clipboard([notes]))).toEqual([]);
    expect(imageFilesIn(null)).toEqual([]);
  });
});

describe("PendingImages", () => {
  it("reads pasted images as data URLs, naming those that have no name of their own by their kind", async () => {
    const images = new PendingImages();
    expect(await images.paste([pasted("heron.png"), pasted(""), pasted("", "image/jpeg")])).toBe(true);
    expect(images.list.map((image) => image.name)).toEqual(["heron.png", "pasted image 1.png", "pasted image 2.jpg"]);
    expect(images.list[0]?.dataUrl).toBe(`data:image/png;base64,${btoa("pixels")}`);
    expect(images.error).toBeNull();
  });

  it("reads the images chosen in the dialog, and says why one was refused", async () => {
    const images = new PendingImages();
    fake.dialogAnswer = ["/photos/heron.png", "/photos/notes.txt", "/photos/egret.webp"];
    expect(await images.choose()).toBe(false);
    expect(images.list).toEqual([
      { name: "heron.png", dataUrl: PIXEL_PNG },
      { name: "egret.webp", dataUrl: PIXEL_PNG },
    ]);
    expect(images.error?.message).toBe("notes.txt is not an image Pinloom sends (PNG, JPEG, GIF or WebP)");
    // Nothing chosen (the dialog was closed) adds nothing and clears the last failure.
    fake.dialogAnswer = [];
    expect(await images.choose()).toBe(true);
    expect(images.list).toHaveLength(2);
    expect(images.error).toBeNull();
  });

  it("says why the dialog could not be opened", async () => {
    const images = new PendingImages();
    fake.failure = { code: "internal", message: "no dialog in this session" };
    expect(await images.choose()).toBe(false);
    expect(images.error?.message).toBe("no dialog in this session");
    expect(images.list).toEqual([]);
  });

  it("takes an image off, and lets go of those sent while keeping any added since", async () => {
    const images = new PendingImages();
    await images.paste([pasted("heron.png"), pasted("egret.png")]);
    images.remove(images.list[0]!);
    expect(images.list.map((image) => image.name)).toEqual(["egret.png"]);

    const sending = images.list;
    await images.paste([pasted("ibis.png")]);
    images.sent(sending);
    expect(images.list.map((image) => image.name)).toEqual(["ibis.png"]);
  });
});
