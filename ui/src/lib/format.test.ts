import { describe, expect, it } from "vitest";

import { numberOrNull, plural, relativeTime } from "./format";

describe("relativeTime", () => {
  const now = Date.UTC(2026, 10, 22, 12, 0, 0);

  it("says just now under a minute", () => {
    expect(relativeTime(now - 59_000, now)).toBe("just now");
  });

  it("uses the largest whole unit", () => {
    expect(relativeTime(now - 3 * 60_000, now)).toBe("3 minutes ago");
    expect(relativeTime(now - 2 * 3600_000, now)).toBe("2 hours ago");
    expect(relativeTime(now - 24 * 3600_000, now)).toBe("yesterday");
  });
});

describe("plural", () => {
  it("agrees with the count", () => {
    expect(plural(1, "message")).toBe("1 message");
    expect(plural(0, "message")).toBe("0 messages");
    expect(plural(12_000, "message")).toBe("12,000 messages");
  });
});

describe("numberOrNull", () => {
  it("reads an empty field as unset and anything else as its number", () => {
    expect(numberOrNull("")).toBeNull();
    expect(numberOrNull("  ")).toBeNull();
    expect(numberOrNull("0")).toBe(0);
    expect(numberOrNull(" 25 ")).toBe(25);
  });
});
