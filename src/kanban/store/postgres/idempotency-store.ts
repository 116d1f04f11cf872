// Idempotency keys on PostgreSQL: the contract's reads and writes. A twin's key
// not yet committed holds the unique index: the insert waits for it (at most the session's
// lock_timeout), then finds the key taken.
import type { IdempotencyTable } from '../contract.js';
import type { IdempotencyRecord } from '../records/idempotency.js';
import { rows, run, type Queryable } from './query.js';

export class PgIdempotencyStore implements IdempotencyTable {
  constructor(private readonly db: Queryable) {}

  async find(key: string): Promise<IdempotencyRecord | null> {
    const [row] = await rows<IdempotencyRecord>(
      this.db,
      'SELECT key, route, digest, status, answer, at FROM idempotency_keys WHERE key = $1',
      [key],
    );
    return row ? { ...row, status: Number(row.status), at: Number(row.at) } : null;
  }

  async record(r: IdempotencyRecord, expiredBefore: number): Promise<boolean> {
    return (
      (await run(
        this.db,
        `INSERT INTO idempotency_keys (key, route, digest, status, answer, at)
          VALUES ($1, $2, $3, $4, $5, $6)
          ON CONFLICT (key) DO UPDATE SET route = excluded.route, digest = excluded.digest,
            status = excluded.status, answer = excluded.answer, at = excluded.at
          WHERE idempotency_keys.at < $7`,
        [r.key, r.route, r.digest, r.status, r.answer, r.at, expiredBefore],
      )) === 1
    );
  }

  async sweep(before: number): Promise<number> {
    return run(this.db, 'DELETE FROM idempotency_keys WHERE at < $1', [before]);
  }
}
