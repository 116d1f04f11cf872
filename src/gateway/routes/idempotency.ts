// The Idempotency-Key header of the routes that create (docs/api.md, after the IETF httpapi draft):
// its schema for the route, what a request with one asks the board, and how its answer is sent.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Answer, KeyedRequest } from '../../kanban/moves/once.js';
import { Type } from '../../schema-types.js';

/** The request header, as the route's schema declares it (a bad one is a 400). */
export const IdempotencyHeaders = Type.Object(
  {
    'idempotency-key': Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        pattern: '^[\\x21-\\x7e]+$',
        description:
          'Sent again with the same body within api.idempotencyHours, the first answer comes back (Idempotent-Replayed: true) and nothing is made again; 1–255 visible ASCII characters.',
      }),
    ),
  },
  { additionalProperties: true },
);

/** The answer's header on a replay. */
export const REPLAYED_HEADER = 'idempotent-replayed';

/** The errors a keyed route adds to its own: the key sent elsewhere or with another body, or a twin still handled. */
export const KEYED_ERRORS = [
  { status: 409, reason: 'a request with this Idempotency-Key is still being handled' },
  { status: 422, reason: 'this Idempotency-Key was sent to another route or with another body' },
] as const;

/** What the board needs to make it once, or null when the request has no key. */
export function keyedRequest(req: FastifyRequest, lifetimeMs: number): KeyedRequest | null {
  const key = req.headers['idempotency-key'];
  if (typeof key !== 'string') return null;
  return {
    key,
    route: `${req.method} ${req.url.split('?')[0]}`,
    digest: createHash('sha256')
      .update(JSON.stringify(req.body ?? null))
      .digest('base64url'),
    lifetimeMs,
  };
}

/** Sends the answer: the first one again on a replay, said by its header. */
export function sendAnswer<T>(reply: FastifyReply, answer: Answer<T>): FastifyReply {
  if (answer.replayed) reply.header(REPLAYED_HEADER, 'true');
  return reply.code(answer.status).send(answer.body);
}
