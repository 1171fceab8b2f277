// The desktop flows in the real window, against a model provider on 127.0.0.1: a local model set
// up in the budget panel; a highlight pinned and asked about in its sub-thread, whose request
// carries the anchor and never the sibling pin; a reply full of script that renders inert; two
// branches compared; a model's budget changed and the inspector's pruned report changing with it.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe } from "node:test";

import { Harness, withProviderAndWindow } from "./harness.mjs";
import { ScriptedProvider } from "./provider.mjs";

const ANSWER =
  "Meanders form because **the outer bank erodes** while the inner bank gains silt.\n\n" +
  "| bank | process |\n|---|---|\n| outer | erosion |\n| inner | deposition |";

// Mirrors ui/src/lib/markdown.test.ts's corpus: what a hostile reply may try.
const XSS_REPLY = [
  "<script>window.__pwned = 1</script>",
  '<img src="http://127.0.0.1:9/x.png" onerror="window.__pwned = 2">',
  '<a href="javascript:window.__pwned = 3">click me</a>',
  "[link](javascript:window.__pwned=4)",
  '<iframe src="http://127.0.0.1:9/frame"></iframe>',
  '<svg onload="window.__pwned = 5"><circle r="4"/></svg>',
  "<p onclick=\"window.__TAURI_INTERNALS__.invoke('tree_list')\">ipc</p>",
  "![remote](http://127.0.0.1:9/tracker.png)",
  "Still readable text.",
].join("\n\n");

describe("deep dives in the real window", () => {
  const harness = new Harness();
  const provider = new ScriptedProvider();

  withProviderAndWindow(harness, provider);

  const type = (testId, text) => harness.type(testId, text);
  const newTree = (title) => harness.newTree(title);

  /// Sends `text` from the composer with testid `composer` and waits for `count` messages there.
  async function send(composer, button, text, testId, count) {
    await type(composer, text);
    await (await harness.find(button)).click();
    await harness.textsWhen(testId, count, 20_000);
  }

  /// Selects `text` inside `element` as a person would with the mouse, and lets go.
  const select = (element, text) => harness.select(element, text);

  /// Waits until the open pin's panel shows the summary of its ancestor `title` written, not
  /// stood in for by the thread's messages.
  async function summaryLanded(title) {
    await harness.driver.wait(
      async () =>
        harness.driver.executeScript(
          `return [...document.querySelectorAll('[data-testid="pin-column"] [data-testid="ancestor"]')]
             .some((row) => row.querySelector("strong")?.textContent === arguments[0] && row.dataset.state === "summary");`,
          title,
        ),
      20_000,
      `the summary of “${title}” lands in the pin's panel`,
    );
  }

  harness.windowTest("a local model is set up in the budget panel", async () => {
    await newTree("Rivers");
    await harness.addLocalModel(provider.base);
  });

  harness.windowTest("a pinned highlight opens a sub-thread that carries the anchor, not its sibling", async () => {
    provider.answers.push(ANSWER);
    await send("composer-input", "composer-ask", "Why do rivers meander?", "message-text", 2);
    const [, reply] = await harness.findAll("message-text");
    assert.ok((await reply.getAttribute("innerHTML")).includes("<table"), "Markdown tables render");

    // Opening the pin writes the root thread's summary in the background, ready before the
    // first ask: that ask then makes one request, the answer's.
    provider.answers.push("The person asked why rivers meander; the outer bank erodes.");
    const beforePin = provider.requests.length;
    await select(reply, "the inner bank gains silt");
    await (await harness.find("pin-button")).click();
    const anchor = await harness.find("pin-anchor");
    assert.equal(await anchor.getText(), "the inner bank gains silt");
    await harness.find("anchor-mark");
    await summaryLanded("Rivers");
    assert.equal(provider.requests.length, beforePin + 1, "one summary request, when the pin opened");

    provider.answers.push("Silt settles where the water slows, on the inside of the bend.");
    await send("pin-composer-input", "pin-composer-ask", "Why does silt settle there?", "message-text", 4);
    assert.equal(provider.requests.length, beforePin + 2, "the ask waited for no summary");
    const silt = provider.messages(provider.requests.length - 1).join("\n");
    assert.match(silt, /"the inner bank gains silt"/, "the anchor travels verbatim");
    assert.match(silt, /the outer bank erodes\./, "the ancestry travels as its summary");
    const crumbs = await harness.find("breadcrumbs");
    assert.match(await crumbs.getText(), /Rivers\s*›\s*the inner bank gains silt/);
    await harness.screen("pin-deep-dive");

    // A sibling pin on the same reply never sees the first pin's thread.
    const [, rootReply] = await harness.findAll("message-text");
    await select(rootReply, "the outer bank erodes");
    await (await harness.find("pin-button")).click();
    await harness.driver.wait(async () => (await (await harness.find("pin-anchor")).getText()) === "the outer bank erodes", 5000);
    provider.answers.push("Because the fastest water runs along the outside of the bend.");
    const before = provider.requests.length;
    await send("pin-composer-input", "pin-composer-ask", "Why the outer bank?", "message-text", 4);
    assert.equal(provider.requests.length, before + 1, "the root summary was reused");
    const sibling = provider.messages(provider.requests.length - 1).join("\n");
    assert.match(sibling, /"the outer bank erodes"/);
    assert.doesNotMatch(sibling, /silt settle/i, "never the sibling pin's messages");
  });

  harness.windowTest("a passage of a pin brought back reaches the parent's next request, and nothing else of the pin", async () => {
    // The second pin of the test before: its reply is the last message on show.
    const texts = await harness.findAll("message-text");
    const pinReply = texts.at(-1);
    await select(pinReply, "the fastest water runs along the outside");
    await harness.click("promote-selection");
    const tokens = Number(await (await harness.find("promotion-tokens")).getText());
    assert.ok(tokens > 5, `the cost is shown before it is added (${tokens})`);
    assert.match(await (await harness.find("promotion-text")).getText(), /^Brought back from the pin “the outer bank erodes”, written by .+:\s+the fastest water runs along the outside$/);
    await harness.screen("promotion");
    await harness.click("promotion-confirm");
    await harness.textsWhen("message-text", texts.length + 1, 10_000);
    await harness.driver.wait(async () => (await harness.findAll("promotion")).length === 0, 5000, "the confirmation closes");

    provider.answers.push("Deltas form where the river slows at the sea.");
    const before = provider.requests.length;
    await send("composer-input", "composer-ask", "And where do deltas form?", "message-text", texts.length + 3);
    assert.equal(provider.requests.length, before + 1);
    const sent = provider.messages(before).join("\n");
    assert.match(sent, /Brought back from the pin “the outer bank erodes”/);
    assert.match(sent, /the fastest water runs along the outside/);
    assert.doesNotMatch(sent, /Why the outer bank\?/, "the pin's question stays in the pin");
    assert.doesNotMatch(sent, /Because the fastest water/, "and the rest of its reply");
  });

  harness.windowTest("a summary edited under what the pin knows is what the next request carries", async () => {
    // The pin of "the outer bank erodes" from the tests before is the newest column.
    await harness.driver.executeScript(
      `const columns = document.querySelectorAll('[data-testid="pin-column"]');
       columns[columns.length - 1].querySelector('[data-testid="pin-ancestry"]').open = true;`,
    );
    await harness.click("ancestor-edit", (all) => all.at(-1));
    const editor = await harness.find("ancestor-editor");
    assert.match(await editor.getAttribute("value"), /the outer bank erodes/, "it starts from the summary as written");
    await editor.clear();
    await editor.sendKeys("Edited by hand: the person studies meanders on the Mississippi.");
    await harness.click("ancestor-save");
    await harness.textsUntil(
      "ancestor-how",
      (texts) => texts.some((text) => text.startsWith("Summary written by you")),
      "the panel says the summary is the person's",
    );
    await harness.screen("pin-knows");
    provider.answers.push("On the Mississippi the outer bank erodes fastest in spring.");
    const before = provider.requests.length;
    const shown = (await harness.findAll("message-text")).length;
    await send("pin-composer-input", "pin-composer-ask", "When does it erode fastest?", "message-text", shown + 2);
    assert.equal(provider.requests.length, before + 1, "no summary was written for the send");
    const sent = provider.messages(before).join("\n");
    assert.match(sent, /Edited by hand: the person studies meanders on the Mississippi\./, "the edit is sent");
    assert.doesNotMatch(sent, /The person asked why rivers meander; the outer bank erodes\./, "the summary it replaced is not");
  });

  harness.windowTest("a pin closes with a result the model suggests and the person edits, and the parent shows it", async () => {
    provider.answers.push("It erodes fastest in spring floods.");
    const before = provider.requests.length;
    await harness.click("pin-suggest", (all) => all.at(-1));
    await harness.textsUntil("pin-suggested", (texts) => texts.some((text) => text.startsWith("Suggested by Local test model")), "the suggestion is offered");
    const field = (await harness.findAll("pin-result-input")).at(-1);
    assert.equal(await field.getProperty("value"), "It erodes fastest in spring floods.", "the suggestion waits in the field");
    const asked = provider.messages(before).join("\n");
    assert.match(asked, /Person: When does it erode fastest\?/, "the suggestion was written from the pin's thread");
    assert.equal((await harness.findAll("pin-result")).length, 0, "nothing is saved before the person closes");
    await field.clear();
    await field.sendKeys("Spring floods erode the outer bank fastest.");
    await harness.click("pin-close", (all) => all.at(-1));
    await harness.textsUntil("pin-result", (texts) => texts.some((text) => text.includes("Spring floods erode the outer bank fastest.")), "closed with the edit");
    await harness.textsUntil("pin-chip", (texts) => texts.some((text) => text.includes("Spring floods erode the outer bank fastest.")), "the parent shows the result");
  });

  harness.windowTest("a hostile reply renders inert", async () => {
    await newTree("Hostile");
    provider.answers.push(XSS_REPLY);
    await send("composer-input", "composer-ask", "Say something dangerous.", "message-text", 2);
    await harness.driver.wait(async () => {
      const [, shown] = await harness.findAll("message-text");
      return shown ? String(await shown.getProperty("textContent")).includes("Still readable text.") : false;
    }, 10_000);
    const [, reply] = await harness.findAll("message-text");
    const report = await harness.driver.executeScript(
      `const root = arguments[0];
       root.querySelectorAll("p, a, span").forEach((element) => element.click());
       return {
         pwned: window.__pwned ?? null,
         dangerous: root.querySelectorAll("script, img, iframe, svg, [onerror], [onload], [onclick], [href], [src], [style]").length,
       };`,
      reply,
    );
    assert.deepEqual(report, { pwned: null, dangerous: 0 });
    assert.ok(String(await reply.getProperty("textContent")).includes("click me"), "the text stays readable");
  });

  harness.windowTest("two branches are compared word by word", async () => {
    await newTree("Branches");
    provider.answers.push("Rivers meander because banks erode unevenly.");
    await send("composer-input", "composer-ask", "Why meanders?", "message-text", 2);
    await harness.click("compare-pick", (picks) => picks[1]);
    provider.answers.push("Rivers wander because banks erode unevenly.");
    await harness.click("regenerate");
    await harness.textsUntil("alternative-position", (texts) => texts.includes("2/2"), "the second answer", 20_000);
    await harness.click("compare-pick", (picks) => picks[1]);
    const comparison = await harness.find("comparison");
    assert.match(await (await harness.find("common-ancestor")).getText(), /share 1 message and part after “Why meanders\?”/);
    assert.equal(await (await harness.find("diff-left")).getText(), "meander");
    assert.equal(await (await harness.find("diff-right")).getText(), "wander");
    await harness.screen("branch-comparison");
    assert.ok(await comparison.isDisplayed());
    await (await harness.find("comparison-close")).click();
  });

  harness.windowTest("a pin's request carries nothing of its parent thread after the anchor", async () => {
    await newTree("After the anchor");
    provider.answers.push("Rivers meander because the outer bank erodes while the inner bank fills.");
    await send("composer-input", "composer-ask", "Why do rivers meander?", "message-text", 2);
    provider.answers.push("Oxbow lakes form when a meander loop is cut off by the flow.");
    await send("composer-input", "composer-ask", "And what are oxbow lakes?", "message-text", 4);

    const [, firstReply] = await harness.findAll("message-text");
    provider.answers.push("The person asked why rivers meander.");
    await select(firstReply, "the outer bank erodes");
    await harness.click("pin-button");
    await harness.textsUntil("pin-anchor", (texts) => texts.includes("the outer bank erodes"), "the pin opens");
    await summaryLanded("After the anchor");
    provider.answers.push("Because the flow is fastest on the outside of the bend.");
    await send("pin-composer-input", "pin-composer-ask", "Why does it erode, and do oxbow lakes matter?", "message-text", 6);
    const sub = provider.messages(provider.requests.length - 1).join("\n");
    assert.match(sub, /"the outer bank erodes"/, "the anchor travels verbatim");
    assert.doesNotMatch(sub, /Oxbow lakes form/, "the parent's reply after the anchor stays out");
    assert.doesNotMatch(sub, /what are oxbow lakes/, "the parent's question after the anchor stays out");
  });

  harness.windowTest("a summary written before its message was excluded is stale in the pin, which then carries none of it", async () => {
    await newTree("Codes");
    provider.answers.push("Noted.");
    await send("composer-input", "composer-ask", "The secret code is PURPLE-42. Remember it.", "message-text", 2);
    provider.answers.push(ANSWER);
    await send("composer-input", "composer-ask", "Why do rivers meander?", "message-text", 4);
    // The summariser quotes the code, as one that echoes what it reads would.
    provider.answers.push("The person gave the secret code PURPLE-42 and asked why rivers meander.");
    await select((await harness.findAll("message-text")).at(-1), "the inner bank gains silt");
    await harness.click("pin-button");
    await harness.driver.wait(async () => (await (await harness.find("pin-anchor")).getText()) === "the inner bank gains silt", 5000);
    await summaryLanded("Codes");

    // Excluded: the summary goes stale, and the one written again is held unanswered until
    // the test has seen the panel say so.
    provider.answers.push({ partial: "The person asked why rivers meander" });
    await harness.click("more-actions");
    await harness.click("exclude-toggle");
    const [how] = await harness.textsUntil(
      "ancestor-how",
      (texts) => texts.some((text) => /^Stale summary, not sent: it was written before message #\d+ was excluded\./.test(text)),
      "the pin's panel says the summary is stale, and why",
      20_000,
    );
    assert.match(how, /Its last messages before the pin are sent instead/);
    assert.equal(
      await harness.driver.executeScript(
        `return document.querySelector('[data-testid="pin-column"] [data-testid="ancestor"][data-stale="true"]') !== null;`,
      ),
      true,
    );
    await harness.screen("pin-stale-summary");
    provider.release();
    await summaryLanded("Codes");

    provider.answers.push("Silt settles where the water slows.");
    const shown = (await harness.findAll("message-text")).length;
    await send("pin-composer-input", "pin-composer-ask", "Why does silt settle there?", "message-text", shown + 2);
    const asked = provider.requests.findLastIndex((request) => request.body.includes("Why does silt settle there?"));
    assert.ok(asked >= 0, "the pin's question was sent");
    const sent = provider.messages(asked).join("\n");
    assert.doesNotMatch(sent, /PURPLE-42/, "neither the excluded message nor the summary that quoted it");
    assert.match(sent, /The person asked why rivers meander/, "the summary written again");

    // The summary the pin caused is in the tree's list of requests made on their own.
    await harness.click("tree-menu");
    await harness.click("open-requests");
    await harness.textsUntil("request-facts", (texts) => texts.some((text) => /^\d[\d,]* planned, counted 50 \+ \d+ reply/.test(text)), "the summary request with its tokens");
    await harness.textsUntil("requests-summary", ([text]) => /^2 requests · [\d,]+ tokens planned · no price set$/.test(text ?? ""), "the list adds them up");
    // The newest, written again after the exclusion, was sent without the excluded message.
    await harness.click("request-open");
    const [body] = await harness.textsUntil("request-body", ([text]) => /Why do rivers meander\?/.test(text ?? ""), "the request opens with its body as sent");
    assert.doesNotMatch(body, /PURPLE-42/);
    await harness.screen("requests-panel");
    await harness.click("requests-close");
  });

  harness.windowTest("a regenerated branch never reaches the other's request, and each reply keeps a receipt", async () => {
    await newTree("Isolation");
    provider.answers.push("Erosion carves the outer bank of the bend.");
    await send("composer-input", "composer-ask", "Why do rivers bend?", "message-text", 2);
    provider.answers.push("Sediment piles on the inner bank of the bend.");
    await harness.click("regenerate");
    await harness.textsUntil("alternative-position", (texts) => texts.includes("2/2"), "the second answer", 20_000);
    // Asked on the second branch about the words of the first: a whole-tree search would bring
    // them back.
    provider.answers.push("It depends on the flow.");
    await send("composer-input", "composer-ask", "Tell me about erosion that carves the bank", "message-text", 4);
    const body = provider.requests.at(-1).body;
    assert.ok(body.includes("Sediment piles"), "its own branch is sent");
    assert.ok(!body.includes("Erosion carves"), "the abandoned answer is not");

    await harness.click("receipt-toggle", (all) => all.at(-1));
    await harness.textsUntil(
      "receipt-verdict",
      (texts) => texts.some((text) => /^matched · planned \d+/.test(text)),
      "the receipt shows what was planned beside what the provider counted",
    );
    await harness.click("request-diff");
    await harness.textsUntil(
      "request-diff-result",
      (texts) => texts.some((text) => /Against the request of message \d+: \d+ came, 0 went/.test(text)),
      "the request is compared with the one before it",
    );
    await harness.screen("receipt");
  });

  harness.windowTest("a file attached from disk reaches the inspector and the request; a note stays with its message", async () => {
    await newTree("Attached");
    await type("composer-input", "Summarise my notes.");
    await (await harness.find("composer-send")).click();
    await harness.textsWhen("message-text", 1);
    const notes = join(harness.dataDir, "field-notes.md");
    writeFileSync(notes, "Oxbow lakes form when a meander is cut off.");
    // A path the window makes up is refused by the shell: only what the person chose is read.
    const refused = await harness.driver.executeAsyncScript(`
      const done = arguments[arguments.length - 1];
      window.__TAURI_INTERNALS__
        .invoke("attach_path", { treeId: 1, to: { on: "tree" }, path: ${JSON.stringify(notes)}, standsAs: "file" })
        .then(() => done("attached"), (error) => done(error.message));
    `);
    assert.match(refused, /was not chosen in this window/);
    await harness.click("attach-choose");
    await harness.answerFileDialog("Attach files", notes);
    await harness.textsWhen("attachment", 1);
    await harness.click("inspect");
    await harness.textsUntil("slice", (kinds) => kinds.some((text) => text.startsWith("file")), "the file is a slice");

    await harness.click("notes-toggle");
    await type("note-input", "The reader is a child.");
    await harness.driver.executeScript(
      `document.querySelector('.note-form input[type="checkbox"]').click();`,
    );
    await harness.driver.executeScript(`document.querySelector('.note-form button').click();`);
    await harness.driver.wait(async () => {
      const [list] = await harness.textsWhen("notes", 1);
      return list.includes("The reader is a child.");
    }, 10_000, "the note is listed under its message");
    // The search box finds the message; adding it to the search slice is remembered.
    await type("search-query", "Summarise");
    await harness.click("search-submit");
    await harness.textsWhen("search-result", 1);
    await harness.click("search-add");
    await harness.textsUntil("search-add", (labels) => labels[0]?.startsWith("In the search slice"), "the hit is in the search slice");

    await (await harness.find("show-request")).click();
    await harness.textsUntil(
      "request-body",
      (texts) => texts.some((text) => text.includes("Oxbow lakes form")),
      "the request carries the closed pin's result",
    );
  });

  harness.windowTest("the tree map, as a picture and as an outline, moves with the arrow keys and opens the message chosen", async () => {
    await newTree("Map");
    for (const text of ["First step", "Second step", "Third step"]) {
      await type("composer-input", text);
      await (await harness.find("composer-send")).click();
      await harness.driver.wait(
        async () => (await (await harness.find("composer-input")).getAttribute("value")) === "",
        10_000,
        "the message is added",
      );
    }
    await harness.textsWhen("message-text", 3);
    // The map starts at the message in focus, and the arrows move from there.
    await harness.click("inspect", (buttons) => buttons[2]);
    await harness.click("open-map");
    await harness.find("tree-map");
    // The picture first: its live region names the current message, and the keys move it.
    const current = () =>
      harness.driver.executeScript("return document.querySelector('[data-testid=map-current]')?.textContent ?? ''");
    await harness.driver.wait(async () => /You · message #\d+ · 3 deep: Third step/.test(await current()), 10_000, "the picture starts at the focus");
    assert.match(await (await harness.find("map-size")).getText(), /^3 messages · 1 run · 0 pins$/);
    await harness.driver.actions().sendKeys("\uE012").perform(); // ArrowLeft: to the parent
    await harness.driver.wait(async () => /2 deep: Second step/.test(await current()), 5000, "the picture's parent is chosen");
    // The outline, the accessible view, one row per message.
    await harness.click("map-view-outline");
    await harness.driver.wait(async () => (await harness.findAll("map-row")).length === 3, 5000, "three rows");
    const selected = () =>
      harness.driver.executeScript(
        "return document.querySelector('[data-testid=map-row][aria-selected=true]')?.textContent.trim() ?? ''",
      );
    assert.match(await selected(), /Third step/);
    await harness.driver.actions().sendKeys("\uE012").perform(); // ArrowLeft: to the parent
    await harness.driver.wait(async () => /Second step/.test(await selected()), 5000, "the parent is chosen");
    await harness.driver.actions().sendKeys("\uE012").perform();
    await harness.driver.wait(async () => /First step/.test(await selected()), 5000, "its parent is chosen");
    await harness.driver.actions().sendKeys("\uE012").perform(); // no parent: stays
    await harness.driver.actions().sendKeys("\uE007").perform(); // Enter opens it
    await harness.driver.wait(async () => (await harness.findAll("tree-map")).length === 0, 5000);
    // The message opened is the one chosen: in focus in the thread.
    await harness.driver.wait(
      async () =>
        (await harness.driver.executeScript(
          "return document.querySelector('li.message.focused [data-testid=message-text]')?.textContent.trim() ?? ''",
        )) === "First step",
      5000,
      "the chosen message in focus",
    );
  });

  harness.windowTest("a smaller budget changes what the inspector cuts", async () => {
    await newTree("Budget");
    for (const turn of [1, 2, 3, 4, 5, 6]) {
      await type("composer-input", `Turn ${turn}: the river carries silt past the bend and drops it where it slows.`);
      await (await harness.find("composer-send")).click();
      await harness.textsWhen("message-text", turn);
    }
    await harness.click("inspect", (all) => all.at(-1));
    await harness.find("slices");
    // The prompt's words are found in the earlier turns, which the history carries whole: those
    // search hits are listed as already there, and nothing is cut.
    await harness.textsUntil(
      "prune-reason",
      (reasons) => reasons.every((reason) => reason === "already in history"),
      "everything fits at first",
    );

    await (await harness.find("open-budget")).click();
    // 110 tokens for the context: the six 23-token messages do not fit, the four protected ones
    // do, and there is no room to keep a fifth.
    await type("budget-window", "130");
    await type("budget-reserve", "20");
    await harness.textsUntil("budget-preview-cut", ([cut]) => Number(cut) > 0, "the live preview cuts");
    await (await harness.find("budget-save")).click();
    await harness.find("budget-saved", 10_000);
    await harness.screen("budget-panel");
    await (await harness.find("budget-close")).click();
    await harness.textsUntil(
      "prune-reason",
      (reasons) => reasons.some((reason) => /truncated|over budget/.test(reason)),
      "the inspector reports what the smaller budget cut",
    );
    // The picture is of the inspector: taken once the budget panel has gone from over it.
    await harness.driver.wait(async () => (await harness.findAll("budget-save")).length === 0, 5000, "the budget panel closes");
    await harness.screen("context-inspector");

    // Keeping a cut message that cannot fit beside the required ones is refused and undone.
    await harness.click("slice-keep");
    await harness.textsUntil(
      "inspector-error",
      (texts) => texts.some((text) => /was not kept/.test(text)),
      "keeping what cannot fit is refused",
    );
    assert.ok((await harness.findAll("pruned-slice")).length > 0, "the report is still shown");

    // Excluding a message from the inspector cuts it with that reason.
    await harness.click("slice-exclude");
    await harness.textsUntil(
      "prune-reason",
      (reasons) => reasons.includes("excluded by you"),
      "the excluded message is reported as excluded",
    );
  });

  harness.windowTest("a thread the budget cuts is compacted from the inspector, marked in the thread, undone, then compacted before a send", async () => {
    // The "Budget" tree of the test before: six messages, cut to fit 110 tokens.
    provider.answers.push("Earlier: silt is carried past the bend.");
    const before = provider.requests.length;
    await type("compact-keep", "2");
    await harness.click("compact-thread");
    const [note] = await harness.textsUntil(
      "compaction-note",
      ([text]) => /Messages #\d+–#\d+ \(2\) are compacted into \d+ tokens by Local test model/.test(text ?? ""),
      "the inspector names the compacted messages",
      20_000,
    );
    assert.ok(note);
    assert.equal(provider.requests.length, before + 1, "one request, the summary's");
    // A summary request of the thread (the 130-token window leaves the summariser little of it).
    assert.match(provider.messages(before).join("\n"), /You write the summary of a conversation thread/);
    // The thread itself marks it, after the last message it stands for.
    await harness.textsUntil(
      "thread-compaction-note",
      ([text]) => /Messages #\d+–#\d+ \(2\) are compacted/.test(text ?? ""),
      "the thread marks the compaction",
    );
    await harness.click("compaction-show");
    await harness.textsUntil("compaction-text", ([text]) => text === "Earlier: silt is carried past the bend.", "the summary shows");
    await harness.screen("compaction");
    await harness.click("thread-compaction-undo");
    await harness.driver.wait(async () => (await harness.findAll("compaction-note")).length === 0, 10_000, "undone");
    await harness.textsWhen("thread-compaction-note", 0);
    await harness.find("compact-thread", 10_000);

    // The tree compacts on its own now, once the history fills a tenth of the budget (with the
    // message excluded above, what is left fits), keeping the last turn: the inspector says the
    // send will.
    await harness.click("open-settings", undefined, 20_000);
    await harness.choose("tree-compaction", "automatic");
    await type("tree-compact-at", "10");
    await type("tree-compaction-keep", "1");
    await harness.click("tree-settings-save");
    await harness.textsUntil("settings-message", (texts) => texts.length > 0, "the tree's settings are saved");
    await harness.click("settings-close");
    await harness.textsUntil(
      "compaction-due",
      ([text]) => /: sending compacts the \d+ messages up to #\d+ \([\d,]+ tokens\) into a summary first, keeping the last turn\.$/.test(text ?? ""),
      "the inspector says the send compacts first",
    );
    provider.answers.push("Earlier: the river drops silt where it slows.", "Downstream, in the delta.");
    const sending = provider.requests.length;
    const shown = (await harness.findAll("message-text")).length;
    await send("composer-input", "composer-ask", "Where does it settle?", "message-text", shown + 2);
    assert.equal(provider.requests.length, sending + 2, "the compaction's summary, then the reply");
    assert.match(provider.messages(sending).join("\n"), /You write the summary of a conversation thread/);
    assert.match(provider.messages(sending + 1).join("\n"), /the river drops silt where it slows/);
    await harness.textsUntil("thread-compaction-note", ([text]) => /are compacted into/.test(text ?? ""), "the thread marks it");
  });

  harness.windowTest("a reply cut off by a crash comes back after a restart, marked incomplete", async () => {
    await newTree("Crash");
    const whole = "Rivers **meander** because the outer bank erodes";
    provider.answers.push({ partial: whole });
    await type("composer-input", "Why meanders?");
    await harness.click("composer-ask");
    await harness.textsUntil(
      "streaming-saved",
      (texts) => texts.some((text) => text.startsWith(`${whole.length} characters saved`)),
      "what arrived is saved while the model is still writing",
      20_000,
    );
    // While it arrives the reply is plain text; it is rendered as Markdown once written.
    await harness.textsUntil("streaming-text", (texts) => texts.includes(whole), "the reply arriving as plain text");
    await harness.killApp();
    await harness.launch();
    const rendered = "Rivers meander because the outer bank erodes";
    await harness.textsUntil("message-text", (texts) => texts.includes(rendered), "the reply is back", 20_000);
    await harness.textsWhen("incomplete-badge", 1);
  });

});
