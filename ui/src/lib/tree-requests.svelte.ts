// The requests Pinloom made on its own for the open tree (the summaries of a pin's ancestors,
// their condensations, compactions, suggested pin results): what each was for, the model asked, the tokens planned and counted, what
// it cost, when and how long, and how it ended. Bodies can be long, so the list comes without
// them and one is read when the person opens it. Beside them, what the whole tree cost.
import { backend, showingFailure, type PinloomError } from "./backend";
import type { BackgroundRequestView, TreeSpending } from "./bindings";
import { plural } from "./format";

/// How many of the newest requests the list reads.
export const REQUESTS_LISTED = 200;

/// In words, what a request served: "summary of the main thread up to #12".
export function describeServed(request: BackgroundRequestView): string {
  const thread = request.pinId === null ? "the main thread" : `pin ${request.pinId}`;
  const upTo = request.upTo === null ? "" : ` up to #${request.upTo}`;
  const kind = request.kind === "pinResult" ? "suggested result" : request.kind;
  return `${kind} of ${thread}${upTo}`;
}

/// Its tokens: planned by Pinloom, and counted by the provider when it said.
export function describeTokens(request: BackgroundRequestView): string {
  const planned = `${request.plannedTokens.toLocaleString("en")} planned`;
  if (request.promptTokens === null) return `${planned}, not counted by the provider`;
  const reply = request.replyTokens === null ? "" : ` + ${request.replyTokens.toLocaleString("en")} reply`;
  return `${planned}, counted ${request.promptTokens.toLocaleString("en")}${reply}`;
}

/// Its cost: dollars to four places, or why there is no figure.
export function describeCost(costUsd: number | null): string {
  return costUsd === null ? "no price set" : `$${costUsd.toFixed(4)}`;
}

/// The chat messages of a request body as "role: content" blocks; the body itself when it is
/// not a chat request (a completion's prompt, say).
export function readableBody(body: string): string {
  try {
    const parsed = JSON.parse(body) as { messages?: { role?: string; content?: unknown }[]; prompt?: unknown };
    if (Array.isArray(parsed.messages)) {
      return parsed.messages
        .map((message) => `${message.role ?? "?"}: ${typeof message.content === "string" ? message.content : JSON.stringify(message.content, null, 2)}`)
        .join("\n\n");
    }
    if (typeof parsed.prompt === "string") return parsed.prompt;
    return JSON.stringify(parsed, null, 2);
  } catch {
    // Not JSON (a provider's own format, say): nothing failed, it is shown as it was sent.
    return body;
  }
}

/// What the whole tree cost, replies and requests made on their own, in one sentence.
export function describeSpending(spending: TreeSpending): string {
  // Dollars cross as `number | null` (a sum that is not a number would be sent as null).
  const priced = (count: number, withPrice: number, usd: number | null, what: string) =>
    withPrice === 0 ? `${what} (no price set)` : `${what} $${(usd ?? 0).toFixed(4)}${withPrice < count ? ` (the ${withPrice} with a price)` : ""}`;
  return `This tree cost $${(spending.totalUsd ?? 0).toFixed(4)} in all: ${priced(spending.replies, spending.repliesPriced, spending.repliesUsd, plural(spending.replies, "reply", "replies"))}, ${priced(spending.background, spending.backgroundPriced, spending.backgroundUsd, plural(spending.background, "request"))} made on their own.`;
}

export class TreeRequests {
  requests = $state<BackgroundRequestView[]>([]);
  /// What the tree cost in all, replies included.
  spending = $state<TreeSpending | null>(null);
  loaded = $state(false);
  error = $state<PinloomError | null>(null);
  /// The request opened, its body read; and the failure to read it.
  opened = $state<BackgroundRequestView | null>(null);
  openError = $state<PinloomError | null>(null);
  /// The newest load asked for: an older answer arriving late is dropped.
  private asked = 0;

  constructor(readonly treeId: number) {}

  /// Reads the tree's newest requests.
  async load(): Promise<void> {
    const asked = ++this.asked;
    const newest = (error: PinloomError) => {
      if (asked === this.asked) this.error = error;
    };
    try {
      await showingFailure(newest, undefined, async () => {
        const [requests, spending] = await Promise.all([
          backend.requestsList(this.treeId, REQUESTS_LISTED),
          backend.treeSpending(this.treeId),
        ]);
        if (asked !== this.asked) return;
        this.requests = requests;
        this.spending = spending;
        this.error = null;
      });
    } finally {
      if (asked === this.asked) this.loaded = true;
    }
  }

  /// Opens request `id` with its body; opening the one open closes it.
  async open(id: number): Promise<void> {
    this.openError = null;
    if (this.opened?.id === id) {
      this.opened = null;
      return;
    }
    const unread = (error: PinloomError) => {
      this.opened = null;
      this.openError = error;
    };
    await showingFailure(unread, undefined, async () => {
      this.opened = await backend.requestRead(id);
    });
  }

  /// What the listed requests add up to: how many, how many failed, the tokens planned and the
  /// dollars spent (of those with a price; `priced` says how many had one).
  get totals(): { count: number; failed: number; planned: number; costUsd: number; priced: number } {
    let failed = 0;
    let planned = 0;
    let costUsd = 0;
    let priced = 0;
    for (const request of this.requests) {
      if (request.failure !== null) failed++;
      planned += request.plannedTokens;
      if (request.costUsd !== null) {
        costUsd += request.costUsd;
        priced++;
      }
    }
    return { count: this.requests.length, failed, planned, costUsd, priced };
  }

  /// The totals in one line.
  get summary(): string {
    const { count, failed, planned, costUsd, priced } = this.totals;
    if (count === 0) return "Pinloom has made no request on its own in this tree yet.";
    const failures = failed === 0 ? "" : `, ${failed} failed`;
    const cost = priced === 0 ? "no price set" : `$${costUsd.toFixed(4)}${priced < count ? ` for the ${priced} with a price` : ""}`;
    return `${plural(count, "request")}${failures} · ${planned.toLocaleString("en")} tokens planned · ${cost}`;
  }
}
