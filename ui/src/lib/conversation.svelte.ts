// The open tree as columns: the root thread, then one column per pin opened from it (and from
// those, without limit), each streaming its own reply; and the models to choose from. What is
// done in the columns has owners of its own, composed here since each works on these columns:
// what is sent (`sending`), pins (`pins`), marks on messages (`marks`), the context inspector
// (`inspector`), a comparison of two branches (`comparison`), the messages picked for a question
// over several branches (`questionPicks`), and what is attached to the tree (`attachments`, the
// images sent with a message among it). Each owner sees the conversation
// through `ConversationState` (`conversation-state.ts`), which this class implements.
import { Attachments } from "./attachments.svelte";
import { backend, showingFailure, type PinloomError } from "./backend";
import { THREAD_PAGE, type FoundModel, type ModelProfile, type ThreadView } from "./bindings";
import { BranchComparison } from "./branch-comparison.svelte";
import { columnOf, type Column, type ConversationState } from "./conversation-state";
import { ContextInspector } from "./context-inspector.svelte";
import { MessageMarks } from "./marks.svelte";
import { ModelsReadiness } from "./models-ready.svelte";
import { Pins } from "./pins.svelte";
import { QuestionPicks } from "./question-picks.svelte";
import { Sending } from "./sending.svelte";
import { TreeSettingsState } from "./tree-settings.svelte";

/// How many messages a page of a thread holds: the backend's own limit, exported with the
/// bindings.
export { THREAD_PAGE };

/// A column as the components draw it (defined below the owners, which shape it too).
export type { Column };

export class Conversation implements ConversationState {
  /// The open tree's conversation settings (the settings form and the search box share them).
  readonly treeSettings = new TreeSettingsState();
  /// Which models can answer now.
  readonly readiness = new ModelsReadiness();
  /// What is attached to the open tree: the attachments bar lists it, the message cards show
  /// the images sent with them.
  readonly attachments: Attachments = new Attachments(this);
  /// The message the inspector explains, and its plan.
  readonly inspector: ContextInspector = new ContextInspector(this);
  /// The first message picked for a comparison, then the comparison.
  readonly comparison: BranchComparison = new BranchComparison(this);
  /// The person's messages and the replies asked for them, and how many models answer at once.
  readonly sending: Sending = new Sending(this);
  /// The messages picked from several branches for one question, and the question asked over them.
  readonly questionPicks: QuestionPicks = new QuestionPicks(this, this.sending);
  /// Pinning a passage, opening and closing pins, bringing a passage back.
  readonly pins: Pins = new Pins(this);
  /// Bookmarks, exclusions, kept messages and deletions.
  readonly marks: MessageMarks = new MessageMarks(this);
  treeId = $state<number | null>(null);
  columns = $state<Column[]>([]);
  profiles = $state<ModelProfile[]>([]);
  /// Profiles that came with imported files, not enabled yet: listed in Settings to enable.
  importedProfiles = $state<ModelProfile[]>([]);
  profile = $state<string>("");
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
    const read = await showingFailure(this, false, async () => {
      const all = await backend.profilesList();
      // A profile that came with an imported file is data until the person enables it: never
      // offered, never a default.
      this.profiles = all.filter((profile) => !profile.importedFrom);
      this.importedProfiles = all.filter((profile) => Boolean(profile.importedFrom));
      const names = this.profiles.map((profile) => profile.name);
      this.profile = preferred && names.includes(preferred) ? preferred : (names[0] ?? "");
      return true;
    });
    if (!read) return;
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

  /// Opens a tree's root thread as the only column.
  async open(treeId: number): Promise<void> {
    // The picks belong to the tree they were picked in; the same tree opened again (renamed, say)
    // keeps them, as the person may still be picking.
    if (this.treeId !== treeId) this.questionPicks.clear();
    this.treeId = treeId;
    this.comparison.clear();
    // A failure reading a tree no longer chosen is not shown either.
    const stillOpen = (error: PinloomError) => {
      if (this.treeId === treeId) this.error = error;
    };
    await showingFailure(stillOpen, undefined, async () => {
      const view = await backend.threadView(treeId, null);
      // A slow read (a 10,000-message tree) may finish after another tree was chosen: drop it.
      if (this.treeId !== treeId) return;
      this.columns = [columnOf(view)];
      await this.inspector.inspect(view.end ?? null);
      await this.attachments.refresh();
    });
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
    await showingFailure(this.inColumn(index), undefined, async () => {
      const page = await backend.threadPage(view.end ?? -1, first, count);
      const live = this.columns[index];
      // The column was read again meanwhile: its own pages stand.
      if (!live || live.view.end !== view.end || live.view.first !== view.first) return;
      const messages = where === "before" ? [...page, ...live.view.messages] : [...live.view.messages, ...page];
      this.columns[index] = { ...live, view: { ...live.view, messages, first: where === "before" ? first : live.view.first } };
    });
  }

  /// Closes the columns opened after column `index` (its pins and theirs) and inspects the end of
  /// column `index`. Nothing is deleted: a pin opens again from its chip.
  async closeColumnsAfter(index: number): Promise<void> {
    if (index >= this.columns.length - 1) return;
    this.columns = this.columns.slice(0, index + 1);
    await this.inspector.inspect(this.columns[index]?.view.end ?? null);
  }

  /// Shows another alternative of a message (the 2/3 switcher).
  async switchTo(index: number, nodeId: number): Promise<void> {
    await showingFailure(this.inColumn(index), undefined, async () => {
      await this.reload(index, nodeId);
      this.columns = this.columns.slice(0, index + 1);
      await this.inspector.inspect(this.columns[index]?.view.end ?? null);
    });
  }

  /// Opens message `nodeId` wherever it is: its root thread through it, and the chain of pins
  /// down to the one it is in, as columns.
  async jumpTo(nodeId: number, pinId: number | null): Promise<void> {
    if (this.treeId === null) return;
    await showingFailure(this, undefined, async () => {
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
      const root = await backend.threadView(this.treeId!, node);
      this.columns = [{ ...columnOf(root), reveal: node }, ...chain];
      await this.inspector.inspect(nodeId);
    });
  }

  /// Shows column `index` through message `nodeId`, or from its thread's newest message when
  /// absent (the column's own end may be gone), and inspects its end.
  async show(index: number, nodeId: number | null): Promise<void> {
    const column = this.columns[index];
    const treeId = this.treeId;
    if (!column || treeId === null) return;
    await showingFailure(this.inColumn(index), undefined, async () => {
      const pin = column.view.pin;
      const view = pin ? await backend.pinView(pin.id, nodeId) : await backend.threadView(treeId, nodeId);
      this.columns[index] = { ...column, view };
      await this.inspector.inspect(view.end ?? null);
    });
  }

  /// A summary of the open tree was written, or is being written: the inspector and the pins'
  /// panels show it.
  async summariesChanged(treeId: number): Promise<void> {
    if (treeId !== this.treeId) return;
    this.summariesVersion++;
    if (this.columns.every((column) => column.requestId === null)) await this.inspector.refresh();
  }

  /// Re-reads every column that is not streaming (another process wrote to the database).
  async refresh(): Promise<void> {
    this.summariesVersion++;
    await this.attachments.refresh();
    for (let index = 0; index < this.columns.length; index++) {
      if (this.columns[index]?.requestId !== null) continue;
      await showingFailure(this.inColumn(index), undefined, () => this.reload(index));
    }
    if (this.columns.every((column) => column.requestId === null)) await this.inspector.refresh();
  }

  /// An agent over MCP or the command-line program wrote to the database, or a summary was
  /// written in the background (a new pin's ancestry): the columns show it as it lands. Returns
  /// the function that stops listening.
  listenForChanges(): () => void {
    const stops = [
      backend.onDatabaseChanged(() => void this.refresh()),
      backend.onSummariesChanged((treeId) => void this.summariesChanged(treeId)),
    ];
    return () => stops.forEach((stop) => stop());
  }

  /// Where a failure in column `index` shows: in the column, or above the columns once the
  /// column is gone.
  inColumn(index: number): (error: PinloomError) => void {
    return (error) => {
      const column = this.columns[index];
      if (column) column.error = error;
      else this.error = error;
    };
  }
}
