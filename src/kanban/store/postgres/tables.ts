// The board's tables on PostgreSQL, on a pool or on one transaction's connection.
import type { Tables, TxTables } from '../contract.js';
import { WRITES } from '../records/task-writes.js';
import { PgEventStore } from './event-store.js';
import { PgHoldStore } from './hold-store.js';
import { PgHostStore } from './host-store.js';
import { PgIdempotencyStore } from './idempotency-store.js';
import { PgPlatformStore } from './platform-store.js';
import { run, type Queryable } from './query.js';
import { PgRunStore } from './run-store.js';
import { PgScheduleStore } from './schedule-store.js';
import { PgTaskStore } from './task-store.js';
import { PgTaskWrites } from './task-writes.js';
import type { PgTransaction } from './transaction.js';

/** The tables on `db`; a host's lease is renewed on `leaseDb` (its own session, outside a transaction). */
export function tables(db: Queryable, schema: string, leaseDb: Queryable = db): Tables {
  return {
    tasks: new PgTaskStore(db),
    runs: new PgRunStore(db),
    events: new PgEventStore(db, schema),
    platforms: new PgPlatformStore(db),
    hosts: new PgHostStore(db, leaseDb),
    idempotency: new PgIdempotencyStore(db),
    holds: new PgHoldStore(db),
    schedules: new PgScheduleStore(db),
  };
}

export function txTables(tx: PgTransaction, schema: string): TxTables {
  const db = tx.db;
  return {
    ...tables(db, schema),
    [WRITES]: new PgTaskWrites(db, tx.answerLater),
    probeWrite: async (at: number) => {
      await run(
        db,
        `INSERT INTO write_probe (id, at) VALUES (1, $1)
          ON CONFLICT (id) DO UPDATE SET at = excluded.at`,
        [at],
      );
    },
  };
}
