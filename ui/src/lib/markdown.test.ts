import { describe, expect, it } from "vitest";

import { locateSelection, markAnchors, renderMarkdown } from "./markdown";

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

describe("renderMarkdown", () => {
  it("renders the usual Markdown: emphasis, code, tables", () => {
    const html = renderMarkdown("**bold** and `code`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```rust\nfn main() {}\n```");
    expect(html).toContain("<strong>bold</strong>");
    expect(html).toContain("<table>");
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

  it("marks a pinned passage inside rendered text without making markup of it", () => {
    const root = document.createElement("div");
    root.innerHTML = renderMarkdown("Meanders form where <b>the outer bank</b> erodes.");
    markAnchors(root, [{ id: 7, text: "the outer bank" }, { id: 8, text: "<b>" }]);
    const marks = root.querySelectorAll("mark.anchor");
    expect(marks).toHaveLength(1);
    expect(marks[0]!.textContent).toBe("the outer bank");
  });
});
