// The open tree as columns: the root thread, then one column per pin opened from it (and from
// those, without limit), each streaming its own reply. Beside them, the context inspector of the
// message in focus, a comparison of two messages, the budget panel's profile being edited, and
// what is attached to the tree (the images sent with a message among it).
import { Attachments } from "./attachments.svelte";
import { backend, PinloomError } from "./backend";
import { withoutMarkup } from "./markdown";
import { ModelsReadiness } from "./models-ready.svelte";
import { TreeSettingsState } from "./tree-settings.svelte";
import type {
  CompareReach,
  Comparison,
  FoundModel,
  ImageInput,
  ModelProfile,
  NodeAction,
  PlanView,
  Promotion,
  ReplyPiece,
  SendTarget,
  ThreadMessage,
  ThreadView,
} from "./bindings";

export type Column = {
  view: ThreadView;
  /// Text of the reply streaming now, if one is.
  streaming: string | null;
  /// How many characters of it are saved in the database (a crash would keep them).
  saved?: number;
  requestId: number | null;
  error: PinloomError | null;
  /// The text of a reply that arrived but could not be saved, kept on show to be copied: what
  /// the person read must not vanish with the error.
  unsaved?: string | null;
  /// The provider was busy and the send waits to try again: said while it waits.
  retrying?: string | null;
  /// Why the person's last added message was refused, shown beside the composer.
  composerError?: PinloomError | null;
  /// One prompt sent to several models: each model's reply as it streams, then what became of
  /// it, until the person dismisses the summary or sends again.
  fanOut?: FanOutState | null;
  /// A message to bring into view once the column is drawn: where a jump (from the map or a
  /// search) landed, which a page of a long thread has a quarter page below its top.
  reveal?: number | null;
};

/// A prompt sent to several models at once, as the column shows it.
export type FanOutState = {
  /// The person's words, shown above the replies while they stream.
  prompt: string;
  lanes: Lane[];
};

/// One model's side of a fan-out.
export type Lane = {
  profile: string;
  /// Stops this model's reply alone.
  requestId: number;
  /// What has arrived of its reply.
  text: string;
  saved?: number;
  retrying?: string | null;
  /// Its reply once written (incomplete when it was stopped or broke off).
  replyId: number | null;
  /// Why there is no reply, or why it is incomplete.
  error: PinloomError | null;
  done: boolean;
};

/// What became of a send: answered; the person's message saved but not answered (offer to answer
/// it again, never to send it twice); or nothing saved (the composer keeps the text).
export type SendOutcome = "answered" | "unanswered" | "unsaved";

/// A new message of the person's in a thread or a pin.
type NewMessage = Extract<SendTarget, { kind: "thread" | "pin" }>;

/// What the window says while a busy provider is waited for.
function waitingLine(piece: Extract<ReplyPiece, { kind: "retrying" }>): string {
  const seconds = Math.max(1, Math.round(piece.waitSeconds ?? 1));
  return `${piece.reason}: retrying in ${seconds} s (try ${piece.attempt})`;
}

/// A column showing `view`, with nothing streaming.
function columnOf(view: ThreadView): Column {
  return { view, streaming: null, requestId: null, error: null };
}

// Request ids stop replies; the backend refuses one already streaming, and a reloaded window
// must not reuse the ids of replies still streaming from before: each window starts elsewhere.
let nextRequestId = Math.floor(Math.random() * 2 ** 30) + 1;

/// How many messages a page of a thread holds, and how many models one prompt goes to at once at
/// most: the backend's own limits, exported with the bindings.
import { MOST_ANSWERS_AT_ONCE, THREAD_PAGE } from "./bindings";
export { MOST_ANSWERS_AT_ONCE, THREAD_PAGE };

const NO_PARENT_END = "The parent thread has no message to bring it back after.";

/// The most samples each of `models` models may write: one send asks for at most eight answers.
export function mostSamplesFor(models: number): number {
  return Math.max(1, Math.floor(MOST_ANSWERS_AT_ONCE / Math.max(1, models)));
}

/// One model name per answer: each of `models` `samples` times, the samples of a model together.
export function lanesFor(models: string[], samples: number): string[] {
  return models.flatMap((model) => Array.from({ length: samples }, () => model));
}

export class Conversation {
  /// The open tree's conversation settings (the settings form and the search box share them).
  readonly treeSettings = new TreeSettingsState();
  /// Which models can answer now.
  readonly readiness = new ModelsReadiness();
  /// What is attached to the open tree: the attachments bar lists it, the message cards show
  /// the images sent with them.
  readonly attachments: Attachments = new Attachments(this);
  treeId = $state<number | null>(null);
  columns = $state<Column[]>([]);
  profiles = $state<ModelProfile[]>([]);
  /// Profiles that came with imported files, not enabled yet: listed in Settings to enable.
  importedProfiles = $state<ModelProfile[]>([]);
  profile = $state<string>("");
  /// The message the inspector explains, and its plan.
  focus = $state<number | null>(null);
  /// Replaced whole, never changed in place: held raw, since a plan of a 100,000-message thread
  /// has as many slices and deep reactivity cost a proxy for each.
  plan = $state.raw<PlanView | null>(null);
  /// How long a buffer document's continuation may be, in tokens (a loom's length); the tree's
  /// token buffer, else the model's reserve, when null.
  continuationLength = $state<number | null>(null);
  planError = $state<PinloomError | null>(null);
  /// The first message picked for a comparison, then the comparison.
  comparePick = $state<number | null>(null);
  comparison = $state.raw<Comparison | null>(null);
  /// The models a send goes to at once when the person chose several; empty for a send to the
  /// chosen model.
  fanOutProfiles = $state<string[]>([]);
  /// How many answers each of those models (or the chosen model) writes at once: samples, each
  /// a branch with its own receipt. One model once is an ordinary send.
  samplesEach = $state(1);
  error = $state<PinloomError | null>(null);
  /// Counts the summaries that landed (written in the background, or by another process): what
  /// shows them reads again when it changes.
  summariesVersion = $state(0);
  /// Called after anything this view wrote, so the tree list's counts catch up.
  onchanged: () => void = () => undefined;
  /// Called once a reply is written (a window that syncs on its own sends it out).
  onreplied: () => void = () => undefined;
  /// Called after a message was deleted, with what it was in words and how to take it back.
  ondeleted: (what: string, undo: () => Promise<void>) => void = () => undefined;

  /// Reads the profiles and chooses `preferred`, else the first. Which models can answer is
  /// looked up meanwhile (it may wait on a local port); with nothing preferred, a model that
  /// can answer is then chosen, unless the person has chosen one by then.
  async loadProfiles(preferred: string | null): Promise<void> {
    try {
      const all = await backend.profilesList();
      // A profile that came with an imported file is data until the person enables it: never
      // offered, never a default.
      this.profiles = all.filter((profile) => !profile.importedFrom);
      this.importedProfiles = all.filter((profile) => Boolean(profile.importedFrom));
      const names = this.profiles.map((profile) => profile.name);
      this.profile = preferred && names.includes(preferred) ? preferred : (names[0] ?? "");
    } catch (thrown) {
      this.error = PinloomError.from(thrown);
      return;
    }
    const chosen = this.profile;
    void this.readiness.load().then(() => {
      const ready = this.readiness.ready;
      if (!preferred && this.profile === chosen && !ready.includes(chosen) && ready[0]) this.profile = ready[0];
    });
  }

  /// Saves a model found on a local server as a profile and chooses it.
  async useFoundModel(found: FoundModel): Promise<boolean> {
    if (!(await this.readiness.add(found))) return false;
    await this.loadProfiles(found.profile.name);
    return true;
  }

  /// The person started writing in a composer: the backend loads the vocabularies a written
  /// message is counted with now, while they type, instead of at the window's start (where a
  /// window only read would hold them for nothing) or at the send. Asked once by this
  /// conversation. It fails only when the backend cannot be reached or its database is unusable,
  /// which the window shows like any other failure.
  writingBegun(): void {
    if (this.countersAsked) return;
    this.countersAsked = true;
    backend.countersLoadAhead().catch((thrown: unknown) => {
      this.error = PinloomError.from(thrown);
    });
  }
  /// Whether `writingBegun` has asked (the backend loads once a process whoever asks).
  private countersAsked = false;

  /// Opens a tree's root thread as the only column.
  async open(treeId: number): Promise<void> {
    this.treeId = treeId;
    this.comparison = null;
    this.comparePick = null;
    try {
      const view = await backend.threadView(treeId, null);
      // A slow read (a 10,000-message tree) may finish after another tree was chosen: drop it.
      if (this.treeId !== treeId) return;
      this.columns = [columnOf(view)];
      await this.inspect(view.end ?? null);
      await this.attachments.refresh();
    } catch (thrown) {
      if (this.treeId === treeId) this.error = PinloomError.from(thrown);
    }
  }

  /// Re-reads column `index` through message `nodeId`, and on down its newest continuation; from
  /// the column's current end when absent, so the branch on show stays on show.
  async reload(index: number, nodeId: number | null = null): Promise<void> {
    const column = this.columns[index];
    if (!column || this.treeId === null) return;
    const from = nodeId ?? column.view.end ?? null;
    const pin = column.view.pin;
    const view = pin
      ? await backend.pinView(pin.id, from)
      : await backend.threadView(this.treeId, from);
    this.columns[index] = { ...column, view };
  }

  /// Reads the page of column `index`'s thread just before the messages it has, and shows it
  /// above them.
  async showEarlier(index: number): Promise<void> {
    const view = this.columns[index]?.view;
    if (!view || view.end === null || view.first === 0) return;
    const first = Math.max(0, view.first - THREAD_PAGE);
    await this.readPage(index, view, first, view.first - first, "before");
  }

  /// Reads the page of column `index`'s thread just after the messages it has (a column opened
  /// on a message further back), and shows it below them.
  async showLater(index: number): Promise<void> {
    const view = this.columns[index]?.view;
    if (!view || view.end === null) return;
    const next = view.first + view.messages.length;
    if (next >= view.total) return;
    await this.readPage(index, view, next, THREAD_PAGE, "after");
  }

  private async readPage(index: number, view: ThreadView, first: number, count: number, where: "before" | "after") {
    try {
      const page = await backend.threadPage(view.end ?? -1, first, count);
      const live = this.columns[index];
      // The column was read again meanwhile: its own pages stand.
      if (!live || live.view.end !== view.end || live.view.first !== view.first) return;
      const messages = where === "before" ? [...page, ...live.view.messages] : [...live.view.messages, ...page];
      this.columns[index] = { ...live, view: { ...live.view, messages, first: where === "before" ? first : live.view.first } };
    } catch (thrown) {
      this.fail(index, thrown);
    }
  }

  /// What bringing `passage` of message `fromId` (all of it when null), in the pin of column
  /// `index`, back to the end of the column before it would add; a failure as words to show.
  async promotionPreview(index: number, fromId: number, passage: string | null): Promise<Promotion | string> {
    const onto = this.parentEnd(index);
    if (onto === null) return NO_PARENT_END;
    try {
      return await backend.promotionPreview(fromId, onto, passage, this.profile);
    } catch (thrown) {
      return PinloomError.from(thrown).message;
    }
  }

  /// Writes the promotion previewed for column `index` at the end of the column before it, and
  /// shows it there; a failure as words to show, null when it was written.
  async promote(index: number, fromId: number, passage: string | null): Promise<string | null> {
    const onto = this.parentEnd(index);
    if (onto === null) return NO_PARENT_END;
    try {
      const written = await backend.promote(fromId, onto, passage);
      await this.reload(index - 1, written.id);
      await this.inspect(written.id);
      this.onchanged();
      return null;
    } catch (thrown) {
      return PinloomError.from(thrown).message;
    }
  }

  /// The last message of the column before column `index`: where a promotion is written.
  private parentEnd(index: number): number | null {
    return this.columns[index - 1]?.view.end ?? null;
  }

  /// Closes the columns opened after column `index` (its pins and theirs) and inspects the end of
  /// column `index`. Nothing is deleted: a pin opens again from its chip.
  async closeColumnsAfter(index: number): Promise<void> {
    if (index >= this.columns.length - 1) return;
    this.columns = this.columns.slice(0, index + 1);
    await this.inspect(this.columns[index]?.view.end ?? null);
  }

  /// Shows another alternative of a message (the 2/3 switcher).
  async switchTo(index: number, nodeId: number): Promise<void> {
    try {
      await this.reload(index, nodeId);
      this.columns = this.columns.slice(0, index + 1);
      await this.inspect(this.columns[index]?.view.end ?? null);
    } catch (thrown) {
      this.fail(index, thrown);
    }
  }

  /// Asks the model in column `index`: a new message after the column's last one, with
  /// `images`. When the reply fails, says whether the person's message was saved all the same,
  /// so the composer does not offer it to be sent twice.
  ask(index: number, text: string, images: ImageInput[] = []): Promise<SendOutcome> {
    return this.askWith(index, text, images, (target) => this.reply(index, target));
  }

  /// Sends `text` and `images` as a new message after column `index`'s end through `send` (one
  /// model or several), and says what became of it.
  private async askWith(
    index: number,
    text: string,
    images: ImageInput[],
    send: (target: NewMessage) => Promise<boolean>,
  ): Promise<SendOutcome> {
    const column = this.columns[index];
    if (!column || this.treeId === null) return "unsaved";
    const parentId = column.view.end ?? null;
    const before = new Set(column.view.messages.map((message) => message.node.message.id));
    const target: NewMessage = column.view.pin
      ? { kind: "pin", pinId: column.view.pin.id, parentId, text, images }
      : { kind: "thread", treeId: this.treeId, parentId, text, images };
    const answered = await send(target);
    // The images were stored with the message, if it was written: its card shows them.
    if (images.length > 0) await this.attachments.refresh();
    if (answered) return "answered";
    const saved = this.columns[index]?.view.messages.some(
      ({ node: { message } }) =>
        !before.has(message.id) && message.author === "human" && message.text.trim() === text.trim(),
    );
    return saved ? "unanswered" : "unsaved";
  }

  /// Adds the person's message after the last message on show in column `index`, without
  /// asking for a reply: the branch on show is the one it continues, whatever was opened first.
  /// Returns whether it was saved, so the composer keeps the text when it was not.
  async add(index: number, text: string): Promise<boolean> {
    const column = this.columns[index];
    if (!column || this.treeId === null) return false;
    column.composerError = null;
    const parentId = column.view.end ?? null;
    let message;
    try {
      message = await backend.messageAppend(this.treeId, parentId, text);
    } catch (thrown) {
      const live = this.columns[index];
      if (live) live.composerError = PinloomError.from(thrown);
      return false;
    }
    this.onchanged();
    try {
      await this.reload(index, message.id);
    } catch (thrown) {
      // Saved all the same: the composer must not offer it again.
      this.fail(index, thrown);
    }
    return true;
  }

  /// Answers message `nodeId` again in column `index`.
  regenerate(index: number, nodeId: number): Promise<boolean> {
    return this.reply(index, { kind: "regenerate", nodeId });
  }

  /// Answers message `nodeId` again with each of `profiles` at once (Regenerate with…).
  regenerateWith(index: number, nodeId: number, profiles: string[]): Promise<boolean> {
    return this.fanOut(index, { kind: "regenerate", nodeId }, profiles, "");
  }

  /// The answers a send asks for at once, one model name per answer: each chosen model (the
  /// model chosen in the header, when none is) `samplesEach` times.
  get fanOutLanes(): string[] {
    const models = this.fanOutProfiles.length > 0 ? this.fanOutProfiles : this.profile ? [this.profile] : [];
    return lanesFor(models, this.samplesEach);
  }

  /// Sets how many answers each model writes at once, within what the models chosen allow (the
  /// answers of one send being at most eight).
  setSamplesEach(samples: number): void {
    this.samplesEach = Math.min(Math.max(1, Math.floor(samples) || 1), mostSamplesFor(this.fanOutProfiles.length));
  }

  /// Asks for every answer of `fanOutLanes` at once in column `index`, as `ask` asks one.
  askMany(index: number, text: string, images: ImageInput[] = []): Promise<SendOutcome> {
    const lanes = this.fanOutLanes;
    return this.askWith(index, text, images, (prompt) => this.fanOut(index, prompt, lanes, text));
  }

  /// Sends `prompt` to `profiles` at once in column `index`: each model's reply streams in its
  /// own lane and can be stopped alone; one model's failure stays in its lane. The column then
  /// shows the first reply written, its siblings one switch away. True when any model answered.
  private async fanOut(index: number, prompt: SendTarget, profiles: string[], text: string): Promise<boolean> {
    const column = this.columns[index];
    if (!column) return false;
    const requestIds = profiles.map(() => nextRequestId++);
    const lanes: Lane[] = profiles.map((profile, lane) => ({
      profile,
      requestId: requestIds[lane]!,
      text: "",
      replyId: null,
      error: null,
      done: false,
    }));
    column.error = null;
    column.unsaved = null;
    column.fanOut = { prompt: text, lanes };
    // While the lanes stream, the column counts as busy: a refresh must not reread it.
    column.requestId = requestIds[0] ?? null;
    const laneOf = (lane: number): Lane | undefined => {
      const live = this.columns[index]?.fanOut?.lanes[lane];
      return live && live.requestId === requestIds[lane] ? live : undefined;
    };
    try {
      const result = await backend.replyFanOut(prompt, profiles, requestIds, (message) => {
        if (message.kind === "answered") {
          const lane = laneOf(message.answer.lane);
          if (!lane) return;
          lane.done = true;
          lane.replyId = message.answer.exchange?.reply.message.id ?? null;
          const failure = message.answer.error ?? message.answer.exchange?.interruption ?? null;
          lane.error = failure ? new PinloomError(failure) : null;
          return;
        }
        const lane = laneOf(message.lane);
        if (!lane || lane.done) return;
        const piece = message.piece;
        if (piece.kind === "text") {
          lane.text += piece.text;
          lane.retrying = null;
        }
        if (piece.kind === "saved") lane.saved = piece.characters;
        if (piece.kind === "retrying") lane.retrying = waitingLine(piece);
      });
      this.onchanged();
      const first = result.answers.find((answer) => answer.exchange)?.exchange ?? null;
      await this.reload(index, first?.reply.message.id ?? result.prompt.message.id);
      if (first) {
        this.plan = first.plan;
        this.focus = first.reply.message.id;
      }
      return first !== null;
    } catch (thrown) {
      // Nothing was sent: too few models, one chosen twice, or the message was refused.
      const live = this.columns[index];
      if (live) live.fanOut = null;
      this.fail(index, thrown);
      this.onchanged();
      try {
        await this.reload(index);
      } catch {
        // The error above says what went wrong; the column stays as it was.
      }
      return false;
    } finally {
      const live = this.columns[index];
      if (live) live.requestId = null;
    }
  }

  /// Stops the reply of one model of a fan-out in column `index`.
  async stopLane(index: number, lane: number): Promise<void> {
    const requestId = this.columns[index]?.fanOut?.lanes[lane]?.requestId;
    if (requestId === undefined) return;
    try {
      await backend.replyStop(requestId);
    } catch (thrown) {
      this.fail(index, thrown);
    }
  }

  /// Chooses the models a send goes to at once. The backend refuses more than eight answers at
  /// once, so a model that would make more is not taken.
  toggleFanOutProfile(profile: string): void {
    if (this.fanOutProfiles.includes(profile)) {
      this.fanOutProfiles = this.fanOutProfiles.filter((chosen) => chosen !== profile);
    } else if ((this.fanOutProfiles.length + 1) * this.samplesEach <= MOST_ANSWERS_AT_ONCE) {
      this.fanOutProfiles = [...this.fanOutProfiles, profile];
    }
  }

  /// Writes one answer from the answers `nodeIds` (siblings) with the chosen model, as a new
  /// answer beside them; the column then shows it.
  fuse(index: number, nodeIds: number[]): Promise<boolean> {
    return this.reply(index, { kind: "fuse", nodeIds });
  }

  /// Saves the person's rewrite of the model's reply `nodeId` as a new reply beside it, marked as
  /// edited; nothing is sent. The column then shows the rewrite.
  async editReply(index: number, nodeId: number, text: string): Promise<boolean> {
    const column = this.columns[index];
    if (!column) return false;
    column.error = null;
    try {
      const edited = await backend.replyEdit(nodeId, text);
      this.onchanged();
      await this.reload(index, edited.message.id);
      this.focus = edited.message.id;
      return true;
    } catch (thrown) {
      this.fail(index, thrown);
      return false;
    }
  }

  /// Writes `text` as a new version of the person's message `nodeId` beside the original, and
  /// answers it; the column then shows the new branch.
  edit(index: number, nodeId: number, text: string): Promise<boolean> {
    return this.reply(index, { kind: "edit", nodeId, text });
  }

  /// Continues a buffer-mode document from the column's end: once, or `count` ways at once with
  /// the chosen model, each continuation an alternative of the others, each at most
  /// `continuationLength` tokens long.
  continueDocument(index: number, count = 1): Promise<boolean> {
    const last = this.columns[index]?.view.end;
    if (last === undefined || last === null) return Promise.resolve(false);
    const lanes = this.continuationLanes(count);
    const target = { kind: "continue" as const, nodeId: last, length: this.continuationLength };
    // Without a chosen model, the single reply says to choose one.
    if (lanes.length < 2) return this.reply(index, target);
    return this.fanOut(index, target, lanes, "");
  }

  /// The continuations one Continue weaves: `count` from each of the models chosen to continue
  /// at once (two or more), else from the chosen model; never more than eight in all.
  continuationLanes(count: number): string[] {
    const several = this.fanOutProfiles.length >= 2;
    const models = several ? this.fanOutProfiles : this.profile ? [this.profile] : [];
    return lanesFor(models, Math.min(Math.max(1, count), mostSamplesFor(models.length)));
  }

  /// Re-reads every column that is not streaming (another process wrote to the database).
  /// A summary of the open tree was written, or is being written: the inspector and the pins'
  /// panels show it.
  async summariesChanged(treeId: number): Promise<void> {
    if (treeId !== this.treeId) return;
    this.summariesVersion++;
    if (this.columns.every((column) => column.requestId === null)) await this.inspect(this.focus);
  }

  async refresh(): Promise<void> {
    this.summariesVersion++;
    await this.attachments.refresh();
    for (let index = 0; index < this.columns.length; index++) {
      if (this.columns[index]?.requestId !== null) continue;
      try {
        await this.reload(index);
      } catch (thrown) {
        this.fail(index, thrown);
      }
    }
    if (this.columns.every((column) => column.requestId === null)) await this.inspect(this.focus);
  }

  private async reply(index: number, target: SendTarget): Promise<boolean> {
    const column = this.columns[index];
    if (!column) return false;
    if (!this.profile) {
      column.error = new PinloomError({
        code: "invalidInput",
        message: "choose a model first in the Model list (Budget adds one)",
      });
      return false;
    }
    const requestId = nextRequestId++;
    column.error = null;
    column.unsaved = null;
    column.retrying = null;
    column.fanOut = null;
    column.streaming = "";
    column.requestId = requestId;
    try {
      const exchange = await backend.replyStart(target, this.profile, requestId, (piece) => {
        const live = this.columns[index];
        if (!live || live.requestId !== requestId) return;
        if (piece.kind === "text") {
          live.streaming = (live.streaming ?? "") + piece.text;
          live.retrying = null;
        }
        if (piece.kind === "saved") live.saved = piece.characters;
        if (piece.kind === "retrying") live.retrying = waitingLine(piece);
      });
      if (exchange.interruption) column.error = new PinloomError(exchange.interruption);
      this.onchanged();
      await this.reload(index, exchange.reply.message.id);
      this.plan = exchange.plan;
      this.focus = exchange.reply.message.id;
      this.onreplied();
      return true;
    } catch (thrown) {
      this.fail(index, thrown);
      const live = this.columns[index];
      if (live && live.requestId === requestId && live.streaming) live.unsaved = live.streaming;
      // The person's message may be saved even though no reply came: show it, count it, and
      // let the inspector plan for it.
      this.onchanged();
      try {
        await this.reload(index);
        if (this.focus === null) await this.inspect(null);
      } catch (reloading) {
        const live = this.columns[index];
        if (live) live.error = new PinloomError({
          code: PinloomError.from(reloading).code,
          message: `${PinloomError.from(thrown).message} (and the thread could not be shown again: ${PinloomError.from(reloading).message})`,
        });
      }
      return false;
    } finally {
      const live = this.columns[index];
      if (live) {
        live.streaming = null;
        live.requestId = null;
        live.saved = undefined;
        live.retrying = null;
      }
    }
  }

  /// Stops what column `index` is writing: its reply, or every model of its fan-out.
  async stop(index: number): Promise<void> {
    const column = this.columns[index];
    const lanes = column?.fanOut?.lanes.filter((lane) => !lane.done) ?? [];
    const requestIds = lanes.length > 0 ? lanes.map((lane) => lane.requestId) : [column?.requestId ?? null];
    try {
      for (const requestId of requestIds) if (requestId) await backend.replyStop(requestId);
    } catch (thrown) {
      this.fail(index, thrown);
    }
  }

  /// Pins a passage of a message shown in column `index` and opens its sub-thread to the right.
  async pin(index: number, message: ThreadMessage, start: number, end: number): Promise<void> {
    const text = message.node.message.text.slice(start, end);
    // A passage across formatting is titled as it reads, without its markup; a blank title
    // lets the store title it from the passage.
    const plain = withoutMarkup(text);
    const title = plain === text ? "" : plain.length > 60 ? `${plain.slice(0, 60).replace(/\s+\S*$/, "")}…` : plain;
    try {
      const pin = await backend.pinCreate(message.node.message.id, start, end, text, title, this.profile || null);
      await this.reload(index, message.node.message.id);
      await this.openPin(index, pin.id);
    } catch (thrown) {
      this.fail(index, thrown);
    }
  }

  /// Opens pin `pinId` as the column after `index`, closing the columns beyond it.
  async openPin(index: number, pinId: number): Promise<void> {
    try {
      const view = await backend.pinView(pinId, null);
      this.columns = [
        ...this.columns.slice(0, index + 1),
        columnOf(view),
      ];
    } catch (thrown) {
      this.fail(index, thrown);
    }
  }

  /// Opens message `nodeId` wherever it is: its root thread through it, and the chain of pins
  /// down to the one it is in, as columns.
  async jumpTo(nodeId: number, pinId: number | null): Promise<void> {
    if (this.treeId === null) return;
    try {
      // Each column is read through the message of the chain in it, and brings it into view.
      const chain: Column[] = [];
      let node = nodeId;
      let pin = pinId;
      while (pin !== null) {
        const view = await backend.pinView(pin, node);
        chain.unshift({ ...columnOf(view), reveal: node });
        node = view.pin?.anchorNodeId ?? node;
        pin = view.pin?.parentPinId ?? null;
      }
      const root = await backend.threadView(this.treeId, node);
      this.columns = [{ ...columnOf(root), reveal: node }, ...chain];
      await this.inspect(nodeId);
    } catch (thrown) {
      this.error = PinloomError.from(thrown);
    }
  }

  async closePin(index: number, result: string): Promise<boolean> {
    const pin = this.columns[index]?.view.pin;
    if (!pin) return false;
    try {
      await backend.pinClose(pin.id, result);
      await this.reload(index);
      if (index > 0) await this.reload(index - 1);
      return true;
    } catch (thrown) {
      this.fail(index, thrown);
      return false;
    }
  }

  /// A result for the pin of column `index` written by the chosen model from its thread, for the
  /// person to edit before closing; null (the column says why) when none could be written.
  async suggestPinResult(index: number): Promise<string | null> {
    const pin = this.columns[index]?.view.pin;
    if (!pin) return null;
    if (!this.profile) {
      this.fail(index, { code: "invalidInput", message: "choose a model first to suggest a result, or write it by hand" });
      return null;
    }
    try {
      return await backend.pinResultSuggest(pin.id, this.profile);
    } catch (thrown) {
      this.fail(index, thrown);
      return null;
    }
  }

  /// Deletes message `nodeId` of column `index` and the branch below it (into the trash: the
  /// store keeps it), shows the path up to the message before it, and offers Undo.
  async deleteMessage(index: number, nodeId: number): Promise<void> {
    const column = this.columns[index];
    if (!column || this.treeId === null) return;
    const message = column.view.messages.find(({ node }) => node.message.id === nodeId)?.node.message;
    if (!message) return;
    // The message before it in this thread, whether or not its page is on show; a thread's
    // first message has none here (a pin's hangs off its parent thread).
    const firstOfThread = column.view.first === 0 && column.view.messages[0]?.node.message.id === nodeId;
    const before = firstOfThread ? null : message.parentId;
    try {
      await backend.nodeMark(nodeId, "delete");
    } catch (thrown) {
      this.fail(index, thrown);
      return;
    }
    this.onchanged();
    // Pins opened from what went go with it.
    this.columns = this.columns.slice(0, index + 1);
    await this.show(index, before);
    const opening = message.text.length > 40 ? `${message.text.slice(0, 40)}…` : message.text;
    this.ondeleted(`Deleted “${opening}” and what followed it.`, async () => {
      try {
        await backend.nodeMark(nodeId, "restore");
        this.onchanged();
        await this.show(index, nodeId);
      } catch (thrown) {
        this.fail(index, thrown);
      }
    });
  }

  /// Shows column `index` through message `nodeId`, or from its thread's newest message when
  /// absent (the column's own end may be gone).
  private async show(index: number, nodeId: number | null): Promise<void> {
    const column = this.columns[index];
    if (!column || this.treeId === null) return;
    try {
      const pin = column.view.pin;
      const view = pin ? await backend.pinView(pin.id, nodeId) : await backend.threadView(this.treeId, nodeId);
      this.columns[index] = { ...column, view };
      await this.inspect(view.end ?? null);
    } catch (thrown) {
      this.fail(index, thrown);
    }
  }

  /// Changes a message's flags and shows the change wherever the message is on show. A failure
  /// is shown in column `index` when the change was made there, else in the inspector.
  async mark(nodeId: number, action: NodeAction, index: number | null = null): Promise<void> {
    try {
      await backend.nodeMark(nodeId, action);
      // An exclusion, a deletion or an inclusion can make a summary stale: pins read again what
      // they know.
      this.summariesVersion++;
      for (let column = 0; column < this.columns.length; column++) await this.reload(column);
      await this.inspect(this.focus);
      const refusal = this.planError;
      if (action === "keep" && refusal?.code === "contextOverBudget") {
        // Keeping it made what may never be cut overflow the budget: undo, and say why in the
        // backend's own words.
        await backend.nodeMark(nodeId, "release");
        await this.inspect(this.focus);
        this.planError = new PinloomError({
          code: refusal.code,
          message: `That message was not kept, since keeping it would not fit. ${refusal.message}`,
        });
      }
    } catch (thrown) {
      if (index === null) this.planError = PinloomError.from(thrown);
      else this.fail(index, thrown);
    }
  }

  /// Keeps messages `nodeIds` out of context (what a refusal to cut named), and shows the
  /// change wherever they are on show.
  async exclude(nodeIds: number[]): Promise<void> {
    try {
      for (const nodeId of nodeIds) await backend.nodeMark(nodeId, "exclude");
      this.summariesVersion++;
    } catch (thrown) {
      this.planError = PinloomError.from(thrown);
    }
    for (let column = 0; column < this.columns.length; column++) {
      try {
        await this.reload(column);
      } catch (thrown) {
        this.fail(column, thrown);
      }
    }
    await this.inspect(this.focus);
  }

  /// Explains the context a send from `nodeId` would make under the chosen model.
  async inspect(nodeId: number | null): Promise<void> {
    // Nothing chosen yet (a first send failed before any reply was written): the message on
    // show in the newest column.
    const target = nodeId ?? this.columns.at(-1)?.view.end ?? null;
    this.focus = target;
    this.planError = null;
    if (target === null || !this.profile) {
      this.plan = null;
      return;
    }
    try {
      this.plan = await backend.contextPreview(target, this.profile, null);
    } catch (thrown) {
      this.plan = null;
      this.planError = PinloomError.from(thrown);
    }
  }

  /// Picks a message for comparison; the second pick compares the branches ending at the two.
  async pickForComparison(nodeId: number): Promise<void> {
    if (this.comparePick === null || this.comparePick === nodeId) {
      this.comparePick = nodeId;
      return;
    }
    const first = this.comparePick;
    this.comparePick = null;
    await this.compare(first, nodeId, "picked");
  }

  /// Compares the branches through messages `left` and `right`; with "branches", each goes on
  /// down its newest continuation (two siblings of a fork, compared as what they started).
  async compare(left: number, right: number, reach: CompareReach): Promise<void> {
    try {
      this.comparison = await backend.nodesCompare(left, right, this.profile, reach);
    } catch (thrown) {
      this.error = PinloomError.from(thrown);
    }
  }

  private fail(index: number, thrown: unknown): void {
    const column = this.columns[index];
    const error = PinloomError.from(thrown);
    if (column) column.error = error;
    else this.error = error;
  }
}
