// The line at the top of Settings: what the last action in any of its sections did, or why a
// section could not read what it shows. The sections share it, so one action's word replaces
// another's, as one panel's would.
import type { PinloomError } from "./backend";

export class SettingsNotice {
  message = $state<string | null>(null);
  error = $state<PinloomError | null>(null);

  /// An action begins: what the last one said goes.
  clear(): void {
    this.message = null;
    this.error = null;
  }

  /// An action ended: `said` when it succeeded, else why it failed.
  tell(succeeded: boolean, said: string | null, failure: PinloomError | null): void {
    if (succeeded) this.message = said;
    else this.error = failure;
  }
}
