// /openapi.json is a contract clients can build on: a valid OpenAPI 3.1 document (checked by a
// real validator), every route described with its answers, real answers that match those
// schemas, and TypeScript types generated from it that a small client type-checks against.
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import openapiTS from 'openapi-typescript';
import { describe, expect, it } from 'vitest';
import { api, rawRequest, startGateway, type TestGateway } from '../helpers/app.js';
import { claim } from '../helpers/board.js';
import { ROOT, tempDir } from '../helpers/daemon.js';
import { signedHeaders, webhookReceiver, webhookSecret } from '../helpers/doubles.js';
import { slackDouble } from '../helpers/slack-double.js';

type Doc = {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      {
        responses: Record<string, { content?: Record<string, { schema: object }> }>;
        tags?: string[];
        summary?: string;
      }
    >
  >;
  components: { schemas: Record<string, object> };
};

async function documented(gw: TestGateway): Promise<Doc> {
  return (await api(gw.url, 'GET', '/openapi.json')).body as Doc;
}

/** Checks an answer against the schema the document gives for its route, method and status. */
function checker(doc: Doc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  for (const [name, schema] of Object.entries(doc.components.schemas))
    ajv.addSchema(schema, `#/components/schemas/${name}`);
  const checked = new Set<string>();
  return {
    checked,
    check: (method: string, route: string, status: number, body: unknown) => {
      const answer = doc.paths[route]?.[method.toLowerCase()]?.responses[String(status)];
      expect(answer, `${method} ${route} ${status} is documented`).toBeDefined();
      const schema = answer?.content?.['application/json']?.schema;
      if (schema) {
        const validate = ajv.compile({ ...schema, $defs: undefined });
        expect(
          validate(body),
          `${method} ${route} ${status}: ${JSON.stringify(validate.errors)}`,
        ).toBe(true);
      }
      checked.add(`${method} ${route}`);
    },
  };
}

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 with every route tagged, summarised and its errors described', async () => {
    const gw = await startGateway();
    const doc = await documented(gw);
    expect(doc.openapi).toBe('3.1.0');
    await SwaggerParser.validate(structuredClone(doc) as never);
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ path, method, op })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(25);
    for (const { path, method, op } of operations) {
      expect(op.tags?.length, `${method} ${path} tags`).toBeGreaterThan(0);
      expect(op.summary, `${method} ${path} summary`).toBeTruthy();
      expect(Object.keys(op.responses), `${method} ${path}`).toEqual(
        expect.arrayContaining(['400', '401', '421', '500']),
      );
      expect(
        Object.keys(op.responses).some((s) => s.startsWith('2')),
        `${method} ${path} success`,
      ).toBe(true);
    }
    expect(doc.paths['/health']!.get).toMatchObject({ security: [] });
    expect(doc.paths['/platform/{name}/inbound']!.post).toMatchObject({ security: [] });
    expect(doc.paths['/metrics']!.get!.responses['200']!.content).toHaveProperty('text/plain');
  });

  it('describes what every route really answers, errors included', async () => {
    const receiver = await webhookReceiver(webhookSecret('an-inbound-webhook-secret'));
    const sl = await slackDouble();
    const gw = await startGateway({
      platforms: [
        {
          name: 'ops',
          type: 'webhook',
          homeChannel: 'room',
          options: { url: receiver.url, secret: receiver.secret },
        },
        {
          name: 'sl',
          type: 'slack',
          options: { botToken: sl.botToken, signingSecret: sl.signingSecret, apiBase: sl.url },
        },
      ],
    });
    const doc = await documented(gw);
    const { check, checked } = checker(doc);
    const call = async (
      method: string,
      route: string,
      path: string,
      body?: unknown,
      headers?: Record<string, string>,
    ) => {
      const res = await api(gw.url, method, path, body, headers);
      check(method, route, res.status, res.status === 204 ? undefined : res.body);
      return res;
    };
    const parent = (await call('POST', '/tasks', '/tasks', { title: 'parent' })).body;
    const task = (
      await call('POST', '/tasks', '/tasks', { title: 'described', parents: [parent.id] })
    ).body;
    await call('GET', '/tasks', '/tasks?limit=1');
    await call('GET', '/tasks/{id}', `/tasks/${task.id}`);
    await call('GET', '/tasks/{id}', '/tasks/t_000000000000');
    await call('PATCH', '/tasks/{id}', `/tasks/${task.id}`, { priority: 3 });
    await call('PATCH', '/tasks/{id}', `/tasks/${task.id}`, { bogus: 1 });
    await call('POST', '/tasks/{id}/comments', `/tasks/${task.id}/comments`, { text: 'hi' });
    await call('GET', '/tasks/{id}/runs', `/tasks/${task.id}/runs`);
    await call('GET', '/tasks/{id}/events', `/tasks/${task.id}/events`);
    await call('GET', '/events', '/events?after=0');
    await call('POST', '/tasks/{id}/unblock', `/tasks/${task.id}/unblock`);
    const run = await claim(gw.kanban.board, gw.dataDir, parent.id);
    const worker = { authorization: `Bearer ${run.token}` };
    await call(
      'POST',
      '/tasks/{id}/heartbeat',
      `/tasks/${parent.id}/heartbeat`,
      { note: 'n' },
      worker,
    );
    await call(
      'POST',
      '/tasks/{id}/complete',
      `/tasks/${parent.id}/complete`,
      { summary: 's', result: { n: 1 } },
      worker,
    );
    await call('POST', '/tasks/{id}/block', `/tasks/${parent.id}/block`, { reason: 'r' }, worker);
    await call('GET', '/tasks/{id}', `/tasks/${parent.id}`);
    mkdirSync(join(gw.dataDir, 'runs', run.run.id), { recursive: true });
    writeFileSync(run.run.logPath, 'a line\n');
    const log = await rawRequest(gw.url, 'GET', `/runs/${run.run.id}/log`, {
      host: new URL(gw.url).host,
    });
    check('GET', '/runs/{runId}/log', log.status, log.body);
    await call('GET', '/runs/{runId}/log', '/runs/r_000000000000/log');
    await call('POST', '/tasks/{id}/reclaim', `/tasks/${task.id}/reclaim`, {});
    await call('POST', '/tasks/{id}/archive', `/tasks/${task.id}/archive`);
    await call('DELETE', '/tasks/{id}', `/tasks/${task.id}`);
    await call('DELETE', '/tasks/{id}', `/tasks/${parent.id}`);
    await call('GET', '/platform', '/platform');
    await call('GET', '/platform/{name}', '/platform/ops');
    await call('GET', '/platform/{name}', '/platform/nope');
    await call('POST', '/platform/{name}/send', '/platform/ops/send', { text: 'hello' });
    for (const action of ['pause', 'resume', 'reconnect'])
      await call('POST', `/platform/{name}/${action}`, `/platform/ops/${action}`);
    const inbound = JSON.stringify({ channel: 'c', text: '/tasks' });
    await call(
      'POST',
      '/platform/{name}/inbound',
      '/platform/ops/inbound',
      inbound,
      signedHeaders(receiver.secret, inbound),
    );
    await call('POST', '/platform/{name}/inbound', '/platform/ops/inbound', inbound, {});
    const event = sl.signedEvent('C1', '/tasks', 'Ev1');
    await call('POST', '/platform/{name}/events', '/platform/sl/events', event.body, event.headers);
    await call('POST', '/platform/{name}/events', '/platform/sl/events', event.body, {
      'content-type': 'application/json',
    });
    await call(
      'POST',
      '/platform/{name}/events',
      '/platform/ops/events',
      event.body,
      event.headers,
    );
    await call('GET', '/health', '/health');
    await call('GET', '/ready', '/ready');
    const { hosts } = (await call('GET', '/hosts', '/hosts')).body;
    // This daemon, and on PostgreSQL the host the test's claims are made for.
    expect(hosts.length).toBeGreaterThan(0);
    for (const host of hosts) expect(host.state).toBe('active');
    const metrics = await rawRequest(gw.url, 'GET', '/metrics', { host: new URL(gw.url).host });
    check('GET', '/metrics', metrics.status, metrics.body);
    await call('POST', '/admin/restart', '/admin/restart');
    await call('POST', '/admin/stop', '/admin/stop');
    const misdirected = await rawRequest(gw.url, 'GET', '/tasks', { host: 'evil.example' });
    check('GET', '/tasks', misdirected.status, misdirected.body);
    const documentedRoutes = Object.entries(doc.paths).flatMap(([p, m]) =>
      Object.keys(m).map((k) => `${k.toUpperCase()} ${p}`),
    );
    expect([...checked].sort()).toEqual(documentedRoutes.sort());
  });

  it('generates TypeScript types that a small client type-checks against', async () => {
    const gw = await startGateway();
    const doc = await documented(gw);
    const dir = tempDir('gatehouse-client-');
    writeFileSync(join(dir, 'api.d.ts'), await openapiTS(doc as never));
    writeFileSync(
      join(dir, 'client.ts'),
      `import type { paths, components } from './api.js';
type Task = components['schemas']['Task'];
type Created = paths['/tasks']['post']['responses']['201']['content']['application/json'];
type Failure = paths['/tasks/{id}']['get']['responses']['404']['content']['application/json'];
export async function create(base: string, title: string): Promise<Task> {
  const res = await fetch(base + '/tasks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title }) });
  if (res.status !== 201) throw new Error(((await res.json()) as Failure).error.message);
  const task = (await res.json()) as Created;
  const status: 'todo' | 'ready' | 'running' | 'blocked' | 'done' | 'archived' = task.status;
  void status;
  return task;
}
`,
    );
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          lib: ['ES2022', 'DOM'],
          skipLibCheck: false,
        },
        files: ['client.ts'],
      }),
    );
    execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], {
      stdio: 'pipe',
    });
  });
});
