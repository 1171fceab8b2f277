// The tree map as a picture on a tree of 100,000 messages made by `pinloom import`: a thread of
// 10,000 messages with 900 branches of 100 hanging off it, every tenth branch a pin with its
// anchor. The map opens on the newest message, the arrow keys walk the tree, a pin shows its
// anchor on hover, and a click opens the message with its chain of pins. Then the frame times of
// panning are measured in the real window and printed (figures, not asserts: the machine is
// shared) beside the same run's baseline, a bare canvas repainted every frame;
// tests/perf/README.md keeps them.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe } from "node:test";

import { Harness, cliBinary, takeReadmeScreenshots } from "./harness.mjs";

const SPINE = 10_000;
const BRANCHES = 900;
const BRANCH = 100;
const WORDS = "rivers carry silt past the bend where water slows and banks erode over centuries".split(" ");

const text = (key, i) =>
  `${key}: ${Array.from({ length: 24 }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(" ")}`;

/// The Open Loom v2 document of the tree, with Pinloom's own thread records for the pins. Each
/// branch is older than the thread's next message, so the import (which writes older children
/// first) writes the thread's last message last, and the tree opens on it.
function document() {
  const nodes = {};
  const edges = [];
  const threads = [];
  const start = Date.UTC(2026, 0, 1);
  const add = (id, key, i, parent, thread, second) => {
    nodes[id] = {
      id,
      content: [{ type: "text", text: text(key, i) }],
      author: { role: i % 2 ? "model" : "human" },
      createdAt: new Date(start + second * 1000).toISOString(),
    };
    if (thread) nodes[id].extensions = { pinloom: { thread } };
    if (parent) edges.push({ type: "continuation", sources: [{ nodeId: parent }], targetNodeId: id });
  };
  for (let i = 0; i < SPINE; i++) add(`m${i}`, `Message ${i}`, i, i > 0 ? `m${i - 1}` : null, null, i * 200);
  for (let b = 0; b < BRANCHES; b++) {
    const hang = Math.floor((b * SPINE) / BRANCHES);
    const pin = b % 10 === 0 ? `p${b}` : null;
    if (pin) {
      const anchorText = text(`Message ${hang}`, hang);
      const start = anchorText.indexOf(":") + 2;
      const passage = anchorText.slice(start, start + 30);
      threads.push({ id: pin, title: `Pin ${b}`, anchorNode: `m${hang}`, anchor: { start, end: start + passage.length, text: passage } });
    }
    let parent = `m${hang}`;
    for (let k = 0; k < BRANCH; k++) {
      const id = `b${b}_${k}`;
      add(id, `Branch ${b} message ${k}`, k, parent, pin, hang * 200 + 1 + k);
      parent = id;
    }
  }
  return {
    format: "open-loom",
    version: "2.0",
    trees: [
      {
        id: "big",
        title: "A hundred thousand",
        rootNodeIds: ["m0"],
        currentNodeId: `m${SPINE - 1}`,
        nodes,
        edges,
        extensions: { pinloom: { threads } },
      },
    ],
  };
}

/// What the live region says of the current message.
const current = (harness) =>
  harness.driver.executeScript("return document.querySelector('[data-testid=map-current]')?.textContent ?? ''");

/// Pans the picture by dragging it for `frames` animation frames and returns the intervals
/// between frames and the map's own drawing times; before that, the same number of frames of the
/// baseline: a bare canvas of the same size laid over the map and repainted whole every frame
/// (what any change on screen costs this window, whatever draws it). Runs in the page, so
/// WebDriver's round trips are not measured.
function panFrames() {
  const [frames, step, done] = arguments;
  const canvas = document.querySelector("[data-testid=map-canvas]");
  const box = canvas.getBoundingClientRect();
  const y = box.top + box.height / 2;
  let x = box.left + box.width / 2;
  const fire = (type) =>
    canvas.dispatchEvent(new PointerEvent(type, { bubbles: true, clientX: x, clientY: y, button: 0, pointerId: 1, isPrimary: true }));
  const bare = document.createElement("canvas");
  bare.width = canvas.width;
  bare.height = canvas.height;
  bare.style.cssText = "position:absolute;inset:0;pointer-events:none";
  canvas.parentElement.append(bare);
  const paint = bare.getContext("2d");
  const baseline = [];
  const panning = [];
  let last = null;
  const baselineFrame = (time) => {
    if (last !== null) baseline.push(time - last);
    last = time;
    paint.fillStyle = baseline.length % 2 ? "#f7f6f2" : "#efede6";
    paint.fillRect(0, 0, bare.width, bare.height);
    if (baseline.length < frames) return requestAnimationFrame(baselineFrame);
    bare.remove();
    last = null;
    performance.clearMeasures("pinloom-map-draw");
    fire("pointerdown");
    requestAnimationFrame(panFrame);
  };
  const panFrame = (time) => {
    if (last !== null) panning.push(time - last);
    last = time;
    x += step;
    fire("pointermove");
    if (panning.length < frames) return requestAnimationFrame(panFrame);
    fire("pointerup");
    done({ baseline, panning, draws: performance.getEntriesByName("pinloom-map-draw").map((entry) => entry.duration) });
  };
  requestAnimationFrame(baselineFrame);
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const p95 = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.95)];
const ms = (value) => `${value.toFixed(1)} ms`;

describe("the tree map on 100,000 messages", { timeout: 900_000 }, () => {
  const harness = new Harness();
  const figures = {};

  before(async () => {
    await harness.start();
    const file = join(harness.dataDir, "hundred-thousand.json");
    writeFileSync(file, JSON.stringify(document()));
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
    if (takeReadmeScreenshots) await harness.screenshot("tests/e2e/screenshots/tree-map.png");

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

  harness.windowTest("pans smoothly, at the newest message and with the whole tree on screen", async () => {
    if (!harness.driver) {
      await harness.launch();
      await harness.click("tree-item", undefined, 60_000);
    }
    await harness.click("open-map", undefined, 120_000);
    await harness.driver.wait(
      async () => (await (await harness.find("map-canvas", 60_000)).getAttribute("data-state")) === "ready",
      60_000,
      "the picture drawn",
    );
    // Two runs of 240 frames each: longer than WebDriver's default 30 s for a script on a slow frame.
    await harness.driver.manage().setTimeouts({ script: 180_000 });
    for (const [name, prepare] of [
      ["messages", async () => {}],
      ["whole tree", async () => harness.click("map-fit")],
    ]) {
      await prepare();
      const { baseline, panning, draws } = await harness.driver.executeAsyncScript(panFrames, 240, -6);
      assert.equal(panning.length, 240);
      assert.ok(draws.length > 0, "the picture was drawn while panning");
      figures[name] = {
        baselineFrame: ms(median(baseline)),
        baselineFps: Math.round(1000 / median(baseline)),
        panFrame: ms(median(panning)),
        panFps: Math.round(1000 / median(panning)),
        panFrameP95: ms(p95(panning)),
        drawMedian: ms(median(draws)),
        drawP95: ms(p95(draws)),
      };
    }
  });
});
