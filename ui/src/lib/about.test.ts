import { describe, expect, it } from "vitest";

import { AboutPinloom } from "./about.svelte";
import { installFakeBackend } from "./fake-backend";

describe("AboutPinloom", () => {
  it("reads the version and where the data is, or says why it could not", async () => {
    const fake = installFakeBackend();
    const about = new AboutPinloom();
    expect(await about.load()).toBe(true);
    expect(about.about?.version).toBe("0.1.0");
    expect(about.about?.database).toBe("/data/pinloom.sqlite3");

    fake.failure = { code: "internal", message: "the data folder is gone" };
    const unread = new AboutPinloom();
    expect(await unread.load()).toBe(false);
    expect(unread.about).toBeNull();
    expect(unread.error?.message).toBe("the data folder is gone");
  });
});
