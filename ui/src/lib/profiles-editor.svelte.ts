// The budget panel's profile being edited: a copy of the chosen model's profile, what its fields
// may name, and a live preview of what the focused thread would keep and cut under the edited
// numbers, before anything is saved. Saving or deleting changes the conversation's profiles.
import { backend, showingFailure, type PinloomError } from "./backend";
import type { AssemblySettings, ModelProfile, PlanView, Prices, SamplingSettings } from "./bindings";
import type { Conversation } from "./conversation.svelte";

/// The profile being edited, with its optional groups filled in so the form can bind to them.
export type Editing = ModelProfile & { sampling: SamplingSettings; assembly: AssemblySettings };

export class ProfileEditor {
  /// What the fields may name, as the application layer accepts them.
  providers = $state<string[]>([]);
  tokenizers = $state<string[]>([]);
  edited = $state<Editing | null>(null);
  preview = $state<PlanView | null>(null);
  error = $state<PinloomError | null>(null);
  /// The profile as edited was saved (until the next edit).
  saved = $state(false);
  /// Whether the person chose the counting in this form; until then it follows the model id typed
  /// (a Llama 3 or Qwen model on a local server is counted by its own vocabulary).
  countingChosen = false;
  /// Previews are asked for on every keystroke; only the newest answer is shown, whatever order
  /// they come back in.
  private asked = 0;
  /// Not read reactively: a form begun stays the person's whatever the profiles do.
  private started = false;
  private readonly conversation: Conversation;

  constructor(conversation: Conversation) {
    this.conversation = conversation;
  }

  /// Reads what the fields may name; true when it could be read.
  loadChoices(): Promise<boolean> {
    return showingFailure(this, false, async () => {
      const choices = await backend.profileChoices();
      this.providers = choices.providers;
      this.tokenizers = choices.tokenizers;
      return true;
    });
  }

  /// Starts from the chosen model's profile, once; after that the form is the person's. True once
  /// it has started.
  begin(): boolean {
    if (this.started) return true;
    const chosen = this.conversation.profiles.find((profile) => profile.name === this.conversation.profile);
    if (!chosen) return false;
    // One reply limit: a profile whose longest reply was set apart from its reserve (two fields
    // where the first silently won) shows the one in force, and saves it as the reserve.
    const sampling = { ...(chosen.sampling ?? {}) };
    const reserve = sampling.maxOutputTokens ?? chosen.reserve;
    sampling.maxOutputTokens = null;
    this.edited = { ...chosen, reserve, sampling, assembly: { ...(chosen.assembly ?? {}) } };
    this.started = true;
    return true;
  }

  /// A price typed into the form; both prices empty means the model has none (a local model).
  setPrice(which: "inputPerMillion" | "outputPerMillion", text: string): void {
    if (!this.edited) return;
    // A price left empty is left out rather than sent as null: it counts as free.
    const prices: Prices = { ...(this.edited.prices ?? {}) };
    if (text === "") delete prices[which];
    else prices[which] = Number(text);
    this.edited.prices = prices.inputPerMillion == null && prices.outputPerMillion == null ? null : prices;
  }

  /// Plans the focused message's context under the profile as edited; true when the newest
  /// preview is on show (false too when it was overtaken by a newer one, or nothing is focused).
  async refresh(): Promise<boolean> {
    this.saved = false;
    const focus = this.conversation.inspector.focus;
    if (!this.edited || focus === null) return false;
    const ask = ++this.asked;
    const profile = $state.snapshot(this.edited);
    // An overtaken preview's failure is not shown either: the newest stands.
    const newest = (error: PinloomError) => {
      if (ask !== this.asked) return;
      this.preview = null;
      this.error = error;
    };
    return showingFailure(newest, false, async () => {
      const plan = await backend.contextPreviewUnsaved(focus, profile);
      if (ask !== this.asked) return false;
      this.preview = plan;
      this.error = null;
      return true;
    });
  }

  /// Sets the counting the model id typed suggests, unless the person chose one.
  async suggestCounting(): Promise<void> {
    if (!this.edited || this.countingChosen) return;
    const { provider, modelId } = this.edited;
    await showingFailure(this, undefined, async () => {
      const suggested = await backend.profileCounting(provider, modelId);
      // Only for the model still typed, and only if the person has not chosen meanwhile.
      const edited = this.edited;
      if (suggested && edited && !this.countingChosen && edited.provider === provider && edited.modelId === modelId) {
        edited.tokenizer = suggested;
      }
    });
  }

  /// Saves the profile as edited (a new name saves a new one) and chooses it; true when saved.
  async save(): Promise<boolean> {
    const edited = this.edited;
    if (!edited) return false;
    const saved = await showingFailure(this, false, async () => {
      await backend.profileSave($state.snapshot(edited));
      return true;
    });
    if (!saved) return false;
    await this.conversation.loadProfiles(edited.name);
    await this.conversation.inspector.refresh();
    this.saved = true;
    this.error = null;
    return true;
  }

  /// Deletes the stored profile being edited; true when it was deleted.
  async remove(): Promise<boolean> {
    const name = this.edited?.name;
    if (name === undefined) return false;
    const deleted = await showingFailure(this, false, async () => {
      await backend.profileDelete(name);
      return true;
    });
    if (!deleted) return false;
    await this.conversation.loadProfiles(null);
    return true;
  }
}
