import { describe, expect, it } from "vitest";

import { PinloomError } from "./backend";
import { inOwnWords } from "./failure-words";

describe("inOwnWords", () => {
  it("says what to do about a missing key, and leaves the system's words for the details", () => {
    const error = new PinloomError({
      code: "providerKey",
      message: "The OS keyring is not available (Platform secure storage failure: DBus error) … Set ANTHROPIC_API_KEY",
    });
    const words = inOwnWords(error, "claude-sonnet-4 (Anthropic)");
    expect(words).toMatch(/^claude-sonnet-4 \(Anthropic\) needs a key/);
    expect(words).toContain("Settings → Provider keys");
    expect(words).not.toContain("DBus");
  });

  it("keeps the window's own refusals as they are", () => {
    expect(inOwnWords(new PinloomError({ code: "invalidInput", message: "the message is empty" }), "Local")).toBeNull();
    expect(inOwnWords(new PinloomError({ code: "cancelled", message: "stopped" }), "Local")).toBeNull();
  });

  it("offers to answer again when a provider is busy, and the inspector when the context does not fit", () => {
    expect(inOwnWords(new PinloomError({ code: "providerUnavailable", message: "429" }), "Local")).toContain("Answer again");
    expect(inOwnWords(new PinloomError({ code: "contextOverBudget", message: "over" }), "")).toContain("The model's budget");
  });
});
