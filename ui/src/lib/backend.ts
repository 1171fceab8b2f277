// The one place the UI talks to the Rust side. Generated commands return a status-tagged result;
// here a failure becomes a thrown PinloomError carrying the backend's closed error code, so the
// rest of the UI branches on `code` and never parses messages.
import { Channel } from "@tauri-apps/api/core";

import {
  commands,
  events,
  type ApiError,
  type AttachAs,
  type AttachTo,
  type CompareReach,
  type ErrorCode,
  type ExportFormat,
  type ExportRequest,
  type LanePiece,
  type ModelProfile,
  type NodeAction,
  type ReplyPiece,
  type SendTarget,
  type TransferProgress,
  type TreeSettings,
  type WindowStart,
} from "./bindings";

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

/// Where a state owner shows what went wrong: its `error`, or a function that puts the failure
/// where the person will see it (in a column, in words of the owner's own).
export type FailureShown = { error: PinloomError | null } | ((error: PinloomError) => void);

/// Runs `work` for a state owner and shows what it throws where `shown` says; gives what the work
/// gave, or `instead` when it failed. The owners catch here, in one way, so that no failure of a
/// backend call is ever dropped on the way to the person.
export async function showingFailure<T, F>(shown: FailureShown, instead: F, work: () => Promise<T>): Promise<T | F> {
  try {
    return await work();
  } catch (thrown) {
    const error = PinloomError.from(thrown);
    if (typeof shown === "function") shown(error);
    else shown.error = error;
    return instead;
  }
}

/// Runs `work` for a state owner: its error is cleared first and set to what went wrong, so the
/// view shows it. True when the work succeeded.
export async function attempt(owner: { error: PinloomError | null }, work: () => Promise<unknown>): Promise<boolean> {
  owner.error = null;
  return showingFailure(owner, false, async () => {
    await work();
    return true;
  });
}

type Result<T> = { status: "ok"; data: T } | { status: "error"; error: ApiError };

async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  const result = await call;
  if (result.status === "error") {
    // Tauri's own refusals (a command not granted, say) come as a bare string, not the app's
    // `{ code, message }`.
    const error: unknown = result.error;
    throw typeof error === "string" ? new PinloomError({ code: "internal", message: error }) : new PinloomError(result.error);
  }
  return result.data;
}

/// A listener's `stop`: the listening begins at once, and stopping waits for it to have begun.
function stopping(listening: Promise<() => void>): () => void {
  return () => void listening.then((unlisten) => unlisten());
}

/// A channel whose messages go to `listener`: how a command streams to the window.
function channelTo<T>(listener: (message: T) => void): Channel<T> {
  const channel = new Channel<T>();
  channel.onmessage = listener;
  return channel;
}

/// The global the shell gives the page its start in (`WINDOW_START_GLOBAL` in src-tauri/src/lib.rs).
const WINDOW_START_GLOBAL = "__PINLOOM_START__";

export const backend = {
  /// What the shell says happened elsewhere (another window, an agent over MCP, the command-line
  /// program, a summary written in the background); each returns the function that stops it.
  onDatabaseChanged: (listener: () => void) => stopping(events.databaseChanged.listen(() => listener())),
  onTreesChanged: (listener: () => void) => stopping(events.treesChanged.listen(() => listener())),
  onSummariesChanged: (listener: (treeId: number) => void) =>
    stopping(events.summariesChanged.listen((event) => listener(event.payload.treeId))),
  /// What the shell gave this page as it made the window (the list of trees and the
  /// preferences), taken once: `null` when it gave nothing (the database could not be read, or
  /// the page is not in Pinloom's window) or it was taken already.
  windowStart: (): WindowStart | null => {
    const holder = window as unknown as Record<string, WindowStart | undefined>;
    const given = holder[WINDOW_START_GLOBAL] ?? null;
    delete holder[WINDOW_START_GLOBAL];
    return given;
  },
  treeCreate: (title: string, mode: Parameters<typeof commands.treeCreate>[1]) =>
    unwrap(commands.treeCreate(title, mode)),
  treeList: () => unwrap(commands.treeList()),
  treeRename: (treeId: number, title: string) => unwrap(commands.treeRename(treeId, title)),
  treeTrash: (treeId: number) => unwrap(commands.treeTrash(treeId)),
  treeRestore: (treeId: number) => unwrap(commands.treeRestore(treeId)),
  trashList: () => unwrap(commands.trashList()),
  trashEmpty: () => unwrap(commands.trashEmpty()),
  syncStatus: () => unwrap(commands.syncStatus()),
  syncNow: (remote: string | null, passphrase: string | null) => unwrap(commands.syncNow(remote, passphrase)),
  syncAutomaticSet: (on: boolean) => unwrap(commands.syncAutomaticSet(on)),
  syncProfilesSet: (on: boolean) => unwrap(commands.syncProfilesSet(on)),
  teamList: () => unwrap(commands.teamList()),
  /// Creates a team (an empty repository at `remote`) or asks to join the one there, and syncs
  /// it; members see this machine as `yourName` (null: git's user name).
  teamJoin: (team: string, remote: string, yourName: string | null) => unwrap(commands.teamJoin(team, remote, yourName)),
  teamInvitation: (team: string) => unwrap(commands.teamInvitation(team)),
  /// Asks to join the team an invitation names, as `yourName` (null: git's user name).
  teamJoinInvitation: (invitation: string, yourName: string | null) =>
    unwrap(commands.teamJoinInvitation(invitation, yourName)),
  teamLeave: (team: string) => unwrap(commands.teamLeave(team)),
  /// Removes member `member` (their device's id) from a team this machine owns, and syncs it.
  teamRemoveMember: (team: string, member: string) => unwrap(commands.teamRemoveMember(team, member)),
  /// Shares a tree with a joined team as `sharedBy` (null: git's user name), and syncs the team.
  teamShareTree: (treeId: number, team: string, sharedBy: string | null) =>
    unwrap(commands.teamShareTree(treeId, team, sharedBy)),
  about: () => unwrap(commands.about()),
  treeOpen: (treeId: number) => unwrap(commands.treeOpen(treeId)),
  /// The system's file dialogs, run by the shell: it remembers what the person chose, and the
  /// commands that read or write files accept nothing else.
  chooseImportFiles: () => unwrap(commands.chooseImportFiles()),
  chooseExportPath: (title: string, fileName: string, format: ExportFormat) =>
    unwrap(commands.chooseExportPath(title, fileName, format)),
  chooseAttachments: (folder: boolean) => unwrap(commands.chooseAttachments(folder)),
  /// Imports the file at `path` (chosen in a dialog or dropped); `onProgress` sees how far it is.
  treeImport: (path: string, onProgress: (progress: TransferProgress) => void) =>
    unwrap(commands.treeImport(path, channelTo(onProgress))),
  /// Exports a tree to a file; `onProgress` sees how far it is.
  treeExport: (request: ExportRequest, onProgress: (progress: TransferProgress) => void) =>
    unwrap(commands.treeExport(request, channelTo(onProgress))),
  messageAppend: (treeId: number, parentId: number | null, text: string) =>
    unwrap(commands.messageAppend(treeId, parentId, text)),
  replyEdit: (nodeId: number, text: string) => unwrap(commands.replyEdit(nodeId, text)),
  replyTokens: (nodeId: number) => unwrap(commands.replyTokens(nodeId)),
  replyBranchAtToken: (nodeId: number, index: number, alternative: string) =>
    unwrap(commands.replyBranchAtToken(nodeId, index, alternative)),
  countersLoadAhead: () => unwrap(commands.countersLoadAhead()),
  preferencesGet: () => unwrap(commands.preferencesGet()),
  preferencesSet: (preferences: Parameters<typeof commands.preferencesSet>[0]) =>
    unwrap(commands.preferencesSet(preferences)),
  threadView: (treeId: number, nodeId: number | null) => unwrap(commands.threadView(treeId, nodeId)),
  pinView: (pinId: number, nodeId: number | null) => unwrap(commands.pinView(pinId, nodeId)),
  threadPage: (endId: number, first: number, count: number) => unwrap(commands.threadPage(endId, first, count)),
  /// Starts a reply; `onPiece` sees its text as it streams.
  replyStart: (
    target: SendTarget,
    profile: string,
    requestId: number,
    onPiece: (piece: ReplyPiece) => void,
  ) => unwrap(commands.replyStart(target, profile, requestId, channelTo(onPiece))),
  /// Sends one prompt to several models at once; `onPiece` sees each model's pieces, tagged with
  /// its lane, and each model's answer as it ends. `requestIds[lane]` stops that model alone.
  replyFanOut: (
    prompt: SendTarget,
    profiles: string[],
    requestIds: number[],
    onPiece: (piece: LanePiece) => void,
  ) => unwrap(commands.replyFanOut(prompt, profiles, requestIds, channelTo(onPiece))),
  replyStop: (requestId: number) => unwrap(commands.replyStop(requestId)),
  /// Pins a passage; `profile` (the chosen model) writes the summaries the pin's first send needs
  /// in the background, where the tree names no summariser.
  pinCreate: (nodeId: number, start: number, end: number, text: string, title: string, profile: string | null) =>
    unwrap(commands.pinCreate(nodeId, start, end, text, title, profile)),
  pinAncestry: (pinId: number, profile: string) => unwrap(commands.pinAncestry(pinId, profile)),
  summaryWrite: (treeId: number, pinId: number | null, upTo: number, text: string) =>
    unwrap(commands.summaryWrite(treeId, pinId, upTo, text)),
  summaryRegenerate: (treeId: number, pinId: number | null, upTo: number, budget: number, profile: string) =>
    unwrap(commands.summaryRegenerate(treeId, pinId, upTo, budget, profile)),
  pinClose: (pinId: number, result: string) => unwrap(commands.pinClose(pinId, result)),
  modelsReady: () => unwrap(commands.modelsReady()),
  pinResultSuggest: (pinId: number, profile: string) => unwrap(commands.pinResultSuggest(pinId, profile)),
  threadsDeleted: (treeId: number) => unwrap(commands.threadsDeleted(treeId)),
  threadRestore: (pinId: number) => unwrap(commands.threadRestore(pinId)),
  nodeMark: (nodeId: number, action: NodeAction) => unwrap(commands.nodeMark(nodeId, action)),
  contextPreview: (nodeId: number, profile: string, draft: string | null) =>
    unwrap(commands.contextPreview(nodeId, profile, draft)),
  /// The request a preview (without a draft) shows: its body is left out of the preview itself.
  contextRequest: (nodeId: number, profile: string) => unwrap(commands.contextRequest(nodeId, profile)),
  contextSlices: (nodeId: number, profile: string, first: number, count: number) =>
    unwrap(commands.contextSlices(nodeId, profile, first, count)),
  contextPreviewUnsaved: (nodeId: number, profile: ModelProfile) =>
    unwrap(commands.contextPreviewUnsaved(nodeId, profile)),
  replyReceipt: (nodeId: number) => unwrap(commands.replyReceipt(nodeId)),
  requestDiff: (nodeId: number) => unwrap(commands.requestDiff(nodeId)),
  /// The requests Pinloom made on its own for a tree, newest first, without their bodies.
  requestsList: (treeId: number, limit: number) => unwrap(commands.requestsList(treeId, limit)),
  treeSpending: (treeId: number) => unwrap(commands.treeSpending(treeId)),
  /// One of them with its body as sent.
  requestRead: (id: number) => unwrap(commands.requestRead(id)),
  threadCompact: (nodeId: number, keep: number | null, profile: string) => unwrap(commands.threadCompact(nodeId, keep, profile)),
  compactionUndo: (id: number) => unwrap(commands.compactionUndo(id)),
  nodesCompare: (left: number, right: number, profile: string, reach: CompareReach) =>
    unwrap(commands.nodesCompare(left, right, profile, reach)),
  profilesList: () => unwrap(commands.profilesList()),
  profileSave: (profile: ModelProfile) => unwrap(commands.profileSave(profile)),
  profileDelete: (name: string) => unwrap(commands.profileDelete(name)),
  profileEnable: (name: string) => unwrap(commands.profileEnable(name)),
  treeOutline: (treeId: number, after: number | null, limit: number) =>
    unwrap(commands.treeOutline(treeId, after, limit)),
  treeMap: (treeId: number) => unwrap(commands.treeMap(treeId)),
  notesList: (nodeId: number) => unwrap(commands.notesList(nodeId)),
  noteAdd: (nodeId: number, text: string, included: boolean) =>
    unwrap(commands.noteAdd(nodeId, text, included)),
  noteInclude: (noteId: number, included: boolean) => unwrap(commands.noteInclude(noteId, included)),
  /// Attaches the chosen file or folder at `path`, standing as `standsAs` says: as it is, or its
  /// text as an instruction or a context (a folder only as it is, its listing).
  attachPath: (treeId: number, to: AttachTo, path: string, standsAs: AttachAs) =>
    unwrap(commands.attachPath(treeId, to, path, standsAs)),
  /// Reads an image chosen in the dialog (or dropped) to go with the message being written.
  imageRead: (path: string) => unwrap(commands.imageRead(path)),
  attachmentsList: (treeId: number) => unwrap(commands.attachmentsList(treeId)),
  attachmentRemove: (attachmentId: number) => unwrap(commands.attachmentRemove(attachmentId)),
  treeSettingsGet: (treeId: number) => unwrap(commands.treeSettingsGet(treeId)),
  treeSettingsSet: (treeId: number, settings: TreeSettings) =>
    unwrap(commands.treeSettingsSet(treeId, settings)),
  searchHitSet: (treeId: number, nodeId: number, picked: boolean) =>
    unwrap(commands.searchHitSet(treeId, nodeId, picked)),
  promotionPreview: (fromId: number, ontoId: number, passage: string | null, profile: string) =>
    unwrap(commands.promotionPreview(fromId, ontoId, passage, profile)),
  promote: (fromId: number, ontoId: number, passage: string | null) =>
    unwrap(commands.promote(fromId, ontoId, passage)),
  systemContextSet: (treeId: number, text: string) => unwrap(commands.systemContextSet(treeId, text)),
  treeContextGet: (treeId: number) => unwrap(commands.treeContextGet(treeId)),
  bufferSystemSet: (treeId: number, included: boolean) => unwrap(commands.bufferSystemSet(treeId, included)),
  threadmindExport: (nodeId: number) => unwrap(commands.threadmindExport(nodeId)),
  treeSearch: (treeId: number, query: string) => unwrap(commands.treeSearch(treeId, query)),
  keysStatus: () => unwrap(commands.keysStatus()),
  keySave: (provider: string, key: string) => unwrap(commands.keySave(provider, key)),
  keyForget: (provider: string) => unwrap(commands.keyForget(provider)),
  connectionCheck: (profile: string) => unwrap(commands.connectionCheck(profile)),
  ollamaModels: (baseUrl: string | null) => unwrap(commands.ollamaModels(baseUrl)),
  profileChoices: () => unwrap(commands.profileChoices()),
  profileCounting: (provider: string, modelId: string) => unwrap(commands.profileCounting(provider, modelId)),
};
