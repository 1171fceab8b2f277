// What the person is doing in one thread column, beyond the thread itself (which the
// Conversation keeps): what is open in it (the message being edited, a promotion being
// previewed, what is open under a message: its receipt, the models to answer it again, the
// answers to fuse, the sentences to pin), the passage selected, the notes, the images waiting to
// go with the next message, and whether a send is under way. The column's parts each show a piece
// of it, so it lives here, once per column, rather than in any one of them.
import { showingFailure, type PinloomError } from "./backend";
import type { CompactionNote, NoteView, Promotion, ThreadMessage } from "./bindings";
import type { Conversation } from "./conversation.svelte";
import { locateSelection } from "./markdown";
import { MessageNotes } from "./notes.svelte";
import { PendingImages } from "./pending-images.svelte";
import { lanesFor } from "./sending.svelte";
import { TokenProbabilities } from "./token-view.svelte";

/// A selection that may be pinned: where, and the message it is in.
export type PinnableSelection = { message: ThreadMessage; start: number; end: number; top: number; left: number };

/// A passage (or a whole message) of a pin on its way back to the parent thread: what would be
/// written there, and its cost, until the person adds it or cancels.
export type PendingPromotion = { fromId: number; passage: string | null; preview: Promotion };

/// What a column has open beyond its thread, one thing at a time: opening one closes whatever was
/// open, so two forms never wait on the person at once and Cancel always means the one on show.
export type ColumnMode =
  | { kind: "reading" }
  /// A message being edited into a new branch: the person's own (sent again) or a model's reply
  /// (`reply`: saved as edited by them, not sent).
  | { kind: "editing"; nodeId: number; reply: boolean; draft: string }
  /// A message whose sentences are offered to pin (without a mouse).
  | { kind: "pinning"; nodeId: number }
  /// A reply being answered again by several models: the models chosen, and how many answers
  /// each writes.
  | { kind: "regenerating"; nodeId: number; profiles: string[]; samples: number }
  /// An answer whose alternatives are being chosen to fuse, and those chosen.
  | { kind: "fusing"; nodeId: number; chosen: number[] }
  /// A reply whose receipt is open under it.
  | { kind: "receipt"; nodeId: number }
  /// A promotion: its preview once read, and why it could not be previewed or written.
  | { kind: "promoting"; pending: PendingPromotion | null; error: string | null };

/// What can be open under one message.
export type MessageMode = Extract<ColumnMode, { nodeId: number }>;

export class ColumnView {
  /// What is open in the column.
  mode = $state<ColumnMode>({ kind: "reading" });
  /// A send, an add or an edit is under way: the composer and the edit form wait for it. Apart
  /// from `mode`, since a receipt or a form may be open while a reply streams.
  busy = $state(false);
  /// The passage selected, or why it cannot be pinned. Apart from `mode`: a selection is the
  /// pointer's, made at any moment (to copy into an edit, say), and must not close what is open.
  selection = $state<PinnableSelection | null>(null);
  selectionError = $state<string | null>(null);
  /// Notes open under a message, and the one being written. Apart from `mode`: the notes are
  /// read from the backend by their own owner, and stay open beside an edit or a receipt.
  readonly notes = new MessageNotes();
  noteDraft = $state("");
  noteIncluded = $state(false);
  /// Images waiting to go with the message being written, kept per thread: an image put on a
  /// message in one tree never goes with a message in another, and switching back finds it.
  private readonly waitingImages = new Map<string, PendingImages>();
  /// The tokens of a buffer document's continuations, and branches made at them.
  readonly tokens: TokenProbabilities;

  constructor(
    readonly conversation: Conversation,
    /// The column's place in `conversation.columns`; Thread keys its columns by it, so a column
    /// keeps its place for as long as it is drawn.
    readonly index: number,
  ) {
    this.tokens = new TokenProbabilities(conversation, index);
  }

  /// What is open under message `nodeId`, if anything.
  openOn(nodeId: number): MessageMode | null {
    const mode = this.mode;
    return "nodeId" in mode && mode.nodeId === nodeId ? mode : null;
  }

  /// Whether `kind` is open under message `nodeId`.
  isOpen(kind: MessageMode["kind"], nodeId: number): boolean {
    return this.openOn(nodeId)?.kind === kind;
  }

  /// Closes whatever is open (its Cancel).
  close(): void {
    this.mode = { kind: "reading" };
  }

  /// Opens `mode`, or closes it when the same kind is open under the same message.
  private toggle(mode: MessageMode): void {
    this.mode = this.isOpen(mode.kind, mode.nodeId) ? { kind: "reading" } : mode;
  }

  /// The compaction in effect on the thread this column shows, as the plan of the message in
  /// focus met it (the column marks it after the last message it stands for); none when the
  /// focus is in another thread.
  get compaction(): CompactionNote | null {
    const note = this.conversation.inspector.plan?.compaction ?? null;
    const view = this.conversation.columns[this.index]?.view;
    if (!note || !view || (view.pin?.id ?? null) !== note.pinId) return null;
    return view.messages.some((message) => message.node.message.id === note.upTo) ? note : null;
  }

  /// The images waiting in this column's composer for the thread it shows now.
  get pendingImages(): PendingImages {
    const pin = this.conversation.columns[this.index]?.view.pin?.id ?? "root";
    const key = `${this.conversation.treeId}:${pin}`;
    let images = this.waitingImages.get(key);
    if (!images) {
      images = new PendingImages();
      this.waitingImages.set(key, images);
    }
    return images;
  }

  startEdit(message: ThreadMessage): void {
    const { id, author, text } = message.node.message;
    this.mode = { kind: "editing", nodeId: id, reply: author === "model", draft: text };
  }

  async sendEdit(): Promise<void> {
    const editing = this.mode;
    if (editing.kind !== "editing" || this.busy) return;
    this.busy = true;
    const { nodeId, reply, draft } = editing;
    this.close();
    const sending = this.conversation.sending;
    const done = reply
      ? await sending.editReply(this.index, nodeId, draft)
      : await sending.edit(this.index, nodeId, draft);
    // A refused edit (an empty one) saved nothing: the form comes back with the text.
    if (!done && this.conversation.columns[this.index]?.error?.code === "invalidInput") {
      this.mode = { kind: "editing", nodeId, reply, draft };
    }
    this.busy = false;
  }

  /// The person selected `text` in `message`, `relative` of the way into its drawn text, inside
  /// `rect` on screen: the Pin button shows under it, or why it cannot.
  select(message: ThreadMessage, text: string, relative: number, rect: DOMRect): void {
    this.selectionError = null;
    const found = locateSelection(message.node.message.text, text, relative);
    if (!found) {
      this.selection = null;
      this.selectionError = "That selection is not all in this message's text: select within one message to pin it.";
      return;
    }
    this.selection = { message, ...found, top: rect.bottom + 4, left: rect.left };
  }

  /// Previews bringing `passage` of message `fromId` (all of it when null) back to the parent.
  async startPromotion(fromId: number, passage: string | null): Promise<void> {
    this.mode = { kind: "promoting", pending: null, error: null };
    const unpreviewed = (error: PinloomError) => {
      this.mode = { kind: "promoting", pending: null, error: error.message };
    };
    const preview = await showingFailure(unpreviewed, null, () =>
      this.conversation.pins.promotionPreview(this.index, fromId, passage),
    );
    if (preview) this.mode = { kind: "promoting", pending: { fromId, passage, preview }, error: null };
  }

  async finishPromotion(): Promise<void> {
    const promoting = this.mode;
    if (promoting.kind !== "promoting" || !promoting.pending) return;
    const { fromId, passage } = promoting.pending;
    // The preview stays on show with why it was not added.
    const unwritten = (error: PinloomError) => {
      this.mode = { ...promoting, error: error.message };
    };
    const written = await showingFailure(unwritten, false, async () => {
      await this.conversation.pins.promote(this.index, fromId, passage);
      return true;
    });
    if (written) this.close();
  }

  togglePinning(nodeId: number): void {
    this.toggle({ kind: "pinning", nodeId });
  }

  /// Pins `start..end` of `message` (as a selection would), opening its sub-thread.
  async pinRange(message: ThreadMessage, start: number, end: number): Promise<void> {
    this.close();
    await this.conversation.pins.pin(this.index, message, start, end);
  }

  toggleReceipt(nodeId: number): void {
    this.toggle({ kind: "receipt", nodeId });
  }

  /// Opens the models to answer `nodeId` again with, none chosen yet, or closes them.
  toggleRegenerating(nodeId: number): void {
    this.toggle({ kind: "regenerating", nodeId, profiles: [], samples: 1 });
  }

  toggleRegenerateProfile(name: string): void {
    const mode = this.mode;
    if (mode.kind !== "regenerating") return;
    mode.profiles = mode.profiles.includes(name)
      ? mode.profiles.filter((chosen) => chosen !== name)
      : [...mode.profiles, name];
  }

  setRegenerateSamples(samples: number): void {
    if (this.mode.kind === "regenerating") this.mode.samples = samples;
  }

  /// The answers Regenerate with… asks for: each chosen model `samples` times.
  get regenerateLanes(): string[] {
    const mode = this.mode;
    return mode.kind === "regenerating" ? lanesFor(mode.profiles, mode.samples) : [];
  }

  async regenerateWith(nodeId: number): Promise<void> {
    const lanes = this.regenerateLanes;
    this.close();
    await this.conversation.sending.regenerateWith(this.index, nodeId, lanes);
  }

  /// Opens the alternatives of answer `message` to choose which to fuse (all of them at first),
  /// or closes them.
  toggleFusing(message: ThreadMessage): void {
    this.toggle({ kind: "fusing", nodeId: message.node.message.id, chosen: [...message.alternatives] });
  }

  toggleFuseChoice(nodeId: number): void {
    const mode = this.mode;
    if (mode.kind !== "fusing") return;
    mode.chosen = mode.chosen.includes(nodeId) ? mode.chosen.filter((chosen) => chosen !== nodeId) : [...mode.chosen, nodeId];
  }

  /// Fuses the chosen alternatives of `message`, numbered in the order they are shown.
  async fuse(message: ThreadMessage): Promise<void> {
    const mode = this.mode;
    const picked = mode.kind === "fusing" ? mode.chosen : [];
    const chosen = message.alternatives.filter((id) => picked.includes(id));
    this.close();
    await this.conversation.sending.fuse(this.index, chosen);
  }

  /// Adds the note being written to the open message; an included note changes its context,
  /// so the inspector reads it again.
  async addNote(): Promise<void> {
    if (await this.notes.add(this.noteDraft, this.noteIncluded)) {
      this.noteDraft = "";
      await this.conversation.inspector.refresh();
    }
  }

  async includeNote(note: NoteView): Promise<void> {
    if (await this.notes.setIncluded(note, !note.included)) await this.conversation.inspector.refresh();
  }
}
