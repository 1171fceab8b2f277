// Settings → Sync's teams: the teams this database joined and their members, an invitation to one
// for a colleague, joining by a remote or by a pasted invitation, removing a member, leaving, and
// sharing a tree. A team's repository holds only the trees shared with it; a join or a share that
// brings or changes trees tells the workspace, which shows them.
import { backend, showingFailure, type PinloomError } from "./backend";
import type { SyncReport, TeamView } from "./bindings";

export class TeamsState {
  teams = $state<TeamView[]>([]);
  /// The invitation last asked for, on show to send: which team it is to, and its text.
  invitation = $state<{ team: string; text: string } | null>(null);
  /// What the last join, removal or share did.
  last = $state<SyncReport | null>(null);
  /// A join, a removal or a share is running (each syncs the team; the buttons wait for it).
  running = $state(false);
  /// The last team action's failure, shown under Teams until the next action.
  error = $state<PinloomError | null>(null);
  /// Called when a join, a removal or a share brought something into these trees, or changed them.
  private readonly onarrived: (treeIds: number[]) => void | Promise<void>;
  /// Called after a team was joined, synced or left: Settings → Sync's status counts the teams
  /// (Sync now syncs them when there is no remote of the person's own) and shows the last sync.
  onchanged: () => void | Promise<void> = () => undefined;

  constructor(onarrived: (treeIds: number[]) => void | Promise<void> = () => undefined) {
    this.onarrived = onarrived;
  }

  async load(): Promise<void> {
    await showingFailure(this, undefined, async () => {
      this.teams = await backend.teamList();
    });
  }

  /// Creates team `team` with `remote` as its repository (an empty one makes a new team), or
  /// joins the team already there, going by `yourName` (blank: git's user name). True when it is
  /// joined.
  async create(team: string, remote: string, yourName: string | null): Promise<boolean> {
    return this.syncing([], () => backend.teamJoin(team.trim(), remote.trim(), given(yourName)));
  }

  /// Joins the team a pasted invitation names, going by `yourName` (blank: git's user name).
  /// True when it is joined (or, for a team with an owner, asked to be).
  async join(invitationText: string, yourName: string | null): Promise<boolean> {
    return this.syncing([], () => backend.teamJoinInvitation(invitationText, given(yourName)));
  }

  /// Removes the member whose device is `device` from `team`, which this machine owns. True
  /// when they are removed.
  async remove(team: string, device: string): Promise<boolean> {
    return this.syncing([], () => backend.teamRemoveMember(team, device));
  }

  /// Puts the invitation to `team` on show, for the person to send a colleague.
  async invite(team: string): Promise<void> {
    this.error = null;
    this.invitation = null;
    await showingFailure(this, undefined, async () => {
      this.invitation = { team, text: await backend.teamInvitation(team) };
    });
  }

  /// Leaves `team`; the trees that came through it stay. True when it is left.
  async leave(team: string): Promise<boolean> {
    this.error = null;
    return showingFailure(this, false, async () => {
      this.teams = await backend.teamLeave(team);
      // What was on show about the team no longer leads anywhere.
      if (this.invitation?.team === team) this.invitation = null;
      this.last = null;
      await this.onchanged();
      return true;
    });
  }

  /// Shares tree `treeId` with `team`, named as shared by `sharedBy` (blank: git's user name).
  /// True when it is shared.
  async share(treeId: number, team: string, sharedBy: string | null): Promise<boolean> {
    // The tree now says who shared it, whatever else the team's sync brought.
    return this.syncing([treeId], () => backend.teamShareTree(treeId, team, given(sharedBy)));
  }

  /// Runs a join, a removal or a share, each of which syncs the team, then reads the teams again; the trees
  /// it changed (`changed`, and those its report names) go to `onarrived`.
  private async syncing(changed: number[], sync: () => Promise<SyncReport>): Promise<boolean> {
    if (this.running) return false;
    this.running = true;
    this.error = null;
    try {
      return await showingFailure(this, false, async () => {
        const report = await sync();
        this.last = report;
        const treeIds = [...new Set([...changed, ...report.treesChanged])];
        if (treeIds.length > 0) await this.onarrived(treeIds);
        return true;
      });
    } finally {
      this.running = false;
      await this.load();
      await this.onchanged();
    }
  }
}

/// A name typed to go by, as the backend takes it: null when blank, for git's user name.
function given(name: string | null): string | null {
  return name?.trim() || null;
}
