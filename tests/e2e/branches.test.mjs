// Branches seen and judged in the real window, against two scripted model servers on 127.0.0.1:
// one prompt sent to two models at once (one of them refusing the key, its error on its side
// only), one model stopped while the other answers, the two answers compared with what their
// requests did not share, and two siblings of a fork compared as whole branches from the
// switcher and from the tree map.
import assert from "node:assert/strict";
import { before, after, describe } from "node:test";

import { Harness, withProviderAndWindow } from "./harness.mjs";
import { ScriptedProvider } from "./provider.mjs";

// Long enough (about 600 tokens) that the small model's budget cannot carry it again.
const LONG_ANSWER =
  "Meanders grow because the current runs faster on the outside of a curve and erodes that bank, " +
  "while slower water on the inside drops its silt. ".repeat(25);

describe("branches in the real window", () => {
  const harness = new Harness();
  const large = new ScriptedProvider();
  const small = new ScriptedProvider();
  before(() => small.start());
  withProviderAndWindow(harness, large);
  after(() => small.stop());

  /// The `name` attribute of every `testId` element, read in one step in the page (so nothing
  /// is kept across a render), once `check` holds for them.
  async function attributesWhen(testId, name, check, what, timeoutMs = 20_000) {
    let seen = [];
    await harness.driver.wait(
      async () => {
        seen = await harness.driver.executeScript(
          `return [...document.querySelectorAll('[data-testid="${testId}"]')].map((element) => element.getAttribute(arguments[0]));`,
          name,
        );
        return check(seen);
      },
      timeoutMs,
      `${what} (last saw ${JSON.stringify(seen)})`,
    ).catch((error) => {
      throw new Error(`${what}: last saw ${JSON.stringify(seen)} (${error.message})`);
    });
    return seen;
  }

  /// Clicks the `testId` element whose text includes `text`.
  const clickText = (testId, text) =>
    harness.click(testId, async (elements) => {
      for (const element of elements) {
        if (String(await element.getProperty("textContent")).includes(text)) return element;
      }
      return undefined;
    });

  /// The ids of the messages on show in the root column, in order.
  const shownIds = () =>
    harness.driver.executeScript(
      `return [...document.querySelectorAll('[data-testid="root-column"] [data-testid="message"]')].map((message) => Number(message.dataset.nodeId));`,
    );

  const closeComparison = async () => {
    await harness.click("comparison-close");
    await harness.driver.wait(async () => (await harness.findAll("comparison")).length === 0, 10_000, "the comparison closes");
  };

  harness.windowTest("one prompt goes to two models at once, and the refusing one fails on its own side", async () => {
    await harness.newTree("Branch lab");
    await harness.addLocalModel(large.base);
    await harness.addLocalModel(small.base, { name: "Small model", window: 400, reserve: 100, truncation: "rollingWindow", keepLast: 1 });

    await harness.click("fan-out-toggle");
    await clickText("model-choice", "Local test model");
    await clickText("model-choice", "Small model");
    await harness.textsUntil("composer-ask", (texts) => texts[0] === "Send to 2 models", "the send goes to both");

    large.answers.push(LONG_ANSWER);
    small.answers.push({ status: 401, body: { error: { message: "Incorrect API key provided", type: "invalid_request_error" } } });
    await harness.type("composer-input", "Why do rivers meander?");
    await harness.click("composer-ask");

    await attributesWhen("lane", "data-state", (states) => states.join() === "answered,failed", "one answered, one failed");
    const models = await harness.textsWhen("lane-model", 2);
    assert.deepEqual(models, ["Local test model", "Small model"]);
    const [error] = await harness.textsWhen("lane-error", 1);
    assert.match(error, /Small model did not answer/);
    assert.match(error, /Incorrect API key provided/);
    // The answer is on show; the person's message was written once.
    const texts = await harness.textsUntil("message-text", (all) => all.length === 2, "the question and the answer");
    assert.equal(texts[0], "Why do rivers meander?");
    assert.ok(texts[1].startsWith("Meanders grow because"));
    for (const server of [large, small]) {
      assert.equal(server.requests.length, 1);
      assert.deepEqual(server.messages(0), ["user: Why do rivers meander?"]);
    }
    assert.equal((await harness.findAll("column-error")).length, 0, "the failure stays in its lane");
  });

  harness.windowTest("one model is stopped while the other answers within its own budget", async () => {
    large.answers.push({ partial: "Oxbow lakes form when" });
    small.answers.push("Cut-offs leave oxbow lakes behind.");
    await harness.type("composer-input", "What becomes of a bend that is cut off?");
    await harness.click("composer-ask");

    await attributesWhen("lane", "data-state", (states) => states.join() === "streaming,answered", "the small model answered first");
    await harness.textsUntil("lane-text", (texts) => texts[0]?.includes("Oxbow lakes form when"), "the large model's first words");
    await harness.screen("fan-out");
    await harness.click("lane-stop");
    await attributesWhen("lane", "data-state", (states) => states.join() === "stopped,answered", "the large model stopped alone");

    // Each model planned its own context: the small one's budget had no room for the long answer.
    assert.equal(large.messages(1).length, 3, "the large model got the whole history");
    const [smallRequest, ...more] = small.messages(1);
    assert.equal(more.length, 0, "one message: the question, the cut marked before it");
    assert.ok(smallRequest.endsWith("What becomes of a bend that is cut off?"), smallRequest);
    assert.ok(!smallRequest.includes("Meanders grow"), smallRequest);
    // The stopped reply is kept, marked incomplete, and on show; the small model's answer, written
    // first, is a switch away.
    await harness.find("incomplete-badge");
    await harness.textsUntil("alternative-position", (texts) => texts.includes("2/2"), "two answers side by side");
  });

  harness.windowTest("the two answers compare with what their requests did not share", async () => {
    await harness.click("fan-out-compare");
    await harness.find("comparison");
    assert.deepEqual(await harness.textsWhen("side-model", 2), ["Local test model", "Small model"]);
    await attributesWhen("side-context", "data-source", (sources) => sources.join() === "sent,sent", "both sides are the requests sent");
    const cells = await harness.textsWhen("compare-text", 2);
    assert.equal(cells[0], "Oxbow lakes form when");
    assert.equal(cells[1], "Cut-offs leave oxbow lakes behind.");
    assert.ok((await harness.findAll("diff-right")).length > 0, "the right side's own words are marked");
    const [leftOnly] = await harness.textsWhen("context-only-left", 1);
    assert.match(leftOnly, /message #\d+ — Meanders grow because/);
    assert.match(leftOnly, /message #\d+ — Why do rivers meander\?/);
    const [rightOnly] = await harness.textsWhen("context-only-right", 1);
    assert.equal(rightOnly, "nothing only on the right");
    const [shared] = await harness.textsWhen("context-shared", 1);
    assert.match(shared, /Both sent 1 slice alike; 2 only on the left, 0 only on the right/);

    // The keys move between the differences.
    await harness.driver.actions().sendKeys("n").perform();
    await harness.textsUntil("difference-position", (texts) => texts[0] === "difference 1 of 1", "the first difference is current");
    await attributesWhen("compare-cell", "class", (classes) => classes.some((value) => value?.includes("current")), "the row is marked");
    await harness.screen("comparison");
    await closeComparison();
  });

  harness.windowTest("two siblings of a fork compare as whole branches, from the switcher and from the map", async () => {
    // The small model's answer goes on with a question to the large model.
    await harness.click("lane-show");
    await harness.textsUntil("alternative-position", (texts) => texts.includes("1/2"), "the small model's answer on show");
    await harness.click("fan-out-dismiss");
    // Back to one model: both unticked, and the chooser closed.
    await harness.driver.executeScript(
      `for (const box of document.querySelectorAll('[data-testid="model-choice"] input')) if (box.checked) box.click();`,
    );
    await harness.textsUntil("composer-ask", (texts) => texts[0] === "Send", "an ordinary send again");
    await harness.click("fan-out-toggle");
    await harness.choose("model-picker", "Local test model");
    large.answers.push("They fill with silt over centuries.");
    await harness.type("composer-input", "And after that?");
    await harness.click("composer-ask");
    await harness.textsUntil("message-text", (texts) => texts.at(-1) === "They fill with silt over centuries.", "the branch goes on");
    const ids = await shownIds();
    assert.equal(ids.length, 6);

    await harness.click("compare-alternatives");
    await harness.find("comparison");
    const cells = await harness.textsWhen("compare-text", 4);
    assert.deepEqual(cells, [
      "Cut-offs leave oxbow lakes behind.",
      "Oxbow lakes form when",
      "And after that?",
      "They fill with silt over centuries.",
    ]);
    const gaps = await harness.textsWhen("compare-cell", 6);
    assert.equal(gaps.filter((text) => text === "nothing here on the right").length, 2, "the right branch has no more");
    const [shared] = await harness.textsWhen("context-shared", 1);
    assert.match(shared, /2 only on the left, 0 only on the right/, "the left's last request carried its own answer and question");
    await closeComparison();

    // From the map: pick the newest message, move to the other branch's answer, pick it.
    await harness.click("open-map");
    await harness.driver.wait(async () => (await (await harness.find("map-canvas")).getAttribute("data-state")) === "ready", 20_000, "the map is drawn");
    // Read in the page: WebDriver's visible text of an ellipsised line is empty.
    const current = () => harness.driver.executeScript("return document.querySelector('[data-testid=map-current]')?.textContent ?? ''");
    let said = "";
    await harness.driver
      .wait(async () => (said = await current()).includes(`message #${ids[5]}`), 10_000)
      .catch(() => assert.fail(`the newest message (#${ids[5]}) is not current: ${said}`));
    await harness.driver.actions().sendKeys("p").perform();
    await harness.textsUntil("map-compare", (texts) => texts[0] === "Pick for comparison", "the pick is made");
    // Left to the fork's answer, then to its sibling.
    await harness.driver.actions().sendKeys("\uE012\uE012").perform();
    await harness.driver.wait(async () => (await current()).includes(`message #${ids[3]}`), 10_000, "the small model's answer is current");
    // A sibling is below or above it (the key is handled as it is sent); its preview arrives
    // after the move.
    const settled = async () => {
      let said = "";
      await harness.driver.wait(async () => !(said = await current()).endsWith(": …"), 10_000, "the preview is read");
      return said;
    };
    await harness.driver.actions().sendKeys("\uE015").perform();
    if (!(await settled()).includes("Oxbow lakes form when")) await harness.driver.actions().sendKeys("\uE013\uE013").perform();
    await harness.driver.wait(async () => (await current()).includes("Oxbow lakes form when"), 10_000, "the stopped answer is current");
    await harness.driver.actions().sendKeys("p").perform();
    await harness.find("comparison");
    await harness.driver.wait(async () => (await harness.findAll("tree-map")).length === 0, 10_000, "the map closes for the comparison");
    assert.deepEqual(await harness.textsWhen("compare-text", 4), cells, "the same two branches, picked in the map");
    await closeComparison();
  });
});
