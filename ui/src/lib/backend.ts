// The one place the UI talks to the Rust side. Generated commands return a status-tagged result;
// here a failure becomes a thrown PinloomError carrying the backend's closed error code, so the
// rest of the UI branches on `code` and never parses messages.
import { commands, type ApiError, type ErrorCode } from "./bindings";

export class PinloomError extends Error {
  readonly code: ErrorCode;

  constructor(error: ApiError) {
    super(error.message);
    this.name = "PinloomError";
    this.code = error.code;
  }

  /// Anything thrown by a call (a backend error, or a Tauri failure such as a denied permission)
  /// as a PinloomError, so the view has one shape to show.
  static from(thrown: unknown): PinloomError {
    if (thrown instanceof PinloomError) return thrown;
    const message = thrown instanceof Error ? thrown.message : String(thrown);
    return new PinloomError({ code: "internal", message });
  }
}

type Result<T> = { status: "ok"; data: T } | { status: "error"; error: ApiError };

async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  const result = await call;
  if (result.status === "error") throw new PinloomError(result.error);
  return result.data;
}

export const backend = {
  treeCreate: (title: string, mode: Parameters<typeof commands.treeCreate>[1]) =>
    unwrap(commands.treeCreate(title, mode)),
  treeList: () => unwrap(commands.treeList()),
  treeOpen: (treeId: number) => unwrap(commands.treeOpen(treeId)),
  messageAppend: (treeId: number, parentId: number | null, text: string) =>
    unwrap(commands.messageAppend(treeId, parentId, text)),
  preferencesGet: () => unwrap(commands.preferencesGet()),
  preferencesSet: (preferences: Parameters<typeof commands.preferencesSet>[0]) =>
    unwrap(commands.preferencesSet(preferences)),
};
