// The keyboard shortcuts: one table that the help overlay lists and the key handlers read, so a
// shortcut can be neither listed without working nor working without being listed.

/// What a window-wide shortcut does; the open tree's view maps each to its action.
export type WindowAction = "map" | "budget" | "settings" | "stop" | "inspector" | "undo" | "close" | "help";
/// What a shortcut in a composer does.
export type ComposerAction = "send" | "add";
/// What a shortcut in the comparison of two branches does.
export type ComparisonAction = "nextDifference" | "previousDifference";
/// What a shortcut on the tree map (its picture or its outline) does to the current message.
export type MapAction = "pickForComparison" | "pickForQuestion";

type Shortcut = {
  /// As the help overlay shows the keys.
  keys: string;
  /// What it does, in the help overlay's words.
  what: string;
} & (
  | { scope: "window"; action: WindowAction; matches: (event: KeyboardEvent, typing: boolean) => boolean }
  | { scope: "composer"; action: ComposerAction; matches: (event: KeyboardEvent) => boolean }
  | { scope: "comparison"; action: ComparisonAction; matches: (event: KeyboardEvent) => boolean }
  | { scope: "map"; action: MapAction; matches: (event: KeyboardEvent) => boolean }
  /// Done with the mouse; listed so the help tells the whole story.
  | { scope: "pointer" }
);

const command = (event: KeyboardEvent) => event.ctrlKey || event.metaKey;
const commandKey = (key: string) => (event: KeyboardEvent) => command(event) && event.key.toLowerCase() === key;
/// A bare key (no Ctrl, Alt or Cmd), any of `keys`, either case.
const plainKey = (...keys: string[]) => (event: KeyboardEvent) =>
  !command(event) && !event.altKey && keys.includes(event.key.toLowerCase());

export const SHORTCUTS: readonly Shortcut[] = [
  { keys: "Ctrl+Enter", what: "send the message to the chosen model (in a buffer tree: continue the document)", scope: "composer", action: "send", matches: (event) => event.key === "Enter" && command(event) },
  { keys: "Alt+Enter", what: "add the message without asking for a reply (in a buffer tree: add it to the document)", scope: "composer", action: "add", matches: (event) => event.key === "Enter" && event.altKey },
  { keys: "Select text → Pin", what: "open a sub-thread on the passage", scope: "pointer" },
  { keys: "Compare… → Compare with picked", what: "two branches side by side from where they part", scope: "pointer" },
  { keys: "N or ]", what: "in a comparison: the next difference", scope: "comparison", action: "nextDifference", matches: plainKey("n", "]") },
  { keys: "P or [", what: "in a comparison: the previous difference", scope: "comparison", action: "previousDifference", matches: plainKey("p", "[") },
  { keys: "More → Pick for a question", what: "pick messages from several branches and pins, then ask one question over them in a thread of its own", scope: "pointer" },
  // Shift tells the two picks apart: plain P stays the comparison's, as it always was.
  { keys: "P", what: "on the tree map: pick the message for a comparison (the second pick compares)", scope: "map", action: "pickForComparison", matches: (event) => plainKey("p")(event) && !event.shiftKey },
  { keys: "Shift+P", what: "on the tree map: pick the message for a question over several branches, or unpick it", scope: "map", action: "pickForQuestion", matches: (event) => plainKey("p")(event) && event.shiftKey },
  { keys: "Ctrl+M", what: "the tree map (arrows move, Enter opens)", scope: "window", action: "map", matches: commandKey("m") },
  { keys: "Ctrl+B", what: "the budget panel of the chosen model", scope: "window", action: "budget", matches: commandKey("b") },
  { keys: "Ctrl+,", what: "settings: keys, local models, this tree, theme", scope: "window", action: "settings", matches: (event) => command(event) && event.key === "," },
  { keys: "Ctrl+.", what: "stop the reply being written", scope: "window", action: "stop", matches: (event) => command(event) && event.key === "." },
  { keys: "Ctrl+I", what: "show or hide the context inspector", scope: "window", action: "inspector", matches: commandKey("i") },
  { keys: "Ctrl+Z", what: "undo the last deletion (outside a text field)", scope: "window", action: "undo", matches: (event, typing) => commandKey("z")(event) && !typing },
  { keys: "Escape", what: "close the open panel", scope: "window", action: "close", matches: (event) => event.key === "Escape" },
  { keys: "?", what: "this help", scope: "window", action: "help", matches: (event, typing) => event.key === "?" && !typing },
];

/// The window-wide action `event` asks for, if any. `typing` is whether a text field has focus.
export function windowAction(event: KeyboardEvent, typing: boolean): WindowAction | null {
  for (const shortcut of SHORTCUTS) {
    if (shortcut.scope === "window" && shortcut.matches(event, typing)) return shortcut.action;
  }
  return null;
}

/// The composer action `event` asks for, if any.
export function composerAction(event: KeyboardEvent): ComposerAction | null {
  for (const shortcut of SHORTCUTS) {
    if (shortcut.scope === "composer" && shortcut.matches(event)) return shortcut.action;
  }
  return null;
}

/// The tree map's action `event` asks for, if any.
export function mapAction(event: KeyboardEvent): MapAction | null {
  for (const shortcut of SHORTCUTS) {
    if (shortcut.scope === "map" && shortcut.matches(event)) return shortcut.action;
  }
  return null;
}

/// The comparison action `event` asks for, if any.
export function comparisonAction(event: KeyboardEvent): ComparisonAction | null {
  for (const shortcut of SHORTCUTS) {
    if (shortcut.scope === "comparison" && shortcut.matches(event)) return shortcut.action;
  }
  return null;
}
