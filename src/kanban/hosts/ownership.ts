// Which runs are this daemon's to supervise. On a board only this host uses (SQLite), all of
// them. On a shared board, those this host claimed, and those whose run folder is in this data
// dir (claimed by an earlier registration of this host, whose lease ran out while it was down).
// Several hosts may share one machine, so a boot id does not tell. The others belong to other
// hosts: never adopted, timed out or signalled here, only taken over as lost once their host's
// lease has run out (HostLease).
import { existsSync } from 'node:fs';
import type { RunRecord } from '../store/records/run.js';
import { runDir } from '../dispatch/run-files.js';

export class Ownership {
  /** This host's id on the board, once its lease has started (HostLease). */
  hostId: number | null = null;

  constructor(
    /** Other hosts may share the board. */
    readonly shared: boolean,
    readonly dataDir: string,
  ) {}

  owns(run: RunRecord): boolean {
    if (!this.shared || (run.hostId !== null && run.hostId === this.hostId)) return true;
    return existsSync(runDir(this.dataDir, run.id));
  }
}
