// A question over several branches in the real window, against a scripted model server on
// 127.0.0.1: two answers to one question (two branches) picked from their messages' menus, one
// question asked over them from the tray, and the request it sent carrying the two picked
// answers, labelled as the person's, and nothing else of their branches; the new thread lists
// what it was asked over, and each leads back.
import assert from "node:assert/strict";
import { describe } from "node:test";

import { Harness, withProviderAndWindow } from "./harness.mjs";
import { ScriptedProvider } from "./provider.mjs";

describe("a question over several branches in the real window", () => {
  const harness = new Harness();
  const provider = new ScriptedProvider();
  withProviderAndWindow(harness, provider);

  /// The texts of the root column's messages, read in one step in the page once `check` holds.
  const rootTexts = (check, what) =>
    harness.textsUntil("message-text", check, what, 20_000);

  harness.windowTest("two answers picked from two branches are asked over, and nothing else of theirs is sent", async () => {
    await harness.newTree("Two lines");
    await harness.addLocalModel(provider.base);

    provider.answers.push("Erosion of the outer bank shapes the bend.");
    await harness.type("composer-input", "Why do rivers meander?");
    await harness.click("composer-ask");
    await rootTexts((texts) => texts.length === 2 && texts[1].startsWith("Erosion"), "the first answer");
    // The first answer picked, then a second answer beside it picked too.
    await harness.click("pick-for-question", (all) => all[1]);
    await harness.textsUntil("question-pick", (texts) => texts.length === 1, "one message picked");
    provider.answers.push("Uplift of the land tilts the river.");
    await harness.click("regenerate");
    await harness.textsUntil("alternative-position", (texts) => texts.includes("2/2"), "the second answer", 20_000);
    await rootTexts((texts) => texts[1]?.startsWith("Uplift"), "the second answer on show");
    await harness.click("pick-for-question", (all) => all[1]);
    await harness.textsUntil("question-pick", (texts) => texts.length === 2, "two messages picked");

    provider.answers.push("Both: the bank erodes while the land rises.");
    const sending = provider.requests.length;
    await harness.type("question-over-picked-text", "What do the two answers share?");
    await harness.click("question-over-picked-ask");
    await rootTexts(
      (texts) => texts.join("\n") === "What do the two answers share?\nBoth: the bank erodes while the land rises.",
      "the new thread on show, its question and answer",
    );
    assert.equal(provider.requests.length, sending + 1, "one request: the question's");
    const sent = provider.messages(sending).join("\n");
    assert.match(sent, /Added by you, from the main thread, an answer by [^:\n]+:\nErosion of the outer bank shapes the bend\./);
    assert.match(sent, /Added by you, from the main thread, an answer by [^:\n]+:\nUplift of the land tilts the river\./);
    assert.ok(!sent.includes("Why do rivers meander?"), `their branches' question stays out: ${sent}`);
    assert.ok(sent.endsWith("user: What do the two answers share?"), sent);
    // The tray is done with; the thread lists what it was asked over.
    await harness.driver.wait(async () => (await harness.findAll("question-pick")).length === 0, 10_000, "the picks are cleared");
    const sources = await harness.textsUntil("picked-source", (texts) => texts.length === 2, "the thread's sources at its top");
    assert.match(sources[0], /the main thread, an answer by .* Erosion of the outer bank/);
    assert.match(sources[1], /Uplift of the land/);
    await harness.screen("question-over-picked");

    // Each leads back to where it came from.
    await harness.click("picked-source", (all) => all[0]);
    await rootTexts(
      (texts) => texts[0] === "Why do rivers meander?" && texts[1]?.startsWith("Erosion"),
      "the first picked answer, in its branch",
    );
  });
});
