// What the person is doing in one thread column, beyond the thread itself (which the
// Conversation keeps): the passage selected, a promotion being previewed, the message being
// edited, what is open under a message (its receipt, its notes, the models to answer it again),
// the images waiting to go with the next message, and whether a send is under way. The
// column's parts each show a piece of it, so it lives here, once per column, rather than in any
// one of them.
import type { CompactionNote, NoteView, Promotion, ThreadMessage } from "./bindings";
import { lanesFor, type Conversation } from "./conversation.svelte";
import { locateSelection } from "./markdown";
import { MessageNotes } from "./notes.svelte";
import { PendingImages } from "./pending-images.svelte";
import { TokenProbabilities } from "./token-view.svelte";

/// A selection that may be pinned: where, and the message it is in.
export type PinnableSelection = { message: ThreadMessage; start: number; end: number; top: number; left: number };

/// A passage (or a whole message) of a pin on its way back to the parent thread: what would be
/// written there, and its cost, until the person adds it or cancels.
export type PendingPromotion = { fromId: number; passage: string | null; preview: Promotion };

export class ColumnView {
  /// A send, an add or an edit is under way: the composer and the edit form wait for it.
  busy = $state(false);
  /// The message being edited into a new branch, and the edit: the person's own (sent again)
  /// or a model's reply (saved as edited by them, not sent).
  editing = $state<number | null>(null);
  editingReply = $state(false);
  editDraft = $state("");
  selection = $state<PinnableSelection | null>(null);
  selectionError = $state<string | null>(null);
  promoting = $state<PendingPromotion | null>(null);
  promotionError = $state<string | null>(null);
  /// The reply whose receipt is open under it.
  receiptOf = $state<number | null>(null);
  /// The reply being answered again by several models, the models chosen for it, and how many
  /// answers each writes.
  regeneratingWith = $state<number | null>(null);
  regenerateProfiles = $state<string[]>([]);
  regenerateSamples = $state(1);
  /// The message whose sentences are offered to pin (without a mouse).
  pinning = $state<number | null>(null);
  /// The answer whose alternatives are being chosen to fuse, and those chosen.
  fusing = $state<number | null>(null);
  fuseChosen = $state<number[]>([]);
  /// Notes open under a message, and the one being written.
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

  /// The compaction in effect on the thread this column shows, as the plan of the message in
  /// focus met it (the column marks it after the last message it stands for); none when the
  /// focus is in another thread.
  get compaction(): CompactionNote | null {
    const note = this.conversation.plan?.compaction ?? null;
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
    this.editing = message.node.message.id;
    this.editingReply = message.node.message.author === "model";
    this.editDraft = message.node.message.text;
  }

  async sendEdit(): Promise<void> {
    if (this.editing === null || this.busy) return;
    this.busy = true;
    const nodeId = this.editing;
    this.editing = null;
    const done = this.editingReply
      ? await this.conversation.editReply(this.index, nodeId, this.editDraft)
      : await this.conversation.edit(this.index, nodeId, this.editDraft);
    // A refused edit (an empty one) saved nothing: the form comes back with the text.
    if (!done && this.conversation.columns[this.index]?.error?.code === "invalidInput") this.editing = nodeId;
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
    this.promotionError = null;
    this.promoting = null;
    const preview = await this.conversation.promotionPreview(this.index, fromId, passage);
    if (typeof preview === "string") this.promotionError = preview;
    else this.promoting = { fromId, passage, preview };
  }

  async finishPromotion(): Promise<void> {
    if (!this.promoting) return;
    const failure = await this.conversation.promote(this.index, this.promoting.fromId, this.promoting.passage);
    if (failure) this.promotionError = failure;
    else this.promoting = null;
  }

  togglePinning(nodeId: number): void {
    this.pinning = this.pinning === nodeId ? null : nodeId;
  }

  /// Pins `start..end` of `message` (as a selection would), opening its sub-thread.
  async pinRange(message: ThreadMessage, start: number, end: number): Promise<void> {
    this.pinning = null;
    await this.conversation.pin(this.index, message, start, end);
  }

  toggleReceipt(nodeId: number): void {
    this.receiptOf = this.receiptOf === nodeId ? null : nodeId;
  }

  /// Opens the models to answer `nodeId` again with, none chosen yet, or closes them.
  toggleRegenerating(nodeId: number): void {
    this.regeneratingWith = this.regeneratingWith === nodeId ? null : nodeId;
    this.regenerateProfiles = [];
    this.regenerateSamples = 1;
  }

  /// The answers Regenerate with… asks for: each chosen model `regenerateSamples` times.
  get regenerateLanes(): string[] {
    return lanesFor(this.regenerateProfiles, this.regenerateSamples);
  }

  /// Opens the alternatives of answer `message` to choose which to fuse (all of them at first),
  /// or closes them.
  toggleFusing(message: ThreadMessage): void {
    const id = message.node.message.id;
    this.fusing = this.fusing === id ? null : id;
    this.fuseChosen = [...message.alternatives];
  }

  toggleFuseChoice(nodeId: number): void {
    this.fuseChosen = this.fuseChosen.includes(nodeId)
      ? this.fuseChosen.filter((chosen) => chosen !== nodeId)
      : [...this.fuseChosen, nodeId];
  }

  /// Fuses the chosen alternatives of `message`, numbered in the order they are shown.
  async fuse(message: ThreadMessage): Promise<void> {
    const chosen = message.alternatives.filter((id) => this.fuseChosen.includes(id));
    this.fusing = null;
    await this.conversation.fuse(this.index, chosen);
  }

  toggleRegenerateProfile(name: string): void {
    this.regenerateProfiles = this.regenerateProfiles.includes(name)
      ? this.regenerateProfiles.filter((chosen) => chosen !== name)
      : [...this.regenerateProfiles, name];
  }

  async regenerateWith(nodeId: number): Promise<void> {
    const lanes = this.regenerateLanes;
    this.regeneratingWith = null;
    await this.conversation.regenerateWith(this.index, nodeId, lanes);
  }

  /// Adds the note being written to the open message; an included note changes its context,
  /// so the inspector reads it again.
  async addNote(): Promise<void> {
    if (await this.notes.add(this.noteDraft, this.noteIncluded)) {
      this.noteDraft = "";
      await this.conversation.inspect(this.conversation.focus);
    }
  }

  async includeNote(note: NoteView): Promise<void> {
    if (await this.notes.setIncluded(note, !note.included)) await this.conversation.inspect(this.conversation.focus);
  }
}
