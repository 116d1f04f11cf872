// Hosts on PostgreSQL: the contract's reads and writes, with every lease time taken from the
// server's clock, the one clock all hosts share.
import type { Host } from '../../model/types.js';
import type { HostTable } from '../contract.js';
import { toHost, type HostRenewal, type HostRow, type NewHost } from '../records/host.js';
import { rows, type Queryable } from './query.js';

/** The server's clock in ms, as the other columns store time. */
export const NOW = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

export class PgHostStore implements HostTable {
  /** `leaseDb` renews the lease: a session of its own, never queued behind the pool's work. */
  constructor(
    private readonly db: Queryable,
    private readonly leaseDb: Queryable = db,
  ) {}

  async register(h: NewHost): Promise<Host> {
    const [row] = await rows<HostRow>(
      this.db,
      `INSERT INTO hosts (name, started_at, renewed_at, lease_expires_at, state, capacity,
        profiles, version)
      SELECT $1, now_ms, now_ms, now_ms + $2, 'active', $3, $4, $5 FROM (SELECT ${NOW} AS now_ms) t
      RETURNING *`,
      [h.name, h.leaseMs, h.capacity, JSON.stringify(h.profiles), h.version],
    );
    return toHost(row!);
  }

  async renew(id: number, r: HostRenewal): Promise<Host | null> {
    const [row] = await rows<HostRow>(
      this.leaseDb,
      `UPDATE hosts SET renewed_at = t.now_ms, lease_expires_at = t.now_ms + $2, running = $3,
        capacity = $4
      FROM (SELECT ${NOW} AS now_ms) t
      WHERE id = $1 AND state = 'active' AND (NOT $5 OR lease_expires_at > t.now_ms)
      RETURNING hosts.*`,
      [id, r.leaseMs, r.running, r.capacity, r.unexpiredOnly],
    );
    return row ? toHost(row) : null;
  }

  /**
   * The lease holds, and goes on holding until this transaction ends: a host is not declared
   * dead meanwhile (markDead's FOR UPDATE waits), while renewals (which change no key) go on
   * beside it, however long this transaction waits on other locks.
   */
  async holdsLease(id: number): Promise<boolean> {
    const found = await rows<{ id: string }>(
      this.db,
      `SELECT id FROM hosts WHERE id = $1 AND state = 'active' AND lease_expires_at > ${NOW}
        FOR KEY SHARE`,
      [id],
    );
    return found.length > 0;
  }

  async list(): Promise<Host[]> {
    return (await rows<HostRow>(this.db, 'SELECT * FROM hosts ORDER BY id')).map(toHost);
  }

  async get(id: number): Promise<Host | null> {
    const [row] = await rows<HostRow>(this.db, 'SELECT * FROM hosts WHERE id = $1', [id]);
    return row ? toHost(row) : null;
  }

  async expired(graceMs: number): Promise<Host[]> {
    const found = await rows<HostRow>(
      this.db,
      `SELECT * FROM hosts WHERE state = 'active' AND lease_expires_at < ${NOW} - $1 ORDER BY id`,
      [graceMs],
    );
    return found.map(toHost);
  }

  async markDead(id: number, leaseExpiresAt: number): Promise<Host | null> {
    const [row] = await rows<HostRow>(
      this.db,
      // FOR UPDATE: waits for every transaction that found the lease held (holdsLease).
      `UPDATE hosts SET state = 'dead', running = 0
        WHERE id = (SELECT id FROM hosts WHERE id = $1 AND state <> 'dead'
          AND lease_expires_at = $2 FOR UPDATE)
        RETURNING *`,
      [id, leaseExpiresAt],
    );
    return row ? toHost(row) : null;
  }
}
