import { beforeEach, describe, expect, it } from "vitest";

import type { ThreadMessage, TokenView } from "./bindings";
import { Conversation } from "./conversation.svelte";
import { installFakeBackend, type FakeState } from "./fake-backend";
import { choicesAt, percent, quoted, shade, tokenLabel, tokenTitle, TokenProbabilities } from "./token-view.svelte";
import { Workspace } from "./workspace.svelte";

let fake: FakeState;

beforeEach(() => {
  fake = installFakeBackend();
});

/// A buffer document of the person's opening and one continuation, open with a model chosen.
async function woven(): Promise<{ conversation: Conversation; tokens: TokenProbabilities }> {
  const workspace = new Workspace();
  await workspace.createTree("Sea", "buffer");
  const conversation = new Conversation();
  await conversation.open(workspace.open?.tree.id ?? -1);
  conversation.profile = "Local";
  fake.replies = [" The tide ran seaward."];
  await conversation.sending.add(0, "Once");
  await conversation.sending.continueDocument(0);
  return { conversation, tokens: new TokenProbabilities(conversation, 0) };
}

function pieceAt(conversation: Conversation, place: number): ThreadMessage {
  const piece = conversation.columns[0]?.view.messages[place];
  if (!piece) throw new Error(`no piece at ${place}`);
  return piece;
}

function shown(conversation: Conversation): string[] {
  return conversation.columns[0]?.view.messages.map(({ node: { message } }) => message.text) ?? [];
}

const seaward: TokenView = {
  text: " seaward",
  probability: 0.43,
  alternatives: [
    { text: " down", probability: 0.49 },
    { text: " seaward", probability: 0.43 },
    { text: " on", probability: 0.09 },
  ],
};

describe("token probabilities", () => {
  it("are worded with their odds and the others the model weighed", () => {
    expect(percent(0.43)).toBe("43%");
    expect(percent(0.001)).toBe("<1%");
    expect(percent(null)).toBe("?");
    expect(quoted(" down")).toBe('" down"');
    expect(quoted("\n")).toBe('"\\n"');
    expect(tokenTitle(seaward)).toBe('43% · also " down" 49%, " on" 9%');
    expect(tokenLabel(seaward)).toBe('token " seaward", 43%');
    expect(shade(1)).toBe(0);
    expect(shade(0)).toBeGreaterThan(shade(0.43));
    expect(choicesAt(seaward).map((choice) => [choice.text, choice.written])).toEqual([
      [" down", false],
      [" seaward", true],
      [" on", false],
    ]);
    // A token its server left out of its alternatives is put in at its own odds.
    const alone = { ...seaward, alternatives: seaward.alternatives.filter((other) => other.text !== " seaward") };
    expect(choicesAt(alone).map((choice) => choice.text)).toEqual([" down", " seaward", " on"]);
  });

  it("reads a continuation's tokens once, when shown, and keeps them", async () => {
    const { conversation, tokens } = await woven();
    const continuation = pieceAt(conversation, 1);
    expect(tokens.of(continuation)).toEqual({ kind: "off" });
    tokens.toggle();
    expect(tokens.of(continuation)).toEqual({ kind: "reading" });
    await tokens.load(continuation.node.message.id);
    await tokens.load(continuation.node.message.id);
    expect(fake.calls.filter((call) => call === "reply_tokens")).toHaveLength(1);
    const onShow = tokens.of(continuation);
    expect(onShow.kind).toBe("shown");
    if (onShow.kind === "shown") expect(onShow.tokens.map((token) => token.text)).toEqual([" The", " tide", " ran", " seaward."]);
    // The person's own piece has none to show.
    expect(tokens.of(pieceAt(conversation, 0))).toEqual({ kind: "off" });
  });

  it("says when a server reported none, or the tokens no longer spell the piece", async () => {
    const { conversation, tokens } = await woven();
    const continuation = pieceAt(conversation, 1);
    const id = continuation.node.message.id;
    tokens.toggle();
    fake.tokens.set(id, null);
    await tokens.load(id);
    expect(tokens.of(continuation)).toEqual({ kind: "none", handwritten: false });

    const other = new TokenProbabilities(conversation, 0);
    other.toggle();
    fake.tokens.set(id, [{ text: " The tide ebbed.", probability: 0.5, alternatives: [] }]);
    await other.load(id);
    expect(other.of(continuation)).toEqual({ kind: "mismatch" });
  });

  it("opens one token's alternatives at a time", async () => {
    const { conversation, tokens } = await woven();
    const continuation = pieceAt(conversation, 1);
    const id = continuation.node.message.id;
    tokens.toggle();
    await tokens.load(id);
    tokens.choose(id, 3);
    expect(tokens.openIn(continuation)?.token.text).toBe(" seaward.");
    tokens.choose(id, 3);
    expect(tokens.openIn(continuation)).toBeNull();
    tokens.choose(id, 1);
    tokens.toggle();
    expect(tokens.open).toBeNull();
  });

  it("branches at a token and has the chosen model continue the new branch, on show", async () => {
    const { conversation, tokens } = await woven();
    const original = pieceAt(conversation, 1).node.message.id;
    fake.replies = [" and the boats waited."];
    expect(await tokens.branch(original, 2, " down")).toBe(true);

    expect(shown(conversation)).toEqual(["Once", " The tide down", " and the boats waited."]);
    const branch = pieceAt(conversation, 1);
    expect(branch.node.editedFrom).toBe(original);
    expect(branch.alternatives).toEqual([original, branch.node.message.id]);
    // Continued as Continue does: from the document's end, now the branch.
    expect(pieceAt(conversation, 2).node.message.parentId).toBe(branch.node.message.id);
    expect(conversation.inspector.focus).toBe(pieceAt(conversation, 2).node.message.id);
    expect(tokens.branching).toBe(false);
    expect(tokens.error).toBeNull();

    // The branch is the person's text: no server reported its tokens.
    tokens.toggle();
    await tokens.load(branch.node.message.id);
    expect(tokens.of(branch)).toEqual({ kind: "none", handwritten: true });
  });

  it("keeps a refused branch as its error and continues nothing", async () => {
    const { conversation, tokens } = await woven();
    const original = pieceAt(conversation, 1).node.message.id;
    fake.replies = [" never sent."];
    expect(await tokens.branch(original, 9, " down")).toBe(false);
    expect(tokens.error?.code).toBe("invalidInput");
    expect(shown(conversation)).toEqual(["Once", " The tide ran seaward."]);
    expect(fake.replies).toEqual([" never sent."]);
  });
});
