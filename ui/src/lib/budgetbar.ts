// The budget drawn as stacked bars: what a plan keeps and what it cuts, by slice kind, each bar
// measured against the tokens the model has room for.

/// What the bars need of a plan's slice.
export type SliceTokens = { kind: string; tokens: number; included: boolean };

/// One kind's share of a bar.
export type BarSegment = {
  kind: string;
  tokens: number;
  /// Its width, as a percentage of the room (the bar is cut at 100).
  percent: number;
};

export type BudgetBars = {
  kept: BarSegment[];
  cut: BarSegment[];
  keptTokens: number;
  cutTokens: number;
  /// What was cut is more than the whole room: its bar is drawn full and says so.
  cutOverflows: boolean;
};

/// The kinds in the order a context is built, so the bars read the same way every time.
const ORDER = [
  "system",
  "rootGoal",
  "contextSource",
  "toolDefinition",
  "file",
  "image",
  "folderListing",
  "ancestorSummary",
  "anchor",
  "compaction",
  "siblingResult",
  "pinResult",
  "picked",
  "searchResult",
  "oldHistory",
  "recentHistory",
  "workingBuffer",
  "prompt",
];

function rank(kind: string): number {
  const at = ORDER.indexOf(kind);
  return at === -1 ? ORDER.length : at;
}

function segments(slices: SliceTokens[], room: number): BarSegment[] {
  const byKind = new Map<string, number>();
  for (const slice of slices) byKind.set(slice.kind, (byKind.get(slice.kind) ?? 0) + slice.tokens);
  let left = 100;
  return [...byKind.entries()]
    .filter(([, tokens]) => tokens > 0)
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
    .map(([kind, tokens]) => {
      const percent = Math.min(left, room > 0 ? (tokens / room) * 100 : 100);
      left -= percent;
      return { kind, tokens, percent };
    });
}

/// The kept and cut bars of a plan whose model has room for `available` tokens.
export function budgetBars(slices: SliceTokens[], available: number): BudgetBars {
  const kept = slices.filter((slice) => slice.included);
  const cut = slices.filter((slice) => !slice.included);
  const total = (list: SliceTokens[]) => list.reduce((sum, slice) => sum + slice.tokens, 0);
  const cutTokens = total(cut);
  return {
    kept: segments(kept, available),
    cut: segments(cut, available),
    keptTokens: total(kept),
    cutTokens,
    cutOverflows: cutTokens > available,
  };
}

/// A kind's colour: fixed for the kinds people see most, derived from the name for the rest.
export function kindColour(kind: string): string {
  const fixed: Record<string, string> = {
    system: "hsl(260 45% 55%)",
    prompt: "hsl(205 75% 45%)",
    recentHistory: "hsl(160 50% 40%)",
    oldHistory: "hsl(160 30% 55%)",
    ancestorSummary: "hsl(35 80% 50%)",
    anchor: "hsl(15 75% 52%)",
    searchResult: "hsl(300 35% 55%)",
    file: "hsl(90 40% 45%)",
    image: "hsl(185 55% 40%)",
    // What the person picked stands out from what the path brought, as their additions do.
    picked: "hsl(330 60% 50%)",
  };
  if (fixed[kind]) return fixed[kind];
  let hue = 0;
  for (const character of kind) hue = (hue * 31 + character.charCodeAt(0)) % 360;
  return `hsl(${hue} 45% 50%)`;
}
