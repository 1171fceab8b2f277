// A fake of the Rust side for unit tests, behind Tauri's own IPC mock: calls travel through the
// generated bindings exactly as in the app, and failures come back as `{ code, message }`.
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";

import { THREAD_PAGE } from "./bindings";
import type {
  AncestorView,
  ApiError,
  AttachAs,
  AttachTo,
  AttachmentView,
  BackgroundRequestView,
  DeletedThreadView,
  FoundModel,
  ImageInput,
  KeyStatus,
  Message,
  ModelProfile,
  NodeView,
  NoteView,
  PickedView,
  PlanView,
  Receipt,
  ReplyTokens,
  RequestDiff,
  RequestView,
  SearchResult,
  SendTarget,
  SliceView,
  SyncReport,
  TeamStanding,
  TeamView,
  TokenView,
  TrashView,
  TreeContext,
  TreeMapView,
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
  /// What `context_request` answers: the request behind a preview, which leaves its body out.
  previewRequest: RequestView;
  /// What `context_preview` answers (made for whichever message is asked); no plan when null.
  preview: PlanView | null;
  /// The length each Continue asked of its continuations (null: the tree's), in order.
  continueLengths: (number | null)[];
  /// Trees whose opening waits this many milliseconds, as a slow disk or a busy file can make it.
  openDelayMs: Map<number, number>;
  /// What `reply_start` streams, and the error it then fails with (a reply that arrived but
  /// could not be saved).
  replyThenFailure: { pieces: string[]; error: ApiError } | null;
  /// Replies `reply_start` saves, in order, when `replyThenFailure` is not set.
  replies: string[];
  /// What each `reply_start` was asked to answer, in order.
  sent: SendTarget[];
  /// The messages each question over picked messages was asked over, by the question's id: the
  /// thread it starts shows them at its top.
  picked: Map<number, PickedView[]>;
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
  /// The passphrase each `sync_now` was given (null: none), in order.
  syncPassphrases: (string | null)[];
  /// Settings → Sync's teams, as joined here.
  teams: TeamView[];
  /// The name each create or join of a team was given to go by (null: git's user name), in order.
  teamJoinNames: (string | null)[];
  /// The trees the next join brings, as a team's repository that members shared them in would:
  /// they join the list of trees and the team's shared trees.
  teamArrivals: TreeSummary[];
  /// Settings → Provider keys: where each provider's key is; `key_save` puts one in the keyring.
  keys: KeyStatus[];
  /// The models `ollama_models` finds; null when no Ollama server answers.
  ollama: ModelProfile[] | null;
  /// The models `models_ready` finds on local servers (those not saved yet are offered).
  localModels: FoundModel[];
  /// Each tree's system context, by tree id; a tree without an entry has none.
  treeContexts: Map<number, TreeContext>;
  /// Threads deleted whole, by tree id; `thread_restore` brings one back.
  deletedThreads: Map<number, DeletedThreadView[]>;
  /// What is in the trash; restoring or emptying takes from it.
  trash: TrashView;
  /// Files attached, and images sent with messages, by tree id, with what each was attached to.
  attachments: Map<number, (AttachmentView & { to: AttachTo })[]>;
  /// Replies' receipts and the differences of their requests from the one before, by reply id.
  receipts: Map<number, Receipt>;
  diffs: Map<number, RequestDiff>;
  /// Each tree's map picture, by tree id.
  maps: Map<number, TreeMapView>;
  /// What `reply_tokens` gives for a reply, by reply id, in place of the tokens the fake makes up
  /// (null: its server reported none).
  tokens: Map<number, TokenView[] | null>;
  /// The requests Pinloom made on its own (summaries, condensations, compactions), bodies included, newest
  /// first: `requests_list` gives a tree's without bodies, `request_read` one with its body.
  requests: BackgroundRequestView[];
  /// Compactions made with `thread_compact`, with the turns kept; `compaction_undo` marks one.
  compactions: { id: number; treeId: number; nodeId: number; keep: number; undone: boolean }[];
};


/// A one-pixel PNG: what the fake reads from any image file.
export const PIXEL_PNG =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/// The image formats the backend sends, by the extension of a file's name.
const IMAGE_TYPES: Record<string, string> = { png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp" };

/// A value as the backend receives it: serialized, as IPC sends it, so what the window passed
/// (a reactive proxy, say) is plain data that can be kept and cloned.
function received<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

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

/// What a reply was made from, beyond its parent: a rewrite of another reply, or a fusion of
/// answers. Ids are unique across fakes, so one map serves them all.
const madeFrom = new Map<number, { editedFrom: number | null; fusedFrom: number[] }>();

/// A message as the conversation view gets it from the fake (tests build views of their own).
export function nodeOf(message: Message): NodeView {
  return {
    message,
    pinId: null,
    editedFrom: madeFrom.get(message.id)?.editedFrom ?? null,
    fusedFrom: madeFrom.get(message.id)?.fusedFrom ?? [],
    model: message.author === "model" ? "Fake" : null,
    usageJson: null,
    excluded: false,
    bookmarked: false,
    kept: false,
    incomplete: false,
    deleted: false,
  };
}

/// How likely the fake says a reply's tokens were, in turn.
const TOKEN_PROBABILITIES = [0.43, 0.88, 0.21, 0.67, 0.95, 0.09];
/// What the fake says the model might have written instead of any token.
const OTHER_TOKENS = [" down", " on"];

/// `text` as a model might have generated it: a token per word with the spaces before it, each
/// with made-up odds, itself among its alternatives, most likely first.
function madeUpTokens(text: string): TokenView[] {
  return (text.match(/\s*\S+|\s+/g) ?? []).map((token, place) => {
    const probability = TOKEN_PROBABILITIES[place % TOKEN_PROBABILITIES.length] ?? 0.5;
    const others = OTHER_TOKENS.filter((other) => other !== token).map((other, rank) => ({
      text: other,
      probability: (1 - probability) * (rank === 0 ? 0.6 : 0.25),
    }));
    const alternatives = [{ text: token, probability }, ...others].sort((a, b) => b.probability - a.probability);
    return { text: token, probability, alternatives };
  });
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

/// A picked message as the thread asked over it shows it (the fake has no pins: all come from the
/// root thread).
function pickedView(message: Message, withSummary: boolean): PickedView {
  const who = message.author === "model" ? "an answer by Fake" : "your message";
  const opening = message.text.replace(/\s+/g, " ").trim().slice(0, 60);
  return { nodeId: message.id, pinId: null, cameFrom: `the main thread, ${who}`, opening, withSummary, leftOut: null };
}

/// The device id this machine goes by in the fake's team rosters.
export const FAKE_DEVICE = "device-here";

/// A team as Settings → Sync lists it: one made before rosters (open, so without members),
/// nothing shared and never synced, unless `extra` says otherwise.
export function teamView(name: string, remote: string, extra: Partial<TeamView> = {}): TeamView {
  return { name, remote, sharedTrees: [], last: null, standing: "open", members: [], owned: false, ...extra };
}

/// A tree as the tree list shows it: a dialogue of two messages, made at time 0 and shared by
/// nobody, unless `extra` says otherwise.
export function treeSummary(id: number, slug: string, title: string, extra: Partial<TreeSummary> = {}): TreeSummary {
  return {
    id,
    slug,
    title,
    mode: "dialogue",
    createdAtMs: 0,
    updatedAtMs: 0,
    messageCount: 2,
    globalId: "g2",
    sharedBy: null,
    ...extra,
  };
}

/// The plan of a send from `nodeId` under `profile`, with `available` tokens of room: nothing in
/// it, nothing cut, nothing refused, unless `extra` says otherwise.
export function planView(nodeId: number, profile: string, available: number, extra: Partial<PlanView> = {}): PlanView {
  return {
    nodeId,
    profile,
    available,
    used: 0,
    tokenizer: "o200k",
    truncated: false,
    omittedMessages: 0,
    slices: [],
    missingSummaries: 0,
    providerCut: null,
    refusal: null,
    url: "http://127.0.0.1:9/v1/chat/completions",
    body: "{}",
    replyLimit: 1024,
    ancestry: [],
    keptStart: 0,
    stepCut: null,
    smallBudget: null,
    startGivenUp: null,
    taskFrames: null,
    compaction: null,
    compactionDue: null,
    ...extra,
  };
}

/// A plan's line for old messages `first` to `first + count - 1`, 10 tokens each, that
/// truncation cut: the message alone, or a folded run of them whose members `context_slices`
/// lists. `extra` makes it another kind of slice.
export function oldHistorySlice(first: number, count: number, extra: Partial<SliceView> = {}): SliceView {
  return {
    kind: "oldHistory",
    source: "node",
    provenance: "path",
    sourceId: first,
    priority: 9,
    tokens: 10 * count,
    included: false,
    reason: "truncated",
    cutFrom: null,
    kept: false,
    preview: `Old message ${first}`,
    excludeToFit: false,
    count,
    first,
    lastSourceId: count > 1 ? first + count - 1 : null,
    ...extra,
  };
}

export function installFakeBackend(initial: Partial<FakeState> = {}): FakeState {
  const state: FakeState = {
    trees: [],
    messages: new Map(),
    preferences: { lastTreeId: null, defaultModel: null, theme: null, inspectorHidden: null },
    failure: null,
    calls: [],
    previewRequest: { url: "http://127.0.0.1:9/v1/chat/completions", body: "{}" },
    preview: null,
    continueLengths: [],
    openDelayMs: new Map(),
    replyThenFailure: null,
    replies: [],
    sent: [],
    picked: new Map(),
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
    syncPassphrases: [],
    teams: [],
    teamJoinNames: [],
    teamArrivals: [],
    keys: [],
    ollama: null,
    localModels: [],
    treeContexts: new Map(),
    deletedThreads: new Map(),
    trash: { trees: [], branches: [] },
    attachments: new Map(),
    receipts: new Map(),
    diffs: new Map(),
    maps: new Map(),
    tokens: new Map(),
    requests: [],
    compactions: [],
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
        return { ...state.sync, waitingRecords: 0, waitingChanges: 0, teams: state.teams.length, encrypted: false };
      case "sync_automatic_set":
        state.sync.automatic = Boolean(args.on);
        return { ...state.sync, waitingRecords: 0, waitingChanges: 0, teams: state.teams.length, encrypted: false };
      case "sync_profiles_set":
        state.sync.profiles = Boolean(args.on);
        return { ...state.sync, waitingRecords: 0, waitingChanges: 0, teams: state.teams.length, encrypted: false };
      case "sync_now": {
        const remote = (args.remote as string | null) ?? state.sync.remote;
        if (!remote && state.teams.length === 0) {
          throw { code: "invalidInput", message: "this database has no sync remote yet" } satisfies ApiError;
        }
        state.syncPassphrases.push((args.passphrase as string | null) ?? null);
        // With no remote of its own, Sync now syncs the teams only.
        if (remote) state.sync.remote = remote;
        const synced = remote ?? state.teams[0]?.remote ?? "";
        const report: SyncReport = state.syncReports.shift() ?? {
          remote: synced,
          sentRecords: 0,
          sentChanges: 0,
          receivedRecords: 0,
          receivedChanges: 0,
          treesChanged: [],
          committed: false,
          pushed: false,
          notes: [],
          atMs: 0,
          text: `Synced with ${synced}: nothing new on either side.`,
        };
        state.sync.last = report;
        return report;
      }
      case "team_list":
        return structuredClone(state.teams);
      case "team_join":
        // The fake's remotes are all empty: a join there makes a new team, owned here.
        return joinTeam(String(args.team), String(args.remote), (args.yourName as string | null) ?? null, "member");
      case "team_invitation": {
        const team = joinedTeam(String(args.team));
        if (team.standing !== "open" && !team.owned) {
          const owner = team.members.find((member) => member.owner)?.name ?? "its owner";
          throw { code: "invalidInput", message: `only the team's owner (${owner}) admits members: ask them for an invitation` } satisfies ApiError;
        }
        // An owner's invitation carries what admits one device, as the backend's does.
        const admission = team.owned ? `owner: key-of-${team.name}\nrecipient: age-of-${team.name}\ncode: code-for-${team.name}\n` : "";
        return `Pinloom team invitation\nteam: ${team.name}\nremote: ${team.remote}\n${admission}`;
      }
      case "team_join_invitation": {
        // As the backend reads one: `key: value` lines, pasted with whatever indentation.
        const line = (key: string) => new RegExp(`^\\s*${key}\\s*:(.*)$`, "im").exec(String(args.invitation))?.[1]?.trim();
        const team = line("team");
        const remote = line("remote");
        if (team === undefined || remote === undefined) {
          throw { code: "invalidInput", message: "that is not a Pinloom team invitation: it has lines `team: …` and `remote: …`; paste it whole" } satisfies ApiError;
        }
        // With an owner's code the machine asks to join; without, the team is one made before rosters.
        const standing = line("code") === undefined ? "open" : "asked";
        return joinTeam(team, remote, (args.yourName as string | null) ?? null, standing);
      }
      case "team_remove_member": {
        const team = joinedTeam(String(args.team));
        if (team.standing === "open") {
          throw { code: "invalidInput", message: "this team has no roster (it was made before Pinloom kept one): every member's device writes to it; make a new team to choose its members" } satisfies ApiError;
        }
        if (!team.owned) throw { code: "invalidInput", message: "only the team's owner removes members" } satisfies ApiError;
        const removed = team.members.find((member) => member.device === args.member);
        if (!removed) throw { code: "invalidInput", message: `the team has no member ${JSON.stringify(args.member)}` } satisfies ApiError;
        if (removed.owner) {
          throw { code: "invalidInput", message: "the owner cannot be removed from their own team; leave it instead" } satisfies ApiError;
        }
        team.members = team.members.filter((member) => member !== removed);
        return teamSynced(team, 1, [], `Removed ${removed.name} from the team ${team.name}.\n`);
      }
      case "team_leave": {
        const left = joinedTeam(String(args.team));
        state.teams = state.teams.filter((team) => team !== left);
        return structuredClone(state.teams);
      }
      case "team_share_tree": {
        const team = joinedTeam(String(args.team));
        const treeId = args.treeId as number;
        if (!state.trees.some((tree) => tree.id === treeId)) {
          throw { code: "notFound", message: `tree ${treeId} does not exist` } satisfies ApiError;
        }
        const sharedBy = (args.sharedBy as string | null)?.trim() || "You";
        state.trees = state.trees.map((tree) => (tree.id === treeId ? { ...tree, sharedBy } : tree));
        if (!team.sharedTrees.includes(treeId)) team.sharedTrees.push(treeId);
        return teamSynced(team, 1, []);
      }
      case "tree_create": {
        const title = String(args.title).trim();
        if (!title) throw { code: "invalidInput", message: "a tree needs a title" } satisfies ApiError;
        const slug = title.toLowerCase().replace(/[^a-z0-9]+/g, "-");
        const mode = args.mode as TreeSummary["mode"];
        const tree = treeSummary(nextId++, slug, title, { mode, messageCount: 0, globalId: "g0" });
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
      case "reply_edit": {
        const { treeId, message } = treeOf(args.nodeId as number);
        if (message.author !== "model") throw { code: "invalidInput", message: "only a model's reply is edited this way" } satisfies ApiError;
        const text = String(args.text);
        if (!text.trim()) throw { code: "invalidInput", message: "the edited reply is empty" } satisfies ApiError;
        const edited = write(treeId, message.parentId, "model", text);
        madeFrom.set(edited.id, { editedFrom: message.id, fusedFrom: [] });
        return nodeOf(edited);
      }
      case "reply_tokens": {
        // As the app answers: whether the tokens spell the reply is its one check.
        const nodeId = args.nodeId as number;
        const tokens = tokensOf(nodeId);
        if (tokens === null) return { kind: "none" } satisfies ReplyTokens;
        if (tokens.map((token) => token.text).join("") !== treeOf(nodeId).message.text) {
          return { kind: "mismatch" } satisfies ReplyTokens;
        }
        return { kind: "shown", tokens: structuredClone(tokens) } satisfies ReplyTokens;
      }
      case "reply_branch_at_token": {
        const { treeId, message } = treeOf(args.nodeId as number);
        if (message.author !== "model") {
          throw { code: "invalidInput", message: "only a model's continuation has tokens to branch at" } satisfies ApiError;
        }
        const alternative = String(args.alternative);
        if (!alternative) throw { code: "invalidInput", message: "choose a token to branch with" } satisfies ApiError;
        const tokens = tokensOf(message.id) ?? [];
        const index = args.index as number;
        if (index >= tokens.length) {
          throw { code: "invalidInput", message: `this continuation has ${tokens.length} tokens, so none at place ${index + 1}` } satisfies ApiError;
        }
        const before = tokens.slice(0, index).map((token) => token.text).join("");
        if (!message.text.startsWith(before)) {
          throw { code: "invalidInput", message: "this continuation's text is not the one its tokens spell" } satisfies ApiError;
        }
        const branch = write(treeId, message.parentId, "model", before + alternative);
        madeFrom.set(branch.id, { editedFrom: message.id, fusedFrom: [] });
        return nodeOf(branch);
      }
      case "thread_view": {
        const tree = state.trees.find((candidate) => candidate.id === args.treeId);
        if (!tree) throw { code: "notFound", message: `tree ${String(args.treeId)} does not exist` };
        const all = state.messages.get(tree.id) ?? [];
        const nodeId = (args.nodeId as number | null) ?? null;
        const path = pathThrough(all, nodeId);
        const picked = structuredClone(state.picked.get(path[0]?.id ?? -1) ?? []);
        // A page, as the app sends it: the newest, or from a quarter page before the message.
        const at = path.findIndex((message) => message.id === nodeId);
        const newest = Math.max(0, path.length - THREAD_PAGE);
        const first = at >= 0 && at < newest ? Math.max(0, at - Math.floor(THREAD_PAGE / 4)) : newest;
        const messages = path.slice(first, first + THREAD_PAGE).map((message) => threadMessage(all, message));
        return { tree, pin: null, messages, first, total: path.length, end: path.at(-1)?.id ?? null, picked };
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
        const tree = treeSummary(nextId++, title, title);
        state.trees = [tree, ...state.trees];
        const text = `Imported "${title}" as tree ${tree.id} (${title}): 2 messages, 0 threads.\nEverything in the document was mapped.`;
        return { trees: [{ id: tree.id, title, messages: 2, threads: 0 }], notes: [], text };
      }
      case "reply_start": {
        const channel = args.onPiece as { onmessage: (piece: unknown) => void };
        refuseUnseenImages(args.target as SendTarget, [String(args.profile)]);
        state.sent.push(received(args.target as SendTarget));
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
        if (profiles.length < 2) throw { code: "invalidInput", message: "ask for 2 to 8 at once" } satisfies ApiError;
        const target = args.prompt as SendTarget;
        refuseUnseenImages(target, profiles);
        let treeId: number;
        let prompt: Message;
        if (target.kind === "thread") {
          treeId = target.treeId;
          prompt = write(treeId, target.parentId, "human", target.text);
          keepImages(treeId, prompt.id, target.images ?? []);
        } else if (target.kind === "regenerate") {
          const found = treeOf(target.nodeId);
          treeId = found.treeId;
          prompt = found.message.author === "model" ? treeOf(found.message.parentId ?? -1).message : found.message;
        } else if (target.kind === "continue") {
          const found = treeOf(target.nodeId);
          treeId = found.treeId;
          prompt = found.message;
          state.continueLengths.push(target.length ?? null);
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
      case "models_ready":
        // Every saved profile answers, and one model waits on a local server to be used.
        return {
          ready: state.profiles.filter((profile) => !profile.importedFrom).map((profile) => profile.name),
          waiting: [],
          found: state.localModels.filter((found) => !state.profiles.some((profile) => profile.name === found.profile.name)),
        };
      case "profile_enable": {
        const profile = state.profiles.find((one) => one.name === args.name);
        if (!profile) throw { code: "notFound", message: `no profile ${String(args.name)}` } satisfies ApiError;
        profile.importedFrom = null;
        return profile;
      }
      case "counters_load_ahead":
        return null;
      case "preferences_get":
        return state.preferences;
      case "preferences_set":
        state.preferences = args.preferences as UiPreferences;
        return null;
      case "context_preview":
        return state.preview === null ? null : { ...structuredClone(state.preview), nodeId: args.nodeId as number };
      case "context_request":
        return structuredClone(state.previewRequest);
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
          stale: null,
        };
      }
      case "context_slices": {
        // The members of a folded run: old messages truncation cut, one line each.
        const first = args.first as number;
        return Array.from({ length: args.count as number }, (_, i) => oldHistorySlice(first + i, 1));
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
        state.treeSettings.set(args.treeId as number, received(args.settings as TreeSettings));
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
      case "about":
        return { version: "0.1.0", dataFolder: "/data", database: "/data/pinloom.sqlite3", logFolder: "/data/logs" };
      case "keys_status":
        return structuredClone(state.keys);
      case "key_save":
      case "key_forget": {
        const key = state.keys.find((one) => one.provider === args.provider);
        if (!key) throw { code: "notFound", message: `no provider ${String(args.provider)}` } satisfies ApiError;
        if (command === "key_save" && !String(args.key).trim()) {
          throw { code: "invalidInput", message: "the key is empty" } satisfies ApiError;
        }
        key.inKeyring = command === "key_save";
        return null;
      }
      case "connection_check": {
        if (!state.profiles.some((profile) => profile.name === args.profile)) {
          throw { code: "notFound", message: `no profile ${String(args.profile)}` } satisfies ApiError;
        }
        if (state.providerDown) throw state.providerDown;
        return { reply: "pong", milliseconds: 12 };
      }
      case "ollama_models":
        if (state.ollama === null) {
          const at = (args.baseUrl as string | null) ?? "http://127.0.0.1:11434";
          throw { code: "providerUnavailable", message: `nothing answers at ${at}` } satisfies ApiError;
        }
        return structuredClone(state.ollama);
      case "profile_save": {
        const profile = received(args.profile as ModelProfile);
        if (!profile.name.trim()) throw { code: "invalidInput", message: "a profile needs a name" } satisfies ApiError;
        state.profiles = [...state.profiles.filter((one) => one.name !== profile.name), profile];
        return profile;
      }
      case "profile_delete": {
        if (!state.profiles.some((one) => one.name === args.name)) {
          throw { code: "notFound", message: `no profile ${String(args.name)}` } satisfies ApiError;
        }
        state.profiles = state.profiles.filter((one) => one.name !== args.name);
        return null;
      }
      case "profile_choices":
        return { providers: ["openai", "ollama", "vllm"], tokenizers: ["o200k", "llama3", "fourChars"], truncations: ["truncateMiddle"] };
      case "profile_counting":
        return /llama-?3/i.test(String(args.modelId)) ? "llama3" : null;
      case "context_preview_unsaved": {
        // The budget of a profile not saved yet: its window less its reserve.
        const profile = args.profile as ModelProfile;
        if (profile.reserve >= profile.contextWindow) {
          throw { code: "invalidInput", message: "the reserve leaves nothing of the window" } satisfies ApiError;
        }
        return planView(args.nodeId as number, profile.name, profile.contextWindow - profile.reserve);
      }
      case "tree_context_get":
        settingsOf(args.treeId as number);
        return structuredClone(state.treeContexts.get(args.treeId as number) ?? { systemContext: "", bufferIncludesSystem: false });
      case "system_context_set":
      case "buffer_system_set": {
        const treeId = args.treeId as number;
        settingsOf(treeId);
        const context = state.treeContexts.get(treeId) ?? { systemContext: "", bufferIncludesSystem: false };
        if (command === "system_context_set") context.systemContext = String(args.text);
        else context.bufferIncludesSystem = Boolean(args.included);
        state.treeContexts.set(treeId, context);
        return null;
      }
      case "threads_deleted":
        return structuredClone(state.deletedThreads.get(args.treeId as number) ?? []);
      case "thread_restore": {
        for (const [treeId, threads] of state.deletedThreads) {
          const thread = threads.find((one) => one.id === args.pinId);
          if (!thread) continue;
          state.deletedThreads.set(treeId, threads.filter((one) => one !== thread));
          const pin = { id: thread.id, parentPinId: null, anchorNodeId: null, anchorText: null, title: thread.title, depth: 1, closed: false, result: null };
          return [pin];
        }
        throw { code: "notFound", message: `no deleted thread ${String(args.pinId)}` } satisfies ApiError;
      }
      case "trash_list":
        return structuredClone(state.trash);
      case "tree_restore": {
        const tree = state.trash.trees.find((one) => one.id === args.treeId);
        if (!tree) throw { code: "notFound", message: `tree ${String(args.treeId)} is not in the trash` } satisfies ApiError;
        state.trash.trees = state.trash.trees.filter((one) => one !== tree);
        state.trees = [tree, ...state.trees];
        return tree;
      }
      case "node_mark": {
        const { message } = treeOf(args.nodeId as number);
        if (args.action === "restore") state.trash.branches = state.trash.branches.filter((one) => one.id !== message.id);
        return nodeOf(message);
      }
      case "trash_empty": {
        const erased = { trees: state.trash.trees.length, branches: state.trash.branches.length, threads: 0 };
        state.trash = { trees: [], branches: [] };
        return erased;
      }
      case "choose_attachments":
        for (const path of state.dialogAnswer) state.chosen.add(path);
        return state.dialogAnswer;
      case "attach_path": {
        const treeId = args.treeId as number;
        const path = String(args.path);
        settingsOf(treeId);
        if (!state.chosen.has(path)) {
          throw { code: "invalidInput", message: `${path} was not chosen in this window` } satisfies ApiError;
        }
        const extension = /\.([a-z]+)$/.exec(path)?.[1];
        const to = args.to as AttachTo;
        const standsAs = (args.standsAs ?? "file") as AttachAs;
        const kind = !extension ? "folder" : extension === "pdf" ? "pdf" : IMAGE_TYPES[extension] ? "image" : "file";
        // As the backend: a folder stands only as its listing, an image has no text to stand as
        // an instruction or a context.
        if (standsAs !== "file" && kind === "folder") {
          throw { code: "invalidInput", message: `${path} is a folder, attached only as its listing: choose files to attach as an instruction or a context` } satisfies ApiError;
        }
        if (standsAs !== "file" && kind === "image") {
          throw { code: "invalidInput", message: `${path} is an image: an instruction or a context is text; attach it as a file` } satisfies ApiError;
        }
        const role = standsAs === "file" ? kind : standsAs;
        const attachment = {
          id: nextId++,
          role,
          name: path,
          bytes: 2048,
          nodeId: to.on === "node" ? to.id : null,
          image: role === "image" ? PIXEL_PNG : null,
          pages: role === "pdf" ? 3 : null,
          to,
        };
        state.attachments.set(treeId, [...(state.attachments.get(treeId) ?? []), attachment]);
        const { to: _, ...view } = attachment;
        return view;
      }
      case "image_read": {
        const path = String(args.path);
        if (!state.chosen.has(path)) {
          throw { code: "invalidInput", message: `${path} was not chosen in this window` } satisfies ApiError;
        }
        const name = path.split("/").at(-1) ?? path;
        if (!IMAGE_TYPES[/\.([a-z]+)$/.exec(name)?.[1] ?? ""]) {
          throw { code: "invalidInput", message: `${name} is not an image Pinloom sends (PNG, JPEG, GIF or WebP)` } satisfies ApiError;
        }
        return { name, dataUrl: PIXEL_PNG } satisfies ImageInput;
      }
      case "attachments_list":
        return (state.attachments.get(args.treeId as number) ?? []).map(({ to: _, ...view }) => view);
      case "attachment_remove": {
        for (const [treeId, attached] of state.attachments) {
          if (!attached.some((one) => one.id === args.attachmentId)) continue;
          state.attachments.set(treeId, attached.filter((one) => one.id !== args.attachmentId));
          return null;
        }
        throw { code: "notFound", message: `attachment ${String(args.attachmentId)} does not exist` } satisfies ApiError;
      }
      case "tree_search": {
        const words = String(args.query).toLowerCase();
        return (state.messages.get(args.treeId as number) ?? [])
          .filter((message) => message.text.toLowerCase().includes(words))
          .map((message): SearchResult => ({ nodeId: message.id, pinId: null, author: message.author, preview: message.text }));
      }
      case "reply_receipt":
        treeOf(args.nodeId as number);
        return structuredClone(state.receipts.get(args.nodeId as number) ?? null);
      case "thread_compact": {
        const { treeId } = treeOf(args.nodeId as number);
        const id = state.compactions.length + 1;
        const keep = (args.keep as number | null) ?? (state.treeSettings.get(treeId)?.compactionKeepTurns ?? 4);
        state.compactions.push({ id, treeId, nodeId: args.nodeId as number, keep, undone: false });
        return { id, first: 1, upTo: args.nodeId as number, messages: 2, keepTurns: keep, tokens: 20, writtenBy: String(args.profile), text: "Compacted." };
      }
      case "compaction_undo": {
        const compaction = state.compactions.find((one) => one.id === args.id && !one.undone);
        if (!compaction) throw { code: "notFound", message: `compaction ${String(args.id)} is not in effect` } satisfies ApiError;
        compaction.undone = true;
        return null;
      }
      case "requests_list":
        settingsOf(args.treeId as number);
        return state.requests
          .filter((request) => request.treeId === args.treeId)
          .slice(0, args.limit as number)
          .map((request) => ({ ...structuredClone(request), body: null }));
      case "tree_spending": {
        settingsOf(args.treeId as number);
        const ours = state.requests.filter((request) => request.treeId === args.treeId);
        const priced = ours.filter((request) => request.costUsd !== null);
        const backgroundUsd = priced.reduce((sum, request) => sum + (request.costUsd ?? 0), 0);
        const replies = (state.messages.get(args.treeId as number) ?? []).flatMap((message) => {
          const receipt = state.receipts.get(message.id);
          return receipt ? [receipt] : [];
        });
        const repliesUsd = replies.reduce((sum, receipt) => sum + (receipt.cost?.total ?? 0), 0);
        return {
          replies: replies.length,
          repliesPriced: replies.filter((receipt) => receipt.cost !== null).length,
          repliesUsd,
          background: ours.length,
          backgroundPriced: priced.length,
          backgroundUsd,
          totalUsd: repliesUsd + backgroundUsd,
        };
      }
      case "request_read": {
        const request = state.requests.find((one) => one.id === args.id);
        if (!request) throw { code: "notFound", message: `request ${String(args.id)} is not kept: list a tree's requests to find one` } satisfies ApiError;
        return structuredClone(request);
      }
      case "request_diff": {
        const diff = state.diffs.get(args.nodeId as number);
        if (!diff) throw { code: "notFound", message: `message ${String(args.nodeId)} has no receipt` } satisfies ApiError;
        return structuredClone(diff);
      }
      case "threadmind_export": {
        const { treeId } = treeOf(args.nodeId as number);
        const path = pathThrough(state.messages.get(treeId) ?? [], args.nodeId as number);
        return path.map((message) => `## ${message.author}\n\n${message.text}`).join("\n\n");
      }
      case "tree_map": {
        const map = state.maps.get(args.treeId as number);
        if (!map) throw { code: "notFound", message: `tree ${String(args.treeId)} does not exist` } satisfies ApiError;
        return structuredClone(map);
      }
      case "tree_outline": {
        // Messages in write order, after the one named, as the app pages them.
        settingsOf(args.treeId as number);
        const all = state.messages.get(args.treeId as number) ?? [];
        const after = args.after as number | null;
        const from = after === null ? 0 : all.findIndex((message) => message.id > after);
        return (from < 0 ? [] : all.slice(from, from + (args.limit as number))).map((message) => ({
          id: message.id,
          parentId: message.parentId,
          pinId: null,
          author: message.author,
          writtenBy: message.writtenBy,
          preview: message.text,
          childCount: all.filter((other) => other.parentId === message.id).length,
          excluded: false,
          bookmarked: false,
          deleted: false,
        }));
      }
      default:
        throw new Error(`the fake backend has no command ${command}`);
    }
  });

  /// Joins team `name` at `remote` as `yourName` (a team joined already takes the remote given),
  /// bringing the trees `teamArrivals` holds unless the machine only asked to join. A new team
  /// has the standing `standing`: created here (a member), it is owned here and this machine is
  /// its one member, going by `yourName` ("You" standing for git's user name).
  function joinTeam(name: string, remote: string, yourName: string | null, standing: TeamStanding): SyncReport {
    const trimmed = name.trim();
    if (!/^[A-Za-z0-9_-]{1,40}$/.test(trimmed)) {
      throw { code: "invalidInput", message: `${JSON.stringify(trimmed)} cannot name a team: use up to 40 letters, digits, '-' or '_'` } satisfies ApiError;
    }
    if (!remote.trim()) throw { code: "invalidInput", message: "a team needs a git remote: a URL or a folder path" } satisfies ApiError;
    state.teamJoinNames.push(yourName);
    const joined = state.teams.find((team) => team.name === trimmed);
    const owned = standing === "member";
    const members = owned ? [{ name: yourName?.trim() || "You", device: FAKE_DEVICE, owner: true, you: true }] : [];
    const team = joined ?? teamView(trimmed, remote.trim(), { standing, members, owned });
    team.remote = remote.trim();
    if (!joined) state.teams.push(team);
    // Until the owner admits it, an asked machine reads nothing of the team.
    if (team.standing === "asked") return teamSynced(team, 0, []);
    const arrived = state.teamArrivals;
    state.teamArrivals = [];
    state.trees = [...arrived, ...state.trees];
    team.sharedTrees.push(...arrived.map((tree) => tree.id));
    return teamSynced(team, 0, arrived.map((tree) => tree.id));
  }

  function joinedTeam(name: string): TeamView {
    const team = state.teams.find((one) => one.name === name.trim());
    if (!team) throw { code: "invalidInput", message: `this database has not joined the team ${JSON.stringify(name)}` } satisfies ApiError;
    return team;
  }

  /// What syncing `team` did, having sent `sent` records and received the trees `arrived`, after
  /// `done` (what was done before the sync, as its own line); kept as the team's last result.
  function teamSynced(team: TeamView, sent: number, arrived: number[], done = ""): SyncReport {
    const text =
      done +
      (sent + arrived.length === 0
        ? `Synced with ${team.remote}: nothing new on either side.`
        : `Synced with ${team.remote}: sent ${sent} records and 0 changes; received ${arrived.length} records and 0 changes.`);
    const report: SyncReport = {
      remote: team.remote,
      sentRecords: sent,
      sentChanges: 0,
      receivedRecords: arrived.length,
      receivedChanges: 0,
      treesChanged: arrived,
      committed: sent > 0,
      pushed: sent > 0,
      notes: [],
      atMs: 0,
      text,
    };
    team.last = report;
    return structuredClone(report);
  }

  function write(treeId: number, parentId: number | null, author: Message["author"], text: string): Message {
    const message: Message = { id: nextId++, parentId, author, writtenBy: null, text, createdAtMs: 0, tokenEstimate: Math.ceil(text.length / 3.5) };
    // A new message was made from nothing yet, whatever an earlier fake's message of its id was.
    madeFrom.delete(message.id);
    state.messages.set(treeId, [...(state.messages.get(treeId) ?? []), message]);
    return message;
  }

  /// The tokens reply `nodeId` was generated as: those set in `tokens`, else made up for a model's
  /// continuation in a buffer tree; none for anything the person wrote or rewrote.
  function tokensOf(nodeId: number): TokenView[] | null {
    const { treeId, message } = treeOf(nodeId);
    const set = state.tokens.get(nodeId);
    if (set !== undefined) return set;
    const buffer = state.trees.find((tree) => tree.id === treeId)?.mode === "buffer";
    const handwritten = (madeFrom.get(nodeId)?.editedFrom ?? null) !== null;
    return buffer && message.author === "model" && !handwritten ? madeUpTokens(message.text) : null;
  }

  function settingsOf(treeId: number): TreeSettings {
    if (!state.trees.some((tree) => tree.id === treeId)) {
      throw { code: "notFound", message: `tree ${treeId} does not exist` } satisfies ApiError;
    }
    return structuredClone(state.treeSettings.get(treeId) ?? { searchHits: [], summaryWriting: "whenPinned" });
  }

  function treeOf(nodeId: number): { treeId: number; message: Message } {
    for (const [treeId, messages] of state.messages) {
      const message = messages.find((candidate) => candidate.id === nodeId);
      if (message) return { treeId, message };
    }
    throw { code: "notFound", message: `message ${nodeId} does not exist` } satisfies ApiError;
  }

  /// Refuses a new message with images for `profiles` when one of them is said not to see, before
  /// anything is written, as the backend does.
  function refuseUnseenImages(target: SendTarget, profiles: string[]): void {
    if ((target.kind !== "thread" && target.kind !== "pin") || !target.images?.length) return;
    const blind = state.profiles.find((one) => profiles.includes(one.name) && one.assembly?.seesImages === false);
    if (blind) {
      const message = `${blind.name} (${blind.modelId}) does not see images: choose a model that does`;
      throw { code: "invalidInput", message } satisfies ApiError;
    }
  }

  /// Stores the images sent with message `nodeId` as its attachments.
  function keepImages(treeId: number, nodeId: number, images: ImageInput[]): void {
    const kept = images.map((image) => ({
      id: nextId++,
      role: "image",
      name: image.name,
      bytes: image.dataUrl.length,
      nodeId,
      image: image.dataUrl,
      pages: null,
      to: { on: "node", id: nodeId } satisfies AttachTo,
    }));
    state.attachments.set(treeId, [...(state.attachments.get(treeId) ?? []), ...kept]);
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
        keepImages(treeId, prompt.id, target.images ?? []);
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
        state.continueLengths.push(target.length ?? null);
        break;
      }
      case "pin":
        throw new Error("the fake backend has no pins");
      case "overPicked": {
        // Refused before anything is written, as the backend refuses.
        if (!target.text.trim()) throw { code: "invalidInput", message: "the question is empty: type something first" } satisfies ApiError;
        const found = target.picks.map((pick) => ({ ...treeOf(pick.nodeId), withSummary: pick.withSummary }));
        if (!found[0]) throw { code: "invalidInput", message: "no message is picked: pick the messages to ask over first" } satisfies ApiError;
        if (found.length > 12) throw { code: "invalidInput", message: "a question is asked over at most 12 messages" } satisfies ApiError;
        if (new Set(target.picks.map((pick) => pick.nodeId)).size < found.length) {
          throw { code: "invalidInput", message: "a message is picked twice" } satisfies ApiError;
        }
        treeId = found[0].treeId;
        if (found.some((pick) => pick.treeId !== treeId)) throw { code: "invalidInput", message: "the picked messages are of different trees" } satisfies ApiError;
        prompt = write(treeId, null, "human", target.text);
        state.picked.set(prompt.id, found.map(({ message, withSummary }) => pickedView(message, withSummary)));
        answered = prompt;
        break;
      }
      case "fuse": {
        if (target.nodeIds.length < 2) throw { code: "invalidInput", message: "choose 2 to 8 answers" } satisfies ApiError;
        const found = treeOf(target.nodeIds[0]!);
        treeId = found.treeId;
        answered = treeOf(found.message.parentId ?? -1).message;
        break;
      }
    }
    if (state.providerDown) {
      const error = state.providerDown;
      state.providerDown = null;
      throw error;
    }
    const text = state.replies.shift() ?? "(no scripted reply)";
    channel.onmessage({ kind: "text", text });
    const reply = write(treeId, answered.id, "model", text);
    if (target.kind === "fuse") madeFrom.set(reply.id, { editedFrom: null, fusedFrom: target.nodeIds });
    return { prompt: prompt && nodeOf(prompt), reply: nodeOf(reply), interruption: null, plan: null, receipt: null };
  }

  return state;
}
