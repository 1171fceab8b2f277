// A fake of the Rust side for unit tests, behind Tauri's own IPC mock: calls travel through the
// generated bindings exactly as in the app, and failures come back as `{ code, message }`.
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";

import type { ApiError, Message, TreeSummary, UiPreferences } from "./bindings";

export type FakeState = {
  trees: TreeSummary[];
  messages: Map<number, Message[]>;
  preferences: UiPreferences;
  /// When set, every command fails with this error.
  failure: ApiError | null;
  calls: string[];
  /// Trees whose opening waits this many milliseconds, as a big tree's does in the app.
  openDelayMs: Map<number, number>;
  /// What `reply_start` streams, and the error it then fails with (a reply that arrived but
  /// could not be saved); a reply that is saved is not faked.
  replyThenFailure: { pieces: string[]; error: ApiError } | null;
};

export function installFakeBackend(initial: Partial<FakeState> = {}): FakeState {
  const state: FakeState = {
    trees: [],
    messages: new Map(),
    preferences: { lastTreeId: null, defaultModel: null, theme: null, inspectorHidden: null },
    failure: null,
    calls: [],
    openDelayMs: new Map(),
    replyThenFailure: null,
    ...initial,
  };
  let nextId = 100;
  clearMocks();
  mockIPC((command, payload) => {
    const args = (payload ?? {}) as Record<string, unknown>;
    state.calls.push(command);
    if (command.startsWith("plugin:event|")) return 1;
    if (state.failure) throw state.failure;
    switch (command) {
      case "tree_list":
        return state.trees;
      case "tree_create": {
        const title = String(args.title).trim();
        if (!title) throw { code: "invalidInput", message: "a tree needs a title" } satisfies ApiError;
        const tree: TreeSummary = {
          id: nextId++,
          slug: title.toLowerCase().replace(/[^a-z0-9]+/g, "-"),
          title,
          mode: args.mode as TreeSummary["mode"],
          createdAtMs: 0,
          updatedAtMs: 0,
          messageCount: 0,
        };
        state.trees = [tree, ...state.trees];
        return tree;
      }
      case "tree_open": {
        const tree = state.trees.find((candidate) => candidate.id === args.treeId);
        if (!tree) throw { code: "notFound", message: `tree ${String(args.treeId)} does not exist` };
        const view = { tree, messages: state.messages.get(tree.id) ?? [] };
        const delay = state.openDelayMs.get(tree.id);
        return delay ? new Promise((resolve) => setTimeout(() => resolve(view), delay)) : view;
      }
      case "message_append": {
        const text = String(args.text);
        if (!text.trim()) throw { code: "invalidInput", message: "the message is empty" };
        const treeId = args.treeId as number;
        const message: Message = {
          id: nextId++,
          parentId: (args.parentId as number | null) ?? null,
          author: "human",
          text,
          createdAtMs: 0,
          tokenEstimate: Math.ceil(text.length / 3.5),
        };
        state.messages.set(treeId, [...(state.messages.get(treeId) ?? []), message]);
        return message;
      }
      case "thread_view": {
        const tree = state.trees.find((candidate) => candidate.id === args.treeId);
        if (!tree) throw { code: "notFound", message: `tree ${String(args.treeId)} does not exist` };
        const messages = (state.messages.get(tree.id) ?? []).map((message) => ({
          node: {
            message,
            pinId: null,
            editedFrom: null,
            model: null,
            usageJson: null,
            excluded: false,
            bookmarked: false,
            kept: false,
            incomplete: false,
            deleted: false,
          },
          alternatives: [message.id],
          pins: [],
        }));
        return { tree, pin: null, messages };
      }
      case "tree_import": {
        // A file named "*.json" holds one tree named after it; anything else is refused.
        const path = String(args.path);
        const title = path.split("/").at(-1)?.replace(/\.json$/, "") ?? path;
        if (!path.endsWith(".json")) {
          throw { code: "invalidInput", message: `cannot read ${path}: it is not a file` } satisfies ApiError;
        }
        const tree: TreeSummary = {
          id: nextId++,
          slug: title,
          title,
          mode: "dialogue",
          createdAtMs: 0,
          updatedAtMs: 0,
          messageCount: 2,
        };
        state.trees = [tree, ...state.trees];
        const text = `Imported "${title}" as tree ${tree.id} (${title}): 2 messages, 0 threads.\nEverything in the document was mapped.`;
        return { trees: [{ id: tree.id, title, messages: 2, threads: 0 }], notes: [], text };
      }
      case "reply_start": {
        const script = state.replyThenFailure;
        if (!script) throw new Error("the fake backend only fakes replies that fail to be saved");
        const channel = args.onPiece as { onmessage: (piece: unknown) => void };
        for (const text of script.pieces) channel.onmessage({ kind: "text", text });
        throw script.error;
      }
      case "profiles_list":
        return [];
      case "preferences_get":
        return state.preferences;
      case "preferences_set":
        state.preferences = args.preferences as UiPreferences;
        return null;
      default:
        throw new Error(`the fake backend has no command ${command}`);
    }
  });
  return state;
}
