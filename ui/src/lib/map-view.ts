// The tree map picture's view and drawing, apart from its canvas component so they are tested
// without a window: where the view is (zoom and offset), what is under a point, and drawing what
// is on screen, the path to the current message and the minimap. Only what is on screen is
// drawn, so a 100,000-message tree pans as smoothly as a small one.
import type { Elbow, MapPicture, Stretch } from "./treemap";

/// World units: one depth across, one lane down, at zoom 1.
export const COLUMN = 16;
export const LANE = 20;
export const MIN_ZOOM = 0.0005;
export const MAX_ZOOM = 4;
export const MINIMAP = { width: 220, height: 80 };

/// The picture's colours, read from the theme.
export type MapColours = { thread: string; pin: string; path: string; text: string; panel: string };
export const DEFAULT_COLOURS: MapColours = { thread: "#6b7080", pin: "#b8862b", path: "#2f6fdb", text: "#1d2230", panel: "#ffffff" };

type Place = { depth: number; lane: number };

/// The colours the theme gives the map's custom properties, each `fallback`'s where it gives none.
export function themeColours(style: Pick<CSSStyleDeclaration, "getPropertyValue">, fallback: MapColours): MapColours {
  const read = (name: string, otherwise: string) => style.getPropertyValue(name).trim() || otherwise;
  return {
    thread: read("--muted", fallback.thread),
    pin: read("--accent", fallback.pin),
    path: read("--path", fallback.path),
    text: read("--text", fallback.text),
    panel: read("--panel", fallback.panel),
  };
}

/// Where the picture is in a frame `width` by `height` pixels: a world point (depth·COLUMN,
/// lane·LANE) is drawn at (point·zoom + offset). Every move calls `onchange` (the canvas redraws).
export class MapViewport {
  zoom = 1;
  offsetX = 0;
  offsetY = 0;
  width = 800;
  height = 480;
  onchange: () => void = () => undefined;
  /// The pointer pressed on the picture or the minimap, until it is let go.
  private press: { x: number; y: number; offsetX: number; offsetY: number } | null = null;

  resize(width: number, height: number): void {
    this.width = width;
    this.height = height;
  }

  /// Puts `place` in the middle of the frame, at `atZoom`.
  centreOn(place: Place, atZoom = this.zoom): void {
    this.zoom = atZoom;
    this.offsetX = this.width / 2 - place.depth * COLUMN * this.zoom;
    this.offsetY = this.height / 2 - place.lane * LANE * this.zoom;
    this.onchange();
  }

  /// Moves the picture `dx` pixels across and `dy` down.
  panBy(dx: number, dy: number): void {
    this.offsetX += dx;
    this.offsetY += dy;
    this.onchange();
  }

  /// The pointer was pressed at (`x`, `y`): a drag from there pans.
  pressAt(x: number, y: number): void {
    this.press = { x, y, offsetX: this.offsetX, offsetY: this.offsetY };
  }

  /// Pans by how far the pointer went since it was pressed; true once it went far enough to be a
  /// drag rather than a click.
  dragTo(x: number, y: number): boolean {
    if (!this.press) return false;
    const dx = x - this.press.x;
    const dy = y - this.press.y;
    this.offsetX = this.press.offsetX + dx;
    this.offsetY = this.press.offsetY + dy;
    this.onchange();
    return Math.abs(dx) + Math.abs(dy) > 3;
  }

  /// What a key does to the view alone: + and − zoom about the middle, 0 shows the whole
  /// picture. False for any other key.
  key(key: string, picture: MapPicture): boolean {
    if (key === "+" || key === "=") this.zoomAt(1.25, this.width / 2, this.height / 2);
    else if (key === "-") this.zoomAt(0.8, this.width / 2, this.height / 2);
    else if (key === "0") this.fit(picture);
    else return false;
    return true;
  }

  /// Keeps `place` on screen, centring on it only when it would leave it; true when it moved.
  reveal(place: Place): boolean {
    const x = place.depth * COLUMN * this.zoom + this.offsetX;
    const y = place.lane * LANE * this.zoom + this.offsetY;
    const margin = 40;
    if (x >= margin && x <= this.width - margin && y >= margin && y <= this.height - margin) return false;
    this.centreOn(place);
    return true;
  }

  /// Shows the whole picture.
  fit(picture: MapPicture): void {
    const worldWidth = Math.max(1, picture.view.depths) * COLUMN;
    const worldHeight = Math.max(1, picture.view.lanes) * LANE;
    this.zoom = clampZoom(Math.min((this.width - 40) / worldWidth, (this.height - 40) / worldHeight));
    this.offsetX = 20;
    this.offsetY = 20;
    this.onchange();
  }

  /// Zooms by `factor`, keeping the world point under screen point (`x`, `y`) where it is.
  zoomAt(factor: number, x: number, y: number): void {
    const next = clampZoom(this.zoom * factor);
    this.offsetX = x - ((x - this.offsetX) * next) / this.zoom;
    this.offsetY = y - ((y - this.offsetY) * next) / this.zoom;
    this.zoom = next;
    this.onchange();
  }

  /// The world point under screen point (`px`, `py`), in depths and lanes.
  world(px: number, py: number): Place {
    return { depth: (px - this.offsetX) / (COLUMN * this.zoom), lane: (py - this.offsetY) / (LANE * this.zoom) };
  }

  /// The message under screen point (`px`, `py`), within a few pixels of its dot.
  messageAt(picture: MapPicture, px: number, py: number): number | undefined {
    const { depth, lane } = this.world(px, py);
    const id = picture.at(depth, lane);
    if (id === undefined) return undefined;
    const place = picture.place(id)!;
    const near = Math.max(8, COLUMN * this.zoom * 0.5);
    const dx = (place.depth - depth) * COLUMN * this.zoom;
    const dy = (place.lane - lane) * LANE * this.zoom;
    return Math.hypot(dx, dy) <= near ? id : undefined;
  }

  /// Centres the frame on what minimap point (`mx`, `my`) shows.
  centreOnMinimap(picture: MapPicture, mx: number, my: number): void {
    const depth = (mx / MINIMAP.width) * Math.max(1, picture.view.depths);
    const lane = (my / MINIMAP.height) * (picture.view.lanes + 1) - 0.5;
    this.offsetX = this.width / 2 - depth * COLUMN * this.zoom;
    this.offsetY = this.height / 2 - lane * LANE * this.zoom;
    this.onchange();
  }
}

function clampZoom(value: number): number {
  return Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, value));
}

/// Draws what of `picture` is on screen, the path to `current` over it, and rings round the
/// `hovered` and `current` messages.
export function drawMap(context: CanvasRenderingContext2D, picture: MapPicture, view: MapViewport, colours: MapColours, current: number | null, hovered: number | null): void {
  const { width, height, offsetX, offsetY } = view;
  context.clearRect(0, 0, width, height);
  const column = COLUMN * view.zoom;
  const lane = LANE * view.zoom;
  const x = (depth: number) => depth * column + offsetX;
  const y = (at: number) => at * lane + offsetY;
  const fromDepth = -offsetX / column - 1;
  const toDepth = (width - offsetX) / column + 1;
  const visible = picture.visible(fromDepth, toDepth, -offsetY / lane - 1, (height - offsetY) / lane + 1);
  const { stretches, elbows } = visible;

  const line = Math.max(1, Math.min(3, lane / 6));
  strokeRuns(context, visible, line, x, y, (inPin) => (inPin ? colours.pin : colours.thread));
  if (current !== null) strokeRuns(context, picture.path(current), line + 2, x, y, () => colours.path);

  // Messages as dots once they are far enough apart to tell: the person's hollow, a model's
  // filled. Pins are marked where they branch off, at any zoom.
  if (column >= 5) {
    const radius = Math.max(2, Math.min(6, column / 4, lane / 4));
    context.lineWidth = 1.5;
    for (const filled of [false, true]) {
      context.beginPath();
      for (const stretch of stretches) {
        for (let depth = stretch.from; depth <= stretch.to; depth++) {
          const id = picture.at(depth, stretch.lane);
          if (id === undefined || (picture.author(id) !== "human") !== filled) continue;
          context.moveTo(x(depth) + radius, y(stretch.lane));
          context.arc(x(depth), y(stretch.lane), radius, 0, Math.PI * 2);
        }
      }
      if (filled) {
        context.fillStyle = colours.text;
        context.fill();
      } else {
        context.fillStyle = colours.panel;
        context.fill();
        context.strokeStyle = colours.text;
        context.stroke();
      }
    }
  }
  context.fillStyle = colours.pin;
  for (const elbow of elbows) {
    if (!elbow.inPin) continue;
    const size = Math.max(3, Math.min(6, lane / 3));
    const cx = x(elbow.depth);
    const cy = y(elbow.fromLane);
    context.beginPath();
    context.moveTo(cx, cy - size);
    context.lineTo(cx + size, cy);
    context.lineTo(cx, cy + size);
    context.lineTo(cx - size, cy);
    context.fill();
  }
  for (const [id, colour] of [
    [hovered, colours.text],
    [current, colours.path],
  ] as const) {
    const place = id === null ? undefined : picture.place(id);
    if (!place) continue;
    context.beginPath();
    context.strokeStyle = colour;
    context.lineWidth = 2.5;
    context.arc(x(place.depth), y(place.lane), Math.max(6, Math.min(10, column / 2)), 0, Math.PI * 2);
    context.stroke();
  }
}

/// Strokes stretches and elbows, the root thread's and the pins' each in one path.
export function strokeRuns(
  context: CanvasRenderingContext2D,
  { stretches, elbows }: { stretches: Stretch[]; elbows: Elbow[] },
  lineWidth: number,
  x: (depth: number) => number,
  y: (lane: number) => number,
  colour: (inPin: boolean) => string,
): void {
  context.lineWidth = lineWidth;
  context.lineCap = "round";
  context.lineJoin = "round";
  for (const inPin of [false, true]) {
    context.beginPath();
    for (const stretch of stretches) {
      if (stretch.inPin !== inPin) continue;
      context.moveTo(x(stretch.from), y(stretch.lane));
      context.lineTo(x(Math.max(stretch.from, stretch.to)), y(stretch.lane));
    }
    for (const elbow of elbows) {
      if (elbow.inPin !== inPin) continue;
      context.moveTo(x(elbow.depth), y(elbow.fromLane));
      context.lineTo(x(elbow.depth), y(elbow.lane));
      context.lineTo(x(elbow.depth + 1), y(elbow.lane));
    }
    context.strokeStyle = colour(inPin);
    context.stroke();
  }
}

/// How much of the world a minimap pixel holds, across and down.
function minimapScale(picture: MapPicture): { x: number; y: number } {
  return {
    x: MINIMAP.width / (Math.max(1, picture.view.depths) * COLUMN),
    y: MINIMAP.height / (Math.max(1, picture.view.lanes + 1) * LANE),
  };
}

/// The whole tree squeezed into the minimap's size: drawn once, then copied for every frame.
export function drawWholeTree(image: CanvasRenderingContext2D, picture: MapPicture, colours: MapColours): void {
  const scale = minimapScale(picture);
  const x = (depth: number) => depth * COLUMN * scale.x;
  const y = (at: number) => (at + 0.5) * LANE * scale.y;
  strokeRuns(image, picture.all(), 1, x, y, (inPin) => (inPin ? colours.pin : colours.thread));
}

/// The minimap: the whole tree, with the screen's rectangle on it.
export function drawMinimap(context: CanvasRenderingContext2D, wholeTree: CanvasImageSource, picture: MapPicture, view: MapViewport, colours: MapColours): void {
  const scale = minimapScale(picture);
  context.clearRect(0, 0, MINIMAP.width, MINIMAP.height);
  context.drawImage(wholeTree, 0, 0);
  context.strokeStyle = colours.path;
  context.lineWidth = 1.5;
  const left = (-view.offsetX / view.zoom) * scale.x;
  const top = (-view.offsetY / view.zoom) * scale.y;
  context.strokeRect(left, top, Math.max(3, (view.width / view.zoom) * scale.x), Math.max(3, (view.height / view.zoom) * scale.y));
}

/// Message `id` in words, as the live region reads it and the hover card shows it.
export function describeMessage(picture: MapPicture, id: number, preview: string | undefined): string {
  const pin = picture.pinOf(id);
  const place = picture.place(id);
  const who = { human: "You", model: "Model", tool: "Tool" }[picture.author(id)];
  const where = pin ? ` · in the pin “${pin.title}”` : "";
  return `${who} · message #${id} · ${(place?.depth ?? 0) + 1} deep${where}: ${preview ?? "…"}`;
}
