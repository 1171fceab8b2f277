// Sync in the real window: two app windows with two data folders and one bare git repository as
// their remote. A message written in one appears in the other after Sync now, both ways; the
// second machine starts empty and syncs from its welcome screen. Git's configuration is isolated
// in a temporary folder, so this machine's settings neither help nor hinder.
import assert from "node:assert/strict";
import { describe } from "node:test";

import { Key } from "selenium-webdriver";

import { closeSettings, twoMachinesAndARemote } from "./two-machines.mjs";

describe("sync between two windows through a bare repository", () => {
  const { first: laptop, second: desktop, remote } = twoMachinesAndARemote("trees.git");

  /// Types the remote (when given) and clicks Sync now, then waits until the last result says
  /// `expected`.
  async function syncNow(harness, expected, typedRemote = null) {
    if (typedRemote !== null) await harness.type("sync-remote", typedRemote);
    // Sync now is enabled once there is a remote to sync with (typed, or read from the
    // database). The form is sent with Enter in the remote's field, as a person would: the
    // settings' rows above it arrive late on a busy machine and move a button under a click.
    await harness.driver.wait(
      async () => {
        const [button] = await harness.findAll("sync-now");
        return Boolean(button) && (await button.isEnabled().catch(() => false));
      },
      20_000,
      "Sync now to be enabled",
    );
    await (await harness.find("sync-remote")).sendKeys(Key.ENTER);
    const [last] = await harness.textsUntil(
      "sync-last",
      (texts) => texts.length === 1 && texts[0].includes(expected),
      `the last sync to say "${expected}"`,
      30_000,
    );
    return last;
  }

  laptop.windowTest("a message written in one window appears in the other after Sync now", async () => {
    await laptop.launch();
    await laptop.newTree("Rivers");
    const composer = await laptop.find("composer-input");
    await composer.sendKeys("Why do rivers meander?", Key.chord(Key.ALT, Key.ENTER));
    await laptop.textsWhen("message-text", 1);
    await laptop.click("open-settings", undefined, 20_000);
    await laptop.textsUntil("sync-waiting", (texts) => texts[0]?.includes("2 records"), "the tree and its message wait to go");
    await syncNow(laptop, "sent 2 records", remote);
    await laptop.textsUntil("sync-waiting", (texts) => texts[0] === "Nothing waits to go.", "nothing waits after the sync");
    await closeSettings(laptop);

    // The desktop starts empty and syncs from its welcome screen.
    await desktop.launch();
    await desktop.find("welcome-sync");
    await syncNow(desktop, "received 2 records", remote);
    assert.deepEqual(await desktop.textsWhen("tree-title", 1), ["Rivers"]);
    await desktop.click("tree-item");
    assert.deepEqual(await desktop.textsWhen("message-text", 1), ["Why do rivers meander?"]);

    // An answer written on the desktop reaches the laptop's open tree; the remote is remembered.
    const there = await desktop.find("composer-input");
    await there.sendKeys("Because the outer bank erodes.", Key.chord(Key.ALT, Key.ENTER));
    await desktop.textsWhen("message-text", 2);
    await desktop.click("open-settings", undefined, 20_000);
    await syncNow(desktop, "sent 1 record");
    await closeSettings(desktop);

    await laptop.click("open-settings", undefined, 20_000);
    await syncNow(laptop, "received 1 record");
    await closeSettings(laptop);
    assert.deepEqual(await laptop.textsWhen("message-text", 2), [
      "Why do rivers meander?",
      "Because the outer bank erodes.",
    ]);
  });
});
