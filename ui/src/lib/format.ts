// Small pure formatters the views share.

const units: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 24 * 3600 * 1000],
  ["month", 30 * 24 * 3600 * 1000],
  ["day", 24 * 3600 * 1000],
  ["hour", 3600 * 1000],
  ["minute", 60 * 1000],
];

/// "3 minutes ago", "yesterday", or "just now" for anything under a minute.
export function relativeTime(thenMs: number, nowMs: number, locale = "en"): string {
  const elapsed = nowMs - thenMs;
  const format = new Intl.RelativeTimeFormat(locale, { numeric: "auto" });
  for (const [unit, size] of units) {
    if (Math.abs(elapsed) >= size) return format.format(-Math.round(elapsed / size), unit);
  }
  return "just now";
}

/// A number field's value: empty is "unset" (the default applies).
export function numberOrNull(text: string): number | null {
  return text.trim() === "" ? null : Number(text);
}

/// The trade-off of truncateMiddle's step, said where the step is set (a model's Budget, a tree's
/// settings).
export const STEP_TRADE_OFF =
  "A larger step keeps the start of each request the same from one send to the next, so the provider's prompt cache keeps hitting, at the cost of tokens left unused; 0 fills the budget";

/// "1 message", "12 messages".
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString("en")} ${count === 1 ? one : many}`;
}
