// A move's transaction: the store, the clock reading and the typed emit, all in one immediate
// SQLite transaction; events reach listeners only after the commit.
import { AppError } from '../../errors.js';
import type { EventBus } from '../event-bus.js';
import type { BoardEvent, Emit } from '../model/events.js';
import type { Store } from '../store/store.js';

export type Clock = () => number;

export interface Tx {
  readonly store: Store;
  readonly emit: Emit;
  readonly now: number;
}

export class Transactor {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly bus: EventBus,
  ) {}

  /** Runs `fn` in one immediate transaction and publishes its events after the commit. */
  run<T>(fn: (tx: Tx) => T): T {
    const written: BoardEvent[] = [];
    const now = this.clock();
    const emit: Emit = (event) => {
      const stored = this.store.events.append(event, now);
      written.push(stored);
      return stored;
    };
    let result: T;
    try {
      result = this.store.transaction(() => fn({ store: this.store, emit, now }));
    } catch (err) {
      throw storageError(err);
    }
    this.bus.publish(written);
    return result;
  }
}

/** A full or failing disk is the operator's to fix: 503 with a clear message, the cause kept. */
function storageError(err: unknown): unknown {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR'))) {
    return new AppError('STORAGE_UNAVAILABLE', `the data dir cannot be written (${code})`, {
      cause: err,
    });
  }
  return err;
}
