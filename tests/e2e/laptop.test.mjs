// The window at laptop size with replies as long as real servers send (several screens of
// Markdown, code blocks, a wide table, a long unbroken string): a pin open at 1200×780 gives its
// own conversation at least half of its column, no message's row of actions lies over its text,
// the tree's header keeps to one row at 1024×700, 1200×780 and 1920×1080 with the tree list
// open, and axe-core finds nothing serious on any of those screens (every scrolling region can be
// reached by keyboard). The pin's long reply is read and pinned again inside the pin.
import assert from "node:assert/strict";
import { describe } from "node:test";

import { Harness, takeReadmeScreenshots, withProviderAndWindow } from "./harness.mjs";
import { ScriptedProvider } from "./provider.mjs";

/// A reply as a real model writes one: `sections` headed parts of paragraphs, a list, code, a
/// wide table and an address that does not break.
function longReply(topic, sections) {
  const parts = [];
  for (let section = 1; section <= sections; section++) {
    parts.push(
      `## ${topic}, part ${section}`,
      `The current runs fastest along the outer bank, where it cuts the bed deeper; the inner bank gains silt where the water slows. ` +
        `Over years the bend migrates downstream and outward, and a neck of land between two bends narrows until a flood cuts through it. ` +
        `What is left is an oxbow lake, cut off from the channel, which fills with sediment and vegetation over the following decades.`,
      `- erosion on the cut bank, ${section * 12} cm a season\n- deposition on the point bar\n- a thalweg that swings from bank to bank`,
      "```python\n" +
        `def migration(bend, years=${section * 10}):\n    return [bend.radius * (1 + 0.02 * year) for year in range(years)]  # a line long enough to scroll sideways in a narrow column\n` +
        "```",
      "| reach | sinuosity | width (m) | depth (m) | discharge (m³/s) | sediment (t/day) | measured |\n|---|---|---|---|---|---|---|\n" +
        `| upper | 1.${section}4 | 42 | 3.1 | 180 | 2,400 | sonar transects, spring |\n| lower | 2.${section}1 | 95 | 5.6 | 610 | 9,800 | drone survey, autumn |`,
      `Survey data: https://example.org/${"meander-survey-segment-".repeat(6)}${section}.csv`,
    );
  }
  return parts.join("\n\n");
}

const SIZES = [
  [1024, 700],
  [1200, 780],
  [1920, 1080],
];

/// The layout's figures as they are now, read in the page: the pin column's share of its height
/// given to its messages, the messages whose actions lie over their text, and the header's rows.
function measured() {
  const pin = [...document.querySelectorAll('[data-testid="pin-column"]')].pop();
  let pinShare = null;
  if (pin) {
    const messages = pin.querySelector(".messages");
    const column = pin.getBoundingClientRect();
    pinShare = messages ? messages.getBoundingClientRect().height / column.height : 0;
  }
  const overlapping = [];
  for (const message of document.querySelectorAll('[data-testid="message"]')) {
    const text = message.querySelector('[data-testid="message-text"]')?.getBoundingClientRect();
    // Measured whether on show or not: a row shown on hover shows where it lies at rest.
    const actions = message.querySelector(".message-toolbar");
    if (!text || !actions) continue;
    const row = actions.getBoundingClientRect();
    if (row.width === 0 || row.height === 0) continue;
    const across = Math.min(row.right, text.right) - Math.max(row.left, text.left);
    const down = Math.min(row.bottom, text.bottom) - Math.max(row.top, text.top);
    if (across > 1 && down > 1) overlapping.push(`${message.dataset.nodeId ?? "a message"}: ${Math.round(across)}×${Math.round(down)} px`);
  }
  const header = document.querySelector(".thread-header");
  const rows = new Set();
  for (const child of header ? header.children : []) {
    const box = child.getBoundingClientRect();
    if (box.width > 0 && box.height > 0) rows.add(Math.round(box.top + box.height / 2));
  }
  // Centres within a few pixels of each other are one row.
  const centres = [...rows].sort((a, b) => a - b);
  const headerRows = centres.filter((centre, i) => i === 0 || centre - centres[i - 1] > 8).length;
  return { pinShare, overlapping, headerRows, width: window.innerWidth, height: window.innerHeight };
}

/// Scrolls the last list of `reply` (its last part) into view, as a person scrolls to the passage
/// they pin, and selects `passage` there.
async function selectInLastPart(harness, reply, passage) {
  await harness.driver.executeScript("[...arguments[0].querySelectorAll('ul')].pop().scrollIntoView({ block: 'center' })", reply);
  await harness.select(reply, passage);
}

describe("the window at laptop size with long replies", () => {
  const harness = new Harness();
  const provider = new ScriptedProvider();

  withProviderAndWindow(harness, provider);

  harness.windowTest("a pin at 1200×780 gives its conversation the room, and its reply is pinned again", async () => {
    await harness.resize(1200, 780);
    await harness.newTree("Meanders");
    await harness.addLocalModel(provider.base);
    provider.answers.push(longReply("How a bend moves", 4));
    await harness.type("composer-input", "Why do rivers meander?");
    await harness.click("composer-ask");
    await harness.textsWhen("message-text", 2, 30_000);
    const [, reply] = await harness.findAll("message-text");
    // Opening the pin writes the root thread's summary in the background: a long one.
    provider.answers.push(longReply("What the thread said", 2));
    await selectInLastPart(harness, reply, "48 cm a season");
    await harness.click("pin-button");
    await harness.find("pin-anchor");
    provider.answers.push(longReply("Where silt settles", 3));
    await harness.type("pin-composer-input", "Why does silt settle there?");
    await harness.click("pin-composer-ask");
    await harness.textsWhen("message-text", 4, 30_000);

    const figures = [];
    for (const [width, height] of SIZES) {
      await harness.resize(width, height);
      let now = null;
      // Waits for a layout that holds (the window settles after a resize).
      await harness.driver
        .wait(async () => {
          now = await harness.driver.executeScript(`return (${measured.toString()})()`);
          return now.headerRows === 1 && now.overlapping.length === 0 && now.pinShare >= 0.5;
        }, 5_000)
        .catch(() => {});
      figures.push(now);
      process.stdout.write(
        `# at ${width}×${height}: the pin's messages take ${Math.round(now.pinShare * 100)} % of its column; ` +
          `the header has ${now.headerRows} row(s); ${now.overlapping.length} message(s) with actions over their text\n`,
      );
      await harness.screen(`laptop-${width}x${height}`);
    }
    for (const now of figures) {
      assert.equal(now.headerRows, 1, `one row of header at ${now.width}×${now.height}`);
      assert.deepEqual(now.overlapping, [], `no actions over text at ${now.width}×${now.height}`);
      assert.ok(now.pinShare >= 0.5, `the pin's messages take ${Math.round(now.pinShare * 100)} % of its column at ${now.width}×${now.height}`);
    }

    // The pin's reply, read and pinned again inside the pin.
    await harness.resize(1200, 780);
    const [, , , pinReply] = await harness.findAll("message-text");
    provider.answers.push(longReply("What the pin said", 1));
    await selectInLastPart(harness, pinReply, "36 cm a season");
    await harness.click("pin-button");
    await harness.driver.wait(async () => (await harness.findAll("pin-column")).length === 2, 10_000, "the pin in the pin opens");
    const anchors = await harness.findAll("pin-anchor");
    const passage = await harness.driver.executeScript("return arguments[0].textContent", anchors[anchors.length - 1]);
    assert.match(passage, /36 cm a season/);
    if (takeReadmeScreenshots) await harness.screenshot("tests/e2e/screenshots/laptop-pin-in-pin.png");
  });
});
