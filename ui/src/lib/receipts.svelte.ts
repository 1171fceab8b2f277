// A reply's receipt: what its request was planned to hold, what was sent, what the provider
// counted; and, when asked, how the request differed from the one before it on the path. Read
// when a receipt is opened, since most replies are never asked about.
import { backend, showingFailure, type PinloomError } from "./backend";
import type { Receipt, RequestDiff } from "./bindings";

export class ReplyReceipt {
  /// Undefined while it is read; null for a reply written before Pinloom kept receipts.
  receipt = $state<Receipt | null | undefined>(undefined);
  error = $state<PinloomError | null>(null);
  diff = $state<RequestDiff | null>(null);
  diffError = $state<PinloomError | null>(null);
  /// The reply whose receipt this is.
  private nodeId: number | null = null;

  /// Reads the receipt of reply `nodeId`; true when it could be read.
  async load(nodeId: number): Promise<boolean> {
    this.nodeId = nodeId;
    this.receipt = undefined;
    this.error = null;
    this.diff = null;
    this.diffError = null;
    const stillAsked = (error: PinloomError) => {
      if (this.nodeId === nodeId) this.error = error;
    };
    return showingFailure(stillAsked, false, async () => {
      const loaded = await backend.replyReceipt(nodeId);
      // Another reply's receipt was asked for meanwhile: it stands.
      if (this.nodeId === nodeId) this.receipt = loaded;
      return true;
    });
  }

  /// Compares the reply's request with the one before it on the path; true when it could.
  async compare(): Promise<boolean> {
    const nodeId = this.nodeId;
    if (nodeId === null) return false;
    this.diffError = null;
    const stillAsked = (error: PinloomError) => {
      if (this.nodeId === nodeId) this.diffError = error;
    };
    return showingFailure(stillAsked, false, async () => {
      const diff = await backend.requestDiff(nodeId);
      if (this.nodeId === nodeId) this.diff = diff;
      return true;
    });
  }
}
