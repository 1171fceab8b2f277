// A loom's look under a continuation: the tokens it was generated as, each with how likely the
// model found it and what it might have written instead, and a branch at any of them. Tokens
// never change once written, so each piece's are read once and kept.
import { backend, showingFailure, type PinloomError } from "./backend";
import type { Conversation } from "./conversation.svelte";
import type { ReplyTokens, ThreadMessage, TokenAlternative, TokenView } from "./bindings";

/// What a piece shows of its tokens: nothing (they are off, or it is the person's); they are
/// being read; its server reported none; they spell another text than the piece's (a token ended
/// inside a character: the backend says so); or the tokens themselves.
export type TokensOnShow =
  | { kind: "off" }
  | { kind: "reading" }
  | { kind: "none"; handwritten: boolean }
  | { kind: "mismatch" }
  | { kind: "shown"; tokens: TokenView[] };

/// A choice at a token's place, as the list of alternatives offers it.
export type TokenChoice = TokenAlternative & { written: boolean };

/// The shading of the most unlikely token, in percent of the colour: enough to see at a glance,
/// little enough that the text over it keeps its contrast in both themes.
const DARKEST_SHADE = 35;
/// How many of the others a token's tooltip names.
const OTHERS_NAMED = 3;

/// "43%", "<1%" for a token the model all but ruled out, "?" when the server gave no figure.
export function percent(probability: number | null): string {
  if (probability === null) return "?";
  if (probability > 0 && probability < 0.005) return "<1%";
  return `${Math.round(probability * 100)}%`;
}

/// A token in quotes, so its spaces and line breaks are visible: `" down"`, `"\n"`.
export function quoted(text: string): string {
  return JSON.stringify(text);
}

/// How strongly a token is shaded, in percent: none for a sure one, the most for an unlikely one.
export function shade(probability: number | null): number {
  if (probability === null) return 0;
  return Math.round((1 - Math.min(1, Math.max(0, probability))) * DARKEST_SHADE);
}

/// A token's tooltip: `43% · also " down" 21%, " on" 9%`.
export function tokenTitle(token: TokenView): string {
  const others = token.alternatives.filter((other) => other.text !== token.text).slice(0, OTHERS_NAMED);
  const also = others.map((other) => `${quoted(other.text)} ${percent(other.probability)}`).join(", ");
  return also ? `${percent(token.probability)} · also ${also}` : percent(token.probability);
}

/// A token's name for a screen reader: `token " seaward", 43%`.
export function tokenLabel(token: TokenView): string {
  return `token ${quoted(token.text)}, ${percent(token.probability)}`;
}

/// The choices at a token's place, most likely first, the token written there among them (a
/// server that left it out of its alternatives has it put in at its own probability).
export function choicesAt(token: TokenView): TokenChoice[] {
  const choices = token.alternatives.map((other) => ({ ...other, written: other.text === token.text }));
  if (choices.some((choice) => choice.written)) return choices;
  const written = { text: token.text, probability: token.probability, written: true };
  const at = choices.findIndex((choice) => (choice.probability ?? 0) < (token.probability ?? 0));
  return at < 0 ? [...choices, written] : [...choices.slice(0, at), written, ...choices.slice(at)];
}

export class TokenProbabilities {
  /// Whether the chosen piece shows as its tokens.
  shown = $state(false);
  /// The token whose alternatives are open: the piece, and the token's place in it.
  open = $state<{ nodeId: number; index: number } | null>(null);
  /// A branch is being made (its continuation may stream for a while after).
  branching = $state(false);
  error = $state<PinloomError | null>(null);
  /// Each piece's tokens once read, as the backend judged them: replaced whole, never changed in
  /// place, and held raw (a long continuation has thousands of tokens).
  private read = $state.raw(new Map<number, ReplyTokens>());
  private readonly reading = new Set<number>();

  constructor(
    private readonly conversation: Conversation,
    /// The column whose document the pieces are in.
    private readonly index: number,
  ) {}

  toggle(): void {
    this.shown = !this.shown;
    this.open = null;
    this.error = null;
  }

  /// Reads the tokens of piece `nodeId`, unless they are read already or being read.
  async load(nodeId: number): Promise<void> {
    if (this.read.has(nodeId) || this.reading.has(nodeId)) return;
    this.reading.add(nodeId);
    try {
      await showingFailure(this, undefined, async () => {
        const tokens = await backend.replyTokens(nodeId);
        this.read = new Map(this.read).set(nodeId, tokens);
      });
    } finally {
      this.reading.delete(nodeId);
    }
  }

  /// What `piece` shows of its tokens now.
  of(piece: ThreadMessage): TokensOnShow {
    const { message } = piece.node;
    if (!this.shown || message.author !== "model") return { kind: "off" };
    if (!this.read.has(message.id)) return { kind: "reading" };
    const tokens = this.read.get(message.id) ?? { kind: "none" };
    // A branch made at a token, or a rewrite, is the person's text: no server reported it.
    if (tokens.kind === "none") return { kind: "none", handwritten: piece.node.editedFrom !== null };
    return tokens;
  }

  /// The token of `piece` whose alternatives are open, and its place in the piece, if one is.
  openIn(piece: ThreadMessage): { token: TokenView; index: number } | null {
    const shown = this.of(piece);
    const open = this.open;
    if (shown.kind !== "shown" || open?.nodeId !== piece.node.message.id) return null;
    const token = shown.tokens[open.index];
    return token ? { token, index: open.index } : null;
  }

  /// Opens the alternatives of token `index` of piece `nodeId`, or closes them when open.
  choose(nodeId: number, index: number): void {
    const open = this.open;
    this.open = open?.nodeId === nodeId && open.index === index ? null : { nodeId, index };
  }

  close(): void {
    this.open = null;
  }

  /// Branches piece `nodeId` at its token `index` with `alternative` in that token's place, shows
  /// the new branch, and has the chosen model continue it as Continue does the document's end.
  /// False when no branch was made (the error says why) or its continuation failed (the column
  /// says why).
  async branch(nodeId: number, index: number, alternative: string): Promise<boolean> {
    if (this.branching) return false;
    this.open = null;
    this.error = null;
    this.branching = true;
    try {
      const branched = await showingFailure(this, false, async () => {
        const branch = await backend.replyBranchAtToken(nodeId, index, alternative);
        this.conversation.onchanged();
        // The branch has nothing after it yet: the document now ends with it, where Continue
        // goes on from.
        await this.conversation.reload(this.index, branch.message.id);
        return true;
      });
      if (!branched) return false;
      return await this.conversation.sending.continueDocument(this.index);
    } finally {
      this.branching = false;
    }
  }
}
