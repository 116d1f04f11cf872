// Platforms' rows on PostgreSQL: the contract's reads and writes.
import { NOTIFY_KINDS } from '../../model/events.js';
import type { PlatformTable } from '../contract.js';
import {
  parseState,
  toSubscription,
  type Delivery,
  type Subscription,
  type SubscriptionRow,
} from '../records/platform.js';
import { NOW } from './host-store.js';
import { rows, run, type Queryable } from './query.js';

export class PgPlatformStore implements PlatformTable {
  constructor(private readonly db: Queryable) {}

  async state(name: string): Promise<Record<string, unknown> | null> {
    const [row] = await rows<{ state: string }>(
      this.db,
      'SELECT state FROM platform_state WHERE name = $1',
      [name],
    );
    return parseState(row?.state);
  }

  async mergeState(name: string, patch: Record<string, unknown>, at: number): Promise<void> {
    await run(
      this.db,
      `INSERT INTO platform_state (name, state, updated_at) VALUES ($1, $2, $3)
        ON CONFLICT (name) DO UPDATE
        SET state = (platform_state.state::jsonb || excluded.state::jsonb)::text,
          updated_at = excluded.updated_at`,
      [name, JSON.stringify(patch), at],
    );
  }

  async hold(platform: string, hostId: number, graceMs: number): Promise<boolean> {
    // Read first: the upsert would lock the row even when it changes nothing, and a holder
    // frozen mid-transaction (holding it shared) would hold up every other host's check.
    const [current] = await rows<{ host_id: number | string; alive: boolean | null }>(
      this.db,
      `SELECT p.host_id, (h.state = 'active' AND h.lease_expires_at >= ${NOW} - $2) AS alive
        FROM platform_holders p LEFT JOIN hosts h ON h.id = p.host_id WHERE p.platform = $1`,
      [platform, graceMs],
    );
    if (current && Number(current.host_id) !== hostId && current.alive === true) return false;
    const found = await rows(
      this.db,
      `INSERT INTO platform_holders (platform, host_id) VALUES ($1, $2)
        ON CONFLICT (platform) DO UPDATE SET host_id = excluded.host_id
        WHERE platform_holders.host_id = excluded.host_id OR NOT EXISTS (
          SELECT 1 FROM hosts h WHERE h.id = platform_holders.host_id AND h.state = 'active'
            AND h.lease_expires_at >= ${NOW} - $3)
        RETURNING host_id`,
      [platform, hostId, graceMs],
    );
    return found.length > 0;
  }

  async heldBy(platform: string): Promise<number | null> {
    const [row] = await rows<{ host_id: number | string }>(
      this.db,
      'SELECT host_id FROM platform_holders WHERE platform = $1 FOR SHARE',
      [platform],
    );
    return row ? Number(row.host_id) : null;
  }

  async subscribe(
    platform: string,
    channel: string,
    taskId: string,
    cursor: number,
  ): Promise<void> {
    await run(
      this.db,
      `INSERT INTO subscriptions (platform, channel, task_id, cursor) VALUES ($1, $2, $3, $4)
        ON CONFLICT DO NOTHING`,
      [platform, channel, taskId, cursor],
    );
  }

  async advanceCursor(sub: Subscription, eventId: number): Promise<void> {
    await run(
      this.db,
      `UPDATE subscriptions SET cursor = $1 WHERE platform = $2 AND channel = $3 AND task_id = $4
        AND cursor < $1`,
      [eventId, sub.platform, sub.channel, sub.taskId],
    );
  }

  async subscriptionsOf(taskId: string): Promise<Subscription[]> {
    const found = await rows<SubscriptionRow>(
      this.db,
      'SELECT * FROM subscriptions WHERE task_id = $1',
      [taskId],
    );
    return found.map(toSubscription);
  }

  async delivery(
    platform: string,
    delivery: Delivery,
  ): Promise<{ taskId: string | null } | undefined> {
    const [row] = await rows<{ task_id: string | null }>(
      this.db,
      'SELECT task_id FROM inbound_deliveries WHERE platform = $1 AND delivery_id = $2',
      [platform, delivery.id],
    );
    return row ? { taskId: row.task_id } : undefined;
  }

  async recordDelivery(
    platform: string,
    delivery: Delivery,
    taskId: string | null,
    at: number,
  ): Promise<void> {
    await run(
      this.db,
      `INSERT INTO inbound_deliveries (platform, delivery_id, signature, task_id, at)
        VALUES ($1, $2, $3, $4, $5)`,
      [platform, delivery.id, delivery.signature, taskId, at],
    );
  }

  async forgetDeliveries(before: number): Promise<number> {
    return run(this.db, 'DELETE FROM inbound_deliveries WHERE at < $1', [before]);
  }

  async withPending(): Promise<Subscription[]> {
    const found = await rows<SubscriptionRow>(
      this.db,
      `SELECT s.* FROM subscriptions s WHERE EXISTS (
        SELECT 1 FROM events e WHERE e.task_id = s.task_id AND e.id > s.cursor
          AND e.kind = ANY($1::text[]))`,
      [NOTIFY_KINDS],
    );
    return found.map(toSubscription);
  }
}
