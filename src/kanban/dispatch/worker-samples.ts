// One resource sample of every live worker's group per tick, from a scan of the process table
// that runs beside the event loop rather than inside the tick (a table of thousands of
// processes takes tens of ms to read). A tick that finds the previous scan still going starts
// none.
import { scanProcesses } from '../../proc/index.js';
import type { Board } from '../board.js';
import { recordSamples } from '../moves/records.js';
import type { LiveWorkers } from './live-workers.js';
import { platformSampler } from './resource-sampler.js';

export class WorkerSamples {
  private readonly sampler = platformSampler();
  private sampling = false;

  constructor(
    private readonly board: Board,
    private readonly live: LiveWorkers,
    private readonly stopping: () => boolean,
  ) {}

  /** Starts a sample unless one is under way (or nothing runs); `track` runs it. */
  start(track: (what: string, work: () => Promise<unknown>) => void): void {
    if (this.sampling || this.live.size === 0) return;
    this.sampling = true;
    track('sample', () => this.sample().finally(() => (this.sampling = false)));
  }

  private async sample(): Promise<void> {
    const snapshot = await scanProcesses();
    const workers = this.live.all().filter((w) => w.leader !== null && w.exit === undefined);
    if (workers.length === 0 || this.stopping()) return;
    const samples = await this.sampler.sample(
      snapshot,
      workers.map((w) => w.leader!.pid),
      this.board.clock.wall(),
    );
    if (this.stopping()) return;
    const recorded: { runId: string; cpu: number; rss: number }[] = [];
    for (const w of workers) {
      const s = samples.get(w.leader!.pid);
      if (!s) continue;
      w.sample = s;
      recorded.push({ runId: w.runId, cpu: s.cpuPercent, rss: s.rssBytes });
    }
    if (recorded.length > 0) await this.board.transact((tx) => recordSamples(tx, recorded));
  }
}
