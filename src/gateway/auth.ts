// API token authentication: every route but /health, worker routes and signed inbound webhooks.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, BEARER_CHALLENGE } from '../errors.js';
import { secretsEqual } from '../kanban/model/ids.js';

/** How a route authenticates: the API token (default), the run token, or its own signature. */
export type RouteAuth = 'api' | 'worker' | 'none';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
}

function isWebsocketUpgrade(req: FastifyRequest): boolean {
  return req.headers.upgrade?.toLowerCase() === 'websocket';
}

/** The token of an Authorization header (`Bearer <token>`), or null. */
export function tokenOf(header: string): string | null {
  return /^Bearer\s+(\S+)$/i.exec(header)?.[1] ?? null;
}

/** The bearer token of a request: Authorization header, or ?token= for browsers' websockets only. */
export function bearerToken(req: FastifyRequest): string | null {
  const header = req.headers.authorization;
  if (header) return tokenOf(header);
  if (!isWebsocketUpgrade(req)) return null;
  const query = req.query as { token?: unknown } | undefined;
  return typeof query?.token === 'string' ? query.token : null;
}

/**
 * Registered after @fastify/websocket so that its own onRequest hook (which lets it close a
 * refused upgrade's socket) runs before ours can refuse the request.
 */
export const authPlugin = fp(async (app: FastifyInstance, opts: { apiToken: string | null }) => {
  installAuth(app, opts.apiToken);
});

function installAuth(app: FastifyInstance, apiToken: string | null): void {
  if (apiToken === null) return;
  app.addHook('onRequest', async (req) => {
    const auth = req.routeOptions.config.auth ?? 'api';
    if (auth !== 'api') return;
    const token = bearerToken(req);
    if (token === null || !secretsEqual(token, apiToken)) {
      const inQuery = token === null && (req.query as { token?: unknown } | undefined)?.token;
      throw new AppError(
        'UNAUTHORIZED',
        inQuery
          ? '?token= is accepted on the websocket route only; send Authorization: Bearer <api.token>'
          : 'this route needs Authorization: Bearer <api.token>',
        { headers: { 'www-authenticate': BEARER_CHALLENGE } },
      );
    }
  });
}
