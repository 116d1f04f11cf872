// What operators look at besides the API: the dashboard page, /metrics and /hosts (the API's own
// description is in api-docs.ts).
import { AppError } from '../../errors.js';
import type { FastifyInstance } from 'fastify';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../config/defaults.js';
import type { Board } from '../../kanban/board.js';
import type { Metrics } from '../metrics.js';
import { HostList } from '../schemas/entities.js';
import { describe } from '../schemas/describe.js';

/** The page as the build made it: its script (dashboard/) inlined (scripts/bundle.mjs). */
const PAGE = join(PACKAGE_ROOT, 'dist/public/index.html');

/** The base64 SHA-256 of each inline element's text, as a Content-Security-Policy source. */
function inlineHashes(html: string, tag: 'script' | 'style'): string {
  const found = [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))];
  return found
    .map((m) => `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`)
    .join(' ');
}

/**
 * What a hardened admin page sends: only its own inline script and style run, it talks only to
 * its own origin, and no other page may frame it (a framed dashboard's buttons would work with
 * no token set, the loopback default).
 */
function dashboardHeaders(html: string) {
  return {
    'content-security-policy': [
      "default-src 'none'",
      `script-src ${inlineHashes(html, 'script')}`,
      `style-src ${inlineHashes(html, 'style')}`,
      "connect-src 'self'",
      "img-src 'self' data:",
      "base-uri 'none'",
      "form-action 'self'",
      "frame-ancestors 'none'",
    ].join('; '),
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'cache-control': 'no-cache',
  };
}

/** The page and its headers, read at its first request (a checkout not built has none yet). */
let dashboard: { page: Buffer; headers: Record<string, string> } | null = null;
function dashboardPage() {
  if (dashboard) return dashboard;
  let page: Buffer;
  try {
    page = readFileSync(PAGE);
  } catch {
    throw new AppError('NOT_FOUND', 'the dashboard is not built: run npm run build');
  }
  dashboard = { page, headers: dashboardHeaders(page.toString('utf8')) };
  return dashboard;
}

export function opsRoutes(app: FastifyInstance, metrics: Metrics, board: Board): void {
  // The page itself is public; it asks for the API token before it calls the API.
  app.get('/', { config: { auth: 'none' }, schema: { hide: true } }, (_req, reply) => {
    const { page, headers } = dashboardPage();
    return reply.type('text/html; charset=utf-8').headers(headers).send(page);
  });
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
