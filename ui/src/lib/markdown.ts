// Model output is untrusted. It is rendered as Markdown and then sanitized, so no reply can run
// script, load anything remote, or reach Tauri's IPC: only formatting tags survive, links lose
// their targets (the address stays readable in a title), images are dropped, and no attribute
// that could carry code (event handlers, styles, data attributes) is kept. The window's CSP is
// the second wall.
import DOMPurify from "dompurify";
import type { HLJSApi } from "highlight.js";
import { Marked } from "marked";

/// highlight.js, once loaded. It is a third of the window's JavaScript and only code blocks need
/// it, so it is its own chunk, read after the window is up: until then a code block shows plain,
/// and `highlighterReady` tells a message to render again.
let highlighter: HLJSApi | null = null;
let loading: Promise<void> | null = null;

/// Loads highlight.js (once); resolves when code blocks can be highlighted.
export function highlighterReady(): Promise<void> {
  loading ??= import("highlight.js/lib/common").then((module) => {
    highlighter = module.default;
  });
  return loading;
}

/// Whether code blocks are highlighted now.
export function highlighterLoaded(): boolean {
  return highlighter !== null;
}

/// Whether `text` holds a code block (fenced, or indented by four spaces).
export function hasCodeBlock(text: string): boolean {
  return /^ {0,3}(```|~~~)|^( {4}|\t)\S/m.test(text);
}

function escapeHtml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    code({ text, lang }) {
      const hljs = highlighter;
      if (!hljs) return `<pre><code class="hljs">${escapeHtml(text)}</code></pre>`;
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
    // A code block and a wide table scroll sideways: each takes focus so the keyboard can scroll
    // it too.
    if (node.tagName === "PRE" || node.tagName === "TABLE") node.setAttribute("tabindex", "0");
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

/// What Markdown writes that rendering does not show: emphasis and strike marks, code ticks, inline
/// HTML tags, a link's brackets and target, and the marks that start a heading, a quote or a list
/// item. An underscore inside a word is text (GFM does not emphasise there).
const MARKUP = String.raw`(?:\*+|~~|\x60+|(?<![\p{L}\p{N}])_+|_+(?![\p{L}\p{N}])|<\/?[a-zA-Z][^>\n]*>|\]\([^)\s]*\)|\[|^[ \t]*#{1,6}[ \t]+|^[ \t]*>[ \t]?|^[ \t]*(?:[-*+]|\d+[.)])[ \t]+)`;

/// `text` as it reads once rendered: markup removed, white space runs as one space.
export function withoutMarkup(text: string): string {
  return text.replace(new RegExp(MARKUP, "gmu"), "").replace(/\s+/g, " ").trim();
}

/// A pattern that finds `wanted` (text as rendered, so without markup) in Markdown source: between
/// its characters any markup may stand, and a run of white space may also span markup and line
/// breaks (a selection across a paragraph or a list item).
function sourcePattern(wanted: string): RegExp {
  const between = `(?:${MARKUP})*`;
  const gap = `(?:\\s|${MARKUP})+`;
  const pieces: string[] = [];
  for (const part of wanted.trim().split(/(\s+)/u)) {
    if (!part) continue;
    if (/^\s+$/u.test(part)) {
      pieces.push(gap);
      continue;
    }
    pieces.push([...part].map((character) => character.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&")).join(between));
  }
  return new RegExp(pieces.join(""), "gmu");
}

/// Where `selected` sits in a message's source text, in UTF-16 units (what the store's ranges
/// count): the occurrence nearest the relative position the selection was made at. A selection
/// is what the window shows, so when it crosses formatting (bold, code, a link, a paragraph
/// break) its source is found with the markup in between, and the range spans that markup.
/// `null` when the text is not in the message at all.
export function locateSelection(
  source: string,
  selected: string,
  relativePosition: number,
): { start: number; end: number } | null {
  const wanted = selected.trim();
  if (!wanted) return null;
  const occurrences: { start: number; end: number }[] = [];
  for (let at = source.indexOf(wanted); at >= 0; at = source.indexOf(wanted, at + 1)) {
    occurrences.push({ start: at, end: at + wanted.length });
  }
  if (occurrences.length === 0) {
    for (const match of source.matchAll(sourcePattern(wanted))) {
      occurrences.push({ start: match.index, end: match.index + match[0].length });
    }
  }
  if (occurrences.length === 0) return null;
  const target = relativePosition * source.length;
  return occurrences.reduce((a, b) => (Math.abs(b.start - target) < Math.abs(a.start - target) ? b : a));
}

/// Marks each anchor's first occurrence in rendered HTML, so a pinned passage stays highlighted in
/// its parent message; a passage that crosses formatting is marked piece by piece, one mark per
/// text node it covers. Works on text nodes only, so it can never create markup from the text.
export function markAnchors(root: HTMLElement, anchors: { id: number; text: string }[]): void {
  for (const anchor of anchors) {
    if (!anchor.text) continue;
    const nodes: Text[] = [];
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node as Text);
    const found = findAcross(nodes, anchor.text) ?? findAcross(nodes, withoutMarkup(anchor.text));
    if (!found) continue;
    // Wrapped from the last piece back, so the offsets of the earlier ones stay valid.
    for (const { node, start, end } of found.reverse()) {
      if (start === end || !(node.nodeValue ?? "").slice(start, end).trim()) continue;
      const range = document.createRange();
      range.setStart(node, start);
      range.setEnd(node, end);
      const mark = document.createElement("mark");
      mark.className = "anchor";
      mark.dataset.pinId = String(anchor.id);
      mark.dataset.testid = "anchor-mark";
      range.surroundContents(mark);
    }
  }
}

/// The pieces of `nodes` that read `wanted` when their texts are joined, white space runs
/// counting as one space: each as a node and a range in it.
function findAcross(nodes: Text[], wanted: string): { node: Text; start: number; end: number }[] | null {
  const target = wanted.replace(/\s+/g, " ").trim();
  if (!target) return null;
  // The joined text with white space collapsed, and where each of its characters came from.
  let joined = "";
  const origin: { node: number; offset: number }[] = [];
  nodes.forEach((node, index) => {
    const text = node.nodeValue ?? "";
    for (let offset = 0; offset < text.length; offset++) {
      const character = text[offset]!;
      if (/\s/.test(character)) {
        if (joined.endsWith(" ") || joined === "") continue;
        joined += " ";
      } else {
        joined += character;
      }
      origin.push({ node: index, offset });
    }
  });
  const at = joined.indexOf(target);
  if (at < 0) return null;
  const first = origin[at]!;
  const last = origin[at + target.length - 1]!;
  const pieces: { node: Text; start: number; end: number }[] = [];
  for (let index = first.node; index <= last.node; index++) {
    const node = nodes[index]!;
    const start = index === first.node ? first.offset : 0;
    const end = index === last.node ? last.offset + 1 : (node.nodeValue ?? "").length;
    pieces.push({ node, start, end });
  }
  return pieces;
}

/// A sentence of a message's text and where it lies in it (UTF-16 units, as pins count).
export type Sentence = { start: number; end: number; text: string };

/// The sentences of `text`, in order: runs that end at ".", "!" or "?" before a space or the end,
/// or at a line break, without the spaces around them. What a keyboard offers to pin where a
/// mouse would select.
export function sentencesOf(text: string): Sentence[] {
  const sentences: Sentence[] = [];
  const boundary = /[.!?]+(?=\s|$)|\n+/g;
  let from = 0;
  const take = (until: number) => {
    const raw = text.slice(from, until);
    const start = from + (raw.length - raw.trimStart().length);
    const end = from + raw.trimEnd().length;
    if (end > start) sentences.push({ start, end, text: withoutMarkup(text.slice(start, end)) });
  };
  for (let match = boundary.exec(text); match; match = boundary.exec(text)) {
    const until = match[0].startsWith("\n") ? match.index : match.index + match[0].length;
    take(until);
    from = match.index + match[0].length;
  }
  take(text.length);
  return sentences;
}
