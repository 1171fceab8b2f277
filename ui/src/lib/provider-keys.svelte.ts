// Settings → Provider keys: where each provider's key comes from (the OS keyring, or an
// environment variable, which wins), storing and removing keys, and a round trip to a model to
// test the connection.
import { attempt, backend, showingFailure, type PinloomError } from "./backend";
import type { ConnectionCheck, KeyStatus } from "./bindings";

export class ProviderKeys {
  keys = $state<KeyStatus[]>([]);
  error = $state<PinloomError | null>(null);

  /// Reads where each provider's key is; true when it could be read.
  load(): Promise<boolean> {
    return showingFailure(this, false, async () => {
      this.keys = await backend.keysStatus();
      return true;
    });
  }

  /// Stores `key` for `provider` in the OS keyring; true when it was stored and the keys read again.
  save(provider: string, key: string): Promise<boolean> {
    return this.change(() => backend.keySave(provider, key));
  }

  /// Removes `provider`'s key from the keyring; true when it was removed and the keys read again.
  forget(provider: string): Promise<boolean> {
    return this.change(() => backend.keyForget(provider));
  }

  /// Asks model `profile` for a short answer; null when it did not answer (see `error`).
  check(profile: string): Promise<ConnectionCheck | null> {
    this.error = null;
    return showingFailure(this, null, () => backend.connectionCheck(profile));
  }

  private async change(write: () => Promise<unknown>): Promise<boolean> {
    return (await attempt(this, write)) && this.load();
  }
}
