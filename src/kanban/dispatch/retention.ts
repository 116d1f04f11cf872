// Retention (SPEC Configuration `retention`): run folders of runs that ended more than runDays
// ago, events older than eventDays and inbound delivery ids past their replay window are
// removed in small batches on a timer of their own, never on a request's path.
import type { Config } from '../../config/schema.js';
import type { Store } from '../store/store.js';
import type { DispatcherLog } from './log.js';
import { removeRunDir } from './run-files.js';

const DAY_MS = 24 * 3600 * 1000;
/** What one pass removes at most of each kind; the next pass takes the rest. */
const BATCH = 200;
const INTERVAL_MS = 60_000;
/** Inbound delivery ids are kept for the replay window (SPEC §7: a repeat within 24 h). */
const DELIVERY_WINDOW_MS = DAY_MS;

export type Pruned = Record<'run_folders' | 'events' | 'deliveries', number>;

export class Retention {
  private timer: NodeJS.Timeout | null = null;
  constructor(
    private readonly store: Store,
    private readonly config: Pick<Config, 'dataDir' | 'retention'>,
    private readonly clock: () => number,
    private readonly log: DispatcherLog,
    /** Told what each pass removed (metrics). */
    private readonly onPruned: (done: Pruned) => void = () => undefined,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.safePass(), INTERVAL_MS);
    this.timer.unref();
    setImmediate(() => this.safePass());
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One pass: at most a batch of each kind. Returns what it removed. */
  pass(): Pruned {
    const now = this.clock();
    const done: Pruned = { run_folders: 0, events: 0, deliveries: 0 };
    const { runDays, eventDays } = this.config.retention;
    if (runDays !== null) {
      for (const runId of this.store.runs.prunableBefore(now - runDays * DAY_MS, BATCH)) {
        removeRunDir(this.config.dataDir, runId);
        this.store.runs.markPruned(runId, now);
        done.run_folders++;
      }
    }
    if (eventDays !== null)
      done.events = this.store.events.pruneBefore(now - eventDays * DAY_MS, BATCH * 5);
    done.deliveries = this.store.platforms.forgetDeliveries(now - DELIVERY_WINDOW_MS);
    this.onPruned(done);
    return done;
  }

  private safePass(): void {
    if (!this.store.open) return;
    try {
      const done = this.pass();
      if (done.run_folders + done.events > 0) this.log.info({ pruned: done }, 'retention');
    } catch (err) {
      this.log.error({ err }, 'retention pass failed');
    }
  }
}
