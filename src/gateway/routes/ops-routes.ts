// What operators look at besides the API: the dashboard page, /metrics, /openapi.json and /docs.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../config/defaults.js';
import { VERSION } from '../../version.js';
import type { Metrics } from '../metrics.js';

const DASHBOARD = readFileSync(join(PACKAGE_ROOT, 'public/index.html'));

/** Registered before the routes, so every route's schema lands in the OpenAPI document. */
export function registerApiDocs(app: FastifyInstance): void {
  void app.register(swagger, {
    openapi: {
      info: {
        title: 'gatehouse',
        version: VERSION,
        description:
          'Task board, dispatcher and platforms. Live events: the websocket GET /events/stream?after=ID&task=ID&kinds=a,b (not listed below; see docs/api.md).',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });
  void app.register(swaggerUi, { routePrefix: '/docs' });
}

export function opsRoutes(app: FastifyInstance, metrics: Metrics): void {
  // The page itself is public; it asks for the API token before it calls the API.
  app.get('/', { config: { auth: 'none' }, schema: { hide: true } }, (_req, reply) =>
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(DASHBOARD),
  );
  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
  app.get('/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, () =>
    app.swagger(),
  );
}
