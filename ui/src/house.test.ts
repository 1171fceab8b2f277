// House rules the type checker cannot see. Components reach the backend only through the state
// owners in lib/, which hold what it answered and what went wrong; a component that calls it
// itself keeps a second copy of that state, untested. The generated bindings are the backend's
// too (its commands and the events it sends): a component may name their types, nothing more.
import { describe, expect, it } from "vitest";

const components = import.meta.glob<string>("./**/*.svelte", { query: "?raw", import: "default", eager: true });

/// An import (or re-export) of a module, and whether it brings only types (`import type`), which
/// vanish from the built code.
type Import = { statement: string; typeOnly: boolean };

/// Every import of `lib/<module>` in `source`, however it is written: over several lines, for its
/// side effects only, or loaded later with `import(…)`.
function importsOf(source: string, module: string): Import[] {
  const path = String.raw`["'][./]*lib\/${module}(?:\.ts)?["']`;
  // What is imported holds no quote: a match never runs on from an earlier import's path.
  const statements = new RegExp(String.raw`\b(?:import|export)\s+(type\s+)?(?:[^;'"]*?\bfrom\s*)?${path}`, "g");
  const loaded = new RegExp(String.raw`\bimport\s*\(\s*${path}\s*\)`, "g");
  return [
    ...[...source.matchAll(statements)].map((found) => ({ statement: found[0], typeOnly: found[1] !== undefined })),
    ...[...source.matchAll(loaded)].map((found) => ({ statement: found[0], typeOnly: false })),
  ];
}

/// The components breaking a rule: those whose source `breaks` it, by path.
function breaking(sources: Record<string, string>, breaks: (source: string) => boolean): string[] {
  return Object.entries(sources)
    .filter(([, source]) => breaks(source))
    .map(([path]) => path);
}

/// Imports the backend at all.
const importsBackend = (source: string) => importsOf(source, "backend").length > 0;
/// Imports the bindings for more than their types.
const runsBindings = (source: string) => importsOf(source, "bindings").some((found) => !found.typeOnly);

/// A component as one might be written, with `imports` in its script.
const planted = (imports: string) => `<script lang="ts">\n  ${imports}\n  let { n }: { n: number } = $props();\n</script>\n\n<p>{n}</p>\n`;

describe("the house rules", () => {
  it("finds the components", () => {
    // As written, not compiled: the imports are there to read.
    expect(components["./components/SettingsPanel.svelte"]).toContain("<Overlay");
    expect(Object.keys(components).length).toBeGreaterThan(40);
  });

  it("has no component import the backend", () => {
    expect(breaking(components, importsBackend)).toEqual([]);
  });

  it("has no component use the bindings but for their types", () => {
    // Read at least one type-only import, so the rule is seen to let those through.
    expect(Object.values(components).filter((source) => importsOf(source, "bindings").length > 0).length).toBeGreaterThan(0);
    expect(breaking(components, runsBindings)).toEqual([]);
  });

  it("catches each break planted for it, and lets the same component through without it", () => {
    const breaks = {
      "./backend.svelte": planted(`import { backend } from "../lib/backend";`),
      "./backend-ts.svelte": planted(`import { attempt } from "./lib/backend.ts";`),
      "./events.svelte": planted(`import { events } from "../lib/bindings";`),
      "./mixed.svelte": planted(`import { THREAD_PAGE, type Message } from "../lib/bindings";`),
      "./lines.svelte": planted(`import {\n    commands,\n    type TreeSummary,\n  } from "../lib/bindings";`),
      "./side-effect.svelte": planted(`import "../lib/bindings";`),
      "./later.svelte": planted(`const bindings = await import("../lib/bindings");`),
      "./re-export.svelte": planted(`export { commands } from "../lib/bindings";`),
    };
    const allowed = {
      "./types.svelte": planted(`import type { ThreadMessage, TokenView } from "../lib/bindings";`),
      "./owner.svelte": planted(`import { Conversation } from "../lib/conversation.svelte";`),
      "./lookalike.svelte": planted(`import { bindingsOf } from "../lib/bindings-view";`),
    };
    const sources = { ...breaks, ...allowed };
    expect(breaking(sources, (source) => importsBackend(source) || runsBindings(source))).toEqual(Object.keys(breaks));
    expect(breaking(sources, importsBackend)).toEqual(["./backend.svelte", "./backend-ts.svelte"]);
    expect(breaking(allowed, runsBindings)).toEqual([]);
  });
});

// The UI's modules import one another without a circle (type-only imports count: a circle of
// types is still two modules that cannot be read apart), as the Rust side's house rules hold
// for its files.
const modules = import.meta.glob<string>(["./**/*.ts", "./**/*.svelte", "!./**/*.test.ts"], {
  query: "?raw",
  import: "default",
  eager: true,
});

/// The module `from` imports as `specifier`, by its path among `paths` (`./lib/a.svelte` may be
/// written `./a.svelte` or `./a.svelte.ts`); `undefined` for a package's or a file not listed.
function resolved(from: string, specifier: string, paths: Set<string>): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const parts = from.split("/").slice(0, -1);
  for (const part of specifier.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== ".") parts.push(part);
  }
  const path = parts.join("/");
  return [path, `${path}.ts`].find((candidate) => paths.has(candidate));
}

/// What each of `sources` (path to text) imports among them.
function importsAmong(sources: Record<string, string>): Map<string, string[]> {
  const paths = new Set(Object.keys(sources));
  const edges = new Map<string, string[]>();
  for (const [path, source] of Object.entries(sources)) {
    const specifiers = [...source.matchAll(/\b(?:import|export)\b[^;'"]*?\bfrom\s*["']([^"']+)["']|\bimport\s*\(?\s*["']([^"']+)["']/g)];
    const targets = specifiers.map((found) => resolved(path, found[1] ?? found[2] ?? "", paths));
    edges.set(path, targets.filter((to): to is string => to !== undefined));
  }
  return edges;
}

/// A circle among `sources` (path to text), as the paths around it, or `undefined`.
function circleIn(sources: Record<string, string>): string[] | undefined {
  const paths = new Set(Object.keys(sources));
  const edges = importsAmong(sources);
  const state = new Map<string, "open" | "done">();
  const trail: string[] = [];
  const visit = (path: string): string[] | undefined => {
    if (state.get(path) === "done") return undefined;
    if (state.get(path) === "open") return [...trail.slice(trail.indexOf(path)), path];
    state.set(path, "open");
    trail.push(path);
    for (const to of edges.get(path) ?? []) {
      const circle = visit(to);
      if (circle) return circle;
    }
    trail.pop();
    state.set(path, "done");
    return undefined;
  };
  for (const path of paths) {
    const circle = visit(path);
    if (circle) return circle;
  }
  return undefined;
}

describe("the modules", () => {
  it("import one another without a circle", () => {
    expect(Object.keys(modules).length).toBeGreaterThan(80);
    // The imports are read: a rule that resolved none would find no circle in anything.
    const resolvedImports = [...importsAmong(modules).values()].flat().length;
    expect(resolvedImports).toBeGreaterThan(150);
    expect(circleIn(modules)).toBeUndefined();
  });

  it("would show a circle planted among them, type-only imports included", () => {
    const planted = {
      "./lib/owner.svelte.ts": `import { Verb } from "./verb.svelte";\nexport class Owner {}`,
      "./lib/verb.svelte.ts": `import type { Owner } from "./owner.svelte";\nexport class Verb {}`,
      "./lib/apart.ts": `import { Owner } from "./owner.svelte";`,
    };
    expect(circleIn(planted)).toEqual(["./lib/owner.svelte.ts", "./lib/verb.svelte.ts", "./lib/owner.svelte.ts"]);
    expect(circleIn({ ...modules, ...planted })).toBeDefined();
    expect(circleIn({ "./lib/apart.ts": planted["./lib/apart.ts"], "./lib/owner.svelte.ts": `export class Owner {}` })).toBeUndefined();
  });
});
