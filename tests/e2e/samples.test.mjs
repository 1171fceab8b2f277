// Samples, a fused answer and a reply edited by the person, in the real window against a
// scripted model server on 127.0.0.1: one model asked for three answers at once (three siblings,
// each with its receipt), the three fused into a fourth whose request carries them and nothing
// else, two of them fused again from the switcher, and a reply rewritten by hand, which the next
// request carries as the model's turn.
import assert from "node:assert/strict";
import { describe } from "node:test";

import { Harness, withProviderAndWindow } from "./harness.mjs";
import { ScriptedProvider } from "./provider.mjs";

describe("samples, fusion and edited replies in the real window", () => {
  const harness = new Harness();
  const provider = new ScriptedProvider();
  withProviderAndWindow(harness, provider);

  const lastUser = (index) => provider.messages(index).filter((line) => line.startsWith("user: ")).at(-1) ?? "";

  harness.windowTest("one model writes three answers at once, each a sibling with its receipt", async () => {
    await harness.newTree("Samples");
    await harness.addLocalModel(provider.base);
    await harness.click("fan-out-toggle");
    await harness.choose("samples-each", "3");
    await harness.textsUntil("composer-ask", (texts) => texts[0] === "Ask for 3 answers", "the send asks for three");

    provider.answers.push("Erosion of the outer bank.", "Uplift of the land.", "Sediment on the inner bank.");
    await harness.type("composer-input", "Why do rivers meander?");
    await harness.click("composer-ask");

    await harness.driver.wait(
      async () =>
        (await harness.driver.executeScript(
          `return [...document.querySelectorAll('[data-testid="lane"]')].map((lane) => lane.dataset.state).join();`,
        )) === "answered,answered,answered",
      20_000,
      "three answers",
    );
    assert.deepEqual(await harness.textsWhen("lane-model", 3), ["Local test model", "Local test model", "Local test model"]);
    // The first answer written is on show; which one that is depends on the race.
    await harness.textsUntil("alternative-position", (texts) => /^\d\/3$/.test(texts[0] ?? ""), "three answers side by side");
    assert.equal(provider.requests.length, 3, "three requests");
    for (let index = 0; index < 3; index++) assert.deepEqual(provider.messages(index), ["user: Why do rivers meander?"]);
    await harness.click("receipt-toggle");
    await harness.find("receipt-verdict");
    await harness.click("receipt-toggle");
    // The chooser folds away (it keeps three answers a send), leaving the thread its room.
    await harness.click("fan-out-toggle");
    await harness.textsUntil("composer-ask", (texts) => texts[0] === "Ask for 3 answers", "still three answers a send");
  });

  harness.windowTest("the answers fuse into a fourth, attributed to each, from only what was chosen", async () => {
    provider.answers.push("The outer bank erodes [1] while the inner bank fills [3].");
    await harness.click("fan-out-fuse");
    await harness.textsUntil(
      "message-text",
      (texts) => texts.at(-1) === "The outer bank erodes [1] while the inner bank fills [3].",
      "the fused answer is on show",
    );
    await harness.textsUntil("fused-badge", (texts) => texts[0] === "fused from answers 1, 2, 3", "it names its sources");
    await harness.screen("fused-answer");
    await harness.textsUntil("alternative-position", (texts) => texts.includes("4/4"), "a fourth sibling");
    const fused = lastUser(3);
    assert.ok(fused.startsWith("user: Why do rivers meander?\n\nAnswer [1], by Local test model:\n"), fused);
    for (const answer of ["Erosion of the outer bank.", "Uplift of the land.", "Sediment on the inner bank."]) {
      assert.ok(fused.includes(answer), `${answer} is in the fused request: ${fused}`);
    }
    assert.match(fused, /Above are 3 answers to my question\. Write one answer from them/);
    assert.equal(provider.messages(3).length, 1, "nothing else of other branches");
  });

  harness.windowTest("two answers chosen at the switcher fuse into another sibling", async () => {
    await harness.click("fuse-toggle");
    assert.equal((await harness.textsWhen("fuse-choice", 4)).length, 4);
    // Only the first and the third: the second and the fused answer are unticked.
    await harness.driver.executeScript(
      `const boxes = [...document.querySelectorAll('[data-testid="fuse-choice"] input')];
       boxes[1].click(); boxes[3].click();`,
    );
    await harness.textsUntil("fuse-send", (texts) => texts[0] === "Fuse 2 answers", "two are chosen");
    provider.answers.push("Erosion outside [1], deposits inside [2].");
    await harness.click("fuse-send");
    await harness.textsUntil("message-text", (texts) => texts.at(-1) === "Erosion outside [1], deposits inside [2].", "the new fusion is on show");
    await harness.textsUntil("fused-badge", (texts) => texts[0] === "fused from answers 1, 3", "from the two chosen");
    // The samples in the switcher's order, as the first fusion numbered them (which sample got
    // which scripted answer depends on the race of the three requests).
    const samples = [1, 2, 3].map((number) => new RegExp(`Answer \\[${number}\\], by Local test model:\\n([^\\n]+)`).exec(lastUser(3))?.[1]);
    assert.ok(samples.every(Boolean), `three numbered answers: ${lastUser(3)}`);
    const fused = lastUser(4);
    assert.ok(fused.includes(samples[0]) && fused.includes(samples[2]), `the first and the third: ${fused}`);
    assert.ok(!fused.includes(samples[1]) && !fused.includes("[1] while the inner bank"), `only the chosen: ${fused}`);
  });

  harness.windowTest("a reply edited by the person is a sibling marked as theirs, and the next request carries it", async () => {
    const before = provider.requests.length;
    // Back to one answer per send, the chooser folded again.
    await harness.click("fan-out-toggle");
    await harness.choose("samples-each", "1");
    await harness.click("fan-out-toggle");
    await harness.textsUntil("composer-ask", (texts) => texts[0] === "Send", "an ordinary send again");
    await harness.click("edit-reply");
    await harness.type("edit-input", "Rivers meander because the outer bank erodes.");
    await harness.textsUntil("edit-send", (texts) => texts[0] === "Save edit", "a rewrite is saved, not sent");
    await harness.click("edit-send");
    await harness.textsUntil("message-text", (texts) => texts.at(-1) === "Rivers meander because the outer bank erodes.", "the edit is on show");
    await harness.textsUntil("edited-badge", (texts) => texts[0] === "edited by you", "marked as the person's");
    await harness.textsUntil("alternative-position", (texts) => texts.includes("6/6"), "beside the other answers");
    assert.equal(provider.requests.length, before, "nothing was sent");

    provider.answers.push("Yes, the inner bank grows.");
    await harness.type("composer-input", "Does the inner bank grow?");
    await harness.click("composer-ask");
    await harness.textsUntil("message-text", (texts) => texts.at(-1) === "Yes, the inner bank grows.", "the next answer");
    assert.deepEqual(provider.messages(before), [
      "user: Why do rivers meander?",
      "assistant: Rivers meander because the outer bank erodes.",
      "user: Does the inner bank grow?",
    ]);
  });
});
