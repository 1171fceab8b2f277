// Trees in and out of the real window through files: exported and imported through the system's
// file dialogs (GTK's, answered by typing into them with xdotool as a person would), a
// 10,000-message import with its progress and report, and files dropped on the window (a real
// X drag from another program).
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe } from "node:test";

import { Key } from "selenium-webdriver";

import { Harness } from "./harness.mjs";
import { ScriptedProvider } from "./provider.mjs";

/// An Open Loom document with one tree: a chain of `length` messages, person and model in turn.
function chainDocument(title, length) {
  const id = (index) => `m${String(index).padStart(5, "0")}`;
  const nodes = {};
  const edges = [];
  for (let index = 0; index < length; index++) {
    nodes[id(index)] = {
      id: id(index),
      content: [{ type: "text", text: `Step ${index} of the long walk.` }],
      author: { role: index % 2 === 0 ? "human" : "model" },
    };
    if (index > 0) edges.push({ type: "continuation", sources: [{ nodeId: id(index - 1) }], targetNodeId: id(index) });
  }
  return JSON.stringify({
    format: "open-loom",
    version: "2.0",
    trees: [{ id: "t1", title, rootNodeIds: [id(0)], nodes, edges }],
  });
}

/// ChatGPT's conversations.json with one conversation, in the export's shape: a root without a
/// message, a question, two answers (the second a regeneration, the one ChatGPT showed), and a
/// follow-up under the second.
function chatGptExport() {
  const id = (n) => `aaaa${String(n).padStart(4, "0")}-0000-4000-8000-000000000000`;
  const said = (n, role, text, slug) => ({
    id: id(n),
    author: { role, name: null, metadata: {} },
    create_time: 1_720_000_000 + n * 10,
    content: { content_type: "text", parts: [text] },
    status: "finished_successfully",
    metadata: slug ? { model_slug: slug } : {},
    recipient: "all",
  });
  const node = (n, parent, children, message) => [id(n), { id: id(n), message, parent: parent === null ? null : id(parent), children: children.map(id) }];
  const mapping = Object.fromEntries([
    node(0, null, [1], null),
    node(1, 0, [2, 3], said(1, "user", "Why do rivers meander?")),
    node(2, 1, [], said(2, "assistant", "Because the outer bank erodes while the inner bank gains silt.", "gpt-4o")),
    node(3, 1, [4], said(3, "assistant", "Water runs fastest along the outside of each bend.", "gpt-4o-mini")),
    node(4, 3, [5], said(4, "user", "And then?")),
    node(5, 4, [], said(5, "assistant", "The bend grows until it is cut off.", "gpt-4o-mini")),
  ]);
  const conversationId = "6f1c2a4e-0b3d-4c5e-8f9a-1b2c3d4e5f61";
  return JSON.stringify([
    { title: "Meanders", create_time: 1_720_000_000, update_time: 1_720_000_100, mapping, current_node: id(5), conversation_id: conversationId, id: conversationId },
  ]);
}

describe("trees in and out through files", () => {
  const harness = new Harness();
  const provider = new ScriptedProvider();
  let files;

  before(async () => {
    await provider.start();
    await harness.start();
    files = mkdtempSync(join(tmpdir(), "pinloom-e2e-files-"));
  });

  after(async () => {
    await harness.stop();
    await provider.stop();
    rmSync(files, { recursive: true, force: true });
  });

  harness.windowTest("a tree goes out and comes back through the file dialogs", async () => {
    await harness.launch();
    await (await harness.find("new-tree-title")).sendKeys("Rivers");
    await harness.click("new-tree-submit");
    await harness.textsUntil("thread-title", (texts) => texts.includes("Rivers"), "the new tree is open");
    const composer = await harness.find("composer-input");
    await composer.sendKeys("Why do rivers meander?", Key.chord(Key.ALT, Key.ENTER));
    await harness.textsWhen("message-text", 1);
    await composer.sendKeys("And why does the outer bank erode?", Key.chord(Key.ALT, Key.ENTER));
    await harness.textsWhen("message-text", 2);

    // Open Loom, through the save dialog.
    const openLoom = join(files, "rivers-export.json");
    await harness.click("open-export");
    await harness.click("export-choose");
    await harness.answerFileDialog('Export "Rivers"', openLoom, { saving: true });
    const [saved] = await harness.textsUntil(
      "export-done",
      (texts) => texts.length === 1,
      "the export's note in the tree list",
    );
    assert.match(saved, /^Saved 2 messages to .*rivers-export\.json \(\d+\.\d KB\)\.$/);
    const document = JSON.parse(readFileSync(openLoom, "utf8"));
    assert.equal(document.format, "open-loom");
    assert.deepEqual(
      Object.values(document.trees[0].nodes).map((node) => node.content[0].text),
      ["Why do rivers meander?", "And why does the outer bank erode?"],
    );

    // Markdown, through the same dialog.
    const markdown = join(files, "rivers.md");
    await harness.click("open-export");
    await harness.click("export-format-markdown");
    await harness.click("export-choose");
    await harness.answerFileDialog('Export "Rivers"', markdown, { saving: true });
    await harness.textsUntil("export-done", (texts) => texts[0]?.includes("rivers.md"), "the Markdown export's note");
    const text = readFileSync(markdown, "utf8");
    assert.match(text, /^# Rivers\n/);
    assert.match(text, /Why do rivers meander\?[\s\S]*And why does the outer bank erode\?/);

    // And back in through the open dialog: a second tree, reported as the command line reports it
    // (a copy of the tree already here, with global ids of its own: it syncs as another tree).
    await harness.click("import-choose");
    await harness.answerFileDialog("Import trees", openLoom);
    const [report] = await harness.textsUntil("import-report", (texts) => texts.length === 1, "the import report");
    assert.match(
      report,
      /^Imported "Rivers" as tree \d+ \(rivers-2\): 2 messages, 0 threads\.\n.*\n {2}- "Rivers" is already here \(tree \d+, the same global id\): it was imported as a copy/,
    );
    assert.deepEqual(await harness.textsWhen("tree-title", 2), ["Rivers", "Rivers"]);
    assert.deepEqual(await harness.textsWhen("message-text", 2), [
      "Why do rivers meander?",
      "And why does the outer bank erode?",
    ]);
    await harness.click("transfer-dismiss");
    await harness.textsWhen("import-report", 0);
    await harness.quit();
  });

  harness.windowTest("a 10,000-message import shows its progress, then its report and the tree", async () => {
    const big = join(files, "long walk.json");
    writeFileSync(big, chainDocument("The long walk", 10_000));
    await harness.launch();
    await harness.textsUntil("tree-title", (texts) => texts.length >= 1, "the tree list");
    await harness.click("import-choose");
    await harness.answerFileDialog("Import trees", big);
    // Writing 10,000 messages takes seconds (longer on a busy machine): the bar shows meanwhile.
    const [progress] = await harness.textsUntil(
      "transfer-progress-text",
      (texts) => texts.length === 1,
      "the import's progress",
      30_000,
    );
    assert.match(progress, /^(Starting…|Reading the file: .* MB|Checked 10,000 messages; writing them|Writing [\d,]+ of 10,000 messages)$/);
    await harness.screen("import-progress");
    const [report] = await harness.textsUntil("import-report", (texts) => texts.length === 1, "the import report", 120_000);
    assert.match(report, /^Imported "The long walk" as tree \d+ \(the-long-walk\): 10000 messages, 0 threads\./);
    await harness.textsUntil("thread-title", (texts) => texts.includes("The long walk"), "the imported tree opens");
    const [meta] = await harness.textsUntil(
      "tree-meta",
      (texts) => texts.some((text) => text.startsWith("10,000 messages")),
      "the list counts the imported messages",
    );
    assert.ok(meta);
    await harness.quit();
  });

  harness.windowTest("a ChatGPT export dropped on the tree list keeps its regenerations, and an old answer is pinned and asked about", async () => {
    const file = join(files, "conversations.json");
    writeFileSync(file, chatGptExport());
    await harness.launch();
    await harness.click("tree-item", (items) => items.at(-1));
    await harness.textsWhen("message-text", 2, 30_000);
    await harness.dragFiles([file], { x: 140, y: 600 });
    const [report] = await harness.textsUntil("import-report", (texts) => texts.length === 1, "the export's import report");
    assert.match(report, /^Imported "Meanders" as tree \d+ \(meanders\): 5 messages, 0 threads\./);
    await harness.textsUntil("thread-title", (texts) => texts.includes("Meanders"), "the conversation opens");
    // The branch ChatGPT showed; its answer is the second of two.
    await harness.textsUntil("message-text", (texts) => texts.at(-1) === "The bend grows until it is cut off.", "the shown branch");
    await harness.textsUntil("alternative-position", (texts) => texts.includes("2/2"), "the regeneration's switcher");
    await harness.driver.executeScript(`document.querySelector('[aria-label="Previous alternative"]').click();`);
    await harness.textsUntil(
      "message-text",
      (texts) => texts.includes("Because the outer bank erodes while the inner bank gains silt."),
      "the first answer, switched to",
    );
    // A model to ask with, then a passage of the old answer pinned and asked about: the pin sees
    // the old answer's branch as its summary and the passage, never the answer ChatGPT showed.
    await harness.addLocalModel(provider.base);
    provider.answers.push("The person asked why rivers meander; the outer bank erodes.");
    provider.answers.push("Faster water on the outside of the bend carries the bank away.");
    const asked = provider.requests.length;
    const old = (await harness.findAll("message-text")).at(-1);
    await harness.select(old, "the outer bank erodes");
    await (await harness.find("pin-button")).click();
    await harness.textsUntil("pin-anchor", (texts) => texts[0] === "the outer bank erodes", "a pin on the old answer");
    // The summary of what the pin hangs from is written as it opens; asked once it has landed, the
    // two requests come in a known order.
    await harness.driver.wait(
      () =>
        harness.driver.executeScript(
          `return [...document.querySelectorAll('[data-testid="pin-column"] [data-testid="ancestor"]')].some((row) => row.dataset.state === "summary");`,
        ),
      30_000,
      "the summary of the pin's ancestry lands",
    );
    await harness.type("pin-composer-input", "Why does it erode there?");
    await harness.click("pin-composer-ask");
    await harness.textsUntil(
      "message-text",
      (texts) => texts.includes("Faster water on the outside of the bend carries the bank away."),
      "the pin's answer",
      30_000,
    );
    const requests = provider.requests.slice(asked).map((_, at) => provider.messages(asked + at).join("\n"));
    assert.equal(requests.length, 2, "the pin's summary of its ancestry, then its question");
    assert.match(requests[1], /"the outer bank erodes"/, "the passage travels verbatim");
    assert.match(requests[1], /Why does it erode there\?$/);
    for (const request of requests) {
      assert.ok(!request.includes("The bend grows until it is cut off."), `never the branch ChatGPT showed: ${request}`);
    }
    await harness.quit();
  });

  harness.windowTest("files dropped on the tree list are imported, on the open tree attached", async () => {
    const tree = join(files, "deltas.json");
    writeFileSync(tree, chainDocument("Deltas", 4));
    const notes = join(files, "field notes.txt");
    writeFileSync(notes, "Sediment settles where the river slows.\n");
    await harness.launch();
    // A small tree open and drawn, so the window is idle when the drag comes.
    await harness.click("tree-item", (items) => items.at(-1));
    await harness.textsUntil("thread-title", (texts) => texts.includes("Rivers"), "a small tree is open");
    await harness.textsWhen("message-text", 2, 30_000);

    // On the list: imported, reported and opened.
    await harness.dragFiles([tree], { x: 140, y: 600 });
    const [report] = await harness.textsUntil("import-report", (texts) => texts.length === 1, "the dropped file's import report");
    assert.match(report, /^Imported "Deltas" as tree \d+ \(deltas\): 4 messages, 0 threads\./);
    await harness.textsUntil("thread-title", (texts) => texts.includes("Deltas"), "the dropped tree opens");
    assert.deepEqual(await harness.textsWhen("message-text", 4), [0, 1, 2, 3].map((step) => `Step ${step} of the long walk.`));

    // On the open tree: attached to it, not imported.
    const trees = (await harness.textsUntil("tree-title", (texts) => texts.length > 0, "the tree list")).length;
    await harness.dragFiles([notes], { x: 600, y: 400 });
    const [attached] = await harness.textsUntil("attachment", (texts) => texts.length === 1, "the dropped file attached");
    assert.match(attached, /field notes\.txt/);
    assert.equal((await harness.textsWhen("tree-title", trees)).length, trees, "no tree was imported");

    // Attached as an instruction, chosen in the bar before the drop: its text joins the system
    // context, and the list says so.
    const style = join(files, "style.md");
    writeFileSync(style, "Answer as a hydrologist.\n");
    await harness.click("attachments-toggle");
    await harness.find("attach-as");
    await harness.choose("attach-as", "instruction");
    await harness.dragFiles([style], { x: 600, y: 400 });
    const listed = await harness.textsUntil("attachment", (texts) => texts.length === 2, "the instruction attached");
    assert.ok(listed.some((text) => /style\.md/.test(text) && /as an instruction/.test(text)), listed.join(" | "));
    await harness.quit();
  });
});
