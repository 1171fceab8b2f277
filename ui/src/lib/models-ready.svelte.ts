// Which models can answer now, said before the first send: saved profiles whose key is set or
// whose local server answers, those that cannot yet (and why), and local servers' models found
// on their usual ports, to add with one click.
import { attempt, backend, showingFailure, type PinloomError } from "./backend";
import type { FoundModel, ModelsReady, WaitingModel } from "./bindings";

export class ModelsReadiness {
  ready = $state<string[]>([]);
  waiting = $state<WaitingModel[]>([]);
  found = $state<FoundModel[]>([]);
  /// Set once a look has finished: before it, nothing is said about any model.
  looked = $state(false);
  looking = $state(false);
  error = $state<PinloomError | null>(null);

  /// Looks again: keys, the saved local profiles' servers and the usual ports.
  async load(): Promise<boolean> {
    this.looking = true;
    this.error = null;
    try {
      return await showingFailure(this, false, async () => {
        this.show(await backend.modelsReady());
        this.looked = true;
        return true;
      });
    } finally {
      this.looking = false;
    }
  }

  /// Why profile `name` cannot answer yet; null when it can, or nothing is known of it.
  reasonFor(name: string): string | null {
    return this.waiting.find((model) => model.profile === name)?.reason ?? null;
  }

  /// Saves a found model as a profile; true when it was saved.
  add(found: FoundModel): Promise<boolean> {
    return attempt(this, () => backend.profileSave(found.profile));
  }

  private show(answer: ModelsReady): void {
    this.ready = answer.ready;
    this.waiting = answer.waiting;
    this.found = answer.found;
  }
}
