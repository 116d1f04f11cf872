// A host sharing the board, as both engines store it.
import type { Host, HostState } from '../../model/types.js';

export interface HostRow {
  id: number | string;
  name: string;
  started_at: number | string;
  renewed_at: number | string;
  lease_expires_at: number | string;
  state: HostState;
  running: number;
  capacity: number;
  profiles: string;
  version: string;
}

/** A host as it registers. */
export interface NewHost {
  name: string;
  capacity: number;
  profiles: string[];
  version: string;
  leaseMs: number;
}

/** What a renewal reports and extends. */
export interface HostRenewal {
  running: number;
  capacity: number;
  leaseMs: number;
  /** Refuse a lease that has already run out (many hosts: another may be taking over). */
  unexpiredOnly: boolean;
}

/** A host from its row, on either engine (PostgreSQL's bigints may come back as text). */
export function toHost(row: HostRow): Host {
  return {
    id: Number(row.id),
    name: row.name,
    startedAt: Number(row.started_at),
    renewedAt: Number(row.renewed_at),
    leaseExpiresAt: Number(row.lease_expires_at),
    state: row.state,
    running: row.running,
    capacity: row.capacity,
    profiles: JSON.parse(row.profiles) as string[],
    version: row.version,
  };
}
