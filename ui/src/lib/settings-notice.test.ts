import { describe, expect, it } from "vitest";

import { PinloomError } from "./backend";
import { SettingsNotice } from "./settings-notice.svelte";

describe("SettingsNotice", () => {
  it("says how the last action ended, and forgets it when the next begins", () => {
    const notice = new SettingsNotice();
    const refused = new PinloomError({ code: "invalidInput", message: "the key is empty" });
    notice.tell(false, "Key stored in the OS keyring.", refused);
    expect([notice.message, notice.error?.message]).toEqual([null, "the key is empty"]);
    notice.clear();
    notice.tell(true, "Key removed.", null);
    expect([notice.message, notice.error]).toEqual(["Key removed.", null]);
  });
});
