// The thread through a message as ThreadMind markdown, put on the clipboard and kept on show
// to copy by hand where the clipboard is not available.
import { backend, showingFailure, type PinloomError } from "./backend";

export class ThreadMindExport {
  /// The markdown of the last export.
  text = $state<string | null>(null);
  error = $state<string | null>(null);

  /// Exports the thread through `nodeId` and copies it; true when it was copied.
  async copy(nodeId: number): Promise<boolean> {
    this.error = null;
    const text = await showingFailure((error) => (this.error = error.message), null, () => backend.threadmindExport(nodeId));
    if (text === null) return false;
    this.text = text;
    // The text is on show to copy by hand.
    const notCopied = (error: PinloomError) => {
      this.error = `Not copied to the clipboard (${error.message}); select the text below instead.`;
    };
    return showingFailure(notCopied, false, async () => {
      await navigator.clipboard?.writeText(text);
      return true;
    });
  }
}
