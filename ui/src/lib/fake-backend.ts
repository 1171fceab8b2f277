// A fake of the Rust side for unit tests, behind Tauri's own IPC mock: calls travel through the
// generated bindings exactly as in the app, and failures come back as `{ code, message }`.
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";

import { THREAD_PAGE } from "./bindings";
import type {
  AncestorView,
  ApiError,
  Message,
  ModelProfile,
  NodeView,
  NoteView,
  SendTarget,
  SyncReport,
  TreeSettings,
  TreeSummary,
  UiPreferences,
} from "./bindings";

export type FakeState = {
  trees: TreeSummary[];
  messages: Map<number, Message[]>;
  preferences: UiPreferences;
  /// When set, every command fails with this error.
  failure: ApiError | null;
  calls: string[];
  /// Trees whose opening waits this many milliseconds, as a slow disk or a busy file can make it.
  openDelayMs: Map<number, number>;
  /// What `reply_start` streams, and the error it then fails with (a reply that arrived but
  /// could not be saved).
  replyThenFailure: { pieces: string[]; error: ApiError } | null;
  /// Replies `reply_start` saves, in order, when `replyThenFailure` is not set.
  replies: string[];
  /// Fails the next `reply_start` with this error after saving the person's message, as a
  /// provider that is down does.
  providerDown: ApiError | null;
  /// Notes by message id.
  notes: Map<number, NoteView[]>;
  /// Conversation settings by tree id; a tree without an entry has the defaults.
  treeSettings: Map<number, TreeSettings>;
  /// Model profiles `profiles_list` gives.
  profiles: ModelProfile[];
  /// Profiles whose side of a fan-out fails, with the error.
  fanOutFailures: Map<string, ApiError>;
  /// What each pin knows of its ancestry, by pin id: `pin_ancestry` answers with it, and the
  /// summaries written or regenerated change it as the app would.
  ancestry: Map<number, AncestorView[]>;
  /// The arguments of every summary the person wrote or had written again.
  summaryWrites: { kind: "write" | "regenerate"; args: Record<string, unknown> }[];
  /// What the next file dialog answers (nothing: the person closed it), and the paths the
  /// person chose so far: `tree_import` refuses any other, as the shell does.
  dialogAnswer: string[];
  chosen: Set<string>;
  /// Settings → Sync: the remote and whether it syncs on its own; `syncReports` are what the
  /// next `sync_now` calls answer, in order (an empty list: nothing new either way).
  sync: { remote: string | null; automatic: boolean; profiles: boolean; last: SyncReport | null };
  syncReports: SyncReport[];
};


/// A message as a thread shows it, its alternatives read from `all`.
function threadMessage(all: Message[], message: Message) {
  return {
    node: nodeOf(message),
    alternatives: all
      .filter((other) => other.parentId === message.parentId && other.author === message.author)
      .map((other) => other.id),
    pins: [],
    providerCut: false,
  };
}

function nodeOf(message: Message): NodeView {
  return {
    message,
    pinId: null,
    editedFrom: null,
    model: message.author === "model" ? "Fake" : null,
    usageJson: null,
    excluded: false,
    bookmarked: false,
    kept: false,
    incomplete: false,
    deleted: false,
  };
}

/// The messages from the root to `nodeId`, then on down its newest continuation, as the app's
/// thread view reads them; the tree's newest message when `nodeId` is absent.
function pathThrough(all: Message[], nodeId: number | null): Message[] {
  let end = nodeId ?? all.at(-1)?.id;
  for (;;) {
    const newest = all.filter((message) => message.parentId === end).at(-1);
    if (!newest) break;
    end = newest.id;
  }
  const path: Message[] = [];
  for (let at = all.find((message) => message.id === end); at; at = all.find((message) => message.id === at?.parentId)) {
    path.unshift(at);
  }
  return path;
}

export function installFakeBackend(initial: Partial<FakeState> = {}): FakeState {
  const state: FakeState = {
    trees: [],
    messages: new Map(),
    preferences: { lastTreeId: null, defaultModel: null, theme: null, inspectorHidden: null },
    failure: null,
    calls: [],
    openDelayMs: new Map(),
    replyThenFailure: null,
    replies: [],
    providerDown: null,
    notes: new Map(),
    treeSettings: new Map(),
    profiles: [],
    fanOutFailures: new Map(),
    ancestry: new Map(),
    summaryWrites: [],
    dialogAnswer: [],
    chosen: new Set(),
    sync: { remote: null, automatic: false, profiles: false, last: null },
    syncReports: [],
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
      case "sync_status":
        return { ...state.sync, waitingRecords: 0, waitingChanges: 0 };
      case "sync_automatic_set":
        state.sync.automatic = Boolean(args.on);
        return { ...state.sync, waitingRecords: 0, waitingChanges: 0 };
      case "sync_profiles_set":
        state.sync.profiles = Boolean(args.on);
        return { ...state.sync, waitingRecords: 0, waitingChanges: 0 };
      case "sync_now": {
        const remote = (args.remote as string | null) ?? state.sync.remote;
        if (!remote) throw { code: "invalidInput", message: "this database has no sync remote yet" } satisfies ApiError;
        state.sync.remote = remote;
        const report: SyncReport = state.syncReports.shift() ?? {
          remote,
          sentRecords: 0,
          sentChanges: 0,
          receivedRecords: 0,
          receivedChanges: 0,
          treesChanged: [],
          committed: false,
          pushed: false,
          notes: [],
          atMs: 0,
          text: `Synced with ${remote}: nothing new on either side.`,
        };
        state.sync.last = report;
        return report;
      }
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
          globalId: "g0",
          sharedBy: null,
        };
        state.trees = [tree, ...state.trees];
        return tree;
      }
      case "tree_open": {
        const tree = state.trees.find((candidate) => candidate.id === args.treeId);
        if (!tree) throw { code: "notFound", message: `tree ${String(args.treeId)} does not exist` };
        const delay = state.openDelayMs.get(tree.id);
        return delay ? new Promise((resolve) => setTimeout(() => resolve(tree), delay)) : tree;
      }
      case "message_append": {
        const text = String(args.text);
        if (!text.trim()) throw { code: "invalidInput", message: "the message is empty" };
        return write(args.treeId as number, (args.parentId as number | null) ?? null, "human", text);
      }
      case "thread_view": {
        const tree = state.trees.find((candidate) => candidate.id === args.treeId);
        if (!tree) throw { code: "notFound", message: `tree ${String(args.treeId)} does not exist` };
        const all = state.messages.get(tree.id) ?? [];
        const nodeId = (args.nodeId as number | null) ?? null;
        const path = pathThrough(all, nodeId);
        // A page, as the app sends it: the newest, or from a quarter page before the message.
        const at = path.findIndex((message) => message.id === nodeId);
        const newest = Math.max(0, path.length - THREAD_PAGE);
        const first = at >= 0 && at < newest ? Math.max(0, at - THREAD_PAGE / 4) : newest;
        const messages = path.slice(first, first + THREAD_PAGE).map((message) => threadMessage(all, message));
        return { tree, pin: null, messages, first, total: path.length, end: path.at(-1)?.id ?? null };
      }
      case "thread_page": {
        const { treeId } = treeOf(args.endId as number);
        const all = state.messages.get(treeId) ?? [];
        const path = pathThrough(all, args.endId as number);
        const first = args.first as number;
        return path.slice(first, first + (args.count as number)).map((message) => threadMessage(all, message));
      }
      case "choose_import_files": {
        for (const path of state.dialogAnswer) state.chosen.add(path);
        return state.dialogAnswer;
      }
      case "tree_import": {
        // A file named "*.json" holds one tree named after it; anything else is refused.
        const path = String(args.path);
        if (!state.chosen.has(path)) {
          throw { code: "invalidInput", message: `${path} was not chosen in this window` } satisfies ApiError;
        }
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
          globalId: "g2",
          sharedBy: null,
        };
        state.trees = [tree, ...state.trees];
        const text = `Imported "${title}" as tree ${tree.id} (${title}): 2 messages, 0 threads.\nEverything in the document was mapped.`;
        return { trees: [{ id: tree.id, title, messages: 2, threads: 0 }], notes: [], text };
      }
      case "reply_start": {
        const channel = args.onPiece as { onmessage: (piece: unknown) => void };
        const script = state.replyThenFailure;
        if (script) {
          for (const text of script.pieces) channel.onmessage({ kind: "text", text });
          throw script.error;
        }
        return replyTo(args.target as SendTarget, channel);
      }
      case "reply_fan_out": {
        // Each profile named in `fanOutFailures` fails on its own side; the rest answer with the
        // next scripted reply, in lane order.
        const channel = args.onPiece as { onmessage: (piece: unknown) => void };
        const profiles = args.profiles as string[];
        if (profiles.length < 2) throw { code: "invalidInput", message: "choose 2 to 4 models" } satisfies ApiError;
        const target = args.prompt as SendTarget;
        let treeId: number;
        let prompt: Message;
        if (target.kind === "thread") {
          treeId = target.treeId;
          prompt = write(treeId, target.parentId, "human", target.text);
        } else if (target.kind === "regenerate") {
          const found = treeOf(target.nodeId);
          treeId = found.treeId;
          prompt = found.message.author === "model" ? treeOf(found.message.parentId ?? -1).message : found.message;
        } else {
          throw new Error(`the fake backend fans out no ${target.kind} target`);
        }
        const answers = profiles.map((profile, lane) => {
          const failure = state.fanOutFailures.get(profile);
          if (failure) {
            const answer = { lane, profile, exchange: null, error: failure };
            channel.onmessage({ kind: "answered", answer });
            return answer;
          }
          const text = state.replies.shift() ?? "(no scripted reply)";
          channel.onmessage({ kind: "piece", lane, piece: { kind: "text", text } });
          const reply = write(treeId, prompt.id, "model", text);
          const exchange = { prompt: null, reply: { ...nodeOf(reply), model: profile }, interruption: null, plan: null, receipt: null };
          const answer = { lane, profile, exchange, error: null };
          channel.onmessage({ kind: "answered", answer });
          return answer;
        });
        return { prompt: nodeOf(prompt), answers };
      }
      case "profiles_list":
        return state.profiles;
      case "profile_enable": {
        const profile = state.profiles.find((one) => one.name === args.name);
        if (!profile) throw { code: "notFound", message: `no profile ${String(args.name)}` } satisfies ApiError;
        profile.importedFrom = null;
        return profile;
      }
      case "preferences_get":
        return state.preferences;
      case "preferences_set":
        state.preferences = args.preferences as UiPreferences;
        return null;
      case "context_preview":
        return null;
      case "pin_ancestry":
        return structuredClone(state.ancestry.get(args.pinId as number) ?? []);
      case "summary_write":
      case "summary_regenerate": {
        const text = String(args.text ?? "").trim();
        if (command === "summary_write" && !text)
          throw { code: "invalidInput", message: "a summary cannot be empty" } satisfies ApiError;
        state.summaryWrites.push({ kind: command === "summary_write" ? "write" : "regenerate", args });
        for (const ancestors of state.ancestry.values()) {
          const ancestor = ancestors.find((candidate) => candidate.upTo === args.upTo && candidate.pinId === args.pinId);
          if (!ancestor) continue;
          ancestor.state = "summary";
          ancestor.writtenBy = command === "summary_write" ? "person" : "model";
          ancestor.summarizer = command === "summary_write" ? null : String(args.profile);
          ancestor.text = command === "summary_write" ? text : `Written again by ${String(args.profile)}.`;
          ancestor.unavailable = null;
        }
        return {
          pinId: args.pinId,
          upTo: args.upTo,
          budget: args.budget ?? null,
          summarizer: command === "summary_write" ? "" : String(args.profile),
          writtenBy: command === "summary_write" ? "person" : "model",
          chosen: true,
          fitted: false,
          text,
          updateCount: 1,
        };
      }
      case "context_slices": {
        // The members of a folded run: old messages truncation cut, one line each.
        const first = args.first as number;
        return Array.from({ length: args.count as number }, (_, i) => ({
          kind: "oldHistory",
          source: "node",
          provenance: "path",
          sourceId: first + i,
          priority: 9,
          tokens: 10,
          included: false,
          reason: "truncated",
          cutFrom: null,
          kept: false,
          preview: `Old message ${first + i}`,
          excludeToFit: false,
          count: 1,
          first: first + i,
          lastSourceId: null,
        }));
      }
      case "notes_list":
        return state.notes.get(args.nodeId as number) ?? [];
      case "note_add": {
        const nodeId = args.nodeId as number;
        treeOf(nodeId);
        const text = String(args.text);
        if (!text.trim()) throw { code: "invalidInput", message: "a note needs some text" } satisfies ApiError;
        const note: NoteView = { id: nextId++, text, included: Boolean(args.included) };
        state.notes.set(nodeId, [...(state.notes.get(nodeId) ?? []), note]);
        return note.id;
      }
      case "note_include": {
        const note = [...state.notes.values()].flat().find((candidate) => candidate.id === args.noteId);
        if (!note) throw { code: "notFound", message: `note ${String(args.noteId)} does not exist` } satisfies ApiError;
        note.included = Boolean(args.included);
        return null;
      }
      case "tree_settings_get":
        return settingsOf(args.treeId as number);
      case "tree_settings_set":
        state.treeSettings.set(args.treeId as number, args.settings as TreeSettings);
        return args.settings;
      case "search_hit_set": {
        const treeId = args.treeId as number;
        const nodeId = args.nodeId as number;
        if (treeOf(nodeId).treeId !== treeId) {
          throw { code: "invalidInput", message: `message #${nodeId} is not in this tree` } satisfies ApiError;
        }
        const settings = settingsOf(treeId);
        const hits = (settings.searchHits ?? []).filter((hit) => hit !== nodeId);
        settings.searchHits = args.picked ? [...hits, nodeId] : hits;
        state.treeSettings.set(treeId, settings);
        return settings;
      }
      default:
        throw new Error(`the fake backend has no command ${command}`);
    }
  });

  function write(treeId: number, parentId: number | null, author: Message["author"], text: string): Message {
    const message: Message = { id: nextId++, parentId, author, text, createdAtMs: 0, tokenEstimate: Math.ceil(text.length / 3.5) };
    state.messages.set(treeId, [...(state.messages.get(treeId) ?? []), message]);
    return message;
  }

  function settingsOf(treeId: number): TreeSettings {
    if (!state.trees.some((tree) => tree.id === treeId)) {
      throw { code: "notFound", message: `tree ${treeId} does not exist` } satisfies ApiError;
    }
    return structuredClone(state.treeSettings.get(treeId) ?? { searchHits: [] });
  }

  function treeOf(nodeId: number): { treeId: number; message: Message } {
    for (const [treeId, messages] of state.messages) {
      const message = messages.find((candidate) => candidate.id === nodeId);
      if (message) return { treeId, message };
    }
    throw { code: "notFound", message: `message ${nodeId} does not exist` } satisfies ApiError;
  }

  /// Saves the person's message the target names (if any), then the next scripted reply.
  function replyTo(target: SendTarget, channel: { onmessage: (piece: unknown) => void }) {
    let treeId: number;
    let prompt: Message | null = null;
    let answered: Message;
    switch (target.kind) {
      case "thread":
        treeId = target.treeId;
        prompt = write(treeId, target.parentId, "human", target.text);
        answered = prompt;
        break;
      case "edit": {
        const edited = treeOf(target.nodeId);
        treeId = edited.treeId;
        prompt = write(treeId, edited.message.parentId, "human", target.text);
        answered = prompt;
        break;
      }
      case "regenerate": {
        const found = treeOf(target.nodeId);
        treeId = found.treeId;
        answered = found.message.author === "model" ? treeOf(found.message.parentId ?? -1).message : found.message;
        break;
      }
      case "continue": {
        const found = treeOf(target.nodeId);
        treeId = found.treeId;
        answered = found.message;
        break;
      }
      case "pin":
        throw new Error("the fake backend has no pins");
    }
    if (state.providerDown) {
      const error = state.providerDown;
      state.providerDown = null;
      throw error;
    }
    const text = state.replies.shift() ?? "(no scripted reply)";
    channel.onmessage({ kind: "text", text });
    const reply = write(treeId, answered.id, "model", text);
    return { prompt: prompt && nodeOf(prompt), reply: nodeOf(reply), interruption: null, plan: null, receipt: null };
  }

  return state;
}
