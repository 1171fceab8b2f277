// A team in the real window: two app windows with two data folders and one bare git repository
// as the team's remote. One creates the team in Settings → Sync, shares a tree with it and copies
// an invitation; the other joins by pasting it (which asks), the first's Sync now admits them,
// the second's Sync now brings the tree with who shared it; they answer in it, and the first
// sees the answer, with its author, after Sync now. Git's configuration is isolated in a
// temporary folder, so this machine's settings neither help nor hinder.
import assert from "node:assert/strict";
import { describe } from "node:test";

import { Key } from "selenium-webdriver";

import { closeSettings, twoMachinesAndARemote } from "./two-machines.mjs";

describe("a team joined by invitation between two windows", () => {
  const { first: ana, second: ben, remote } = twoMachinesAndARemote("team.git");

  /// Brings field or button `testId` into the middle of its scrolled panel (Settings is taller
  /// than the window; WebKit's driver does not scroll to what it types into).
  async function inView(harness, testId) {
    const element = await harness.find(testId);
    await harness.driver.executeScript(`arguments[0].scrollIntoView({ block: "center" });`, element);
  }

  /// Types into field `testId` once it is in view.
  async function typeIn(harness, testId, text) {
    await inView(harness, testId);
    await harness.type(testId, text);
  }

  /// Waits until the last team action says `expected`; a failure shown instead fails at once,
  /// with what it says.
  async function teamSays(harness, expected) {
    const said = await harness.driver.wait(
      async () => {
        const [error] = await harness.findAll("team-error");
        if (error) return `failed: ${await error.getText().catch(() => "")}`;
        const [last] = await harness.findAll("team-last");
        const text = last ? await last.getText().catch(() => "") : "";
        return text.includes(expected) ? text : null;
      },
      60_000,
      `the team's last result to say "${expected}"`,
    );
    assert.ok(!said.startsWith("failed:"), said);
    return said;
  }

  /// Clicks a button once it is enabled (the rows above it arrive late on a busy machine).
  async function clickWhenEnabled(harness, testId) {
    await harness.driver.wait(
      async () => {
        const [button] = await harness.findAll(testId);
        return Boolean(button) && (await button.isEnabled().catch(() => false));
      },
      20_000,
      `${testId} to be enabled`,
    );
    await inView(harness, testId);
    await harness.click(testId);
  }

  ana.windowTest("a colleague joins by invitation, answers in the shared tree, and the answer comes back", async () => {
    await ana.launch();
    await ana.newTree("Rivers");
    const composer = await ana.find("composer-input");
    await composer.sendKeys("Why do rivers meander?", Key.chord(Key.ALT, Key.ENTER));
    await ana.textsWhen("message-text", 1);

    // Ana creates the team as "Ana" (its owner), shares the tree, and asks for an invitation.
    await ana.click("open-settings", undefined, 20_000);
    await typeIn(ana, "team-your-name", "Ana");
    await typeIn(ana, "team-create-name", "geo");
    await typeIn(ana, "team-create-remote", remote);
    await clickWhenEnabled(ana, "team-create");
    await ana.textsUntil("team-name", (texts) => texts.includes("geo"), "the team to be listed", 30_000);
    await ana.textsUntil("team-standing", (texts) => texts[0]?.includes("You own this team"), "Ana to own it");
    const options = await ana.driver.executeScript(
      `return [...document.querySelectorAll('[data-testid="team-share-tree"] option')]
         .map((option) => [option.value, option.textContent.trim()]);`,
    );
    const rivers = options.find(([, text]) => text.includes("Rivers"));
    assert.ok(rivers, `Rivers can be shared: ${JSON.stringify(options)}`);
    await ana.choose("team-share-tree", rivers[0]);
    await clickWhenEnabled(ana, "team-share");
    await teamSays(ana, "sent 2 records");
    await inView(ana, "team-invite");
    await ana.click("team-invite");
    const invitation = await ana.driver.wait(
      async () => {
        const [field] = await ana.findAll("team-invitation");
        const text = field ? await field.getAttribute("value") : "";
        return text?.includes("code:") ? text : null;
      },
      20_000,
      "the invitation's text",
    );
    assert.match(invitation, /team: geo/);
    assert.match(invitation, /recipient: age1/);
    await closeSettings(ana);

    // Ben starts empty and joins from his welcome screen by pasting the invitation, as "Ben".
    await ben.launch();
    await ben.find("welcome-sync");
    await typeIn(ben, "team-your-name", "Ben");
    // Pasted whole, as from the clipboard (the driver's typing sends a line break as Enter).
    await inView(ben, "team-join-text");
    await ben.driver.executeScript(
      `const [field, text] = arguments;
       field.value = text;
       field.dispatchEvent(new Event("input", { bubbles: true }));`,
      await ben.find("team-join-text"),
      invitation,
    );
    await clickWhenEnabled(ben, "team-join");
    await teamSays(ben, "Asked to join the team geo");
    await ben.textsUntil("team-standing", (texts) => texts[0]?.includes("Asked to join"), "Ben to wait");

    // Ana's Sync now admits him (and writes the shared tree again, encrypted to him too).
    await ana.click("open-settings", undefined, 20_000);
    await clickWhenEnabled(ana, "sync-now");
    await ana.textsUntil("sync-notes", (texts) => texts[0]?.includes("Admitted to the team: Ben"), "Ben to be admitted", 30_000);
    await ana.textsUntil("team-member", (texts) => texts.some((text) => text.includes("Ben")), "Ben to be listed");
    await closeSettings(ana);

    // Ben's Sync now brings the tree.
    await clickWhenEnabled(ben, "sync-now");
    assert.deepEqual(await ben.textsWhen("tree-title", 1), ["Rivers"]);
    await ben.textsUntil(
      "tree-item",
      (texts) => texts.length === 1 && texts[0].includes("shared by Ana"),
      "the tree list to say who shared the tree",
    );
    await ben.click("tree-item");
    assert.deepEqual(await ben.textsWhen("message-text", 1), ["Why do rivers meander?"]);
    const there = await ben.find("composer-input");
    await there.sendKeys("Because the outer bank erodes.", Key.chord(Key.ALT, Key.ENTER));
    await ben.textsWhen("message-text", 2);

    // Sync now sends Ben's answer to the team (he has no remote of his own), and Ana's Sync now
    // brings it into her open tree.
    await ben.click("open-settings", undefined, 20_000);
    await clickWhenEnabled(ben, "sync-now");
    await ben.textsUntil("sync-last", (texts) => texts[0]?.includes("sent 1 record"), "Ben's answer to go", 30_000);
    await closeSettings(ben);
    await ana.click("open-settings", undefined, 20_000);
    await clickWhenEnabled(ana, "sync-now");
    await ana.textsUntil("sync-last", (texts) => texts[0]?.includes("received 1 record"), "Ben's answer to arrive", 30_000);
    await closeSettings(ana);
    assert.deepEqual(await ana.textsWhen("message-text", 2), [
      "Why do rivers meander?",
      "Because the outer bank erodes.",
    ]);
    // His, as the team's roster names him.
    assert.deepEqual(await ana.textsWhen("message-written-by", 1), ["Ben"]);
  });
});
