// What operators look at besides the API: the dashboard page, /metrics, /openapi.json and /docs.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../config/defaults.js';
import { VERSION } from '../../version.js';
import type { Metrics } from '../metrics.js';
import { COMPONENTS, describe } from './responses.js';

const DASHBOARD = readFileSync(join(PACKAGE_ROOT, 'public/index.html'));

/** Registered before the routes, so every route's schema lands in the OpenAPI document. */
export function registerApiDocs(app: FastifyInstance): void {
  for (const schema of COMPONENTS) app.addSchema(schema);
  void app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'gatehouse',
        version: VERSION,
        description:
          'Task board, dispatcher and platforms. Live events: the websocket GET /events/stream?after=ID&task=ID&kinds=a,b (see docs/api.md). Errors are {"error": {"code", "message"}} with the codes of docs/errors.md.',
      },
      tags: [
        { name: 'tasks', description: 'The board: tasks and operator transitions' },
        { name: 'workers', description: 'Worker routes, authorised by the run token' },
        { name: 'history', description: 'Runs, events and logs' },
        { name: 'platforms', description: 'Chat and webhook platforms behind their breakers' },
        { name: 'operations', description: 'Health, readiness, metrics, planned stop and restart' },
      ],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'api.token' },
          runToken: {
            type: 'http',
            scheme: 'bearer',
            description: '$GATEHOUSE_RUN_TOKEN of the run',
          },
        },
      },
      security: [{ bearer: [] }],
    },
    refResolver: {
      // Components keep their own names (Task, Run, Error…) instead of def-0, def-1.
      buildLocalReference: (json, _base, _fragment, i) =>
        (json.$id as string | undefined) ?? `def-${i}`,
    },
  });
  void app.register(swaggerUi, { routePrefix: '/docs' });
}

export function opsRoutes(app: FastifyInstance, metrics: Metrics): void {
  // The page itself is public; it asks for the API token before it calls the API.
  app.get('/', { config: { auth: 'none' }, schema: { hide: true } }, (_req, reply) =>
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(DASHBOARD),
  );
  app.get(
    '/metrics',
    {
      schema: describe('operations', 'Prometheus metrics', {
        200: {
          description: 'Prometheus text exposition format',
          content: { 'text/plain': { schema: { type: 'string' } } },
        },
      }),
    },
    async (_req, reply) =>
      reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
  app.get('/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, () =>
    app.swagger(),
  );
}
