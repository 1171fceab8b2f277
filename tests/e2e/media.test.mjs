// Images and PDFs in the real window, against a scripted OpenAI-compatible server on 127.0.0.1:
// an image chosen in the composer's dialog goes with the message to a model that sees, as an
// image part counted by the provider's rule and shown on the message; a model that does not see
// refuses it with what to do, keeping the image and writing nothing; a PDF attached to the tree
// reaches the inspector page by page, its pages marked in the request.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe } from "node:test";

import { Harness, withProviderAndWindow } from "./harness.mjs";
import { gradientPng, textPdf } from "./media-files.mjs";
import { ScriptedProvider } from "./provider.mjs";

describe("images and PDFs in the real window", () => {
  const harness = new Harness();
  const provider = new ScriptedProvider();
  withProviderAndWindow(harness, provider);

  harness.windowTest("an image goes with its message to a model that sees; one that does not refuses it", async () => {
    await harness.newTree("Images");
    // The blind model first, then the seeing one, which is then the chosen model.
    await harness.addLocalModel(provider.base, { name: "Text-only model" });
    await harness.addLocalModel(provider.base, { name: "Seeing model", model: "qwen2.5-vl-7b" });
    const photo = join(harness.dataDir, "heron.png");
    writeFileSync(photo, gradientPng(96, 64));

    await harness.click("composer-image");
    await harness.answerFileDialog("Attach files", photo);
    await harness.driver.wait(async () => (await harness.findAll("pending-image")).length === 1, 10_000, "the image waits in the composer");

    provider.answers.push("A gradient from blue to green.");
    await harness.type("composer-input", "What colours are in this picture?");
    await harness.click("composer-ask");
    await harness.textsUntil("message-text", (texts) => texts.at(-1) === "A gradient from blue to green.", "the answer", 20_000);
    const sent = JSON.parse(provider.requests.at(-1).body);
    const content = sent.messages.at(-1).content;
    assert.equal(content[0].type, "image_url");
    assert.match(content[0].image_url.url, /^data:image\/png;base64,iVBORw0KGgo/);
    assert.equal(content[1].text, "What colours are in this picture?");
    // Shown on the message it went with; the composer is empty again.
    await harness.driver.wait(async () => (await harness.findAll("message-image")).length === 1, 10_000, "the image on its message");
    assert.equal((await harness.findAll("pending-image")).length, 0, "nothing waits any more");
    await harness.click("inspect");
    await harness.textsUntil("slice", (texts) => texts.some((text) => text.startsWith("image")), "the image is a slice of the plan");
    await harness.screen("image-sent");

    // A model that does not see: refused before anything is written, the image still waiting.
    await harness.choose("model-picker", "Text-only model");
    await harness.click("composer-image");
    await harness.answerFileDialog("Attach files", photo);
    await harness.driver.wait(async () => (await harness.findAll("pending-image")).length === 1, 10_000, "the image waits again");
    const messages = (await harness.textsWhen("message-text", 2)).length;
    const requests = provider.requests.length;
    await harness.type("composer-input", "And now?");
    await harness.click("composer-ask");
    const [refusal] = await harness.textsUntil("column-error", (texts) => texts.length === 1, "the refusal");
    assert.match(refusal, /Text-only model \(local-model\) does not see images: choose a model that does/);
    assert.equal((await harness.findAll("pending-image")).length, 1, "the image is kept to send elsewhere");
    assert.equal((await harness.textsWhen("message-text", messages)).length, messages, "no message was written");
    assert.equal(provider.requests.length, requests, "nothing was sent");
  });

  harness.windowTest("an image dropped or pasted on the composer waits for the message; a text file dropped there is attached", async () => {
    await harness.newTree("Dropped");
    const photo = join(harness.dataDir, "delta.png");
    writeFileSync(photo, gradientPng(48, 48));
    const notes = join(harness.dataDir, "delta notes.txt");
    writeFileSync(notes, "The delta grows seaward.\n");
    // A real X drag from a second program onto the composer's text box.
    await harness.dragFiles([photo, notes], { x: 570, y: 670 });
    await harness.driver.wait(async () => (await harness.findAll("pending-image")).length === 1, 10_000, "the image waits in the composer");
    const [attached] = await harness.textsUntil("attachment", (texts) => texts.length === 1, "the text file attached to the tree");
    assert.match(attached, /delta notes\.txt/);
    assert.equal(await (await harness.find("pending-image")).findElement({ css: "img" }).then((img) => img.getAttribute("alt")), "delta.png");

    // A screenshot pasted into the composer (a clipboard holding an image file, as the system's
    // screenshot tools leave it) waits beside it, named by its kind.
    const pasted = gradientPng(32, 32).toString("base64");
    await harness.driver.executeScript(
      `const [field, base64] = arguments;
       const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
       const clipboard = new DataTransfer();
       clipboard.items.add(new File([bytes], "", { type: "image/png" }));
       field.dispatchEvent(new ClipboardEvent("paste", { clipboardData: clipboard, bubbles: true, cancelable: true }));`,
      await harness.find("composer-input"),
      pasted,
    );
    await harness.driver.wait(async () => (await harness.findAll("pending-image")).length === 2, 10_000, "the pasted image waits too");
    const names = await harness.driver.executeScript(
      `return [...document.querySelectorAll('[data-testid="pending-image"] img')].map((img) => img.alt);`,
    );
    assert.deepEqual(names, ["delta.png", "pasted image 1.png"]);
  });

  harness.windowTest("a PDF attached to the tree reaches the inspector and the request page by page", async () => {
    await harness.newTree("Paper");
    await harness.addLocalModel(provider.base, { name: "Reader", window: 16_384 });
    provider.answers.push("Rivers meander, cut off oxbows and build deltas.");
    await harness.type("composer-input", "Summarise the paper.");
    await harness.click("composer-ask");
    await harness.textsUntil("message-text", (texts) => texts.length === 2, "the first answer", 20_000);

    const paper = join(harness.dataDir, "rivers paper.pdf");
    writeFileSync(paper, textPdf(["Meanders migrate downstream.", "Oxbow lakes form.", "Deltas grow seaward."]));
    await harness.click("attach-choose");
    await harness.answerFileDialog("Attach files", paper);
    const [listed] = await harness.textsUntil("attachment", (texts) => texts.length === 1, "the PDF is attached");
    assert.match(listed, /rivers paper\.pdf · 3 pages/);

    await harness.click("inspect");
    await harness.click("show-request");
    const [body] = await harness.textsUntil("request-body", (texts) => texts[0]?.includes("page 3 of 3"), "the request carries every page");
    for (const [page, text] of [[1, "Meanders migrate downstream."], [2, "Oxbow lakes form."], [3, "Deltas grow seaward."]]) {
      assert.ok(body.includes(`rivers paper.pdf, page ${page} of 3 ---`), `page ${page}'s marker`);
      assert.ok(body.includes(text), `page ${page}'s text`);
    }
  });
});
