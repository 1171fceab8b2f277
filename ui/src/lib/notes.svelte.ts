// The notes under one message of a thread column: which message's notes are open, what they
// are, and what went wrong, in one place. The column draws them and nothing else keeps a copy.
import { backend, showingFailure, type PinloomError } from "./backend";
import type { NoteView } from "./bindings";

export class MessageNotes {
  /// The message whose notes are open, or none.
  of = $state<number | null>(null);
  list = $state<NoteView[]>([]);
  /// The last failure, in words to show beside the notes.
  error = $state<string | null>(null);

  /// Opens the notes of `nodeId`, or closes them when they are the ones open.
  async toggle(nodeId: number): Promise<void> {
    if (this.of === nodeId) {
      this.of = null;
      return;
    }
    this.of = nodeId;
    this.list = [];
    await this.read(nodeId, "Could not read the notes");
  }

  /// Adds a note to the open message; true when it was saved (the context may have changed).
  async add(text: string, included: boolean): Promise<boolean> {
    const nodeId = this.of;
    if (nodeId === null) return false;
    const added = await showingFailure(this.saying("Could not add the note"), false, async () => {
      await backend.noteAdd(nodeId, text, included);
      return true;
    });
    if (!added) return false;
    await this.read(nodeId, "The note was added, but the notes could not be read again");
    return true;
  }

  /// Puts a note in the contexts of its message or takes it out; true when it was saved.
  async setIncluded(note: NoteView, included: boolean): Promise<boolean> {
    const changed = await showingFailure(this.saying("Could not change the note"), false, async () => {
      await backend.noteInclude(note.id, included);
      return true;
    });
    if (!changed) return false;
    if (this.of !== null) await this.read(this.of, "The note was changed, but the notes could not be read again");
    return true;
  }

  private async read(nodeId: number, failure: string): Promise<void> {
    await showingFailure(this.saying(failure), undefined, async () => {
      const list = await backend.notesList(nodeId);
      // A reply for notes closed or switched meanwhile is not shown.
      if (this.of === nodeId) {
        this.list = list;
        this.error = null;
      }
    });
  }

  /// Shows a failure as `what` went wrong, then the backend's own words.
  private saying(what: string): (error: PinloomError) => void {
    return (error) => {
      this.error = `${what}: ${error.message}`;
    };
  }
}
