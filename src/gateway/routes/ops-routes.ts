// What operators look at besides the API: the dashboard page, /metrics and /hosts (the API's own
// description is in api-docs.ts).
import type { FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../config/defaults.js';
import type { Board } from '../../kanban/board.js';
import type { Metrics } from '../metrics.js';
import { HostList, describe } from './responses.js';

const DASHBOARD = readFileSync(join(PACKAGE_ROOT, 'public/index.html'));

export function opsRoutes(app: FastifyInstance, metrics: Metrics, board: Board): void {
  // The page itself is public; it asks for the API token before it calls the API.
  app.get('/', { config: { auth: 'none' }, schema: { hide: true } }, (_req, reply) =>
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(DASHBOARD),
  );
  app.get(
    '/metrics',
    {
      schema: describe({
        tag: 'operations',
        id: 'getMetrics',
        summary: 'Prometheus metrics',
        description:
          'Counters, histograms and gauges in the Prometheus text format; contrib/prometheus has a scrape config and alerting rules.',
        ok: {
          200: {
            description: 'Prometheus text exposition format',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
        },
      }),
    },
    async (_req, reply) =>
      reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
  app.get(
    '/hosts',
    {
      schema: describe({
        tag: 'operations',
        id: 'listHosts',
        summary: 'The daemons sharing the board, with their leases',
        description:
          'Every host that has served the board: active, draining or dead, with its lease (by the database clock), running workers and capacity.',
        ok: { 200: HostList },
      }),
    },
    async () => ({ hosts: await board.hosts.list() }),
  );
}
