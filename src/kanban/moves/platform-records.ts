// What platforms write: their persisted state (view, adapter position, home cursor), a chat's
// subscription to a task and its cursor, and the inbound deliveries already handled. None of
// them changes a task.
import type { Subscription } from '../store/records/platform.js';
import type { Tx } from './tx.js';

/** Merges `patch` into the platform's persisted state: the keys it names are replaced. */
export async function savePlatformState(
  tx: Tx,
  name: string,
  patch: Record<string, unknown>,
): Promise<void> {
  await tx.store.platforms.mergeState(name, patch, tx.now);
}

/** A chat hears about a task it created, from the event after `cursor`. */
export async function subscribeChat(
  tx: Tx,
  platform: string,
  channel: string,
  taskId: string,
  cursor: number,
): Promise<void> {
  await tx.store.platforms.subscribe(platform, channel, taskId, cursor);
}

/** A subscription's notifications up to `eventId` were sent (its cursor never goes back). */
export async function advanceSubscription(
  tx: Tx,
  sub: Subscription,
  eventId: number,
): Promise<void> {
  await tx.store.platforms.advanceCursor(sub, eventId);
}

/** A signed inbound delivery was handled (and created `taskId`, or nothing). */
export async function recordDelivery(
  tx: Tx,
  platform: string,
  delivery: { id: string; signature: string },
  taskId: string | null,
): Promise<void> {
  await tx.store.platforms.recordDelivery(platform, delivery, taskId, tx.now);
}

/**
 * This host takes or keeps the platform (polling it, sending its notifications) while its own
 * lease holds; whether it holds it now.
 */
export async function holdPlatform(
  tx: Tx,
  platform: string,
  hostId: number,
  graceMs: number,
): Promise<boolean> {
  if (!(await tx.store.hosts.holdsLease(hostId))) return false;
  return tx.store.platforms.hold(platform, hostId, graceMs);
}

/** This host holds the platform and its lease, until this transaction ends. */
export async function holdsPlatform(tx: Tx, platform: string, hostId: number): Promise<boolean> {
  return (
    (await tx.store.hosts.holdsLease(hostId)) &&
    (await tx.store.platforms.heldBy(platform)) === hostId
  );
}
