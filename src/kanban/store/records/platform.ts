// Platforms' rows as both engines store them: adapter state and notification subscriptions.

export interface Subscription {
  platform: string;
  channel: string;
  taskId: string;
  cursor: number;
}

export interface SubscriptionRow {
  platform: string;
  channel: string;
  task_id: string;
  cursor: number;
}

/** A subscription from its row, on either engine. */
export function toSubscription(row: SubscriptionRow): Subscription {
  return { platform: row.platform, channel: row.channel, taskId: row.task_id, cursor: row.cursor };
}

/** A platform's stored state, or null when there is none (or it is not a JSON object). */
export function parseState(text: string | undefined): Record<string, unknown> | null {
  if (text === undefined) return null;
  try {
    const state: unknown = JSON.parse(text);
    return typeof state === 'object' && state !== null ? (state as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** An inbound delivery as its platform identifies it: the id its signature covers. */
export interface Delivery {
  id: string;
  signature: string;
}
