import { describe, expect, it } from "vitest";

import { COLUMN, DEFAULT_COLOURS, LANE, MAX_ZOOM, MapViewport, describeMessage, drawMap, drawMinimap, themeColours } from "./map-view";
import { MAP_WITH_BRANCH_AND_PIN } from "./test-fixtures";
import { MapPicture } from "./treemap";

const picture = new MapPicture(MAP_WITH_BRANCH_AND_PIN);
const colours = { thread: "grey", pin: "gold", path: "blue", text: "black", panel: "white" };

/// A 2D context that keeps what was stroked and filled, each with its style and its path.
class Recorder {
  strokeStyle = "";
  fillStyle = "";
  lineWidth = 1;
  lineCap = "";
  lineJoin = "";
  strokes: { style: string; width: number; path: string[] }[] = [];
  fills: { style: string; path: string[] }[] = [];
  rects: number[][] = [];
  private path: string[] = [];
  beginPath() {
    this.path = [];
  }
  moveTo(x: number, y: number) {
    this.path.push(`M${x},${y}`);
  }
  lineTo(x: number, y: number) {
    this.path.push(`L${x},${y}`);
  }
  arc(x: number, y: number, radius: number) {
    this.path.push(`A${x},${y},${radius}`);
  }
  stroke() {
    this.strokes.push({ style: this.strokeStyle, width: this.lineWidth, path: this.path.slice() });
  }
  fill() {
    this.fills.push({ style: this.fillStyle, path: this.path.slice() });
  }
  strokeRect(...rect: number[]) {
    this.rects.push(rect.map((n) => Math.round(n)));
  }
  clearRect() {}
  drawImage() {}
}

/// The view at zoom 1 with the world's origin 20 pixels in: depth d is at x = 16d + 20, lane l at
/// y = 20l + 20.
function viewport(): MapViewport {
  const viewport = new MapViewport();
  viewport.resize(800, 480);
  viewport.offsetX = 20;
  viewport.offsetY = 20;
  return viewport;
}

function drawn(at: MapViewport, current: number | null, hovered: number | null = null): Recorder {
  const context = new Recorder();
  drawMap(context as unknown as CanvasRenderingContext2D, picture, at, colours, current, hovered);
  return context;
}

const arcs = (path: string[]) => path.filter((step) => step.startsWith("A"));

describe("drawMap", () => {
  it("strokes the path to the current message over the runs, in the path's colour", () => {
    const path = drawn(viewport(), 7).strokes.filter((stroke) => stroke.style === "blue" && stroke.width === 5);
    expect(path.map((stroke) => stroke.path)).toEqual([
      ["M20,20", "L52,20"],
      // In the pin: its run, then the elbow down from message 4.
      ["M68,40", "L84,40", "M52,20", "L52,40", "L68,40"],
    ]);
  });

  it("draws the person's messages hollow and a model's filled, once they are far enough apart", () => {
    const near = drawn(viewport(), null);
    expect(near.fills.filter((fill) => fill.style === "white").flatMap((fill) => arcs(fill.path))).toHaveLength(4);
    expect(near.fills.filter((fill) => fill.style === "black").flatMap((fill) => arcs(fill.path))).toHaveLength(3);
    const far = viewport();
    far.zoomAt(0.25, 0, 0);
    expect(drawn(far, null).fills.flatMap((fill) => arcs(fill.path))).toEqual([]);
  });

  it("marks where a pin branches off, and rings the hovered and the current message", () => {
    const context = drawn(viewport(), 6, 3);
    expect(context.fills.filter((fill) => fill.style === "gold").map((fill) => fill.path)).toEqual([["M52,14", "L58,20", "L52,26", "L46,20"]]);
    const rings = context.strokes.filter((stroke) => stroke.width === 2.5);
    expect(rings.map((ring) => [ring.style, ring.path])).toEqual([
      ["black", ["A36,40,8"]],
      ["blue", ["A68,20,8"]],
    ]);
  });
});

describe("MapViewport", () => {
  it("centres on a message and zooms about a point that stays put", () => {
    const at = viewport();
    let changes = 0;
    at.onchange = () => changes++;
    at.centreOn(picture.place(7)!, 2);
    expect(at.messageAt(picture, 400, 240)).toBe(7);
    at.zoomAt(1.5, 100, 50);
    const before = at.world(100, 50);
    at.zoomAt(100, 100, 50);
    expect(at.zoom).toBe(MAX_ZOOM);
    expect(at.world(100, 50).depth).toBeCloseTo(before.depth);
    expect(at.world(100, 50).lane).toBeCloseTo(before.lane);
    expect(changes).toBe(3);
  });

  it("finds a message only within a few pixels of its dot", () => {
    const at = viewport();
    expect(at.messageAt(picture, 68 + 7, 20)).toBe(6);
    expect(at.messageAt(picture, 68, 20 + 9)).toBeUndefined();
    expect(at.messageAt(picture, 400, 400)).toBeUndefined();
  });

  it("fits the whole tree in the frame, and pans only when a message would leave it", () => {
    const at = viewport();
    at.fit(picture);
    expect(5 * COLUMN * at.zoom).toBeLessThanOrEqual(800 - 40);
    expect(2 * LANE * at.zoom).toBeLessThanOrEqual(480 - 40);
    const offset = [at.offsetX, at.offsetY];
    expect(at.reveal(picture.place(7)!)).toBe(false);
    expect([at.offsetX, at.offsetY]).toEqual(offset);
    at.panBy(-2000, 0);
    expect(at.reveal(picture.place(7)!)).toBe(true);
    expect(at.messageAt(picture, 400, 240)).toBe(7);
  });

  it("pans by a drag, which is a click until it moves more than a few pixels", () => {
    const at = viewport();
    at.pressAt(100, 100);
    expect(at.dragTo(102, 101)).toBe(false);
    expect(at.dragTo(130, 90)).toBe(true);
    expect([at.offsetX, at.offsetY]).toEqual([50, 10]);
  });

  it("zooms and shows the whole tree from the keys, and leaves other keys alone", () => {
    const at = viewport();
    expect(at.key("+", picture)).toBe(true);
    expect(at.zoom).toBe(1.25);
    expect(at.key("-", picture)).toBe(true);
    expect(at.zoom).toBe(1);
    expect(at.key("0", picture)).toBe(true);
    expect([at.offsetX, at.offsetY]).toEqual([20, 20]);
    expect(at.key("x", picture)).toBe(false);
  });

  it("jumps to what a minimap point shows, and marks the screen on the minimap", () => {
    const at = viewport();
    // The minimap is 220 by 80 for 5 depths and 3 lanes' height: depth 4, lane 1 is at (176, 40).
    at.centreOnMinimap(picture, 176, 40);
    expect(at.messageAt(picture, 400, 240)).toBe(7);
    const context = new Recorder();
    drawMinimap(context as unknown as CanvasRenderingContext2D, {} as CanvasImageSource, picture, viewport(), colours);
    expect(context.rects).toEqual([[-55, -27, 2200, 640]]);
  });
});

describe("the map's words and colours", () => {
  it("says who wrote a message, how deep it is and in which pin", () => {
    expect(describeMessage(picture, 7, undefined)).toBe("Model · message #7 · 5 deep · in the pin “Oxbows”: …");
    expect(describeMessage(picture, 3, "Or a flood.")).toBe("You · message #3 · 2 deep: Or a flood.");
  });

  it("takes the theme's colours where it sets them", () => {
    const style = { getPropertyValue: (name: string) => (name === "--path" ? " #123456 " : "") };
    expect(themeColours(style, DEFAULT_COLOURS)).toEqual({ ...DEFAULT_COLOURS, path: "#123456" });
  });
});
