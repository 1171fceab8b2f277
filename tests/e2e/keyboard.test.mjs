// A deep dive with the keyboard alone, in the real window against a scripted model on
// 127.0.0.1: after the model and the tree are set up, a question is asked, a sentence of the
// answer pinned, the pin asked, its request inspected and the pin closed with a suggested result,
// every step by Tab, arrows, Enter and Ctrl+Enter, never a click.
import assert from "node:assert/strict";
import { describe } from "node:test";

import { Key } from "selenium-webdriver";

import { Harness, withProviderAndWindow } from "./harness.mjs";
import { ScriptedProvider } from "./provider.mjs";

describe("a deep dive without the mouse", () => {
  const harness = new Harness();
  const provider = new ScriptedProvider();
  withProviderAndWindow(harness, provider);

  const keys = (...pressed) => harness.driver.actions().sendKeys(...pressed).perform();
  const withKey = (modifier, key) => harness.driver.actions().keyDown(modifier).sendKeys(key).keyUp(modifier).perform();

  /// Presses Tab (Shift+Tab `backwards`) until the focused element is `selector`'s, as a person
  /// tabbing to it would; fails after `most` presses.
  async function tabTo(selector, { backwards = false, most = 150 } = {}) {
    for (let press = 0; press < most; press++) {
      if (await harness.driver.executeScript(`return document.activeElement?.matches(arguments[0]) ?? false;`, selector)) return;
      if (backwards) await withKey(Key.SHIFT, Key.TAB);
      else await keys(Key.TAB);
    }
    const at = await harness.driver.executeScript(`return document.activeElement?.outerHTML.slice(0, 120);`);
    throw new Error(`${most} presses of Tab did not reach ${selector} (focus is on ${at})`);
  }

  harness.windowTest("ask, pin a sentence, ask the pin, inspect it and close it, all by keyboard", async () => {
    await harness.newTree("By keyboard");
    await harness.addLocalModel(provider.base);

    provider.answers.push("Rivers meander because the outer bank erodes. Silt settles on the inner bank.");
    await tabTo('[data-testid="composer-input"]');
    await keys("Why do rivers meander?");
    await withKey(Key.CONTROL, Key.ENTER);
    await harness.textsUntil("message-text", (texts) => texts.at(-1)?.startsWith("Rivers meander because"), "the answer", 20_000);

    // Back from the composer to the answer's Pin…, then to its second sentence.
    await tabTo('[data-testid="root-column"] li.message.model [data-testid="pin-open"]', { backwards: true });
    await keys(Key.ENTER);
    await harness.textsWhen("pin-sentence", 2);
    await tabTo('[data-testid="pin-sentence"] input');
    await keys(Key.ARROW_DOWN);
    await tabTo('[data-testid="pin-sentence-submit"]');
    await keys(Key.ENTER);
    await harness.textsUntil("pin-anchor", (texts) => texts[0] === "Silt settles on the inner bank.", "the pin opens on the sentence", 20_000);

    provider.answers.push("It is deposited where the current slows.");
    await tabTo('[data-testid="pin-composer-input"]');
    await keys("Why does silt settle there?");
    await withKey(Key.CONTROL, Key.ENTER);
    await harness.textsUntil("message-text", (texts) => texts.at(-1) === "It is deposited where the current slows.", "the pin's answer", 20_000);
    const asked = provider.messages(provider.requests.length - 1).join("\n");
    assert.match(asked, /Silt settles on the inner bank\./, "the pin's request carries its anchor");

    await tabTo('[data-testid="pin-column"] li.message.model [data-testid="inspect"]', { backwards: true });
    await keys(Key.ENTER);
    const answer = await harness.driver.executeScript(
      `return Number(document.querySelector('[data-testid="pin-column"] li.message.model').dataset.nodeId);`,
    );
    await harness.driver.wait(
      async () => harness.driver.executeScript(`return document.querySelector('[data-testid="pin-column"] li.message.model.focused') !== null;`),
      10_000,
      "the inspector plans for the pin's answer",
    );
    await harness.find("budget-text");
    assert.ok(answer > 0);

    provider.answers.push("Silt settles where the current slows on the inner bank.");
    await tabTo('[data-testid="pin-suggest"]');
    await keys(Key.ENTER);
    await harness.textsUntil("pin-suggested", (texts) => texts.length === 1, "a result is suggested", 20_000);
    await tabTo('[data-testid="pin-close"]');
    await keys(Key.ENTER);
    await harness.textsUntil("pin-result", (texts) => texts[0] === "Result: Silt settles where the current slows on the inner bank.", "the pin is closed", 20_000);
  });
});
