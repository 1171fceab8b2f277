// What a failed request means for the person, in the window's own words: what happened to their
// message and what to do. The provider's or the system's own text stays available behind a
// disclosure; it is for reading when the first line is not enough.
import type { ApiError } from "./bindings";

/// The window's words for `error` met while `model` was asked; null where the message is
/// already the window's own (a refusal of what was typed, a stop, something gone).
export function inOwnWords(error: ApiError, model: string): string | null {
  const who = model || "The model";
  switch (error.code) {
    case "providerKey":
      return `${who} needs a key that is missing, was refused, or cannot be read on this system. Your message is saved: paste a key in Settings → Provider keys (or set the provider's key variable before starting Pinloom), or choose a model that can answer now, then press Answer again.`;
    case "providerUnavailable":
      return `${who} could not be reached or is busy. Your message is saved: press Answer again in a moment, or choose another model.`;
    case "providerRefused":
      return `${who} refused the request. Your message is saved; the details say why (an unknown model name, a context too long for it, no credit left).`;
    case "contextOverBudget":
      return `The context does not fit ${who}'s budget and this tree does not cut it. Open the inspector to exclude what it lists, or choose a model with a larger window.`;
    case "databaseUnusable":
      return "Pinloom cannot use its database; nothing more was written. The details say why and what to do.";
    case "internal":
      return "Something went wrong inside Pinloom. What was saved is kept; the details say what failed.";
    case "invalidInput":
    case "notFound":
    case "cancelled":
    case "syncFailed":
      return null;
  }
}
