// Model output is untrusted. It is rendered as Markdown and then sanitized, so no reply can run
// script, load anything remote, or reach Tauri's IPC: only formatting tags survive, links lose
// their targets (the address stays readable in a title), images are dropped, and no attribute
// that could carry code (event handlers, styles, data attributes) is kept. The window's CSP is
// the second wall.
import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/common";
import { Marked } from "marked";

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    code({ text, lang }) {
      const language = lang && hljs.getLanguage(lang) ? lang : undefined;
      const highlighted = language
        ? hljs.highlight(text, { language }).value
        : hljs.highlightAuto(text).value;
      return `<pre><code class="hljs">${highlighted}</code></pre>`;
    },
  },
});

const ALLOWED_TAGS = [
  "p", "br", "hr", "strong", "em", "del", "code", "pre", "blockquote", "ul", "ol", "li",
  "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "a", "span",
  "sup", "sub", "kbd", "mark",
];

/// highlight.js's classes: `hljs`, `hljs-keyword`, and its modifiers such as `function_`.
const HIGHLIGHT_CLASS = /^(hljs(-[a-z0-9_-]+)?|[a-z]+_{1,2})$/;

let hooked = false;
function hookOnce(purifier: typeof DOMPurify) {
  if (hooked) return;
  hooked = true;
  purifier.addHook("afterSanitizeAttributes", (node) => {
    // A class from the reply could borrow the window's own styles (an overlay over the whole
    // window that imitates a dialog): only highlight.js's classes stay.
    if (node.hasAttribute("class")) {
      const kept = (node.getAttribute("class") ?? "").split(/\s+/).filter((name) => HIGHLIGHT_CLASS.test(name));
      if (kept.length > 0) node.setAttribute("class", kept.join(" "));
      else node.removeAttribute("class");
    }
    if (node.tagName === "A") {
      const href = node.getAttribute("href");
      node.removeAttribute("href");
      node.removeAttribute("target");
      if (href) node.setAttribute("title", href);
      node.setAttribute("class", "link");
    }
  });
}

/// The reply's Markdown as HTML that is safe to insert.
export function renderMarkdown(text: string): string {
  hookOnce(DOMPurify);
  const html = marked.parse(text, { async: false });
  return DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    // `href` is let through only so the hook can move it into a title; no element keeps one.
    ALLOWED_ATTR: ["class", "title", "colspan", "rowspan", "align", "href"],
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
  });
}

/// Marks each anchor's first occurrence in rendered HTML, so a pinned passage stays highlighted in
/// its parent message. Works on text nodes only, so it can never create markup from the text.
export function markAnchors(root: HTMLElement, anchors: { id: number; text: string }[]): void {
  for (const anchor of anchors) {
    if (!anchor.text) continue;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.nodeValue ?? "";
      const at = text.indexOf(anchor.text);
      if (at < 0) continue;
      const range = document.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + anchor.text.length);
      const mark = document.createElement("mark");
      mark.className = "anchor";
      mark.dataset.pinId = String(anchor.id);
      mark.dataset.testid = "anchor-mark";
      range.surroundContents(mark);
      break;
    }
  }
}

/// Where `selected` sits in a message's source text, in UTF-16 units (what the store's ranges
/// count): the occurrence nearest the relative position the selection was made at. `null` when
/// the selection spans formatting that the source writes differently (then select plain text).
export function locateSelection(
  source: string,
  selected: string,
  relativePosition: number,
): { start: number; end: number } | null {
  const wanted = selected.trim();
  if (!wanted) return null;
  const occurrences: number[] = [];
  for (let at = source.indexOf(wanted); at >= 0; at = source.indexOf(wanted, at + 1)) {
    occurrences.push(at);
  }
  if (occurrences.length === 0) return null;
  const target = relativePosition * source.length;
  const best = occurrences.reduce((a, b) => (Math.abs(b - target) < Math.abs(a - target) ? b : a));
  return { start: best, end: best + wanted.length };
}
