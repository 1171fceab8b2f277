// The tree map as a picture on a tree of 100,000 messages made by `pinloom import`: a thread of
// 10,000 messages with 900 branches of 100 hanging off it, every tenth branch a pin with its
// anchor. The map opens on the newest message, the arrow keys walk the tree, a pin shows its
// anchor on hover, and a click opens the message with its chain of pins. The import's and the
// opening's times are printed (figures, not asserts: the machine is shared); panning's frame times
// are measured on demand by tests/perf/map-panning.mjs, and tests/perf/README.md keeps both.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe } from "node:test";

import { Harness, cliBinary } from "./harness.mjs";
import { SPINE, hundredThousand, text } from "./hundred-thousand.mjs";

/// What the live region says of the current message.
const current = (harness) =>
  harness.driver.executeScript("return document.querySelector('[data-testid=map-current]')?.textContent ?? ''");

describe("the tree map on 100,000 messages", { timeout: 900_000 }, () => {
  const harness = new Harness();
  const figures = {};

  before(async () => {
    await harness.start();
    const file = join(harness.dataDir, "hundred-thousand.json");
    writeFileSync(file, JSON.stringify(hundredThousand()));
    const started = Date.now();
    execFileSync(cliBinary(), ["--db", join(harness.dataDir, "pinloom.sqlite3"), "import", file], { stdio: "ignore" });
    figures.importMs = Date.now() - started;
    await harness.launch();
  });

  after(async () => {
    await harness.stop();
    if (Object.keys(figures).length > 1) {
      mkdirSync("tests/e2e/artifacts", { recursive: true });
      writeFileSync("tests/e2e/artifacts/tree-map-figures.json", JSON.stringify(figures, null, 2));
      process.stdout.write(`tree map figures: ${JSON.stringify(figures)}\n`);
    }
  });

  harness.windowTest("opens on the newest message, walks by keys, shows a pin's anchor and opens its chain", async () => {
    await harness.click("tree-item", undefined, 60_000);
    await harness.textsUntil("message-text", (texts) => texts.at(-1)?.startsWith(`Message ${SPINE - 1}:`), "the newest message", 120_000);

    const clickedAt = await harness.driver.executeScript(
      "const at = performance.now(); document.querySelector('[data-testid=open-map]').click(); return at;",
    );
    await harness.driver.wait(
      async () => (await (await harness.find("map-canvas", 60_000)).getAttribute("data-state")) === "ready",
      60_000,
      "the picture drawn",
    );
    figures.openMs = await harness.driver.executeScript(
      "const [open] = performance.getEntriesByName('pinloom-map-open'); return open.startTime + open.duration - arguments[0];",
      clickedAt,
    );
    const size = await (await harness.find("map-size")).getText();
    assert.match(size, /100,000 messages · 901 runs · 90 pins/);

    // The newest message is current, 10,000 deep in the root thread.
    await harness.driver.wait(async () => /10000 deep: Message 9999:/.test(await current(harness)), 10_000, "the newest message is current");
    await harness.driver.actions().sendKeys("\uE012").perform(); // ArrowLeft: its parent
    await harness.driver.wait(async () => /9999 deep: Message 9998:/.test(await current(harness)), 10_000, "the parent is current");
    // Back along the thread to the message pin 890 hangs off (#9888), and down to the pin.
    await harness.driver.actions().sendKeys("\uE012".repeat(109)).perform();
    await harness.driver.wait(async () => /9890 deep: Message 9889:/.test(await current(harness)), 10_000, "the anchor's next message");
    await harness.driver.actions().sendKeys("\uE015").perform(); // ArrowDown: the next sibling
    await harness.driver.wait(
      async () => /in the pin “Pin 890”: Branch 890 message 0:/.test(await current(harness)),
      10_000,
      "the pin's first message is current",
    );

    // Centred on it, the pointer over it shows the pin's anchor.
    await harness.driver.actions().sendKeys("c").perform();
    const canvas = await harness.find("map-canvas");
    await harness.driver.actions().move({ origin: canvas }).perform();
    const anchor = await harness.find("map-hover-anchor", 10_000);
    assert.match(await anchor.getText(), /^[a-z ]+$/);
    assert.ok(text("Message 9888", 9888).includes(await anchor.getText()));
    await harness.screen("tree-map");

    // A click opens it: the root thread and the pin as columns, the message in focus.
    await harness.driver.actions().click().perform();
    await harness.driver.wait(async () => (await harness.findAll("tree-map")).length === 0, 20_000, "the map closes");
    await harness.driver.wait(
      async () =>
        /^Branch 890 message 0:/.test(
          await harness.driver.executeScript(
            "return document.querySelector('li.message.focused [data-testid=message-text]')?.textContent.trim() ?? ''",
          ),
        ),
      60_000,
      "the pin's message in focus",
    );
    assert.equal((await harness.findAll("root-column")).length, 1);
    assert.equal((await harness.findAll("pin-column")).length, 1);
    // The root column holds one page of its 10,000 messages, the one around the pin's anchor,
    // and shows the anchor's message in its view.
    await harness.driver.wait(
      async () =>
        harness.driver.executeScript(
          `const column = document.querySelector('[data-testid="root-column"]');
           const list = column?.querySelector('ol.messages');
           const messages = [...(column?.querySelectorAll('[data-testid="message"]') ?? [])];
           const anchor = messages.find((message) => message.textContent.includes('Message 9888:'));
           if (!list || !anchor || messages.length > 200) return false;
           const at = anchor.getBoundingClientRect();
           const view = list.getBoundingClientRect();
           return at.bottom > view.top && at.top < view.bottom;`,
        ),
      20_000,
      "the anchor's message in view in a page of the root thread",
    );
  });
});
