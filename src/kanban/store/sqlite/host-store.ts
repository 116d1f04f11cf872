// SQL for hosts: the daemons sharing the board, each with a lease it renews. On SQLite the
// database's clock is this machine's (PostgreSQL's is the server's).
import type { Db } from './db.js';
import type { Host } from '../../model/types.js';
import type { HostTable } from '../contract.js';
import { toHost, type HostRenewal, type HostRow, type NewHost } from '../records/host.js';

export class HostStore implements HostTable {
  private readonly insert;
  private readonly extend;
  private readonly all;
  private readonly byId;
  private readonly overdue;
  private readonly kill;
  private readonly holding;

  /** The database's clock on SQLite: this machine's. */
  private readonly clock = Date.now;

  constructor(db: Db) {
    this.insert = db.prepare<[string, number, number, number, number, string, string], HostRow>(
      `INSERT INTO hosts (name, started_at, renewed_at, lease_expires_at, state, capacity,
        profiles, version) VALUES (?, ?, ?, ?, 'active', ?, ?, ?) RETURNING *`,
    );
    this.extend = db.prepare<[number, number, number, number, number, number, number], HostRow>(
      `UPDATE hosts SET renewed_at = ?, lease_expires_at = ?, running = ?, capacity = ?
        WHERE id = ? AND state = 'active' AND (? = 0 OR lease_expires_at > ?) RETURNING *`,
    );
    this.holding = db.prepare<[number, number], { id: number }>(
      "SELECT id FROM hosts WHERE id = ? AND state = 'active' AND lease_expires_at > ?",
    );
    this.all = db.prepare<[], HostRow>('SELECT * FROM hosts ORDER BY id');
    this.byId = db.prepare<[number], HostRow>('SELECT * FROM hosts WHERE id = ?');
    this.overdue = db.prepare<[number], HostRow>(
      "SELECT * FROM hosts WHERE state = 'active' AND lease_expires_at < ? ORDER BY id",
    );
    this.kill = db.prepare<[number, number], HostRow>(
      `UPDATE hosts SET state = 'dead', running = 0
        WHERE id = ? AND state <> 'dead' AND lease_expires_at = ? RETURNING *`,
    );
  }

  async register(h: NewHost): Promise<Host> {
    const now = this.clock();
    const row = this.insert.get(
      h.name,
      now,
      now,
      now + h.leaseMs,
      h.capacity,
      JSON.stringify(h.profiles),
      h.version,
    )!;
    return toHost(row);
  }

  /** Extends the lease of an active host; null when it is dead (or expired, if asked). */
  async renew(id: number, r: HostRenewal): Promise<Host | null> {
    const now = this.clock();
    const row = this.extend.get(
      now,
      now + r.leaseMs,
      r.running,
      r.capacity,
      id,
      r.unexpiredOnly ? 1 : 0,
      now,
    );
    return row ? toHost(row) : null;
  }

  /**
   * The host is active and its lease has not run out; on PostgreSQL its row stays locked (shared)
   * until the transaction ends, so it cannot be declared dead meanwhile.
   */
  async holdsLease(id: number): Promise<boolean> {
    return this.holding.get(id, this.clock()) !== undefined;
  }

  async list(): Promise<Host[]> {
    return this.all.all().map(toHost);
  }

  async get(id: number): Promise<Host | null> {
    const row = this.byId.get(id);
    return row ? toHost(row) : null;
  }

  /** Active hosts whose lease ran out more than `graceMs` ago. */
  async expired(graceMs: number): Promise<Host[]> {
    return this.overdue.all(this.clock() - graceMs).map(toHost);
  }

  /**
   * Declares a host dead, if its lease still ends at `leaseExpiresAt` (it has not renewed since
   * it was seen expired); null if it renewed or already was dead.
   */
  async markDead(id: number, leaseExpiresAt: number): Promise<Host | null> {
    const row = this.kill.get(id, leaseExpiresAt);
    return row ? toHost(row) : null;
  }
}
