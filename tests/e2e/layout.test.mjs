// The window's layout at its default size (1200×780) and at its minimum (720×480), with a pin
// open beside the root thread and replies that are hard to lay out (a long unbroken address, a
// wide table, a long line of code): no column reaches past the window, no message or its row of
// actions reaches past its column, and the page never scrolls sideways. (Whether a row of actions
// lies over a message's text is measured by laptop.test.mjs.) With a pin in a pin open,
// the root thread folds into a rail at both sizes (two columns and a rail fit, three columns do
// not), and the rail leads back to it.
import assert from "node:assert/strict";
import { describe } from "node:test";

import { Harness, takeReadmeScreenshots, withProviderAndWindow } from "./harness.mjs";
import { ScriptedProvider } from "./provider.mjs";

const HARD_REPLY =
  "Meanders form because **the outer bank erodes** while the inner bank gains silt. See " +
  "https://example.org/" + "very-long-path-segment-".repeat(12) + "end for the survey.\n\n" +
  "| bank | process | rate | season | measured by | notes |\n|---|---|---|---|---|---|\n" +
  "| outer | erosion | 1.2 m/yr | spring | sonar transects | fastest water along the cut bank |\n\n" +
  "```\n" + "const bend = rivers.map((river) => river.meanders.filter((m) => m.radius > 120));".repeat(2) + "\n```";

const SIZES = [
  [1200, 780],
  [720, 480],
];

/// Everything on show that reaches past where it may, as text naming it; empty when none does.
/// Runs in the page.
function overflowing() {
  const found = [];
  const name = (element) => element.dataset.testid ?? element.className ?? element.tagName;
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > width + 1) {
    found.push(`the page scrolls sideways (${document.documentElement.scrollWidth} > ${width})`);
  }
  // The tree list, the tree's header and the attachments bar: every control inside its part.
  for (const part of document.querySelectorAll('.sidebar, .thread-header, [data-testid="attachments"]')) {
    const box = part.getBoundingClientRect();
    for (const control of part.querySelectorAll("button, input, select, textarea")) {
      // What a closed menu holds is not on screen (WebKit still gives it a box).
      if (control.closest("details:not([open])") && !control.closest("summary")) continue;
      const own = control.getBoundingClientRect();
      if (own.width > 0 && (own.left < box.left - 1 || own.right > box.right + 1)) {
        found.push(`${name(control)} in ${name(part)} spans ${Math.round(own.left)}–${Math.round(own.right)}, the part ${Math.round(box.left)}–${Math.round(box.right)}`);
      }
    }
  }
  const area = document.querySelector('[data-testid="columns"]')?.getBoundingClientRect();
  if (area && (area.left < -1 || area.right > width + 1)) {
    found.push(`the columns span ${Math.round(area.left)}–${Math.round(area.right)} of ${width}`);
  }
  for (const column of document.querySelectorAll('[data-testid="root-column"], [data-testid="pin-column"]')) {
    const box = column.getBoundingClientRect();
    // Inside the columns' own area: a column scrolled out of it is as cut off as one off the window.
    if (area && (box.left < area.left - 1 || box.right > area.right + 1)) {
      found.push(`${name(column)} spans ${Math.round(box.left)}–${Math.round(box.right)}, the columns ${Math.round(area.left)}–${Math.round(area.right)}`);
    }
    const rail = column.querySelector('[data-testid="column-rail"]');
    if (rail && getComputedStyle(rail).display !== "none") {
      // Folded: only its rail shows, and the rail says which thread it is.
      if (!rail.textContent.trim() || rail.getBoundingClientRect().height < 40) found.push(`${name(column)}'s rail cannot be read`);
      continue;
    }
    if (box.width < 200) found.push(`${name(column)} is squeezed to ${Math.round(box.width)} px`);
    // What a column is written and closed with stays within the window's height.
    for (const control of column.querySelectorAll("form button[type=submit], .close-pin button")) {
      const own = control.getBoundingClientRect();
      if (own.height > 0 && own.bottom > window.innerHeight + 1) {
        found.push(`${name(control)} in ${name(column)} is below the window (${Math.round(own.bottom)} > ${window.innerHeight})`);
      }
    }
    // A message at rest: its text within 40 px of its card's top, or of its row of actions where
    // the card is too narrow for them over its edge (only its state and its switcher come
    // between).
    for (const message of column.querySelectorAll('[data-testid="message"]')) {
      const text = message.querySelector('[data-testid="message-text"]');
      const card = message.getBoundingClientRect();
      const toolbar = message.querySelector(".message-toolbar");
      const inRow = toolbar && getComputedStyle(toolbar).position === "static";
      const start = inRow ? toolbar.getBoundingClientRect().bottom : card.top;
      if (text && card.height > 0 && text.getBoundingClientRect().top - start > 40) {
        found.push(`${name(message)} in ${name(column)}: its text starts ${Math.round(text.getBoundingClientRect().top - start)} px below its ${inRow ? "actions" : "top"}`);
      }
    }
    const inside = [...column.querySelectorAll('[data-testid="message"], .actions, form, .close-pin, button, input, textarea')];
    for (const element of inside) {
      const own = element.getBoundingClientRect();
      if (own.width === 0) continue;
      if (own.left < box.left - 1 || own.right > box.right + 1) {
        found.push(`${name(element)} in ${name(column)} spans ${Math.round(own.left)}–${Math.round(own.right)}, the column ${Math.round(box.left)}–${Math.round(box.right)}`);
      }
      if (element.scrollWidth > element.clientWidth + 1 && getComputedStyle(element).overflowX === "visible") {
        found.push(`${name(element)} in ${name(column)} spills ${element.scrollWidth - element.clientWidth} px`);
      }
    }
  }
  return found;
}

describe("the layout holds at the default and the minimum window size", () => {
  const harness = new Harness();
  const provider = new ScriptedProvider();

  withProviderAndWindow(harness, provider);

  harness.windowTest("a root thread and a pin, each with a hard reply, fit at 1200×780 and 720×480", async () => {
    await harness.newTree("Rivers");
    await harness.addLocalModel(provider.base);
    provider.answers.push(HARD_REPLY);
    await harness.type("composer-input", "Why do rivers meander?");
    await harness.click("composer-ask");
    await harness.textsWhen("message-text", 2, 20_000);
    const [, reply] = await harness.findAll("message-text");
    // Opening the pin writes the root thread's summary in the background.
    provider.answers.push("The person asked why rivers meander; the outer bank erodes.");
    await harness.select(reply, "the inner bank gains silt");
    await harness.click("pin-button");
    await harness.find("pin-anchor");
    // Ends with the passage the next pin is made from: the end of a reply is what shows.
    provider.answers.push(`${HARD_REPLY}\n\nSilt settles where the water slows.`);
    await harness.type("pin-composer-input", "Why does silt settle there?");
    await harness.click("pin-composer-ask");
    await harness.textsWhen("message-text", 4, 20_000);
    // A pin in the pin: three threads on show.
    const [, , , pinReply] = await harness.findAll("message-text");
    await harness.select(pinReply, "where the water slows");
    await harness.click("pin-button");
    await harness.driver.wait(async () => (await harness.findAll("pin-column")).length === 2, 10_000, "the second pin opens");

    const check = async (what) => {
      let found = [];
      await harness.driver
        .wait(async () => {
          found = await harness.driver.executeScript(`return (${overflowing.toString()})()`);
          return found.length === 0;
        }, 5_000)
        .catch(() => {});
      assert.deepEqual(found, [], what);
    };
    const railShown = async () =>
      harness.driver.executeScript(
        `const rail = document.querySelector('[data-testid="root-column"] [data-testid="column-rail"]');
         return rail !== null && getComputedStyle(rail).display !== "none";`,
      );
    for (const [width, height] of SIZES) {
      // Waits for the page to take the new size, then for a layout that holds.
      await harness.resize(width, height);
      await check(`at ${width}×${height}`);
      assert.equal((await harness.findAll("pin-column")).length, 2, `the pins stay open at ${width}×${height}`);
      assert.equal((await harness.findAll("root-column")).length, 1, `the root thread stays on show at ${width}×${height}`);
      assert.equal(await railShown(), true, `the root thread folds beside two pins at ${width}×${height}`);
      if (takeReadmeScreenshots && width < 1000) await harness.screenshot("tests/e2e/screenshots/narrow-window.png");
    }

    // The rail leads back to the root thread, which then has the room.
    await harness.click("column-rail");
    await harness.driver.wait(async () => (await harness.findAll("pin-column")).length === 0, 5_000, "the pin columns close");
    assert.equal(await railShown(), false);
    await check("the root thread alone at 720×480");
    await harness.driver.manage().window().setRect({ width: 1200, height: 780 });
  });
});
