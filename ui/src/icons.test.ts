// The window draws its icons itself (components/Icon.svelte): a glyph the machine's fonts lack
// draws as an empty box, and a minimal Debian install has no emoji font at all. So no source of
// the window may hold an emoji, a pictograph or a private-use character (an icon font's).
import { cleanup, render } from "@testing-library/svelte";
import { afterEach, describe, expect, it } from "vitest";

import Icon, { ICON_NAMES } from "./components/Icon.svelte";

afterEach(() => {
  cleanup();
});

const sources = import.meta.glob<string>(["./**/*.svelte", "./**/*.ts", "!./**/*.test.ts"], {
  query: "?raw",
  import: "default",
  eager: true,
});

/// The characters no font can be counted on for, by block. What is left out is safe: Latin,
/// punctuation (“ ” — … · ‹ ›), × and −, box drawing in comments, and the four plain arrows
/// ← ↑ → ↓, which every text font the window may be drawn with has (they are in WGL4, the set
/// Windows' and the Linux desktops' text fonts all cover) and the shortcut help writes.
const FONT_DEPENDENT = new RegExp(
  "[" +
    [
      String.raw`\u{2194}-\u{21FF}`, // arrows past the plain four (⇄ …)
      String.raw`\u{2300}-\u{23FF}`, // technical symbols (⌘ ⏎ ⏻ …)
      String.raw`\u{25A0}-\u{25FF}`, // geometric shapes (◆ ○ ▸ …)
      String.raw`\u{2600}-\u{27BF}`, // symbols and dingbats (★ ✓ ✎ ⚙ …)
      String.raw`\u{2B00}-\u{2BFF}`, // symbols and arrows (⭐ ⬆ …)
      String.raw`\u{1F000}-\u{1FAFF}`, // emoji and pictographs
      String.raw`\u{E000}-\u{F8FF}\u{F0000}-\u{10FFFF}`, // private use: an icon font's glyphs
      String.raw`\u{FE0E}\u{FE0F}\u{200D}\u{20E3}`, // what makes a character an emoji (selectors, joiner, keycap)
    ].join("") +
    "]",
  "u",
);

/// Each place in `sources` (path to text) with a character that depends on the fonts, as
/// "path:line: character (code point)".
function fontDependent(sources: Record<string, string>): string[] {
  return Object.entries(sources).flatMap(([path, text]) =>
    text.split("\n").flatMap((line, at) =>
      [...line.matchAll(new RegExp(FONT_DEPENDENT, "gu"))].map(
        ([character]) => `${path}:${at + 1}: ${character} (U+${character.codePointAt(0)!.toString(16).toUpperCase()})`,
      ),
    ),
  );
}

describe("the window's sources", () => {
  it("are read from disk", () => {
    expect(Object.keys(sources).length).toBeGreaterThan(40);
    expect(Object.keys(sources)).toContain("./components/Composer.svelte");
    expect(Object.keys(sources)).toContain("./lib/shortcuts.ts");
    expect(Object.keys(sources).some((path) => path.endsWith(".test.ts"))).toBe(false);
  });

  it("hold no emoji, pictograph or private-use character", () => {
    expect(fontDependent(sources)).toEqual([]);
  });

  it("would show each such character planted in them, and let plain text through", () => {
    // Written as escapes: this file is a test, not scanned, but reads the same on any machine.
    const planted = {
      "./image.svelte": `<button aria-label="Add an image">\u{1F5BC}</button>`,
      "./star.svelte": `{bookmarked ? "\u2605 Bookmarked" : "\u2606 Bookmark"}`,
      "./check.ts": `export const KEPT = "Kept \u2713";`,
      "./diamond.svelte": `<p>\u25C6 Pin</p>`,
      "./swap.svelte": `<button>\u21C4</button>`,
      "./icon-font.svelte": `<i class="icon">\uE001</i>`,
      "./selector.ts": `const heart = "\u2764\uFE0F";`,
    };
    const plain = {
      "./help.ts": `export const KEYS = "Alt+\u2190 and Alt+\u2192 switch, Alt+\u2191 and Alt+\u2193 move";`,
      "./prose.svelte": `<p>\u201CSettings \u2192 Sync\u201D \u2014 1024\u00D7700 \u00B7 \u2039 Previous \u2212 \u2026</p>`,
      "./accents.ts": `const name = "r\u00E9sum\u00E9";`,
    };
    const found = fontDependent({ ...planted, ...plain });
    expect([...new Set(found.map((place) => place.split(":")[0]))]).toEqual(Object.keys(planted));
    expect(found[0]).toBe("./image.svelte:1: \u{1F5BC} (U+1F5BC)");
    // Every one is found, the emoji's variation selector too: the heart holds two.
    expect(found.map((place) => place.slice(place.lastIndexOf("(") + 3, -1))).toEqual(
      ["1F5BC", "2605", "2606", "2713", "25C6", "21C4", "E001", "2764", "FE0F"],
    );
    expect(fontDependent(plain)).toEqual([]);
  });
});

describe("the icons", () => {
  it("each draw something, hidden from assistive technology unless labelled", () => {
    for (const name of ICON_NAMES) {
      const { container } = render(Icon, { name });
      const svg = container.querySelector("svg")!;
      expect(svg.getAttribute("data-icon")).toBe(name);
      expect(svg.getAttribute("aria-hidden")).toBe("true");
      const drawn = [...svg.querySelectorAll("path")].map((path) => path.getAttribute("d") ?? "");
      expect(drawn.length, name).toBeGreaterThan(0);
      expect(drawn.every((d) => /^M[\d.\s\-a-zA-Z]+$/.test(d)), name).toBe(true);
      cleanup();
    }
  });

  it("speak for themselves where a label is given", () => {
    const { container } = render(Icon, { name: "document", label: "PDF" });
    const svg = container.querySelector("svg")!;
    expect(svg.getAttribute("role")).toBe("img");
    expect(svg.getAttribute("aria-label")).toBe("PDF");
    expect(svg.hasAttribute("aria-hidden")).toBe(false);
  });
});
