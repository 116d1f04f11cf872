// SQL for platforms: persisted adapter state and notification subscriptions with their cursors.
import { NOTIFY_KINDS } from '../../model/events.js';
import type { PlatformTable } from '../contract.js';
import {
  parseState,
  toSubscription,
  type Delivery,
  type Subscription,
  type SubscriptionRow,
} from '../records/platform.js';
import type { Db } from './db.js';

export class PlatformStore implements PlatformTable {
  private readonly loadState;
  private readonly saveState;
  private readonly subscribeStmt;
  private readonly advance;
  private readonly forTask;
  private readonly pending;
  private readonly deliveryOf;
  private readonly insertDelivery;
  private readonly pruneDeliveries;
  private readonly take;
  private readonly holder;

  constructor(db: Db) {
    this.loadState = db.prepare<[string], { state: string }>(
      'SELECT state FROM platform_state WHERE name = ?',
    );
    this.saveState =
      db.prepare(`INSERT INTO platform_state (name, state, updated_at) VALUES (?, ?, ?)
      ON CONFLICT (name) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`);
    this.subscribeStmt = db.prepare(`INSERT INTO subscriptions (platform, channel, task_id, cursor)
      VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`);
    this.advance =
      db.prepare(`UPDATE subscriptions SET cursor = ? WHERE platform = ? AND channel = ?
      AND task_id = ? AND cursor < ?`);
    this.forTask = db.prepare<[string], SubscriptionRow>(
      'SELECT * FROM subscriptions WHERE task_id = ?',
    );
    this.deliveryOf = db.prepare<[string, string], { task_id: string | null }>(
      'SELECT task_id FROM inbound_deliveries WHERE platform = ? AND delivery_id = ?',
    );
    this.insertDelivery = db.prepare(
      'INSERT INTO inbound_deliveries (platform, delivery_id, signature, task_id, at) VALUES (?, ?, ?, ?, ?)',
    );
    this.pruneDeliveries = db.prepare('DELETE FROM inbound_deliveries WHERE at < ?');
    this.take = db.prepare<[string, number, number], { host_id: number }>(
      `INSERT INTO platform_holders (platform, host_id) VALUES (?, ?)
        ON CONFLICT (platform) DO UPDATE SET host_id = excluded.host_id
        WHERE platform_holders.host_id = excluded.host_id OR NOT EXISTS (
          SELECT 1 FROM hosts h WHERE h.id = platform_holders.host_id AND h.state = 'active'
            AND h.lease_expires_at >= ?)
        RETURNING host_id`,
    );
    this.holder = db.prepare<[string], { host_id: number }>(
      'SELECT host_id FROM platform_holders WHERE platform = ?',
    );
    const kinds = NOTIFY_KINDS.map((k) => `'${k}'`).join(', ');
    this.pending = db.prepare<[], SubscriptionRow>(`SELECT s.* FROM subscriptions s WHERE EXISTS (
      SELECT 1 FROM events e WHERE e.task_id = s.task_id AND e.id > s.cursor AND e.kind IN (${kinds}))`);
  }

  async state(name: string): Promise<Record<string, unknown> | null> {
    return parseState(this.loadState.get(name)?.state);
  }

  /**
   * Replaces the keys of the platform's state that `patch` names, keeping the others (in one
   * statement on PostgreSQL, so hosts writing different keys at once lose none).
   */
  async mergeState(name: string, patch: Record<string, unknown>, at: number): Promise<void> {
    const state = parseState(this.loadState.get(name)?.state) ?? {};
    this.saveState.run(name, JSON.stringify({ ...state, ...patch }), at);
  }

  /**
   * Makes `hostId` the platform's holder, or keeps it so: unless another host holds it whose
   * lease has not been out for `graceMs`. Whether `hostId` holds it now.
   */
  async hold(platform: string, hostId: number, graceMs: number): Promise<boolean> {
    return this.take.get(platform, hostId, Date.now() - graceMs) !== undefined;
  }

  /** The host that holds the platform, or null (on PostgreSQL the row stays locked, shared). */
  async heldBy(platform: string): Promise<number | null> {
    const row = this.holder.get(platform);
    return row ? Number(row.host_id) : null;
  }

  async subscribe(
    platform: string,
    channel: string,
    taskId: string,
    cursor: number,
  ): Promise<void> {
    this.subscribeStmt.run(platform, channel, taskId, cursor);
  }

  async advanceCursor(sub: Subscription, eventId: number): Promise<void> {
    this.advance.run(eventId, sub.platform, sub.channel, sub.taskId, eventId);
  }

  async subscriptionsOf(taskId: string): Promise<Subscription[]> {
    return this.forTask.all(taskId).map(toSubscription);
  }

  /**
   * An inbound delivery seen before, by its id (the signature covers the id, so a repeat is
   * the same id and nothing else): what it created (null: nothing), or undefined if new.
   */
  async delivery(
    platform: string,
    delivery: Delivery,
  ): Promise<{ taskId: string | null } | undefined> {
    const row = this.deliveryOf.get(platform, delivery.id);
    return row ? { taskId: row.task_id } : undefined;
  }

  /** Remembers a handled delivery; called in the transaction of what it created. */
  async recordDelivery(
    platform: string,
    delivery: Delivery,
    taskId: string | null,
    at: number,
  ): Promise<void> {
    this.insertDelivery.run(platform, delivery.id, delivery.signature, taskId, at);
  }

  /** Forgets deliveries older than `before` (their replay window has passed); how many. */
  async forgetDeliveries(before: number): Promise<number> {
    return this.pruneDeliveries.run(before).changes;
  }

  /** Subscriptions with at least one notifiable event past their cursor. */
  async withPending(): Promise<Subscription[]> {
    return this.pending.all().map(toSubscription);
  }
}
