// Starts what an end-to-end test needs and ends it afterwards: a virtual display (Xvfb), the
// WebDriver bridge (tauri-driver, which starts WebKitWebDriver), and sessions of the real built
// app. Every process started here is ended by `stop()`, also when a test fails.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { after, before, test } from "node:test";

import { Builder, By, Capabilities, until } from "selenium-webdriver";

const here = dirname(fileURLToPath(import.meta.url));
/// axe-core's source, read once and injected into each window checked.
let axeSource = null;
export const repoRoot = resolve(here, "../..");

/// The binary under test: built with the UI embedded by the README's test command, or the one
/// PINLOOM_APP_BINARY names (the start-up measurement runs the release build).
export function appBinary() {
  if (process.env.PINLOOM_APP_BINARY) return resolve(process.env.PINLOOM_APP_BINARY);
  return builtBinary("pinloom-desktop");
}

/// The command-line program (`pinloom`), built beside the app by the README's test command; its
/// MCP server is how an agent reaches the app's database in these tests.
export function cliBinary() {
  return builtBinary("pinloom");
}

function builtBinary(name) {
  const targetDir = process.env.CARGO_TARGET_DIR
    ? resolve(repoRoot, process.env.CARGO_TARGET_DIR)
    : join(repoRoot, "target");
  const binary = join(targetDir, "debug", name);
  if (!existsSync(binary)) {
    throw new Error(`${binary} does not exist: build it first (./dev test does)`);
  }
  return binary;
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

function freeDisplay() {
  for (let number = 90 + (process.pid % 100); number < 400; number++) {
    if (!existsSync(`/tmp/.X11-unix/X${number}`) && !existsSync(`/tmp/.X${number}-lock`)) {
      return `:${number}`;
    }
  }
  throw new Error("no free X display number between :90 and :399");
}

/// Polls `check` until it holds. `what` names the wait; a function is asked at the timeout, so it
/// can say what was last seen.
async function waitFor(check, what, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  const said = () => (typeof what === "function" ? what() : what);
  for (;;) {
    // A WebDriver call that never returns (seen when the page is stuck) fails the wait at its
    // deadline, with some grace for the call under way, instead of hanging the whole run.
    let timer;
    const stuck = new Promise((_, reject) => {
      const left = Math.max(0, deadline - Date.now()) + STUCK_GRACE_MS;
      timer = setTimeout(() => reject(new Error(`a WebDriver call did not return while waiting for ${said()}`)), left);
    });
    try {
      if (await Promise.race([check(), stuck])) return;
    } finally {
      clearTimeout(timer);
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${said()}`);
    await new Promise((wake) => setTimeout(wake, 100));
  }
}

/// How long a check under way at a wait's deadline may still take before the wait gives up.
const STUCK_GRACE_MS = 10_000;

/// `promise`, or a rejection naming `what` after `ms`: a WebDriver call on a stuck page never
/// returns, and a failed test's screenshot or the session's end must not hang the run.
function bounded(promise, what, ms = 15_000) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`gave up after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

async function isListening(port) {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/status`);
    return response.ok;
  } catch {
    return false;
  }
}

/// Every process any harness started and has not ended yet. If the test runner itself is
/// interrupted (Ctrl+C, a CI timeout), they are killed on the way out rather than left running.
const living = new Set();
function killLiving() {
  for (const child of living) child.kill("SIGKILL");
}
process.once("exit", killLiving);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.once(signal, () => {
    killLiving();
    process.exit(128 + (signal === "SIGINT" ? 2 : signal === "SIGTERM" ? 15 : 1));
  });
}

export class Harness {
  processes = [];
  driver = null;
  /// Set once any window test failed: `stop()` then prints what the processes said.
  failed = false;
  /// Where the app looks for local model servers (`PINLOOM_LOCAL_SERVERS`), read as the drivers
  /// start; none by default.
  localServers = null;

  /// A `node:test` test whose failure leaves a screenshot of the window in
  /// tests/e2e/artifacts/, for the person reading CI.
  ///
  /// Every screen a test ends on is checked for accessibility (axe-core): a serious or critical
  /// violation fails the test.
  windowTest(name, body) {
    test(name, async () => {
      try {
        await body();
        if (this.driver) await this.checkAccessibility(name);
      } catch (error) {
        this.failed = true;
        if (this.driver) {
          const file = `tests/e2e/artifacts/${name.replace(/[^a-z0-9]+/gi, "-")}.png`;
          const saved = await bounded(this.screenshot(file), "the failure's screenshot").catch(() => null);
          if (saved) process.stderr.write(`screenshot of the failure: ${saved}\n`);
          // Ended here, so the next test starts its own session instead of failing for want of one.
          await bounded(this.quit(), "the failed test's session to end").catch((quitting) =>
            process.stderr.write(`the failed test's session did not end: ${quitting}\n`),
          );
        }
        throw error;
      }
    });
  }

  /// A screen worth seeing: checked for accessibility like every test's last screen, and, with
  /// screenshots on (`./dev screenshots`), its picture for the README.
  async screen(name) {
    await this.checkAccessibility(name);
    if (takeReadmeScreenshots) await this.screenshot(`tests/e2e/screenshots/${name}.png`);
  }

  /// Runs axe-core in the window as it is now and fails on any serious or critical violation,
  /// naming each with the elements it found.
  async checkAccessibility(where) {
    axeSource ??= readFileSync(join(here, "../../node_modules/axe-core/axe.min.js"), "utf8");
    // The window's content security policy forbids eval: axe's source goes in as the script
    // WebDriver runs, which the policy does not govern.
    const violations = await this.driver.executeAsyncScript(
      `${axeSource}
       const done = arguments[arguments.length - 1];
       window.axe
         .run(document, { resultTypes: ["violations"] })
         .then((results) => done(results.violations
           .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
           .map((violation) => ({
             id: violation.id,
             impact: violation.impact,
             help: violation.help,
             nodes: violation.nodes.slice(0, 5).map((node) => node.target.join(" ") + ": " + node.failureSummary.split(String.fromCharCode(10)).join(" ")),
           }))))
         .catch((error) => done([{ id: "axe-failed", impact: "critical", help: String(error), nodes: [] }]));`,
    );
    if (violations.length > 0) {
      const said = violations.map((violation) => `${violation.impact} ${violation.id}: ${violation.help}\n  ${violation.nodes.join("\n  ")}`);
      throw new Error(`accessibility violations on "${where}":\n${said.join("\n")}`);
    }
  }

  /// Starts Xvfb and tauri-driver. `dataDir` is given to every app session through the
  /// environment, which tauri-driver passes on to the app.
  async start() {
    this.dataDir = mkdtempSync(join(tmpdir(), "pinloom-e2e-"));
    const display = freeDisplay();
    this.display = display;
    // Large enough for the largest window a test sizes (1920×1080, the layout at desktop size).
    this.spawn("Xvfb", [display, "-screen", "0", "1920x1080x24", "-nolisten", "tcp"]);
    await waitFor(() => existsSync(`/tmp/.X11-unix/X${display.slice(1)}`), "Xvfb to start");

    this.port = await freePort();
    const nativePort = await freePort();
    // Where the app looks for local model servers: what the test says, else a port nothing
    // listens on, so that a server running on this machine cannot change what a test sees.
    const localServers = this.localServers?.() ?? `ollama=http://127.0.0.1:${await freePort()}`;
    this.spawn("tauri-driver", ["--port", String(this.port), "--native-port", String(nativePort)], {
      DISPLAY: display,
      PINLOOM_DATA_DIR: this.dataDir,
      PINLOOM_LOG: "warn",
      PINLOOM_LOCAL_SERVERS: localServers,
    });
    await waitFor(() => isListening(this.port), "tauri-driver to listen");
  }

  spawn(command, args, env = {}) {
    const child = spawn(command, args, {
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    child.stderrText = "";
    child.stderr.on("data", (chunk) => {
      child.stderrText = (child.stderrText + chunk).slice(-4000);
    });
    child.on("error", (error) => {
      child.spawnError = error;
    });
    this.processes.push(child);
    living.add(child);
    child.once("exit", () => living.delete(child));
    return child;
  }

  /// Opens the app in a new WebDriver session (a fresh process of the real binary). WebKit's
  /// driver waits without end for an app that never connects (one that exited as it started),
  /// so the wait is bounded, generously for a busy machine, and a failure says what the drivers
  /// said.
  async launch() {
    const capabilities = new Capabilities();
    capabilities.setBrowserName("wry");
    capabilities.set("tauri:options", { application: appBinary() });
    const session = new Builder()
      .usingServer(`http://127.0.0.1:${this.port}/`)
      .withCapabilities(capabilities)
      .build();
    let timer;
    const deadline = new Promise((_, reject) => {
      timer = setTimeout(() => {
        const said = this.processes.map((child) => `${child.spawnargs[0]}: ${child.stderrText}`).join("\n");
        reject(new Error(`the app's WebDriver session did not start within 120 s; the drivers said:\n${said}`));
      }, 120_000);
    });
    try {
      this.driver = await Promise.race([session, deadline]);
    } finally {
      clearTimeout(timer);
    }
    return this.driver;
  }

  /// Kills the app's process with SIGKILL, as a crash or a power cut would end it: nothing of
  /// its own runs on the way out. The WebDriver session goes with it.
  async killApp() {
    const binary = appBinary();
    const ours = readdirSync("/proc")
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
          return readlinkSync(`/proc/${pid}/exe`) === binary && environ.includes(`PINLOOM_DATA_DIR=${this.dataDir}`);
        } catch {
          return false; // gone meanwhile, or not ours to read
        }
      });
    if (ours.length === 0) throw new Error("no app process of this test to kill");
    for (const pid of ours) process.kill(Number(pid), "SIGKILL");
    await waitFor(() => ours.every((pid) => !existsSync(`/proc/${pid}`)), "the app to be gone", 10_000);
    const driver = this.driver;
    this.driver = null;
    await driver?.quit().catch(() => undefined);
  }

  /// Ends the app session: the app process exits, as when a person quits it.
  async quit() {
    if (this.driver) {
      const driver = this.driver;
      this.driver = null;
      await driver.quit();
    }
  }

  async find(testId, timeoutMs = 20_000) {
    return this.driver.wait(until.elementLocated(By.css(`[data-testid="${testId}"]`)), timeoutMs);
  }

  async findAll(testId) {
    return this.driver.findElements(By.css(`[data-testid="${testId}"]`));
  }

  /// Waits until `testId` elements number `count`, and returns their texts (trimmed
  /// `textContent`: WebKitWebDriver's visible-text algorithm returns "" for text styled with
  /// `text-overflow: ellipsis`, even where the window shows it).
  async textsWhen(testId, count, timeoutMs = 10_000) {
    let texts = [];
    await waitFor(
      async () => {
        const elements = await this.findAll(testId);
        try {
          texts = await Promise.all(
            elements.map(async (element) => String(await element.getProperty("textContent")).trim()),
          );
        } catch (error) {
          // The view re-rendered between finding and reading (a reply finished streaming): look
          // again.
          if (error?.name === "StaleElementReferenceError") return false;
          throw error;
        }
        return texts.length === count;
      },
      () => `${count} [data-testid="${testId}"] (last saw ${texts.length})`,
      timeoutMs,
    );
    return texts;
  }

  /// Waits until the texts of all `testId` elements satisfy `check`, and returns them. Reads
  /// again when the view re-renders under the reading.
  async textsUntil(testId, check, what, timeoutMs = 10_000) {
    let texts = [];
    await waitFor(
      async () => {
        try {
          const elements = await this.findAll(testId);
          texts = await Promise.all(
            elements.map(async (element) => String(await element.getProperty("textContent")).trim()),
          );
        } catch (error) {
          if (error?.name === "StaleElementReferenceError") return false;
          throw error;
        }
        return check(texts);
      },
      () => `${what} (last saw ${JSON.stringify(texts)})`,
      timeoutMs,
    );
    return texts;
  }

  /// Clicks the `testId` element `pick` chooses (the first by default; it may look inside the
  /// elements, and may be async) once there is one,
  /// finding it again when the view re-renders between finding and clicking (an element is
  /// never kept across a render), or when something covers it for a moment.
  async click(testId, pick = (elements) => elements[0], timeoutMs = 10_000) {
    await waitFor(
      async () => {
        let chosen;
        try {
          chosen = await pick(await this.findAll(testId));
        } catch (error) {
          if (error?.name === "StaleElementReferenceError" || error?.name === "NoSuchElementError") return false;
          throw error;
        }
        if (!chosen) return false;
        try {
          await this.reveal(chosen);
          await chosen.click();
          return true;
        } catch (error) {
          // Re-rendered meanwhile, or covered for a moment (an overlay closing): look again.
          if (error?.name === "StaleElementReferenceError" || error?.name === "ElementClickInterceptedError") {
            return false;
          }
          throw error;
        }
      },
      `a [data-testid="${testId}"] to click`,
      timeoutMs,
    );
  }

  /// Brings `element` where a person would reach it before using it: the menus (closed
  /// `<details>`) it sits in opened, and focus on it, which shows a message's actions as
  /// hovering or tabbing to them does.
  async reveal(element) {
    await this.driver.executeScript(
      `const element = arguments[0];
       const own = element.tagName === "SUMMARY" ? element.parentElement : null;
       for (let menu = element.closest("details:not([open])"); menu; menu = menu.parentElement?.closest("details:not([open])") ?? null) {
         if (menu !== own) menu.open = true;
       }
       element.focus({ preventScroll: true });`,
      element,
    );
  }

  /// Replaces the text of field `testId` with `text`, as a person typing would.
  async type(testId, text) {
    const field = await this.find(testId);
    await this.reveal(field);
    await field.clear();
    await field.sendKeys(text);
    return field;
  }

  /// Saves a profile (named "Local test model" unless `name` says otherwise) for the
  /// OpenAI-compatible server at `base` in the budget panel (o200k counting, an 8,192-token window
  /// with 1,024 reserved unless `window` and `reserve` say otherwise), and waits until it is the
  /// chosen model. With `completionEndpoint`, buffer-mode trees can continue documents through it;
  /// `truncation` and `keepLast` set how the history is cut when it does not fit; `model` is the
  /// model id the server is asked for ("local-model", which does not see images, unless given).
  async addLocalModel(
    base,
    {
      completionEndpoint = false,
      name = "Local test model",
      model = "local-model",
      window = 8192,
      reserve = 1024,
      truncation = null,
      keepLast = null,
    } = {},
  ) {
    await this.click("open-budget");
    await this.type("budget-name", name);
    await (await this.find("budget-provider")).sendKeys("vllm");
    await this.type("budget-model", model);
    await this.type("budget-url", base);
    await (await this.find("budget-tokenizer")).sendKeys("o200k");
    await this.type("budget-window", String(window));
    await this.type("budget-reserve", String(reserve));
    const completion = await this.find("budget-completion");
    if ((await completion.isSelected()) !== completionEndpoint) await completion.click();
    if (truncation) await this.choose("budget-truncation", truncation);
    if (keepLast !== null) {
      await this.type("budget-recent", String(keepLast));
      // The field is read when it changes, as when the person leaves it.
      await this.driver.executeScript(
        `arguments[0].dispatchEvent(new Event("change", { bubbles: true }));`,
        await this.find("budget-recent"),
      );
    }
    await this.click("budget-save");
    await this.find("budget-saved", 10_000);
    await this.click("budget-close");
    const picker = await this.find("model-picker");
    await this.driver.wait(async () => (await picker.getAttribute("value")) === name, 5000);
  }

  /// Selects `text` inside `element` as a person would with the mouse, and lets go. The text
  /// is what the window shows, and may run across formatting (bold, code, a link): the
  /// selection then starts in one text node and ends in another.
  async select(element, text) {
    const found = await this.driver.executeScript(
      `const [root, wanted] = arguments;
       const nodes = [];
       const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
       for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
       const joined = nodes.map((node) => node.nodeValue).join("");
       const at = joined.indexOf(wanted);
       if (at < 0) return false;
       const place = (position) => {
         let before = 0;
         for (const node of nodes) {
           if (position <= before + node.nodeValue.length) return [node, position - before];
           before += node.nodeValue.length;
         }
         return null;
       };
       const range = document.createRange();
       range.setStart(...place(at));
       range.setEnd(...place(at + wanted.length));
       const selection = window.getSelection();
       selection.removeAllRanges();
       selection.addRange(range);
       root.dispatchEvent(new MouseEvent("mouseup", { bubbles: true }));
       return true;`,
      element,
      text,
    );
    if (!found) throw new Error(`"${text}" is not on screen to select`);
  }

  /// Picks `value` in the select `testId` as a person's choice would (a change event): WebKit's
  /// driver types into a select unreliably once it has a value.
  async choose(testId, value) {
    await this.driver.executeScript(
      `const [select, value] = arguments;
       select.value = value;
       select.dispatchEvent(new Event("change", { bubbles: true }));`,
      await this.find(testId),
      value,
    );
  }

  /// Creates a tree from the sidebar and waits until it is open with its composer.
  async newTree(title, mode = "dialogue") {
    // Always chosen: the form keeps the last mode.
    await this.choose("new-tree-mode", mode);
    await this.type("new-tree-title", title);
    await (await this.find("new-tree-submit")).click();
    await this.textsUntil("thread-title", (texts) => texts.includes(title), "the new tree is open");
    await this.find("composer-input");
  }

  /// Runs xdotool on the test's display and returns what it printed; what it says on standard
  /// error goes along with a failure only.
  xdotool(args) {
    return execFileSync("xdotool", args, {
      env: { ...process.env, DISPLAY: this.display },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    }).trim();
  }

  /// The visible X windows whose title is exactly `title`.
  windowsTitled(title) {
    const escaped = title.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    try {
      return this.xdotool(["search", "--onlyvisible", "--name", `^${escaped}$`]).split("\n").filter(Boolean);
    } catch {
      // xdotool exits 1 when nothing matches, and complains when a window closes mid-search.
      return [];
    }
  }

  /// Answers the system's file dialog titled `title` (GTK's, opened by the app) with `path` as
  /// a person typing it would: the dialog is focused, its location field opened (an open
  /// dialog) or its name field chosen (a save dialog), the path typed over whatever is there and
  /// Enter pressed. GTK builds the dialog's widgets after mapping it and keys sent too early are
  /// lost, so the answer is typed again while the same dialog stays open; a busy machine may
  /// take seconds to close it, so it is given ten before that. Waits until it is gone.
  async answerFileDialog(title, path, { saving = false } = {}) {
    let windows = [];
    await waitFor(() => (windows = this.windowsTitled(title)).length > 0, `the file dialog "${title}"`);
    const dialog = windows[0];
    const pause = (ms) => new Promise((wake) => setTimeout(wake, ms));
    for (let attempt = 1; attempt <= 4; attempt++) {
      await pause(500 * attempt);
      if (!this.windowsTitled(title).includes(dialog)) return;
      this.xdotool(["windowfocus", "--sync", dialog]);
      if (!saving) {
        this.xdotool(["key", "--clearmodifiers", "ctrl+l"]);
        await pause(300);
      }
      this.xdotool(["key", "--clearmodifiers", "ctrl+a"]);
      this.xdotool(["type", "--delay", "15", path]);
      await pause(300);
      this.xdotool(["key", "Return"]);
      try {
        await waitFor(() => !this.windowsTitled(title).includes(dialog), `the file dialog "${title}" to close`, 10_000);
        return;
      } catch {
        // Still open: the keys came too early or were completed differently; type it again.
      }
    }
    throw new Error(`the file dialog "${title}" did not take the path ${path}`);
  }

  /// Drags `paths` onto the app's window at `to` (screen pixels; the window fills the top left
  /// of the screen) with the X pointer, from a small program that offers files as a file
  /// manager does (`drag-source.py`), and waits until the drop is over.
  async dragFiles(paths, to) {
    const corner = { x: 1050, y: 600 };
    const source = spawn("/usr/bin/python3", [join(here, "drag-source.py"), String(corner.x), String(corner.y), ...paths], {
      env: { ...process.env, DISPLAY: this.display },
      stdio: ["ignore", "pipe", "pipe"],
    });
    living.add(source);
    let said = "";
    source.stdout.on("data", (chunk) => (said += chunk));
    source.stderr.on("data", (chunk) => (said += chunk));
    const ended = new Promise((done) => source.once("exit", done));
    try {
      await waitFor(() => said.includes("ready") || source.exitCode !== null, "the drag source to show");
      if (!said.includes("ready")) throw new Error(`the drag source did not start: ${said}`);
      const pause = (ms) => new Promise((wake) => setTimeout(wake, ms));
      // Mapped is not yet drawn: a press too early finds no widget to drag from.
      await pause(1000);
      const from = { x: corner.x + 60, y: corner.y + 50 };
      this.xdotool(["mousemove", String(from.x), String(from.y)]);
      this.xdotool(["mousedown", "1"]);
      // In steps, as a hand moves: X starts a drag only after the pointer moved a few pixels,
      // and the webview reports where it is over on the way.
      for (let step = 1; step <= 20; step++) {
        const x = Math.round(from.x + ((to.x - from.x) * step) / 20);
        const y = Math.round(from.y + ((to.y - from.y) * step) / 20);
        this.xdotool(["mousemove", String(x), String(y)]);
        await pause(40);
      }
      await pause(300);
      this.xdotool(["mouseup", "1"]);
      await Promise.race([ended, pause(10_000)]);
    } finally {
      if (source.exitCode === null) source.kill("SIGKILL");
      living.delete(source);
    }
  }

  /// Sizes the window to `width` × `height` and waits until the page has taken the new width.
  async resize(width, height) {
    await this.driver.manage().window().setRect({ width, height });
    await this.driver.wait(
      async () => (await this.driver.executeScript("return window.innerWidth")) <= width,
      10_000,
      `the window becomes ${width} wide`,
    );
  }

  /// Saves the window as a PNG at `path` (relative to the repository root).
  async screenshot(path) {
    const file = resolve(repoRoot, path);
    mkdirSync(dirname(file), { recursive: true });
    await writeFile(file, await this.driver.takeScreenshot(), "base64");
    return file;
  }

  /// Ends everything this harness started, whatever state it is in, and says what the drivers
  /// printed if `failed`.
  async stop({ failed = this.failed } = {}) {
    try {
      await bounded(this.quit(), "the session to end");
    } catch {
      // The session may already be gone (the app crashed); the processes below still end.
    }
    for (const child of this.processes.reverse()) {
      if (failed && child.stderrText) {
        process.stderr.write(`--- ${child.spawnargs[0]} stderr ---\n${child.stderrText}\n`);
      }
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await Promise.race([
          new Promise((done) => child.once("exit", done)),
          new Promise((done) => setTimeout(done, 3000)),
        ]);
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      }
    }
    this.processes = [];
    if (this.dataDir) rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/// Whether the documented screenshot command asked for README screenshots.
export const takeReadmeScreenshots = process.env.PINLOOM_SCREENSHOTS === "1";

/// The hooks of a suite that talks to `provider`: it listens and a window is open before the
/// first test, and both are gone after the last.
export function withProviderAndWindow(harness, provider) {
  before(async () => {
    await provider.start();
    await harness.start();
    await harness.launch();
  });
  after(async () => {
    await harness.stop();
    await provider.stop();
  });
}
