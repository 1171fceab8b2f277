// Settings → Models from imported files: a profile that came with an imported file is data until
// the person enables it (then it can be chosen and sent to) or deletes it. The lists are the
// conversation's, read again after either.
import { attempt, backend, type PinloomError } from "./backend";
import type { Conversation } from "./conversation.svelte";

export class ImportedProfiles {
  error = $state<PinloomError | null>(null);
  private readonly conversation: Conversation;

  constructor(conversation: Conversation) {
    this.conversation = conversation;
  }

  /// Enables imported profile `name`; true when it was enabled.
  enable(name: string): Promise<boolean> {
    return this.change(() => backend.profileEnable(name));
  }

  /// Deletes imported profile `name`; true when it was deleted.
  remove(name: string): Promise<boolean> {
    return this.change(() => backend.profileDelete(name));
  }

  private async change(write: () => Promise<unknown>): Promise<boolean> {
    if (!(await attempt(this, write))) return false;
    await this.conversation.loadProfiles(this.conversation.profile);
    return true;
  }
}
