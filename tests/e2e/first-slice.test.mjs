// The first real slice, in the real window: create a tree, write a message, see it listed; quit,
// start again, and it is all still there. A thread an agent deleted over MCP comes back from the
// window. Also the two ways bad input must fail: an empty message
// (refused beside the composer, nothing lost) and a damaged database file (refused with its path,
// left untouched).
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe } from "node:test";

import { Key } from "selenium-webdriver";

import { Agent } from "./agent.mjs";
import { Harness } from "./harness.mjs";


describe("first slice in the real window", () => {
  const harness = new Harness();

  before(async () => {
    await harness.start();
  });

  after(async () => {
    await harness.stop();
  });

  harness.windowTest("a new tree and its message survive a restart", async () => {
    await harness.launch();
    await harness.find("welcome");
    await harness.find("no-trees");

    await (await harness.find("new-tree-title")).sendKeys("Why do rivers meander?");
    await (await harness.find("new-tree-submit")).click();
    await harness.textsUntil("thread-title", (texts) => texts.includes("Why do rivers meander?"), "the new tree is open");
    await harness.find("thread-empty");

    const composer = await harness.find("composer-input");
    await composer.sendKeys("Start from the physics: where does the water flow fastest in a bend?");
    await (await harness.find("composer-send")).click();
    assert.deepEqual(await harness.textsWhen("message-text", 1), [
      "Start from the physics: where does the water flow fastest in a bend?",
    ]);
    await harness.driver.wait(
      async () => (await composer.getAttribute("value")) === "",
      5000,
      "the composer clears once the message is saved",
    );

    // Alt+Enter adds without asking a model too, and the new message continues the first.
    await composer.sendKeys("And why does the outer bank erode?", Key.chord(Key.ALT, Key.ENTER));
    assert.deepEqual(await harness.textsWhen("message-text", 2), [
      "Start from the physics: where does the water flow fastest in a bend?",
      "And why does the outer bank erode?",
    ]);
    assert.deepEqual(await harness.textsWhen("tree-title", 1), ["Why do rivers meander?"]);
    const [meta] = await harness.textsWhen("tree-meta", 1);
    assert.match(meta, /^2 messages · /);

    await harness.screen("first-slice");
    await harness.quit();

    // A new process of the app on the same data folder.
    await harness.launch();
    await harness.textsUntil(
      "thread-title",
      (texts) => texts.includes("Why do rivers meander?"),
      "the last open tree is reopened on start",
      20_000,
    );
    assert.deepEqual(await harness.textsWhen("message-text", 2), [
      "Start from the physics: where does the water flow fastest in a bend?",
      "And why does the outer bank erode?",
    ]);
    assert.deepEqual(await harness.textsWhen("tree-title", 1), ["Why do rivers meander?"]);
  });

  harness.windowTest("an empty message is refused beside the composer and nothing is lost", async () => {
    if (!harness.driver) await harness.launch();
    await harness.find("thread-title");
    const before = await harness.findAll("message-text");

    const composer = await harness.find("composer-input");
    await composer.clear();
    await composer.sendKeys("   ");
    await (await harness.find("composer-send")).click();
    const error = await harness.find("composer-error", 5000);
    assert.match(await error.getText(), /the message is empty: type something first/);
    assert.equal(await composer.getAttribute("value"), "   ", "the draft stays for the person");
    assert.equal((await harness.findAll("message-text")).length, before.length);

    // A blank tree title is refused in the sidebar, and the existing tree is still there.
    await (await harness.find("new-tree-title")).sendKeys("   ");
    await (await harness.find("new-tree-submit")).click();
    const listError = await harness.find("list-error", 5000);
    assert.match(await listError.getText(), /a tree needs a title/);
    assert.equal((await harness.findAll("tree-item")).length, 1);
    await harness.quit();
  });

  harness.windowTest("the About section says which Pinloom this is and where it keeps things", async () => {
    if (!harness.driver) await harness.launch();
    await harness.click("open-settings", undefined, 20_000);
    await harness.textsUntil("about-version", ([version]) => /^Pinloom \d+\.\d+\.\d+/.test(version ?? ""), "the version");
    const [about] = await harness.textsWhen("about", 1);
    assert.ok(about.includes(harness.dataDir), `the data folder is named: ${about}`);
    assert.ok(about.includes(join(harness.dataDir, "logs")), `the log folder is named: ${about}`);
    const logs = readdirSync(join(harness.dataDir, "logs"));
    assert.ok(logs.some((name) => /^pinloom\.\d{4}-\d{2}-\d{2}\.log$/.test(name)), `a log file of today: ${logs}`);
    await harness.click("settings-close");
    await harness.quit();
  });

  harness.windowTest("a thread an agent deleted over MCP is restored from the window", async () => {
    const folder = mkdtempSync(join(tmpdir(), "pinloom-agent-"));
    const agent = new Agent(join(harness.dataDir, "pinloom.sqlite3"), folder);
    try {
      await agent.start();
      await agent.call("project_create", { title: "Deltas" });
      await agent.call("thread_create", { title: "Sediment" });
      await agent.call("thread_delete", { threadId: "sediment" });
      assert.doesNotMatch(await agent.call("thread_list", {}), /sediment/);

      await harness.launch();
      // The agent's tree changed last, so it heads the list.
      await harness.textsUntil("tree-title", (titles) => titles[0] === "Deltas", "the agent's tree in the list");
      await harness.click("tree-item");
      await harness.textsUntil("thread-title", (texts) => texts.includes("Deltas"), "the agent's tree is open");
      await harness.click("open-settings", undefined, 20_000);
      await harness.textsUntil("deleted-thread-title", (titles) => titles.join() === "Sediment", "the deleted thread is offered");
      await harness.click("thread-restore");
      await harness.textsUntil("settings-message", (texts) => texts.includes("“Sediment” is back."), "the restore is confirmed");
      await harness.textsWhen("deleted-thread", 0);
      assert.match(await agent.call("thread_list", {}), /sediment/, "the agent sees the thread again");
      await harness.click("settings-close");
      await harness.quit();
    } finally {
      agent.stop();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  harness.windowTest("a damaged database file is refused with its path and left untouched", async () => {
    const database = join(harness.dataDir, "pinloom.sqlite3");
    const damaged = Buffer.from("this is not a SQLite database, and it must stay exactly like this\n");
    // The earlier tests' database is replaced, as if the file were damaged by another program.
    rmSync(`${database}-wal`, { force: true });
    rmSync(`${database}-shm`, { force: true });
    writeFileSync(database, damaged);
    await harness.launch();
    const notice = await harness.find("database-unusable");
    const text = await notice.getText();
    assert.match(text, /Pinloom cannot open its database/);
    assert.ok(text.includes(database), `the notice names the file: ${text}`);
    assert.match(text, /left untouched/);
    await harness.quit();
    assert.deepEqual(readFileSync(database), damaged, "the damaged file is byte for byte the same");
  });
});
