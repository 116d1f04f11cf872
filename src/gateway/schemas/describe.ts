// How a route is described in the OpenAPI document: its answers, and the errors every route can
// answer (the error policy), each with the shared error body.
import type { FastifySchema } from 'fastify';
import { Type, type TSchema } from '../../schema-types.js';
import { BEARER_CHALLENGE } from '../../errors.js';
import { ErrorBody } from './entities.js';

const REASONS: Record<number, string> = {
  400: 'bad input (malformed JSON, wrong types, unknown fields, too deep)',
  401: 'missing or wrong token',
  403: 'a token of another task, or a web page of another origin',
  404: 'no such task, run or platform',
  409: 'not allowed in the current state (or an old run token)',
  422: 'an Idempotency-Key sent again with another body or to another route',
  413: 'body too large',
  415: 'not application/json',
  421: 'Host is not this gatehouse (server.allowedHosts)',
  500: 'internal error (says nothing internal)',
  503: 'unavailable now (the board database, a platform); see Retry-After',
};

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The errors a route can answer whatever it does, from its method and schema: 421 (a Host not
 * ours), 500, 503 (the board database unreachable; not /health, which always answers), 401
 * unless public, 400 when it takes input, and for the methods that change something 403 (a
 * web page of another origin), 413 and 415 (the body).
 */
export function commonErrors(method: string, url: string, schema: FastifySchema): number[] {
  const out = [421, 500];
  if (url !== '/health') out.push(503);
  const security = (schema as { security?: unknown }).security;
  const isPublic = Array.isArray(security) && security.length === 0;
  if (!isPublic) out.push(401);
  const mutating = MUTATING.has(method);
  if (mutating || schema.params || schema.querystring || schema.body) out.push(400);
  if (mutating) out.push(403, 413, 415);
  return out;
}

/** The schema with its common errors (commonErrors) added to what the route described. */
export function withCommonErrors(
  method: string,
  url: string,
  schema: FastifySchema,
): FastifySchema {
  const response: Record<number, unknown> = { ...(schema.response as object | undefined) };
  for (const status of commonErrors(method, url, schema)) response[status] ??= errorAnswer(status);
  return { ...schema, response };
}

/** An error answer; a route's own reason replaces the common one (and a 401's bearer header). */
function errorAnswer(status: number, reason?: string) {
  return {
    ...Type.Ref(ErrorBody),
    description: reason ?? REASONS[status] ?? 'error',
    ...(status === 401 && reason === undefined
      ? {
          headers: {
            'WWW-Authenticate': { type: 'string', description: `always ${BEARER_CHALLENGE}` },
          },
        }
      : {}),
  };
}

export interface RouteDescription {
  tag: string;
  /** The operation's name in generated clients (camelCase, unique). */
  id: string;
  summary: string;
  description: string;
  ok: Record<number, TSchema | { description: string; content?: object }>;
  /**
   * Errors of this route's own (404, 409…), each with the common reason or one of its own; the
   * common errors are added by commonErrors.
   */
  errors?: readonly (number | { status: number; reason: string })[];
  /** No token needed (`security: []`). */
  public?: boolean;
  /** Authorised by the run token. */
  worker?: boolean;
  /** Takes an Idempotency-Key: its success may be a replay, said by Idempotent-Replayed. */
  replays?: boolean;
}

/** A route's OpenAPI description, with the shared error schema for each of its own errors. */
export function describe(route: RouteDescription) {
  const response: Record<number, unknown> = {};
  for (const [status, schema] of Object.entries(route.ok))
    response[Number(status)] = {
      description: 'success',
      ...schema,
      ...(route.replays
        ? {
            headers: {
              'Idempotent-Replayed': {
                type: 'string',
                description: '`true` when this is the first answer to the same key again',
              },
            },
          }
        : {}),
    };
  for (const error of route.errors ?? []) {
    if (typeof error === 'number') response[error] = errorAnswer(error);
    else response[error.status] = errorAnswer(error.status, error.reason);
  }
  return {
    tags: [route.tag],
    operationId: route.id,
    summary: route.summary,
    description: route.description,
    response,
    ...(route.public ? { security: [] } : {}),
    ...(route.worker ? { security: [{ runToken: [] }] } : {}),
  };
}
