// Images in the window: pasted or chosen in the composer, waiting there as thumbnails, sent with
// the message and shown under it; images and PDFs in the attachments bar.
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

import App from "./App.svelte";
import { PIXEL_PNG, type FakeState } from "./lib/fake-backend";
import { installRiversBackend, profile } from "./lib/test-fixtures";

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

/// What a paste of `files` carries, as the webview reports it.
function clipboardOf(files: File[]) {
  return { items: files.map((file) => ({ kind: "file", type: file.type, getAsFile: () => file })), files };
}

/// The names of the images waiting in the composer.
const waiting = () => screen.queryAllByTestId("pending-image").map((item) => item.querySelector("img")?.alt);

describe("images in the composer", () => {
  it("keeps pasted and chosen images until the message is sent with them, then shows them under it", async () => {
    render(App);
    const composer = (await screen.findByTestId("composer-input")) as HTMLTextAreaElement;
    const pasting = await fireEvent.paste(composer, {
      clipboardData: clipboardOf([new File(["pixels"], "heron.png", { type: "image/png" })]),
    });
    // Taken as an image, not pasted as text.
    expect(pasting).toBe(false);
    await waitFor(() => expect(waiting()).toEqual(["heron.png"]));

    fake.dialogAnswer = ["/photos/egret.webp", "/photos/notes.txt"];
    await fireEvent.click(screen.getByTestId("composer-image"));
    await waitFor(() => expect(waiting()).toEqual(["heron.png", "egret.webp"]));
    expect((await screen.findByTestId("composer-image-error")).textContent).toContain("notes.txt is not an image");

    await fireEvent.click(screen.getByLabelText("Remove heron.png"));
    expect(waiting()).toEqual(["egret.webp"]);

    fake.replies = ["An egret."];
    await fireEvent.input(composer, { target: { value: "What bird is this?" } });
    await fireEvent.click(screen.getByTestId("composer-ask"));
    await waitFor(() => expect(screen.getAllByTestId("message-image").map((image) => (image as HTMLImageElement).alt)).toEqual(["egret.webp"]));
    expect((screen.getByTestId("message-image") as HTMLImageElement).src).toBe(PIXEL_PNG);
    await waitFor(() => expect(waiting()).toEqual([]));
    // The image hangs off the message, and is listed with the tree's attachments too.
    expect(screen.getByTestId("attachment").querySelector("img")?.getAttribute("alt")).toBe("");
  });

  it("keeps the images when the model does not see them, and says so", async () => {
    fake.profiles = [profile("Local", { assembly: { seesImages: false } })];
    fake.dialogAnswer = ["/photos/heron.png"];
    render(App);
    const composer = (await screen.findByTestId("composer-input")) as HTMLTextAreaElement;
    await fireEvent.click(screen.getByTestId("composer-image"));
    await waitFor(() => expect(waiting()).toEqual(["heron.png"]));
    await fireEvent.input(composer, { target: { value: "What bird is this?" } });
    await fireEvent.click(screen.getByTestId("composer-ask"));
    await waitFor(() => expect(composer.value).toBe("What bird is this?"));
    expect(screen.getByText(/does not see images/)).toBeTruthy();
    expect(waiting()).toEqual(["heron.png"]);
  });

  it("lets a paste of text through untouched", async () => {
    render(App);
    const composer = await screen.findByTestId("composer-input");
    const pasting = await fireEvent.paste(composer, { clipboardData: { items: [], files: [] } });
    // Not prevented: the textarea takes the text itself.
    expect(pasting).toBe(true);
    expect(waiting()).toEqual([]);
  });
});

describe("the attachments bar", () => {
  it("shows an image as a thumbnail and a PDF with its pages", async () => {
    fake.chosen.add("/photos/heron.png");
    fake.chosen.add("/papers/meanders.pdf");
    render(App);
    await screen.findByTestId("composer-input");
    fake.dialogAnswer = ["/photos/heron.png", "/papers/meanders.pdf"];
    await fireEvent.click(screen.getByTestId("attach-choose"));
    await waitFor(() => expect(screen.getAllByTestId("attachment")).toHaveLength(2));
    const [image, pdf] = screen.getAllByTestId("attachment");
    expect(image!.querySelector("img")?.getAttribute("src")).toBe(PIXEL_PNG);
    expect(pdf!.querySelector('svg[data-icon="document"]')?.getAttribute("aria-label")).toBe("PDF");
    expect(pdf!.textContent).toContain("/papers/meanders.pdf");
    expect(screen.getByTestId("attachment-pages").textContent).toBe("· 3 pages");
  });
});
