import { describe, expect, it } from "vitest";

import { comparisonAction, composerAction, mapAction, SHORTCUTS, windowAction } from "./shortcuts";

const press = (key: string, modifiers: Partial<KeyboardEventInit> = {}) => new KeyboardEvent("keydown", { key, ...modifiers });

describe("shortcuts", () => {
  it("finds each listed window shortcut from its keys, and no other", () => {
    expect(windowAction(press("m", { ctrlKey: true }), false)).toBe("map");
    expect(windowAction(press("M", { metaKey: true }), false)).toBe("map");
    expect(windowAction(press("b", { ctrlKey: true }), true)).toBe("budget");
    expect(windowAction(press(",", { ctrlKey: true }), false)).toBe("settings");
    expect(windowAction(press(".", { ctrlKey: true }), false)).toBe("stop");
    expect(windowAction(press("i", { ctrlKey: true }), false)).toBe("inspector");
    expect(windowAction(press("Escape"), true)).toBe("close");
    expect(windowAction(press("m"), false)).toBeNull();
  });

  it("leaves Ctrl+Z and ? to a text field that has focus", () => {
    expect(windowAction(press("z", { ctrlKey: true }), false)).toBe("undo");
    expect(windowAction(press("z", { ctrlKey: true }), true)).toBeNull();
    expect(windowAction(press("?"), false)).toBe("help");
    expect(windowAction(press("?"), true)).toBeNull();
  });

  it("tells the composer's Ctrl+Enter from Alt+Enter", () => {
    expect(composerAction(press("Enter", { ctrlKey: true }))).toBe("send");
    expect(composerAction(press("Enter", { altKey: true }))).toBe("add");
    expect(composerAction(press("Enter"))).toBeNull();
  });

  it("moves between a comparison's differences with bare N/P and ]/[ only", () => {
    expect(comparisonAction(press("n"))).toBe("nextDifference");
    expect(comparisonAction(press("N", { shiftKey: true }))).toBe("nextDifference");
    expect(comparisonAction(press("]"))).toBe("nextDifference");
    expect(comparisonAction(press("p"))).toBe("previousDifference");
    expect(comparisonAction(press("["))).toBe("previousDifference");
    expect(comparisonAction(press("n", { ctrlKey: true }))).toBeNull();
    expect(comparisonAction(press("q"))).toBeNull();
  });

  it("tells the map's P (a comparison) from Shift+P (a question over branches)", () => {
    expect(mapAction(press("p"))).toBe("pickForComparison");
    expect(mapAction(press("P", { shiftKey: true }))).toBe("pickForQuestion");
    expect(mapAction(press("p", { ctrlKey: true }))).toBeNull();
    expect(mapAction(press("P", { shiftKey: true, altKey: true }))).toBeNull();
    expect(mapAction(press("n"))).toBeNull();
    expect(SHORTCUTS.map((shortcut) => shortcut.keys)).toContain("Shift+P");
  });

  it("lists every shortcut once, with words for the help", () => {
    const keys = SHORTCUTS.map((shortcut) => shortcut.keys);
    expect(new Set(keys).size).toBe(keys.length);
    expect(SHORTCUTS.every((shortcut) => shortcut.what.length > 0)).toBe(true);
  });
});
