// SQL for idempotency keys on SQLite: each key with the route and body digest it was first sent
// with and the answer given, written in the transaction that made what it answers.
import type { IdempotencyTable } from '../contract.js';
import type { IdempotencyRecord } from '../records/idempotency.js';
import type { Db } from './db.js';

export class IdempotencyStore implements IdempotencyTable {
  private readonly byKey;
  private readonly put;
  private readonly prune;

  constructor(db: Db) {
    this.byKey = db.prepare<[string], IdempotencyRecord>(
      'SELECT * FROM idempotency_keys WHERE key = ?',
    );
    // A key past its lifetime (not swept yet) is taken anew; a live one is not overwritten.
    this.put = db.prepare(`INSERT INTO idempotency_keys (key, route, digest, status, answer, at)
      VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (key) DO UPDATE SET route = excluded.route, digest = excluded.digest,
        status = excluded.status, answer = excluded.answer, at = excluded.at
      WHERE idempotency_keys.at < ?`);
    this.prune = db.prepare('DELETE FROM idempotency_keys WHERE at < ?');
  }

  async find(key: string): Promise<IdempotencyRecord | null> {
    return this.byKey.get(key) ?? null;
  }

  /** Records the key unless a live one (sent since `expiredBefore`) holds it; whether it did. */
  async record(r: IdempotencyRecord, expiredBefore: number): Promise<boolean> {
    return (
      this.put.run(r.key, r.route, r.digest, r.status, r.answer, r.at, expiredBefore).changes === 1
    );
  }

  /** Removes the keys sent before `before`; how many. */
  async sweep(before: number): Promise<number> {
    return this.prune.run(before).changes;
  }
}
