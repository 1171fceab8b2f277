// Files dropped on the window. Where they land decides what happens: on the tree list they are
// imported as trees, on an open tree they are attached to it. Tauri reports the drop with the
// files' paths and the pointer's place; the element under that place names its zone with
// `data-drop-zone`.
import { getCurrentWebview } from "@tauri-apps/api/webview";

export type DropZone = "trees" | "conversation";

export type FileDrag =
  | { type: "over"; zone: DropZone | null }
  | { type: "drop"; zone: DropZone | null; paths: string[] }
  | { type: "leave" };

/// The zone under a point given in physical pixels, as Tauri reports drags.
export function zoneAt(x: number, y: number): DropZone | null {
  const scale = window.devicePixelRatio || 1;
  const element = document.elementFromPoint(x / scale, y / scale);
  const zone = element?.closest("[data-drop-zone]")?.getAttribute("data-drop-zone");
  return zone === "trees" || zone === "conversation" ? zone : null;
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
        else if (payload.type === "drop") handler({ type: "drop", zone: zoneAt(payload.position.x, payload.position.y), paths: payload.paths });
        else handler({ type: "over", zone: zoneAt(payload.position.x, payload.position.y) });
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
