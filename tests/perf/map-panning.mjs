// The tree map's panning, measured on demand (not a test: it prints figures, asserts only that the
// measurement ran). Moved out of the end-to-end suite, where 480 frames at 100–180 ms each on a
// busy software-rendered machine could outlast WebDriver's script timeout.
//
//   node tests/perf/map-panning.mjs
//
// Needs what the end-to-end tests need (Xvfb, tauri-driver; `./dev test` installs them) and the
// debug build they use (`cargo build -p pinloom-desktop -p pinloom-cli --bins`, after
// `npm run build -w ui`); PINLOOM_APP_BINARY chooses another. It imports the 100,000-message tree
// of tests/e2e/hundred-thousand.mjs with `pinloom import`, opens its map in the real window under
// Xvfb, and pans it for 240 animation frames at the zoom the map opens at and with the whole tree
// on screen, beside the same run's baseline (a bare canvas repainted every frame). The figures go
// to standard output and to tests/e2e/artifacts/map-panning-figures.json; tests/perf/README.md
// keeps them.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { Harness, cliBinary } from "../e2e/harness.mjs";
import { hundredThousand } from "../e2e/hundred-thousand.mjs";

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

const harness = new Harness();
const figures = {};
try {
  await harness.start();
  const file = join(harness.dataDir, "hundred-thousand.json");
  writeFileSync(file, JSON.stringify(hundredThousand()));
  execFileSync(cliBinary(), ["--db", join(harness.dataDir, "pinloom.sqlite3"), "import", file], { stdio: "ignore" });
  await harness.launch();
  await harness.click("tree-item", undefined, 60_000);
  await harness.click("open-map", undefined, 120_000);
  await harness.driver.wait(
    async () => (await (await harness.find("map-canvas", 60_000)).getAttribute("data-state")) === "ready",
    60_000,
    "the picture drawn",
  );
  // Two runs of 240 frames each: longer than WebDriver's default 30 s for a script on a slow frame.
  await harness.driver.manage().setTimeouts({ script: 600_000 });
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
} finally {
  await harness.stop();
}
mkdirSync("tests/e2e/artifacts", { recursive: true });
writeFileSync("tests/e2e/artifacts/map-panning-figures.json", JSON.stringify(figures, null, 2));
process.stdout.write(`map panning figures: ${JSON.stringify(figures, null, 2)}\n`);
