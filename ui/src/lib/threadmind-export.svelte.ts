// The thread through a message as ThreadMind markdown, put on the clipboard and kept on show
// to copy by hand where the clipboard is not available.
import { backend, PinloomError } from "./backend";

export class ThreadMindExport {
  /// The markdown of the last export.
  text = $state<string | null>(null);
  error = $state<string | null>(null);

  /// Exports the thread through `nodeId` and copies it; true when it was copied.
  async copy(nodeId: number): Promise<boolean> {
    this.error = null;
    let text: string;
    try {
      text = await backend.threadmindExport(nodeId);
    } catch (thrown) {
      this.error = PinloomError.from(thrown).message;
      return false;
    }
    this.text = text;
    try {
      await navigator.clipboard?.writeText(text);
      return true;
    } catch (thrown) {
      // The text is on show to copy by hand.
      this.error = `Not copied to the clipboard (${PinloomError.from(thrown).message}); select the text below instead.`;
      return false;
    }
  }
}
