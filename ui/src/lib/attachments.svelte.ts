// Files, folders, images and PDFs attached to the open tree, a thread or a message, and
// searching the tree for messages to put in every plan's search slice. Attaching or removing
// changes the context, so the inspector plans again after either. The conversation owns one
// list: the attachments bar lists it, and each message card shows the images sent with it.
import { backend, showingFailure, type PinloomError } from "./backend";
import type { AttachAs, AttachTo, AttachmentView, SearchResult } from "./bindings";
import type { ConversationState } from "./conversation-state";

/// What attaching reads of the conversation: the open tree, its settings (the hits chosen from
/// searches) and the inspector, which plans again after a change.
type AttachedTo = Pick<ConversationState, "treeId" | "treeSettings" | "inspector">;

/// An image attached to a message, as its card shows it.
export type MessageImage = { id: number; name: string; dataUrl: string };

export class Attachments {
  /// Replaced whole, never changed in place: an image holds its bytes as a long `data:` URL,
  /// which a deep proxy would only slow.
  list = $state.raw<AttachmentView[]>([]);
  /// The images attached to each message, by its id, worked out once per list read rather than
  /// by every card.
  readonly imagesByNode = $derived.by(() => {
    const byNode = new Map<number, MessageImage[]>();
    for (const { id, role, name, nodeId, image } of this.list) {
      if (role !== "image" || nodeId === null || image === null) continue;
      const images = byNode.get(nodeId);
      if (images) images.push({ id, name, dataUrl: image });
      else byNode.set(nodeId, [{ id, name, dataUrl: image }]);
    }
    return byNode;
  });
  /// What the last search found; null before any.
  results = $state<SearchResult[] | null>(null);
  error = $state<PinloomError | null>(null);
  private readonly conversation: AttachedTo;

  constructor(conversation: AttachedTo) {
    this.conversation = conversation;
  }

  /// Reads what is attached to the open tree; true when it could be read.
  async refresh(): Promise<boolean> {
    const treeId = this.conversation.treeId;
    if (treeId === null) return false;
    return showingFailure(this, false, async () => {
      const list = await backend.attachmentsList(treeId);
      // Another tree was opened meanwhile: its own list is read for it.
      if (this.conversation.treeId !== treeId) return false;
      this.list = list;
      return true;
    });
  }

  /// Asks for files, or a folder, with the system's dialog and attaches what was chosen to what
  /// `to` names then, standing as `standsAs` says; true when everything chosen was attached.
  async choose(folder: boolean, to: () => AttachTo, standsAs: AttachAs = "file"): Promise<boolean> {
    const paths = await showingFailure(this, null, () => backend.chooseAttachments(folder));
    if (paths === null) return false;
    return this.attach(paths, to(), standsAs);
  }

  /// Attaches each of `paths` (chosen in a dialog or dropped), as it is or its text as an
  /// instruction or a context; one refused is said and the others are still attached. True when
  /// all were.
  async attach(paths: string[], to: AttachTo, standsAs: AttachAs = "file"): Promise<boolean> {
    const treeId = this.conversation.treeId;
    if (treeId === null) return false;
    this.error = null;
    let all = true;
    for (const path of paths) {
      const attached = await showingFailure(this, false, async () => {
        await backend.attachPath(treeId, to, path, standsAs);
        return true;
      });
      if (!attached) all = false;
    }
    await this.refresh();
    await this.conversation.inspector.refresh();
    return all;
  }

  /// Takes attachment `id` off; true when it was removed.
  async remove(id: number): Promise<boolean> {
    const removed = await showingFailure(this, false, async () => {
      await backend.attachmentRemove(id);
      return true;
    });
    await this.refresh();
    await this.conversation.inspector.refresh();
    return removed;
  }

  /// Searches the open tree for `query`; true when it could.
  async search(query: string): Promise<boolean> {
    const treeId = this.conversation.treeId;
    if (treeId === null || !query.trim()) return false;
    this.error = null;
    const results = await showingFailure(this, null, () => backend.treeSearch(treeId, query));
    if (results === null) return false;
    this.results = results;
    // The hits already chosen show as such.
    const settings = this.conversation.treeSettings;
    if ((await settings.load(treeId)) !== null) return true;
    this.error = settings.error;
    return false;
  }

  /// Adds a hit to the search slice of every plan of the tree, or takes it out again; true when
  /// it was saved.
  async toggleHit(nodeId: number): Promise<boolean> {
    const settings = this.conversation.treeSettings;
    if (!(await settings.toggleSearchHit(nodeId))) {
      this.error = settings.error;
      return false;
    }
    await this.conversation.inspector.refresh();
    return true;
  }
}
