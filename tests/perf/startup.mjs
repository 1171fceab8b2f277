// Start-up and memory of the desktop app, measured (not a test: it prints figures, asserts none).
//
//   node tests/perf/startup.mjs [runs]          (5 by default)
//   PINLOOM_STARTUP_MESSAGES=100000 node tests/perf/startup.mjs 2   (a larger tree)
//
// Needs what the end-to-end tests need (Xvfb, tauri-driver; `./dev test` installs them) and a
// release build: `./dev package` (or `cargo build --release --bin pinloom-desktop` and
// `cargo build --release --bin pinloom`). PINLOOM_APP_BINARY and PINLOOM_CLI_BINARY choose other
// binaries. Each run starts a fresh app process under Xvfb on a data folder holding a linear tree
// of 10,000 messages (PINLOOM_STARTUP_MESSAGES for another size; imported with `pinloom import`)
// and reports:
//   - usable: from the app process's start (its /proc start time) to its window showing the
//     list of trees, the first thing a person can act on;
//   - tree shown: from the click on the tree to its newest message on screen;
//   - context shown: from the same click to the inspector's plan of that message on screen;
//   - memory: resident memory of the app process and every process under it (WebKit's web and
//     network processes), with the tree open and its plan shown, as RSS and as PSS (see memoryMb).
// The baselines, in the same runs: the same start on an empty data folder, and the floor: a bare
// window of the same Tauri and WebKitGTK on an empty page (`bare-window`, built with
// `cargo build --release --features perf-floor --bin bare-window`; PINLOOM_BARE_BINARY chooses
// another), whose start and memory Pinloom's are given as ratios to.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

import { Harness, repoRoot } from "../e2e/harness.mjs";

const runs = Number(process.argv[2] ?? 5);
const messages = Number(process.env.PINLOOM_STARTUP_MESSAGES ?? 10_000);
const targetDir = process.env.CARGO_TARGET_DIR ? resolve(repoRoot, process.env.CARGO_TARGET_DIR) : join(repoRoot, "target");
process.env.PINLOOM_APP_BINARY ??= join(targetDir, "release", "pinloom-desktop");
const cli = process.env.PINLOOM_CLI_BINARY ?? join(targetDir, "release", "pinloom");
const app = process.env.PINLOOM_APP_BINARY;
const bare = process.env.PINLOOM_BARE_BINARY ?? join(targetDir, "release", "bare-window");

const ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim());
const bootMs = Number(/btime (\d+)/.exec(readFileSync("/proc/stat", "utf8"))[1]) * 1000;

/// A linear dialogue of `count` messages as an Open Loom v2 document.
function dialogue(count) {
  const words = "rivers carry silt past the bend where water slows and banks erode over centuries".split(" ");
  const nodes = {};
  const edges = [];
  for (let i = 0; i < count; i++) {
    const text = `Message ${i}: ${Array.from({ length: 60 }, (_, k) => words[(i * 7 + k * 3) % words.length]).join(" ")}`;
    nodes[`m${i}`] = { id: `m${i}`, content: [{ type: "text", text }], author: { role: i % 2 ? "model" : "human" } };
    if (i > 0) edges.push({ type: "continuation", sources: [{ nodeId: `m${i - 1}` }], targetNodeId: `m${i}` });
  }
  return { format: "open-loom", version: "2.0", trees: [{ id: "big", title: "Ten thousand", rootNodeIds: ["m0"], currentNodeId: `m${count - 1}`, nodes, edges }] };
}

/// The app processes of this data folder: the app (`binary` names its program) and everything
/// under it.
function appProcesses(dataDir, binary = "pinloom-desktop") {
  const all = readdirSync("/proc").filter((entry) => /^\d+$/.test(entry));
  const parentOf = new Map();
  let app = null;
  for (const pid of all) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      parentOf.set(pid, stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      if (environ.includes(`PINLOOM_DATA_DIR=${dataDir}`) && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(binary)) app = pid;
    } catch {
      // gone meanwhile
    }
  }
  if (!app) throw new Error("the app process was not found");
  const family = new Set([app]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, parent] of parentOf) {
      if (family.has(parent) && !family.has(pid)) {
        family.add(pid);
        grew = true;
      }
    }
  }
  return { app, family: [...family] };
}

function startedAtMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return bootMs + (Number(fields[19]) / ticksPerSecond) * 1000;
}

/// Resident memory of `pids` in MB: RSS summed (each process counts every shared page it maps,
/// so libraries WebKit's processes share are counted once per process) and PSS summed (shared
/// pages split between the processes that map them: the app's real share of the machine).
function memoryMb(pids) {
  let rss = 0;
  let pss = 0;
  for (const pid of pids) {
    try {
      rss += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
      pss += Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? 0);
    } catch {
      // gone meanwhile
    }
  }
  return { rss: rss / 1024, pss: pss / 1024 };
}

/// The floor: the bare window's start until its empty page is loaded, and its memory then.
async function floor() {
  const harness = new Harness();
  await harness.start();
  process.env.PINLOOM_APP_BINARY = bare;
  try {
    await harness.launch();
    await harness.driver.wait(
      async () => (await harness.driver.executeScript("return document.readyState")) === "complete",
      60_000,
      "the bare window's empty page loaded",
    );
    const usableAt = Date.now();
    const processes = appProcesses(harness.dataDir, "bare-window");
    const usable = usableAt - startedAtMs(processes.app);
    const { rss: memory, pss } = memoryMb(appProcesses(harness.dataDir, "bare-window").family);
    return { usable, shown: null, context: null, memory, pss };
  } finally {
    process.env.PINLOOM_APP_BINARY = app;
    await harness.stop({ failed: false });
  }
}

async function once(withTree) {
  const harness = new Harness();
  await harness.start();
  try {
    if (withTree) {
      const file = join(harness.dataDir, "big.json");
      writeFileSync(file, JSON.stringify(dialogue(messages)));
      execFileSync(cli, ["--db", join(harness.dataDir, "pinloom.sqlite3"), "import", file], { stdio: "ignore" });
    }
    await harness.launch();
    await harness.find(withTree ? "tree-item" : "no-trees", 60_000);
    const usableAt = Date.now();
    const { app } = appProcesses(harness.dataDir);
    const usable = usableAt - startedAtMs(app);
    let shown = null;
    let context = null;
    if (withTree) {
      const clicked = Date.now();
      await harness.click("tree-item", undefined, 60_000);
      // Read in the page: asking WebDriver for 10,000 elements' texts would measure WebDriver.
      const newest = `Message ${messages - 1}:`;
      await harness.driver.wait(
        async () =>
          harness.driver.executeScript(
            `const all = document.querySelectorAll('[data-testid="message-text"]');
             return all.length > 0 && all[all.length - 1].textContent.trim().startsWith(arguments[0]);`,
            newest,
          ),
        300_000,
        "the newest message on screen",
      );
      shown = Date.now() - clicked;
      // Then the inspector's plan of the newest message: every slice of a context planned over
      // the whole thread (at 100,000 messages it once froze the window for most of a minute).
      await harness.driver.wait(
        async () => harness.driver.executeScript(`return document.querySelector('[data-testid="budget-text"]') !== null`),
        300_000,
        "the inspector's plan on screen",
      );
      context = Date.now() - clicked;
    }
    // Measured with the tree open (or the empty list shown), WebKit's processes included.
    const { rss: memory, pss } = memoryMb(appProcesses(harness.dataDir).family);
    return { usable, shown, context, memory, pss };
  } finally {
    await harness.stop({ failed: false });
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const bareRuns = [];
const empty = [];
const big = [];
for (let run = 0; run < runs; run++) {
  bareRuns.push(await floor());
  empty.push(await once(false));
  big.push(await once(true));
  process.stderr.write(
    `run ${run + 1}/${runs}: bare ${JSON.stringify(bareRuns.at(-1))}, empty ${JSON.stringify(empty.at(-1))}, tree ${JSON.stringify(big.at(-1))}\n`,
  );
}
const line = (name, rows) =>
  `${name}: usable ${median(rows.map((r) => r.usable)).toFixed(0)} ms, ` +
  (rows[0].shown === null
    ? ""
    : `tree shown ${median(rows.map((r) => r.shown)).toFixed(0)} ms, context shown ${median(rows.map((r) => r.context)).toFixed(0)} ms, `) +
  `memory ${median(rows.map((r) => r.memory)).toFixed(0)} MB RSS, ${median(rows.map((r) => r.pss)).toFixed(0)} MB PSS (medians of ${rows.length})`;
const ratio = (rows, key) => (median(rows.map((r) => r[key])) / median(bareRuns.map((r) => r[key]))).toFixed(2);
console.log(line("bare window (the floor)", bareRuns));
console.log(line("empty data folder", empty));
console.log(line(`${messages.toLocaleString("en")}-message tree`, big));
console.log(`to the floor, empty folder: usable ${ratio(empty, "usable")}×, PSS ${ratio(empty, "pss")}×`);
console.log(`to the floor, ${messages.toLocaleString("en")}-message tree open: usable ${ratio(big, "usable")}× (goal ≤ 1.2×), PSS ${ratio(big, "pss")}× (goal ≤ 1.5×)`);
