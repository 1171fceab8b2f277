import { beforeAll, describe, expect, it } from "vitest";

import {
  hasCodeBlock,
  highlighterLoaded,
  highlighterReady,
  locateSelection,
  markAnchors,
  renderMarkdown,
  sentencesOf,
  withoutMarkup,
} from "./markdown";

// The corpus the end-to-end test also sends through a real reply.
export const XSS_CORPUS = [
  "<script>window.__pwned = 1</script>",
  '<img src="http://127.0.0.1:9/x.png" onerror="window.__pwned = 2">',
  '<a href="javascript:window.__pwned = 3">click</a>',
  '[link](javascript:window.__pwned=4)',
  '<iframe src="https://example.com"></iframe>',
  '<svg onload="window.__pwned = 5"><circle r="4"/></svg>',
  '<div style="background:url(http://127.0.0.1:9/bg)">styled</div>',
  '<form action="http://127.0.0.1:9/"><button>go</button></form>',
  '<meta http-equiv="refresh" content="0;url=http://127.0.0.1:9/">',
  '<p onclick="window.__TAURI_INTERNALS__.invoke(\'tree_list\')">ipc</p>',
  "![remote](http://127.0.0.1:9/tracker.png)",
];

describe("the highlighter, read after the window is up", () => {
  it("shows a code block plain, escaped, until it is loaded, then highlighted", async () => {
    expect(highlighterLoaded()).toBe(false);
    const plain = renderMarkdown("```rust\nfn main() { 1 < 2 }\n```");
    expect(plain).toContain('<pre tabindex="0"><code class="hljs">fn main() { 1 &lt; 2 }');
    expect(plain).not.toContain("hljs-keyword");
    await highlighterReady();
    expect(highlighterLoaded()).toBe(true);
    expect(renderMarkdown("```rust\nfn main() {}\n```")).toContain("hljs-keyword");
  });

  it("knows a text with a code block from one without", () => {
    expect(hasCodeBlock("Text\n\n```js\nx\n```")).toBe(true);
    expect(hasCodeBlock("Text\n\n    indented code")).toBe(true);
    expect(hasCodeBlock("Text with `inline` code only")).toBe(false);
  });
});

describe("renderMarkdown", () => {
  beforeAll(() => highlighterReady());

  it("renders the usual Markdown: emphasis, code, tables", () => {
    const html = renderMarkdown("**bold** and `code`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```rust\nfn main() {}\n```");
    expect(html).toContain("<strong>bold</strong>");
    // A wide table and a code block scroll sideways: each can take focus, so a keyboard scrolls it.
    expect(html).toContain('<table tabindex="0">');
    expect(html).toContain('<pre tabindex="0">');
    expect(html).toContain('class="hljs"');
    expect(html).toContain("hljs-keyword");
  });

  it("leaves nothing that can run, load or navigate", () => {
    for (const attack of XSS_CORPUS) {
      const html = renderMarkdown(attack);
      const lower = html.toLowerCase();
      for (const forbidden of ["<script", "onerror", "onload", "onclick", "javascript:", "<iframe", "<img", "<svg", "style=", "<form", "<meta", "href=", "src="]) {
        expect(lower, `${attack} → ${html}`).not.toContain(forbidden);
      }
    }
  });

  it("keeps no class of the window's own, only highlighting's", () => {
    const html = renderMarkdown(
      '<p class="overlay settings-panel">Your session expired.</p> <span class="hljs-keyword modal">fn</span>\n\n[x](https://e.example)',
    );
    const classes = [...html.matchAll(/class="([^"]*)"/g)].map((match) => match[1]);
    expect(classes).toEqual(["hljs-keyword", "link"]);
    const code = renderMarkdown("```rust\nfn main() {}\n```");
    expect(code).toContain("hljs-title function_");
  });

  it("keeps a link's address readable without making it followable", () => {
    const html = renderMarkdown("[docs](https://example.com/a)");
    expect(html).toContain('title="https://example.com/a"');
    expect(html).not.toContain("href");
  });
});

describe("anchors", () => {
  it("finds a selection in the source nearest where it was made", () => {
    const source = "the bank, the bank, the bank";
    expect(locateSelection(source, "the bank", 0)).toEqual({ start: 0, end: 8 });
    expect(locateSelection(source, " the bank ", 0.95)).toEqual({ start: 20, end: 28 });
    expect(locateSelection(source, "**the**", 0.5)).toBeNull();
    expect(locateSelection("é🌊 x", "x", 0)).toEqual({ start: 4, end: 5 });
  });

  // What a person selects is rendered text; the source has the Markdown around it.
  it.each([
    ["bold", "Meanders form because **the outer bank erodes** while the inner bank fills.", "bank erodes while the", "bank erodes** while the"],
    ["code", "Call `fold()` twice, then stop.", "fold() twice", "fold()` twice"],
    ["a link", "See [the river](https://example.com/r) bend here.", "river bend", "river](https://example.com/r) bend"],
    ["a paragraph break", "The first part ends.\n\nThe second starts here.", "ends.\n\nThe second", "ends.\n\nThe second"],
    ["a paragraph break as the browser copies it", "The first part ends.\n\nThe second starts here.", "ends.\nThe second", "ends.\n\nThe second"],
    ["list items", "Causes:\n\n- erosion outside\n- silt inside\n", "outside\nsilt", "outside\n- silt"],
    ["a heading", "## Why bends grow\n\nBecause *water* pushes.", "grow\nBecause water", "grow\n\nBecause *water"],
    ["italic with underscores, not snake_case", "Use snake_case for _named_ things.", "snake_case for named", "snake_case for _named"],
  ])("finds a selection across %s in the source", (_, source, selected, expected) => {
    const found = locateSelection(source, selected, 0.5);
    expect(found).not.toBeNull();
    expect(source.slice(found!.start, found!.end)).toBe(expected);
    expect(withoutMarkup(expected)).toBe(selected.replace(/\s+/g, " "));
  });

  it("refuses a selection whose text is not in the message", () => {
    expect(locateSelection("The outer bank erodes.", "inner bank", 0.5)).toBeNull();
  });

  it("marks a passage that crosses formatting piece by piece, and nothing else", () => {
    const source = "Meanders form because **the outer bank erodes** while the inner bank fills.";
    const root = document.createElement("div");
    root.innerHTML = renderMarkdown(source);
    const found = locateSelection(source, "bank erodes while the", 0.5)!;
    markAnchors(root, [{ id: 3, text: source.slice(found.start, found.end) }]);
    const marks = [...root.querySelectorAll("mark.anchor")];
    expect(marks.map((mark) => mark.textContent).join("")).toBe("bank erodes while the");
    expect(marks.every((mark) => mark.getAttribute("data-pin-id") === "3")).toBe(true);
    expect(root.textContent?.trim()).toBe("Meanders form because the outer bank erodes while the inner bank fills.");
  });

  it("marks a passage across paragraphs", () => {
    const source = "The first part ends.\n\nThe second starts here.";
    const root = document.createElement("div");
    root.innerHTML = renderMarkdown(source);
    markAnchors(root, [{ id: 4, text: "ends.\n\nThe second" }]);
    const marks = [...root.querySelectorAll("mark.anchor")];
    expect(marks.map((mark) => mark.textContent)).toEqual(["ends.", "The second"]);
  });

  it("marks a pinned passage inside rendered text without making markup of it", () => {
    const root = document.createElement("div");
    root.innerHTML = renderMarkdown("Meanders form where <b>the outer bank</b> erodes.");
    markAnchors(root, [{ id: 7, text: "the outer bank" }, { id: 8, text: "<b>" }]);
    const marks = root.querySelectorAll("mark.anchor");
    expect(marks).toHaveLength(1);
    expect(marks[0]!.textContent).toBe("the outer bank");
  });
});

describe("sentencesOf", () => {
  it("splits a message into sentences with where each lies in the text", () => {
    const text = "Rivers meander. The **outer** bank erodes!\n\nWhy? Silt settles\nthere";
    const sentences = sentencesOf(text);
    expect(sentences.map((sentence) => text.slice(sentence.start, sentence.end))).toEqual([
      "Rivers meander.",
      "The **outer** bank erodes!",
      "Why?",
      "Silt settles",
      "there",
    ]);
    expect(sentences[1]?.text).toBe("The outer bank erodes!");
  });

  it("keeps a decimal point and a text without an ending whole", () => {
    const text = "Version 2.5 is out";
    expect(sentencesOf(text)).toEqual([{ start: 0, end: text.length, text }]);
    expect(sentencesOf("   ")).toEqual([]);
  });
});

describe("code blocks", () => {
  it("take keyboard focus, so a long line can be scrolled without a mouse", () => {
    const html = renderMarkdown("```\nconst bend = rivers.map((river) => river.meanders);\n```");
    expect(html).toMatch(/^<pre tabindex="0"><code class="hljs">/);
  });
});
