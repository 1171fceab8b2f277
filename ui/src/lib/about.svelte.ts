// Settings → About: this Pinloom's version, and where it keeps its data and logs.
import { backend, PinloomError } from "./backend";
import type { About } from "./bindings";

export class AboutPinloom {
  about = $state<About | null>(null);
  error = $state<PinloomError | null>(null);

  /// True when it could be read.
  async load(): Promise<boolean> {
    try {
      this.about = await backend.about();
      return true;
    } catch (thrown) {
      this.error = PinloomError.from(thrown);
      return false;
    }
  }
}
