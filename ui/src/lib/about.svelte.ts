// Settings → About: this Pinloom's version, and where it keeps its data and logs.
import { backend, showingFailure, type PinloomError } from "./backend";
import type { About } from "./bindings";

export class AboutPinloom {
  about = $state<About | null>(null);
  error = $state<PinloomError | null>(null);

  /// True when it could be read.
  load(): Promise<boolean> {
    return showingFailure(this, false, async () => {
      this.about = await backend.about();
      return true;
    });
  }
}
