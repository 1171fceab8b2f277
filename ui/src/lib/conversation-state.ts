// What the conversation's owners by verb (sending, pins, marks, the context inspector, the branch
// comparison, attachments) see of it: the columns, their shape, and the few things they call back.
// `Conversation` implements `ConversationState` and builds each owner with itself; each owner takes
// only the part it uses (a `Pick`) and imports this file, never `conversation.svelte.ts`, so the
// conversation and its owners never import each other.
import type { PinloomError } from "./backend";
import type { PlanView, ThreadView } from "./bindings";
import type { TreeSettingsState } from "./tree-settings.svelte";

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

/// A column showing `view`, with nothing streaming.
export function columnOf(view: ThreadView): Column {
  return { view, streaming: null, requestId: null, error: null };
}

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

/// The context inspector as the other owners reach it: it plans again after what they change, a
/// reply brings its own plan, and a mark made from it shows its failure there.
export interface ContextInspection {
  focus: number | null;
  plan: PlanView | null;
  error: PinloomError | null;
  inspect(nodeId: number | null): Promise<void>;
  refresh(): Promise<void>;
}

/// The conversation as its owners reach it.
export interface ConversationState {
  /// The open tree; null before one is open.
  readonly treeId: number | null;
  columns: Column[];
  /// The chosen model; empty when none is.
  readonly profile: string;
  /// A failure shown above the columns.
  error: PinloomError | null;
  /// Counts the summaries that landed: a change that can make one stale counts too.
  summariesVersion: number;
  readonly treeSettings: TreeSettingsState;
  readonly inspector: ContextInspection;
  /// What is attached to the tree: read again once a message brought images.
  readonly attachments: { refresh(): Promise<boolean> };
  /// Called after anything written, once a reply is written, and after a deletion (with Undo).
  readonly onchanged: () => void;
  readonly onreplied: () => void;
  readonly ondeleted: (what: string, undo: () => Promise<void>) => void;
  /// Where a failure in column `index` shows.
  inColumn(index: number): (error: PinloomError) => void;
  /// Re-reads column `index` through message `nodeId` (from its end when absent).
  reload(index: number, nodeId?: number | null): Promise<void>;
  /// Shows column `index` through message `nodeId` (its thread's newest when null) and inspects
  /// its end.
  show(index: number, nodeId: number | null): Promise<void>;
}
