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

  harness.windowTest("a continuation's tokens show their probabilities, and choosing another branches there", async () => {
    await harness.newTree("Tokens", "buffer");
    await harness.type("composer-input", "The river ran");
    await harness.choose("continue-count", "1");
    await harness.textsUntil("continue", (texts) => texts[0] === "Continue", "one way");
    provider.answers.push({
      tokens: [
        [" slowly", -0.3, { " slowly": -0.3, " quietly": -1.6 }],
        [" seaward", -0.9, { " down": -0.7, " seaward": -0.9 }],
        [".", -0.1, { ".": -0.1, "!": -2.4 }],
      ],
    });
    await harness.click("continue");
    await harness.driver.wait(async () => (await documentText()) === "The river ran slowly seaward.", 20_000, "the continuation");
    assert.equal(JSON.parse(provider.requests.at(-1).body).logprobs, 5, "the server was asked for the likeliest tokens");

    // The continuation chosen, its card and its token toggle show.
    await harness.click("message-text", (pieces) => pieces[1]);
    await harness.click("tokens-toggle", (all) => all.at(-1));
    await harness.driver.wait(async () => (await harness.findAll("token")).length === 3, 10_000, "the continuation as its tokens");
    const seaward = (await harness.findAll("token"))[1];
    assert.match(await seaward.getAttribute("title"), /^41% · also " down" 50%/);
    await harness.click("token", (all) => all[1]);
    await harness.textsUntil("token-alternative", (texts) => texts.some((text) => text.includes('" down"')), "the alternatives at its place");
    await harness.screen("loom-tokens");

    provider.answers.push(" to the delta.");
    const before = provider.requests.length;
    await harness.click("token-alternative", async (all) => {
      for (const option of all) if ((await option.getText()).includes('" down"')) return option;
      return all[0];
    });
    await harness.driver.wait(async () => (await documentText()) === "The river ran slowly down to the delta.", 20_000, "the branch, continued");
    assert.equal(provider.requests.length, before + 1);
    assert.equal(JSON.parse(provider.requests.at(-1).body).prompt, "The river ran slowly down", "continued from the chosen token");
    // The map draws the document's branches: the opening, the first continuation, and the
    // branch at the token with its continuation.
    await harness.click("open-map");
    await harness.textsUntil("map-size", (texts) => /^4 messages · [23] runs · 0 pins$/.test(texts[0] ?? ""), "the map of the branches");
    await harness.driver.actions().sendKeys(Key.ESCAPE).perform();
    await harness.driver.wait(async () => (await harness.findAll("tree-map")).length === 0, 5000, "the map closes");
  });

  harness.windowTest("a document is continued by two models at once, each continuation in place", async () => {
    await harness.addLocalModel(provider.base, { completionEndpoint: true, name: "Second local model" });
    await harness.newTree("Two models", "buffer");
    await harness.type("composer-input", "The delta spread");
    await harness.click("fan-out-toggle");
    for (const name of ["Local test model", "Second local model"]) {
      await harness.click("model-choice", async (all) => {
        for (const choice of all) if ((await choice.getText()).trim() === name) return choice;
        return undefined;
      });
    }
    await harness.textsUntil("continue", (texts) => texts[0] === "Continue 2 ways with 2 models", "two models, one way each");
    provider.answers.push(" into the sea.", " across the plain.");
    const before = provider.requests.length;
    await harness.click("continue");
    await harness.textsUntil("piece-position", (texts) => /^\d\/2$/.test(texts[0] ?? ""), "two continuations", 20_000);
    assert.equal(provider.requests.length, before + 2);
    assert.deepEqual((await harness.textsWhen("lane-model", 2)).sort(), ["Local test model", "Second local model"]);
    const text = await documentText();
    assert.ok(["The delta spread into the sea.", "The delta spread across the plain."].includes(text), text);
  });
});
