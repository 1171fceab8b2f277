// One owner for what a column sends, so every way of asking streams, stops and fails alike.
import { backend, PinloomError, showingFailure } from "./backend";
import { MOST_ANSWERS_AT_ONCE } from "./bindings";
import type { ImageInput, PickInput, ReplyPiece, SendTarget, ThreadView } from "./bindings";
import type { ConversationState, Lane } from "./conversation-state";

/// How many models one prompt goes to at once at most: the backend's own limit, exported with
/// the bindings.
export { MOST_ANSWERS_AT_ONCE };

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

// Request ids stop replies; the backend refuses one already streaming, and a reloaded window
// must not reuse the ids of replies still streaming from before: each window starts elsewhere.
let nextRequestId = Math.floor(Math.random() * 2 ** 30) + 1;

/// The most samples each of `models` models may write: one send asks for at most eight answers.
export function mostSamplesFor(models: number): number {
  return Math.max(1, Math.floor(MOST_ANSWERS_AT_ONCE / Math.max(1, models)));
}

/// One model name per answer: each of `models` `samples` times, the samples of a model together.
export function lanesFor(models: string[], samples: number): string[] {
  return models.flatMap((model) => Array.from({ length: samples }, () => model));
}

/// The person's messages, and the replies asked for them from one model or several at once
/// (fan-out, samples, a document's continuations, fusions, a question over picked messages), each
/// streaming into its column until it is written or stopped; and how many models and answers a
/// send goes to, which the composer chooses and every way of asking reads.
export class Sending {
  /// The models a send goes to at once when the person chose several; empty for a send to the
  /// chosen model.
  fanOutProfiles = $state<string[]>([]);
  /// How many answers each of those models (or the chosen model) writes at once: samples, each
  /// a branch with its own receipt. One model once is an ordinary send.
  samplesEach = $state(1);
  /// How long a buffer document's continuation may be, in tokens (a loom's length); the tree's
  /// token buffer, else the model's reserve, when null.
  continuationLength = $state<number | null>(null);
  /// Whether `writingBegun` has asked (the backend loads once a process whoever asks).
  private countersAsked = false;

  /// `error`: where a failure that belongs to no column shows.
  constructor(
    private readonly conversation: Pick<
      ConversationState,
      "treeId" | "columns" | "profile" | "error" | "inspector" | "attachments" | "inColumn" | "reload" | "onchanged" | "onreplied"
    >,
  ) {}

  /// The person started writing in a composer: the backend loads the vocabularies a written
  /// message is counted with now, while they type, instead of at the window's start (where a
  /// window only read would hold them for nothing) or at the send. Asked once by this
  /// conversation. It fails only when the backend cannot be reached or its database is unusable,
  /// which the window shows like any other failure.
  writingBegun(): void {
    if (this.countersAsked) return;
    this.countersAsked = true;
    void showingFailure(this.conversation, undefined, () => backend.countersLoadAhead());
  }

  /// Asks the model in column `index`: a new message after the column's last one, with
  /// `images`. When the reply fails, says whether the person's message was saved all the same,
  /// so the composer does not offer it to be sent twice.
  ask(index: number, text: string, images: ImageInput[] = []): Promise<SendOutcome> {
    return this.askWith(index, text, images, (target) => this.reply(index, target));
  }

  /// Asks for every answer of `fanOutLanes` at once in column `index`, as `ask` asks one.
  askMany(index: number, text: string, images: ImageInput[] = []): Promise<SendOutcome> {
    const lanes = this.fanOutLanes;
    return this.askWith(index, text, images, (prompt) => this.fanOut(index, prompt, lanes, text));
  }

  /// Sends `text` and `images` as a new message after column `index`'s end through `send` (one
  /// model or several), and says what became of it.
  private async askWith(
    index: number,
    text: string,
    images: ImageInput[],
    send: (target: NewMessage) => Promise<boolean>,
  ): Promise<SendOutcome> {
    const { columns, treeId } = this.conversation;
    const column = columns[index];
    if (!column || treeId === null) return "unsaved";
    const parentId = column.view.end ?? null;
    const before = new Set(column.view.messages.map((message) => message.node.message.id));
    const target: NewMessage = column.view.pin
      ? { kind: "pin", pinId: column.view.pin.id, parentId, text, images }
      : { kind: "thread", treeId, parentId, text, images };
    const answered = await send(target);
    // The images were stored with the message, if it was written: its card shows them.
    if (images.length > 0) await this.conversation.attachments.refresh();
    if (answered) return "answered";
    const saved = this.conversation.columns[index]?.view.messages.some(
      ({ node: { message } }) =>
        !before.has(message.id) && message.author === "human" && message.text.trim() === text.trim(),
    );
    return saved ? "unanswered" : "unsaved";
  }

  /// Adds the person's message after the last message on show in column `index`, without
  /// asking for a reply: the branch on show is the one it continues, whatever was opened first.
  /// Returns whether it was saved, so the composer keeps the text when it was not.
  async add(index: number, text: string): Promise<boolean> {
    const conversation = this.conversation;
    const column = conversation.columns[index];
    const treeId = conversation.treeId;
    if (!column || treeId === null) return false;
    column.composerError = null;
    const parentId = column.view.end ?? null;
    const besideComposer = (error: PinloomError) => {
      const live = conversation.columns[index];
      if (live) live.composerError = error;
    };
    const message = await showingFailure(besideComposer, null, () => backend.messageAppend(treeId, parentId, text));
    if (message === null) return false;
    conversation.onchanged();
    // Saved all the same when it cannot be shown: the composer must not offer it again.
    await showingFailure(conversation.inColumn(index), undefined, () => conversation.reload(index, message.id));
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

  /// Writes one answer from the answers `nodeIds` (siblings) with the chosen model, as a new
  /// answer beside them; the column then shows it.
  fuse(index: number, nodeIds: number[]): Promise<boolean> {
    return this.reply(index, { kind: "fuse", nodeIds });
  }

  /// Asks `text` over the messages `picks` (from several branches and pins, in the order picked):
  /// the question starts a thread of its own at the tree's top, which the root column then shows.
  /// Says what became of it, as `ask` does.
  async overPicked(picks: PickInput[], text: string): Promise<SendOutcome> {
    const conversation = this.conversation;
    // The new thread shows in the root column (column 0, always the root thread); the pins open
    // beside it belong to the thread it showed, and would leave it folded to a rail.
    conversation.columns = conversation.columns.slice(0, 1);
    if (await this.reply(0, { kind: "overPicked", picks, text })) return "answered";
    return (await this.showUnanswered(picks, text)) ? "unanswered" : "unsaved";
  }

  /// After a question over `picks` got no reply: when it was saved all the same (the provider
  /// failed after), it is the tree's newest thread, unanswered, and the root column shows it, so
  /// that it is answered again from there rather than asked twice. True when it was saved.
  private async showUnanswered(picks: PickInput[], text: string): Promise<boolean> {
    const conversation = this.conversation;
    const treeId = conversation.treeId;
    if (treeId === null) return false;
    let view: ThreadView;
    try {
      view = await backend.threadView(treeId, null);
    } catch {
      // The root column already says why the send failed; whether it saved is left unsaid.
      return false;
    }
    const question = view.messages[0]?.node.message;
    const saved =
      view.first === 0 &&
      view.total === 1 &&
      question?.parentId === null &&
      question.author === "human" &&
      question.text.trim() === text.trim() &&
      view.picked.map((pick) => pick.nodeId).join() === picks.map((pick) => pick.nodeId).join();
    const root = conversation.columns[0];
    if (!saved || !question || !root) return false;
    conversation.columns[0] = { ...root, view };
    await conversation.inspector.inspect(question.id);
    return true;
  }

  /// Writes `text` as a new version of the person's message `nodeId` beside the original, and
  /// answers it; the column then shows the new branch.
  edit(index: number, nodeId: number, text: string): Promise<boolean> {
    return this.reply(index, { kind: "edit", nodeId, text });
  }

  /// Saves the person's rewrite of the model's reply `nodeId` as a new reply beside it, marked as
  /// edited; nothing is sent. The column then shows the rewrite.
  async editReply(index: number, nodeId: number, text: string): Promise<boolean> {
    const conversation = this.conversation;
    const column = conversation.columns[index];
    if (!column) return false;
    column.error = null;
    return showingFailure(conversation.inColumn(index), false, async () => {
      const edited = await backend.replyEdit(nodeId, text);
      conversation.onchanged();
      await conversation.reload(index, edited.message.id);
      conversation.inspector.focus = edited.message.id;
      return true;
    });
  }

  /// Continues a buffer-mode document from the column's end: once, or `count` ways at once with
  /// the chosen model, each continuation an alternative of the others, each at most
  /// `continuationLength` tokens long.
  continueDocument(index: number, count = 1): Promise<boolean> {
    const last = this.conversation.columns[index]?.view.end;
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
    const profile = this.conversation.profile;
    const models = several ? this.fanOutProfiles : profile ? [profile] : [];
    return lanesFor(models, Math.min(Math.max(1, count), mostSamplesFor(models.length)));
  }

  /// The answers a send asks for at once, one model name per answer: each chosen model (the
  /// model chosen in the header, when none is) `samplesEach` times.
  get fanOutLanes(): string[] {
    const profile = this.conversation.profile;
    const models = this.fanOutProfiles.length > 0 ? this.fanOutProfiles : profile ? [profile] : [];
    return lanesFor(models, this.samplesEach);
  }

  /// Sets how many answers each model writes at once, within what the models chosen allow (the
  /// answers of one send being at most eight).
  setSamplesEach(samples: number): void {
    this.samplesEach = Math.min(Math.max(1, Math.floor(samples) || 1), mostSamplesFor(this.fanOutProfiles.length));
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

  /// Stops what column `index` is writing: its reply, or every model of its fan-out.
  async stop(index: number): Promise<void> {
    const column = this.conversation.columns[index];
    const lanes = column?.fanOut?.lanes.filter((lane) => !lane.done) ?? [];
    const requestIds = lanes.length > 0 ? lanes.map((lane) => lane.requestId) : [column?.requestId ?? null];
    await showingFailure(this.conversation.inColumn(index), undefined, async () => {
      for (const requestId of requestIds) if (requestId) await backend.replyStop(requestId);
    });
  }

  /// Stops the reply of one model of a fan-out in column `index`.
  async stopLane(index: number, lane: number): Promise<void> {
    const requestId = this.conversation.columns[index]?.fanOut?.lanes[lane]?.requestId;
    if (requestId === undefined) return;
    await showingFailure(this.conversation.inColumn(index), undefined, () => backend.replyStop(requestId));
  }

  private async reply(index: number, target: SendTarget): Promise<boolean> {
    const conversation = this.conversation;
    const column = conversation.columns[index];
    if (!column) return false;
    const profile = conversation.profile;
    if (!profile) {
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
    // Not `showingFailure`: a failed reply does more than show why. It keeps what streamed, reads
    // the column again (the person's message may be saved), and its `finally` ends the stream.
    try {
      const exchange = await backend.replyStart(target, profile, requestId, (piece) => {
        const live = conversation.columns[index];
        if (!live || live.requestId !== requestId) return;
        if (piece.kind === "text") {
          live.streaming = (live.streaming ?? "") + piece.text;
          live.retrying = null;
        }
        if (piece.kind === "saved") live.saved = piece.characters;
        if (piece.kind === "retrying") live.retrying = waitingLine(piece);
      });
      if (exchange.interruption) column.error = new PinloomError(exchange.interruption);
      conversation.onchanged();
      await conversation.reload(index, exchange.reply.message.id);
      conversation.inspector.plan = exchange.plan;
      conversation.inspector.focus = exchange.reply.message.id;
      conversation.onreplied();
      return true;
    } catch (thrown) {
      const failure = PinloomError.from(thrown);
      conversation.inColumn(index)(failure);
      const live = conversation.columns[index];
      if (live && live.requestId === requestId && live.streaming) live.unsaved = live.streaming;
      // The person's message may be saved even though no reply came: show it, count it, and
      // let the inspector plan for it.
      conversation.onchanged();
      const alsoUnshown = (reloading: PinloomError) => {
        const live = conversation.columns[index];
        if (live) live.error = new PinloomError({
          code: reloading.code,
          message: `${failure.message} (and the thread could not be shown again: ${reloading.message})`,
        });
      };
      await showingFailure(alsoUnshown, undefined, async () => {
        await conversation.reload(index);
        if (conversation.inspector.focus === null) await conversation.inspector.inspect(null);
      });
      return false;
    } finally {
      const live = conversation.columns[index];
      if (live) {
        live.streaming = null;
        live.requestId = null;
        live.saved = undefined;
        live.retrying = null;
      }
    }
  }

  /// Sends `prompt` to `profiles` at once in column `index`: each model's reply streams in its
  /// own lane and can be stopped alone; one model's failure stays in its lane. The column then
  /// shows the first reply written, its siblings one switch away. True when any model answered.
  private async fanOut(index: number, prompt: SendTarget, profiles: string[], text: string): Promise<boolean> {
    const conversation = this.conversation;
    const column = conversation.columns[index];
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
      const live = conversation.columns[index]?.fanOut?.lanes[lane];
      return live && live.requestId === requestIds[lane] ? live : undefined;
    };
    // Not `showingFailure`: a refused fan-out also folds its lanes away and reads the column
    // again, and its `finally` frees the column.
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
      conversation.onchanged();
      const first = result.answers.find((answer) => answer.exchange)?.exchange ?? null;
      await conversation.reload(index, first?.reply.message.id ?? result.prompt.message.id);
      if (first) {
        conversation.inspector.plan = first.plan;
        conversation.inspector.focus = first.reply.message.id;
      }
      return first !== null;
    } catch (thrown) {
      // Nothing was sent: too few models, one chosen twice, or the message was refused.
      const live = conversation.columns[index];
      if (live) live.fanOut = null;
      conversation.inColumn(index)(PinloomError.from(thrown));
      conversation.onchanged();
      try {
        await conversation.reload(index);
      } catch {
        // The error above says what went wrong; the column stays as it was.
      }
      return false;
    } finally {
      const live = conversation.columns[index];
      if (live) live.requestId = null;
    }
  }
}
