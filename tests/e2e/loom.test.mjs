// The loom in a buffer tree, in the real window against a scripted completion server on
// 127.0.0.1: a document continued three ways at once, the continuations switched in place with
// Alt+← and Alt+→, and the chosen piece regenerated and inspected from its card.
import assert from "node:assert/strict";
import { describe } from "node:test";

import { Key } from "selenium-webdriver";

import { Harness, withProviderAndWindow } from "./harness.mjs";
import { ScriptedProvider } from "./provider.mjs";

describe("the loom in a buffer tree", () => {
  const harness = new Harness();
  const provider = new ScriptedProvider();
  withProviderAndWindow(harness, provider);

  /// The document's text as it reads, and where the continuation's switcher stands.
  const documentText = () =>
    harness.driver.executeScript(
      `return [...document.querySelectorAll('[data-testid="document"] [data-testid="message-text"]')].map((piece) => piece.textContent).join("");`,
    );

  harness.windowTest("a document continued three ways shows one, the others a switch away", async () => {
    await harness.newTree("Loom", "buffer");
    await harness.addLocalModel(provider.base, { completionEndpoint: true });
    await harness.type("composer-input", "The river ran");
    await harness.choose("continue-count", "3");
    await harness.textsUntil("continue", (texts) => texts[0] === "Continue 3 ways", "three ways at once");
    provider.answers.push(" slowly to the sea.", " past the old mill.", " under the ice.");
    await harness.click("continue");

    const [position] = await harness.textsUntil("piece-position", (texts) => /^\d\/3$/.test(texts[0] ?? ""), "three continuations", 20_000);
    assert.equal(provider.requests.length, 3, "three requests");
    for (let request = 0; request < 3; request++) {
      assert.equal(JSON.parse(provider.requests[request].body).prompt, "The river ran", "each continues the same text");
    }
    const first = await documentText();
    assert.ok(first.startsWith("The river ran "), first);

    // Alt+→ on the continuation shows the next one in its place; Alt+← brings it back.
    await harness.driver.executeScript(`document.querySelector('[data-testid="document"] [data-place="1"]').focus();`);
    const shown = Number(position.split("/")[0]);
    const step = shown < 3 ? Key.ARROW_RIGHT : Key.ARROW_LEFT;
    await harness.driver.actions().keyDown(Key.ALT).sendKeys(step).keyUp(Key.ALT).perform();
    const expected = `${shown < 3 ? shown + 1 : shown - 1}/3`;
    await harness.textsUntil("piece-position", (texts) => texts[0] === expected, "the next continuation in place");
    const second = await documentText();
    assert.notEqual(second, first, "the document reads the other continuation");
    assert.ok(
      [" slowly to the sea.", " past the old mill.", " under the ice."].some((ending) => second === `The river ran${ending}`),
      second,
    );
    assert.equal(
      await harness.driver.executeScript(`return document.activeElement?.dataset.place;`),
      "1",
      "the focus stays on the continuation",
    );
  });

  harness.windowTest("the chosen piece is regenerated and inspected from its card", async () => {
    await harness.find("piece-card");
    provider.answers.push(" into the delta.");
    await harness.click("regenerate", (all) => all.at(-1));
    await harness.textsUntil("piece-position", (texts) => texts[0] === "4/4", "a fourth continuation", 20_000);
    assert.equal(await documentText(), "The river ran into the delta.");
    await harness.click("message-text", (pieces) => pieces[1]);
    await harness.click("inspect", (all) => all.at(-1));
    await harness.find("budget-text", 20_000);
  });
});
