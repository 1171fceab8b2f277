// Files dropped on the window. Where they land decides what happens: on the tree list they are
// imported as trees, on an open tree they are attached to it, and images on a column's composer
// wait to go with the message being written there. Tauri reports the drop with the
// files' paths and the pointer's place; the element under that place names its zone with
// `data-drop-zone`.
import { getCurrentWebview } from "@tauri-apps/api/webview";

export type DropZone = "trees" | "conversation" | "composer";

/// Where a drag is: its zone, and for a composer its column (`data-column`).
export type DropPlace = { zone: DropZone | null; column: number | null };

export type FileDrag =
  | ({ type: "over" } & DropPlace)
  | ({ type: "drop"; paths: string[] } & DropPlace)
  | { type: "leave" };

/// The zone under a point given in physical pixels, as Tauri reports drags, and the column of a
/// composer there.
export function placeAt(x: number, y: number): DropPlace {
  const scale = window.devicePixelRatio || 1;
  const element = document.elementFromPoint(x / scale, y / scale)?.closest("[data-drop-zone]");
  const zone = element?.getAttribute("data-drop-zone");
  const column = Number(element?.getAttribute("data-column") ?? Number.NaN);
  return {
    zone: zone === "trees" || zone === "conversation" || zone === "composer" ? zone : null,
    column: zone === "composer" && Number.isInteger(column) ? column : null,
  };
}

/// Whether `path` names an image models take, by its extension: what a drop on a composer
/// keeps for the message rather than attaching to the tree.
export function isImagePath(path: string): boolean {
  return /\.(png|jpe?g|gif|webp)$/i.test(path);
}

/// Calls `handler` for each file drag over the window; returns a function that stops listening.
export function onFileDrag(handler: (drag: FileDrag) => void): () => void {
  let stop: (() => void) | undefined;
  let stopped = false;
  try {
    getCurrentWebview()
      .onDragDropEvent((event) => {
        const payload = event.payload;
        if (payload.type === "leave") handler({ type: "leave" });
        else if (payload.type === "drop") handler({ type: "drop", ...placeAt(payload.position.x, payload.position.y), paths: payload.paths });
        else handler({ type: "over", ...placeAt(payload.position.x, payload.position.y) });
      })
      .then((unlisten) => {
        if (stopped) unlisten();
        else stop = unlisten;
      })
      .catch((thrown: unknown) => console.error("file drops are not heard:", thrown));
  } catch {
    // Outside Tauri (unit tests) there is no webview to listen to.
  }
  return () => {
    stopped = true;
    stop?.();
  };
}
