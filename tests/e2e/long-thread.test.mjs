// A long thread made by `pinloom import`, as a person who has talked for hours meets it: it opens
// on its newest message (not on the oldest of the page the window holds), and scrolling up reads
// the earlier pages by themselves while the messages on screen stay where they were.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe } from "node:test";

import { Harness, cliBinary } from "./harness.mjs";
import { linearDialogue } from "./linear-dialogue.mjs";

const MESSAGES = 300;
/// The window's page (`THREAD_PAGE`); the test first checks the generated bindings say the same.
const PAGE = 30;

/// Whether the message starting `Message <n>:` is drawn and at least partly inside the root
/// column's scrolled list; read in the page, in one go, so no element is kept across a render.
const inView = (harness, n) =>
  harness.driver.executeScript(
    `const list = document.querySelector('[data-testid="root-column"] ol.messages');
     const message = [...(list?.querySelectorAll('[data-testid="message"]') ?? [])]
       .find((card) => card.querySelector('[data-testid="message-text"]')?.textContent.trim().startsWith(arguments[0]));
     if (!list || !message) return false;
     const at = message.getBoundingClientRect();
     const view = list.getBoundingClientRect();
     return at.bottom > view.top + 1 && at.top < view.bottom - 1;`,
    `Message ${n}:`,
  );

describe("a long thread", { timeout: 300_000 }, () => {
  const harness = new Harness();

  before(async () => {
    await harness.start();
    const file = join(harness.dataDir, "long.json");
    writeFileSync(file, JSON.stringify(linearDialogue({ count: MESSAGES, wordsEach: 40, id: "long", title: "Long talk" })));
    execFileSync(cliBinary(), ["--db", join(harness.dataDir, "pinloom.sqlite3"), "import", file], { stdio: "ignore" });
    await harness.launch();
  });

  after(() => harness.stop());

  harness.windowTest("opens on its newest message and reads earlier pages as it is scrolled up, keeping the place", async () => {
    const bindings = readFileSync(join(import.meta.dirname, "../../ui/src/lib/bindings.ts"), "utf8");
    assert.equal(/THREAD_PAGE = (\d+)/.exec(bindings)?.[1], String(PAGE), "the test's page is the window's");
    // The only tree opens by itself; its newest page is drawn, scrolled to its end.
    const texts = await harness.textsWhen("message-text", PAGE, 60_000);
    assert.ok(texts[0].startsWith(`Message ${MESSAGES - PAGE}:`), texts[0]);
    assert.ok(texts.at(-1).startsWith(`Message ${MESSAGES - 1}:`), texts.at(-1));
    await harness.driver.wait(() => inView(harness, MESSAGES - 1), 20_000, "the newest message in view");
    assert.equal(await inView(harness, MESSAGES - PAGE), false, "the page's oldest message is above the view");
    await harness.textsUntil("hidden-count", (said) => said[0] === `${MESSAGES - PAGE} earlier messages not shown`, "the count of those not shown");

    // Scrolled to the top of what is drawn: the page before comes by itself, and the message
    // that was at the top stays on screen instead of jumping down by a page.
    await harness.driver.executeScript(`document.querySelector('[data-testid="root-column"] ol.messages').scrollTop = 0;`);
    await harness.textsWhen("message-text", 2 * PAGE, 20_000);
    await harness.driver.wait(() => inView(harness, MESSAGES - PAGE), 20_000, "the former top message still in view");
    assert.equal(await inView(harness, MESSAGES - 2 * PAGE), false, "the new page is above the view, not in it");
    await harness.textsUntil("hidden-count", (said) => said[0] === `${MESSAGES - 2 * PAGE} earlier messages not shown`, "the count of those not shown", 20_000);

    // The button reads a page too, for the keyboard and for anyone who prefers it.
    await harness.click("show-earlier");
    const three = await harness.textsWhen("message-text", 3 * PAGE, 20_000);
    assert.ok(three[0].startsWith(`Message ${MESSAGES - 3 * PAGE}:`), three[0]);
    await harness.screen("long thread, earlier pages read");
  });
});
