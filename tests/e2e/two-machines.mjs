// Two app windows with two data folders and one bare git repository between them, git's
// configuration isolated in a temporary folder so this machine's settings neither help nor
// hinder: what the sync and team tests share.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";

import { Harness } from "./harness.mjs";

/// Two harnesses and the bare repository `repository` (a path), started before the suite's tests
/// and stopped after them.
export function twoMachinesAndARemote(repository) {
  const first = new Harness();
  const second = new Harness();
  const root = mkdtempSync(join(tmpdir(), "pinloom-two-machines-"));
  const remote = join(root, repository);

  before(async () => {
    const gitConfig = join(root, "gitconfig");
    writeFileSync(gitConfig, "");
    // Both apps inherit these through tauri-driver.
    process.env.GIT_CONFIG_GLOBAL = gitConfig;
    process.env.GIT_CONFIG_NOSYSTEM = "1";
    execFileSync("git", ["init", "-q", "--bare", "-b", "main", remote]);
    await first.start();
    await second.start();
  });

  after(async () => {
    await first.stop();
    await second.stop();
    rmSync(root, { recursive: true, force: true });
  });

  return { first, second, remote };
}

/// Closes Settings and waits until it is gone, clicking Close again if a late re-render of the
/// panel's rows took the first click.
export async function closeSettings(harness) {
  await harness.driver.wait(
    async () => {
      if ((await harness.findAll("settings-panel")).length === 0) return true;
      await harness.click("settings-close").catch(() => undefined);
      return (await harness.findAll("settings-panel")).length === 0;
    },
    20_000,
    "Settings to close",
  );
}
