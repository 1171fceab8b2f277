// Settings → Sync's state: where this database syncs, whether on its own, what the last sync did
// and what waits to go. Syncing on its own runs after each reply and every few minutes, while the
// window is open; a sync that brings something tells the workspace, which shows it.
import { backend, showingFailure, type PinloomError } from "./backend";
import type { SyncReport, SyncStatus } from "./bindings";

/// How often a window that syncs on its own syncs when nothing else prompts it.
export const SYNC_EVERY_MS = 5 * 60 * 1000;

export class SyncState {
  status = $state<SyncStatus | null>(null);
  /// A sync is running (the button waits for it).
  running = $state(false);
  /// The last sync's failure, shown in Settings → Sync until the next sync.
  error = $state<PinloomError | null>(null);
  /// Called when a sync brought something into these trees.
  onarrived: (treeIds: number[]) => void | Promise<void> = () => undefined;
  /// Called after each sync that ran: a team's members and standing may have changed with it
  /// (an owner's sync admits whoever asked; a member's learns it was admitted or removed).
  onsynced: () => void | Promise<void> = () => undefined;
  private timer: ReturnType<typeof setInterval> | null = null;

  async load(): Promise<void> {
    await showingFailure(this, undefined, async () => {
      this.status = await backend.syncStatus();
      this.schedule();
    });
  }

  /// Syncs now, with `remote` when the person typed one (it is remembered), else the one this
  /// database has, and the passphrase when they typed one (it encrypts a new remote, opens an
  /// encrypted one; never kept here). Returns the report, or null when it failed (the failure
  /// is in `error`).
  async syncNow(remote: string | null = null, passphrase: string | null = null): Promise<SyncReport | null> {
    if (this.running) return null;
    this.running = true;
    this.error = null;
    try {
      return await showingFailure(this, null, async () => {
        const report = await backend.syncNow(remote?.trim() ? remote.trim() : null, passphrase || null);
        if (report.receivedRecords + report.receivedChanges > 0) await this.onarrived(report.treesChanged);
        await this.onsynced();
        return report;
      });
    } finally {
      this.running = false;
      await this.load();
    }
  }

  async setAutomatic(on: boolean): Promise<void> {
    await showingFailure(this, undefined, async () => {
      this.status = await backend.syncAutomaticSet(on);
      this.schedule();
    });
  }

  async setProfiles(on: boolean): Promise<void> {
    await showingFailure(this, undefined, async () => {
      this.status = await backend.syncProfilesSet(on);
    });
  }

  /// A reply was written: what it added goes out now, when this window syncs on its own.
  async afterReply(): Promise<void> {
    if (this.status?.automatic && this.status.remote) await this.syncNow();
  }

  /// Stops the timer (the window is closing).
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    this.stop();
    if (this.status?.automatic && this.status.remote) {
      this.timer = setInterval(() => void this.syncNow(), SYNC_EVERY_MS);
    }
  }
}
