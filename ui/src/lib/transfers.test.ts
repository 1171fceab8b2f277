import { beforeEach, describe, expect, it } from "vitest";

import { installFakeBackend, type FakeState } from "./fake-backend";
import { fileName, progressShown } from "./transfers.svelte";
import { Workspace } from "./workspace.svelte";

let fake: FakeState;

beforeEach(() => {
  fake = installFakeBackend();
});

describe("progressShown", () => {
  it("measures each stage in what it counts, and says so", () => {
    const mb = 1024 * 1024;
    expect(progressShown({ stage: "reading", bytes: 3 * mb, total: 12 * mb })).toEqual({
      text: "Reading the file: 3.0 of 12.0 MB",
      value: 3 * mb,
      max: 12 * mb,
    });
    expect(progressShown({ stage: "checked", total: 10_200 })).toEqual({
      text: "Checked 10,200 messages; writing them",
      value: 0,
      max: 10_200,
    });
    expect(progressShown({ stage: "writing", messages: 4_000, total: 10_200 })).toEqual({
      text: "Writing 4,000 of 10,200 messages",
      value: 4_000,
      max: 10_200,
    });
    // A tree counted before a message was added: the bar stops full, it does not overflow.
    expect(progressShown({ stage: "collecting", messages: 12, total: 10 }).value).toBe(10);
    expect(progressShown({ stage: "saving", bytes: mb / 2 })).toEqual({
      text: "Saving the file: 0.5 MB",
      value: null,
      max: 1,
    });
    expect(progressShown(null).value).toBeNull();
    expect(progressShown({ stage: "reading", bytes: 0, total: 0 }).max).toBe(1);
  });

  it("names a file by the last part of its path on any system", () => {
    expect(fileName("/home/ada/looms/weavers.json")).toBe("weavers.json");
    expect(fileName("C:\\Users\\ada\\weavers.json")).toBe("weavers.json");
    expect(fileName("weavers.json")).toBe("weavers.json");
  });
});

describe("Transfers", () => {
  it("imports every file, reports each, names the one that failed, and opens the first tree", async () => {
    const workspace = new Workspace();
    await workspace.start();
    fake.dialogAnswer = ["/tmp/rivers.json", "/tmp/picture.png", "/tmp/deltas.json"];
    await workspace.transfers.chooseAndImport();
    const transfers = workspace.transfers;
    expect(transfers.running).toBeNull();
    expect(transfers.reports.map((shown) => shown.file)).toEqual(["rivers.json", "deltas.json"]);
    expect(transfers.reports[0]?.report.text).toContain('Imported "rivers" as tree');
    expect(transfers.error?.code).toBe("invalidInput");
    expect(transfers.error?.message).toBe("picture.png: cannot read /tmp/picture.png: it is not a file");
    expect(workspace.trees.map((tree) => tree.title)).toEqual(["deltas", "rivers"]);
    expect(workspace.open?.tree.title).toBe("rivers");
    expect(fake.calls.filter((call) => call === "tree_import")).toHaveLength(3);

    transfers.dismiss();
    expect([transfers.reports, transfers.error, transfers.exported]).toEqual([[], null, null]);
  });

  it("imports nothing when the dialog is closed, and names a refused path with what the shell said", async () => {
    const workspace = new Workspace();
    await workspace.start();
    await workspace.transfers.chooseAndImport();
    expect(fake.calls.filter((call) => call === "tree_import")).toHaveLength(0);
    expect(workspace.transfers.error).toBeNull();

    // A path the dialog never gave (a drop the shell did not see) is refused, not read.
    await workspace.transfers.importPaths(["/home/ada/.ssh/id_ed25519.json"]);
    expect(workspace.transfers.error?.message).toBe(
      "id_ed25519.json: /home/ada/.ssh/id_ed25519.json was not chosen in this window",
    );
    expect(workspace.trees).toEqual([]);
  });
});
