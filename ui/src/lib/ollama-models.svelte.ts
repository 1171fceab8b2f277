// Settings → Local models (Ollama): the models a local Ollama server has, found when asked, and
// adding one of them to the models the person chooses from.
import { backend, showingFailure, type PinloomError } from "./backend";
import type { ModelProfile } from "./bindings";
import type { Conversation } from "./conversation.svelte";

export class OllamaModels {
  /// What the server answered last, as profiles ready to add.
  found = $state<ModelProfile[]>([]);
  error = $state<PinloomError | null>(null);
  private readonly conversation: Conversation;

  constructor(conversation: Conversation) {
    this.conversation = conversation;
  }

  /// Asks the Ollama server at `url` (its default address when blank) for its models; true when
  /// it answered, whether or not it has any.
  discover(url: string): Promise<boolean> {
    this.error = null;
    return showingFailure(this, false, async () => {
      this.found = await backend.ollamaModels(url.trim() || null);
      return true;
    });
  }

  /// Saves a found model as a profile, which the model chooser then offers; true when it was saved.
  async add(profile: ModelProfile): Promise<boolean> {
    this.error = null;
    const saved = await showingFailure(this, false, async () => {
      await backend.profileSave(profile);
      return true;
    });
    if (!saved) return false;
    await this.conversation.loadProfiles(this.conversation.profile);
    return true;
  }
}
