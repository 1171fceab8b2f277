// Start-up and memory of the desktop app, measured (not a test: it prints figures, asserts none).
//
//   node tests/perf/startup.mjs [runs]          (5 by default)
//   PINLOOM_STARTUP_MESSAGES=100000 node tests/perf/startup.mjs 2   (a larger tree)
//   PINLOOM_STARTUP_MODEL="gpt-4o (OpenAI)" node tests/perf/startup.mjs  (the model chosen last
//     time; by default none, and the window chooses claude-haiku-4-5, whose counts are estimates)
//
// Needs what the end-to-end tests need (Xvfb, tauri-driver; `./dev test` installs them) and a
// release build: `./dev package` (or `cargo build --release --bin pinloom-desktop` and
// `cargo build --release --bin pinloom`). PINLOOM_APP_BINARY and PINLOOM_CLI_BINARY choose other
// binaries. Each run starts a fresh app process under Xvfb on a data folder holding a linear tree
// of 10,000 messages (PINLOOM_STARTUP_MESSAGES for another size; imported with `pinloom import`)
// and reports:
//   - usable: from the app process's start (its /proc start time) to its window showing the
//     list of trees, the first thing a person can act on, by the page's clock when a look from
//     this script found it there (the floor: its empty page loaded, found the same way);
//   - tree shown: from the click on the tree to its newest message on screen;
//   - context shown: from the same click to the inspector's plan of that message on screen;
//   - memory: resident memory of the app process and every process under it (WebKit's web and
//     network processes), with the tree open and its plan shown, as RSS and as PSS (see memoryMb),
//     each process's PSS, and the PSS again five seconds later (memoryAtRest);
//   - where the start's time went, by the page's own clock (phases).
// The baselines, in the same runs: the same start on an empty data folder, and the floor: a bare
// window of the same Tauri and WebKitGTK on an empty page (`bare-window`, built with
// `cargo build --release --features perf-floor --bin bare-window`; PINLOOM_BARE_BINARY chooses
// another), whose start and memory Pinloom's are given as ratios to.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

import { Harness, repoRoot } from "../e2e/harness.mjs";
import { linearDialogue } from "../e2e/linear-dialogue.mjs";

const runs = Number(process.argv[2] ?? 5);
const messages = Number(process.env.PINLOOM_STARTUP_MESSAGES ?? 10_000);
const targetDir = process.env.CARGO_TARGET_DIR ? resolve(repoRoot, process.env.CARGO_TARGET_DIR) : join(repoRoot, "target");
process.env.PINLOOM_APP_BINARY ??= join(targetDir, "release", "pinloom-desktop");
const cli = process.env.PINLOOM_CLI_BINARY ?? join(targetDir, "release", "pinloom");
const app = process.env.PINLOOM_APP_BINARY;
const bare = process.env.PINLOOM_BARE_BINARY ?? join(targetDir, "release", "bare-window");

const ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim());
const bootMs = Number(/btime (\d+)/.exec(readFileSync("/proc/stat", "utf8"))[1]) * 1000;

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

/// Where a start's time went, read from the page's own clock: `page` from the process's start to
/// the page's navigation (Tauri and WebKit starting, the web process spawned), `script` from then
/// until the page's scripts have run (DOMContentLoaded: the bundle read, parsed and run), and the
/// rest of `usable` is the page's start (its list of trees, given with the window or asked for)
/// and its drawing. `startBegun` and `listShown` are when, on the same clock, Pinloom's page began
/// its start and had the list of trees in the page (it marks both).
async function phases(driver, processStart) {
  const [origin, domReady, loaded, listShown, startBegun] = await driver.executeScript(
    `const nav = performance.getEntriesByType("navigation")[0];
     const [shown] = performance.getEntriesByName("pinloom-list-shown");
     const [begun] = performance.getEntriesByName("pinloom-start-begun");
     return [performance.timeOrigin, nav ? nav.domContentLoadedEventEnd : null, nav ? nav.loadEventEnd : null, shown ? shown.startTime : null, begun ? begun.startTime : null];`,
  );
  const round = (value) => (value === null ? null : Math.round(value));
  const page = Math.round(origin - processStart);
  // Usable by the page's own clock, without WebDriver's polling: Pinloom's list in the page. (The
  // bare window's about:blank has no navigation entry to read its load from.)
  const pageUsable = listShown !== null ? page + round(listShown) : loaded ? page + round(loaded) : null;
  return { page, script: round(domReady), startBegun: round(startBegun), listShown: round(listShown), pageUsable };
}

/// Asks the page, again and again, whether `condition` (an expression) holds, the same way for
/// the floor and for Pinloom, and returns when it first did: `pageAt` by the page's own clock as
/// it answered (what the usable times are), `seenAt` when the answer reached this script.
async function seenInPage(driver, condition, what) {
  let pageAt = null;
  await driver.wait(
    async () => {
      const [now, holds] = await driver.executeScript(`return [performance.timeOrigin + performance.now(), ${condition}];`);
      if (holds) pageAt = now;
      return holds;
    },
    60_000,
    what,
    // Looked again at once: selenium's default waits 200 ms between looks, which the floor's
    // page, loaded at the first look, never paid and Pinloom's, whose list comes a moment after
    // the page loads, paid nearly every run (measured 2026-11-27).
    10,
  );
  return { seenAt: Date.now(), pageAt };
}

/// The memory again after `REST_MS` with nothing asked of the window: what it holds once the
/// garbage of opening the tree (the thread's and the plan's messages as parsed) is collected, as
/// a window left open holds it. Read for the floor the same way.
const REST_MS = 5_000;
async function memoryAtRest(dataDir, binary) {
  await new Promise((resolve) => setTimeout(resolve, REST_MS));
  const { pss, byProcess } = memoryMb(appProcesses(dataDir, binary).family);
  return { pssAtRest: pss, byProcessAtRest: byProcess };
}

function startedAtMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return bootMs + (Number(fields[19]) / ticksPerSecond) * 1000;
}

/// Resident memory of `pids` in MB: RSS summed (each process counts every shared page it maps,
/// so libraries WebKit's processes share are counted once per process) and PSS summed (shared
/// pages split between the processes that map them: the app's real share of the machine).
/// `byProcess` is each program's PSS (the app's own, WebKit's web process, its network process),
/// to tell which of them a difference from the floor lives in.
function memoryMb(pids) {
  let rss = 0;
  let pss = 0;
  const byProcess = {};
  for (const pid of pids) {
    try {
      rss += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
      const own = Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? 0);
      pss += own;
      const name = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
      byProcess[name] = Math.round((byProcess[name] ?? 0) + own / 1024);
    } catch {
      // gone meanwhile
    }
  }
  return { rss: rss / 1024, pss: pss / 1024, byProcess };
}

/// The floor: the bare window's start until its empty page is loaded, and its memory then.
async function floor() {
  const harness = new Harness();
  await harness.start();
  process.env.PINLOOM_APP_BINARY = bare;
  try {
    await harness.launch();
    const { seenAt, pageAt } = await seenInPage(harness.driver, `document.readyState === "complete"`, "the bare window's empty page loaded");
    const processes = appProcesses(harness.dataDir, "bare-window");
    const usable = pageAt - startedAtMs(processes.app);
    const seen = seenAt - startedAtMs(processes.app);
    const phase = await phases(harness.driver, startedAtMs(processes.app));
    const { rss: memory, pss, byProcess } = memoryMb(appProcesses(harness.dataDir, "bare-window").family);
    const atRest = await memoryAtRest(harness.dataDir, "bare-window");
    return { usable, seen, ...phase, shown: null, context: null, memory, pss, byProcess, ...atRest };
  } finally {
    process.env.PINLOOM_APP_BINARY = app;
    await harness.stop({ failed: false });
  }
}

async function once(withTree) {
  const harness = new Harness();
  await harness.start();
  try {
    if (process.env.PINLOOM_STARTUP_MODEL) {
      // The model chosen last time, as the window remembers it: the inspector plans under it.
      writeFileSync(join(harness.dataDir, "settings.json"), JSON.stringify({ ui: { defaultModel: process.env.PINLOOM_STARTUP_MODEL } }));
    }
    if (withTree) {
      const file = join(harness.dataDir, "big.json");
      writeFileSync(file, JSON.stringify(linearDialogue({ count: messages })));
      execFileSync(cli, ["--db", join(harness.dataDir, "pinloom.sqlite3"), "import", file], { stdio: "ignore" });
    }
    await harness.launch();
    const listed = withTree ? "tree-item" : "no-trees";
    const { seenAt, pageAt } = await seenInPage(harness.driver, `document.querySelector('[data-testid="${listed}"]') !== null`, "the list of trees");
    const { app } = appProcesses(harness.dataDir);
    const usable = pageAt - startedAtMs(app);
    const seen = seenAt - startedAtMs(app);
    const phase = await phases(harness.driver, startedAtMs(app));
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
    const { rss: memory, pss, byProcess } = memoryMb(appProcesses(harness.dataDir).family);
    const atRest = await memoryAtRest(harness.dataDir, "pinloom-desktop");
    return { usable, seen, ...phase, shown, context, memory, pss, byProcess, ...atRest };
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
  `${name}: usable ${median(rows.map((r) => r.usable)).toFixed(0)} ms (seen by the script ${median(rows.map((r) => r.seen)).toFixed(0)} ms) ` +
  (rows[0].pageUsable === null ? "" : `(the list in the page at ${median(rows.map((r) => r.pageUsable))} ms) `) +
  `(page navigated at ${median(rows.map((r) => r.page))} ms` +
  (rows[0].script === null ? "" : `, its scripts run ${median(rows.map((r) => r.script))} ms later`) +
  (rows[0].listShown === null
    ? ""
    : `, its start begun ${median(rows.map((r) => r.startBegun))} ms and the list of trees in the page ${median(rows.map((r) => r.listShown))} ms after navigating`) +
  "), " +
  (rows[0].shown === null
    ? ""
    : `tree shown ${median(rows.map((r) => r.shown)).toFixed(0)} ms, context shown ${median(rows.map((r) => r.context)).toFixed(0)} ms, `) +
  `memory ${median(rows.map((r) => r.memory)).toFixed(0)} MB RSS, ${median(rows.map((r) => r.pss)).toFixed(0)} MB PSS, ` +
  `${median(rows.map((r) => r.pssAtRest)).toFixed(0)} MB PSS ${REST_MS / 1000} s later (medians of ${rows.length})`;
const ratio = (rows, key) => (median(rows.map((r) => r[key])) / median(bareRuns.map((r) => r[key]))).toFixed(2);
console.log(line("bare window (the floor)", bareRuns));
console.log(line("empty data folder", empty));
console.log(line(`${messages.toLocaleString("en")}-message tree`, big));
console.log(`to the floor, empty folder: usable ${ratio(empty, "usable")}×, PSS ${ratio(empty, "pss")}×`);
console.log(`to the floor, ${messages.toLocaleString("en")}-message tree open: usable ${ratio(big, "usable")}× (goal ≤ 1.2×), PSS ${ratio(big, "pss")}× (goal ≤ 1.5×), ${ratio(big, "pssAtRest")}× ${REST_MS / 1000} s later`);
const perProcess = (rows, key = "byProcess") => {
  const names = [...new Set(rows.flatMap((r) => Object.keys(r[key])))].sort();
  return names.map((name) => `${name} ${median(rows.map((r) => r[key][name] ?? 0))} MB`).join(", ");
};
console.log(`PSS by process (medians): floor: ${perProcess(bareRuns)}; empty folder: ${perProcess(empty)}; tree open: ${perProcess(big)}`);
console.log(
  `PSS by process ${REST_MS / 1000} s later (medians): floor: ${perProcess(bareRuns, "byProcessAtRest")}; ` +
    `empty folder: ${perProcess(empty, "byProcessAtRest")}; tree open: ${perProcess(big, "byProcessAtRest")}`,
);
