// Move: what a request with an Idempotency-Key makes, made once (docs/api.md). The key, the route and
// a digest of the body are recorded in the transaction that makes it: a repeat within the key's
// lifetime gets the first answer and makes nothing, a key sent again elsewhere or with another
// body is refused, and a twin not yet committed (another host's) holds the key until it is.
import { AppError } from '../../errors.js';
import type { IdempotencyRecord } from '../store/records/idempotency.js';
import type { Tx } from './tx.js';

export interface KeyedRequest {
  /** The Idempotency-Key header. */
  key: string;
  /** Method and path, e.g. `POST /tasks/t_0123456789ab/comments`. */
  route: string;
  /** A digest of the body. */
  digest: string;
  /** How long a key holds (api.idempotencyHours). */
  lifetimeMs: number;
}

export interface Answer<T> {
  status: number;
  body: T;
  /** The first answer again: nothing was made now. */
  replayed: boolean;
}

/**
 * The first answer to `req`'s key if it still holds (recorded since `expiredBefore`), null when
 * the key is free; IDEMPOTENCY_KEY_REUSED when it was sent elsewhere or with another body.
 */
export function replayOf<T>(
  found: IdempotencyRecord | null,
  req: KeyedRequest,
  expiredBefore: number,
): Answer<T> | null {
  if (!found || found.at < expiredBefore) return null;
  if (found.route !== req.route)
    throw new AppError(
      'IDEMPOTENCY_KEY_REUSED',
      `Idempotency-Key "${req.key}" was first sent to ${found.route}`,
    );
  if (found.digest !== req.digest)
    throw new AppError(
      'IDEMPOTENCY_KEY_REUSED',
      `Idempotency-Key "${req.key}" was first sent with another body`,
    );
  return { status: found.status, body: JSON.parse(found.answer) as T, replayed: true };
}

export async function once<T>(
  tx: Tx,
  req: KeyedRequest,
  make: () => Promise<{ status: number; body: T }>,
): Promise<Answer<T>> {
  const expiredBefore = tx.now - req.lifetimeMs;
  const replay = replayOf<T>(await tx.store.idempotency.find(req.key), req, expiredBefore);
  if (replay) return replay;
  const made = await make();
  const recorded = await tx.store.idempotency.record(
    {
      key: req.key,
      route: req.route,
      digest: req.digest,
      status: made.status,
      answer: JSON.stringify(made.body),
      at: tx.now,
    },
    expiredBefore,
  );
  // A twin committed it meanwhile (another host): what was made here is rolled back with this.
  if (!recorded)
    throw new AppError(
      'IDEMPOTENCY_KEY_IN_USE',
      `a request with Idempotency-Key "${req.key}" is being handled`,
    );
  return { ...made, replayed: false };
}
