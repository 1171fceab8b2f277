// The request behind the inspector's plan, shown when the person asks. A preview leaves its body
// out (it is as long as the whole context: 600 KB for a long thread, and the preview is read
// again on every change), so it is read here only while shown; a sent request's plan carries its
// own body, which is shown as it was sent.
import { backend, showingFailure, type PinloomError } from "./backend";
import type { PlanView, RequestView } from "./bindings";

export class ShownRequest {
  /// Whether the person asked to see the request.
  open = $state(false);
  /// The request of the plan on show, once read.
  request = $state.raw<RequestView | null>(null);
  error = $state<PinloomError | null>(null);
  /// The plan whose request this is.
  private plan: PlanView | null = null;

  /// The inspector now shows `plan`: its request is read if the request is open.
  async showing(plan: PlanView | null): Promise<void> {
    this.plan = plan;
    this.request = null;
    this.error = null;
    if (this.open) await this.read();
  }

  /// Shows the request, or hides it again.
  async toggle(): Promise<void> {
    this.open = !this.open;
    if (this.open && this.request === null) await this.read();
  }

  private async read(): Promise<void> {
    const plan = this.plan;
    // A refused plan has no request: the inspector says so instead.
    if (!plan || plan.refusal) return;
    if (plan.body !== null) {
      this.request = { url: plan.url, body: plan.body };
      return;
    }
    const stillShown = (error: PinloomError) => {
      if (this.plan === plan) this.error = error;
    };
    await showingFailure(stillShown, undefined, async () => {
      const request = await backend.contextRequest(plan.nodeId, plan.profile);
      // Another plan came meanwhile: its own read shows its request.
      if (this.plan === plan) this.request = request;
    });
  }
}
