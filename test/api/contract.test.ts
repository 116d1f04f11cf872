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
import { askQuestion } from '../../src/kanban/moves/asks.js';
import { ROOT, freePort, tempDir } from '../helpers/daemon.js';
import { waitFor } from '../helpers/wait.js';
import { BEARER_CHALLENGE } from '../../src/errors.js';
import { WaitingServer } from '../../src/gateway/waiting-server.js';
import { signedHeaders, webhookReceiver, webhookSecret } from '../helpers/doubles.js';
import { slackDouble } from '../helpers/slack-double.js';
import { holdBoard } from '../helpers/store.js';
import { makeRepo } from '../helpers/git.js';
import { githubDouble } from '../helpers/forges/github.js';
import { ForgeModel } from '../helpers/forges/model.js';
import { createHmac } from 'node:crypto';

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
        description?: string;
        operationId?: string;
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

const TOKEN = 'contract-test-api-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** A body each route accepts, for the answers that come after validation (401, 403, 404). */
const VALID_BODY: Record<string, unknown> = {
  'POST /tasks': { title: 'valid' },
  'PATCH /tasks/{id}': { priority: 1 },
  'POST /tasks/{id}/comments': { text: 'valid' },
  'POST /tasks/{id}/follow-up': { text: 'valid' },
  'POST /tasks/{id}/request-changes': { text: 'valid' },
  'POST /tasks/{id}/approve': {},
  'POST /tasks/{id}/answer': { text: 'valid' },
  'POST /tasks/{id}/reclaim': {},
  'POST /tasks/{id}/complete': { summary: 'valid' },
  'POST /tasks/{id}/block': { reason: 'valid' },
  'POST /tasks/{id}/heartbeat': { note: 'valid' },
  'POST /platform/{name}/send': { text: 'valid' },
};
/** A query each route refuses (400), for the routes whose only input is their query. */
const BAD_QUERY: Record<string, string> = {
  'GET /tasks': '?limit=0',
  'GET /events': '?after=-1',
  'GET /tasks/counts': '?q=',
  'GET /stats/throughput': '?window=week',
};

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1, every operation named, tagged, summarised and described', async () => {
    const gw = await startGateway();
    const doc = await documented(gw);
    expect(doc.openapi).toBe('3.1.0');
    await SwaggerParser.validate(structuredClone(doc) as never);
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ path, method, op })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(25);
    const ids = new Set<string>();
    for (const { path, method, op } of operations) {
      const where = `${method} ${path}`;
      expect(op.tags?.length, `${where} tags`).toBeGreaterThan(0);
      expect(op.summary, `${where} summary`).toBeTruthy();
      expect(op.description, `${where} description`).toBeTruthy();
      expect(op.operationId, `${where} operationId`).toMatch(/^[a-z][A-Za-z]+$/);
      ids.add(op.operationId!);
      expect(Object.keys(op.responses), where).toEqual(expect.arrayContaining(['421', '500']));
      expect(
        Object.keys(op.responses).some((s) => s.startsWith('2')),
        `${where} success`,
      ).toBe(true);
    }
    expect(ids.size).toBe(operations.length);
    expect(doc.paths['/health']!.get).toMatchObject({ security: [] });
    expect(Object.keys(doc.paths['/health']!.get!.responses)).not.toContain('401');
    expect(doc.paths['/platform/{name}/inbound']!.post).toMatchObject({ security: [] });
    expect(doc.paths['/metrics']!.get!.responses['200']!.content).toHaveProperty('text/plain');
    expect(Object.keys(doc.components.schemas)).not.toContain('Error');
  });

  it('declares exactly what every route answers: each answer declared, each declared answer seen', async () => {
    const receiver = await webhookReceiver(webhookSecret('an-inbound-webhook-secret'));
    const sl = await slackDouble();
    const gw = await startGateway(
      {
        api: { token: TOKEN },
        schedules: { nightly: { cron: '0 3 * * *', task: { title: 'bump dependencies' } } },
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
      },
      { keyedWaitMs: 0 },
    );
    const doc = await documented(gw);
    const { check } = checker(doc);
    /** METHOD route status, for every answer the test saw. */
    const seen = new Set<string>();
    const host = new URL(gw.url).host;
    const signedRoutes = [
      '/platform/{name}/inbound',
      '/platform/{name}/events',
      '/forges/{repo}/webhook',
    ];
    const note = <R extends { status: number; body: unknown; headers: unknown }>(
      method: string,
      route: string,
      res: R,
    ) => {
      check(method, route, res.status, res.status === 204 ? undefined : res.body);
      seen.add(`${method} ${route} ${res.status}`);
      // A token's 401 says how to authenticate; a signature's does not ask for a bearer token.
      if (res.status === 401) {
        const h = res.headers;
        const challenge =
          h instanceof Headers
            ? h.get('www-authenticate')
            : (h as Record<string, string | undefined>)['www-authenticate'];
        expect(challenge ?? null, `${method} ${route} 401`).toBe(
          signedRoutes.includes(route) ? null : BEARER_CHALLENGE,
        );
      }
      return res;
    };
    const call = async (
      method: string,
      route: string,
      path: string,
      body?: unknown,
      headers?: Record<string, string>,
    ) => note(method, route, await api(gw.url, method, path, body, { ...AUTH, ...headers }));
    const raw = async (
      method: string,
      route: string,
      path: string,
      headers: Record<string, string>,
      body?: string,
    ) => {
      // Framed by its length: Node sends a DELETE's body unframed otherwise.
      const length: Record<string, string> =
        body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) };
      return note(
        method,
        route,
        await rawRequest(gw.url, method, path, { host, ...length, ...headers }, body),
      );
    };

    // What each route answers when it does its job, and its own refusals.
    const parent = (await call('POST', '/tasks', '/tasks', { title: 'parent' })).body as {
      id: string;
    };
    const task = (
      await call('POST', '/tasks', '/tasks', { title: 'described', parents: [parent.id] })
    ).body as { id: string };
    await call('POST', '/tasks', '/tasks', { title: 'orphan', parents: ['t_000000000000'] });
    await call('GET', '/tasks', '/tasks?limit=1');
    await call('GET', '/tasks', '/tasks?q=DESCRIBED&status=todo');
    await call('GET', '/tasks/counts', '/tasks/counts?q=described');
    await call('GET', '/tasks/{id}', `/tasks/${task.id}`);
    await call('PATCH', '/tasks/{id}', `/tasks/${task.id}`, { priority: 3 });
    await call('PATCH', '/tasks/{id}', `/tasks/${task.id}`, { bogus: 1 });
    await call('POST', '/tasks/{id}/comments', `/tasks/${task.id}/comments`, { text: 'hi' });
    // Idempotency keys: a replay, the key sent again with another body, and a twin of a request
    // the board holds (the gateway waits for no twin: keyedWaitMs 0).
    const keyedCalls = [
      ['/tasks', '/tasks', { title: 'keyed' }, { title: 'keyed otherwise' }],
      ['/tasks/{id}/comments', `/tasks/${task.id}/comments`, { text: 'once' }, { text: 'twice' }],
    ] as const;
    for (const [i, [route, path, body, otherBody]] of keyedCalls.entries()) {
      const key = { 'idempotency-key': `contract-${i}` };
      await call('POST', route, path, body, key);
      await call('POST', route, path, body, key);
      await call('POST', route, path, otherBody, key);
      const held = { 'idempotency-key': `contract-held-${i}` };
      const release = await holdBoard(gw.dataDir, 'idempotency_keys');
      try {
        const first = call('POST', route, path, body, held);
        await waitFor('the first being handled', () =>
          gw.kanban.board.handlingKey(held['idempotency-key']),
        );
        expect((await call('POST', route, path, body, held)).status).toBe(409);
        await first;
      } finally {
        await release();
      }
    }
    await call('GET', '/tasks/{id}/runs', `/tasks/${task.id}/runs`);
    await call('GET', '/tasks/{id}/events', `/tasks/${task.id}/events`);
    await call('GET', '/events', '/events?after=0');
    await call('POST', '/tasks/{id}/unblock', `/tasks/${task.id}/unblock`);
    await call('POST', '/tasks/{id}/reclaim', `/tasks/${task.id}/reclaim`, {});
    const run = await claim(gw.kanban.board, gw.dataDir, parent.id);
    const worker = { authorization: `Bearer ${run.token}` };
    await call('PATCH', '/tasks/{id}', `/tasks/${parent.id}`, { priority: 3 });
    for (const [action, body] of [
      ['heartbeat', { note: 'n' }],
      ['complete', { summary: 's', result: { n: 1 } }],
    ] as const)
      await call('POST', `/tasks/{id}/${action}`, `/tasks/${parent.id}/${action}`, body, worker);
    // A follow-up: refused for a task that is not done; the done one goes back, once per key.
    await call('POST', '/tasks/{id}/follow-up', `/tasks/${task.id}/follow-up`, { text: 'more' });
    const followKey = { 'idempotency-key': 'contract-follow-up' };
    for (const text of ['more', 'more', 'other'])
      await call(
        'POST',
        '/tasks/{id}/follow-up',
        `/tasks/${parent.id}/follow-up`,
        { text },
        followKey,
      );
    // Review: refused before the task is in review; sent back once, then approved.
    const reviewed = (await call('POST', '/tasks', '/tasks', { title: 'reviewed', review: true }))
      .body as { id: string };
    await call('POST', '/tasks/{id}/approve', `/tasks/${reviewed.id}/approve`, {});
    const changes = { text: 'change it' };
    await call(
      'POST',
      '/tasks/{id}/request-changes',
      `/tasks/${reviewed.id}/request-changes`,
      changes,
    );
    for (const step of ['request-changes', 'approve'] as const) {
      const r = await claim(gw.kanban.board, gw.dataDir, reviewed.id);
      const auth = { authorization: `Bearer ${r.token}` };
      await call('POST', '/tasks/{id}/complete', `/tasks/${reviewed.id}/complete`, {}, auth);
      await call(
        'POST',
        `/tasks/{id}/${step}`,
        `/tasks/${reviewed.id}/${step}`,
        step === 'approve' ? {} : changes,
      );
    }
    // A question its agent asked: no answer before it blocks on it, then one.
    const asking = (await call('POST', '/tasks', '/tasks', { title: 'asks' })).body as {
      id: string;
    };
    await call('POST', '/tasks/{id}/answer', `/tasks/${asking.id}/answer`, { text: 'too soon' });
    await call('POST', '/tasks/{id}/answer', '/tasks/t_000000000000/answer', { text: 'nobody' });
    const askRun = await claim(gw.kanban.board, gw.dataDir, asking.id);
    await gw.kanban.board.transact((tx) =>
      askQuestion(tx, asking.id, askRun.run.id, 'which one?', null),
    );
    await call(
      'POST',
      '/tasks/{id}/complete',
      `/tasks/${asking.id}/complete`,
      {},
      {
        authorization: `Bearer ${askRun.token}`,
      },
    );
    await call('POST', '/tasks/{id}/answer', `/tasks/${asking.id}/answer`, {
      text: 'the blue one',
    });
    // The run has ended: its token is stale now.
    for (const [action, body] of Object.entries({
      heartbeat: { note: 'late' },
      complete: { summary: 'late' },
      block: { reason: 'late' },
    }))
      await call('POST', `/tasks/{id}/${action}`, `/tasks/${parent.id}/${action}`, body, worker);
    await call('POST', '/tasks/{id}/complete', `/tasks/${task.id}/complete`, {}, worker);
    const second = (await call('POST', '/tasks', '/tasks', { title: 'blocked one' })).body as {
      id: string;
    };
    const blocking = await claim(gw.kanban.board, gw.dataDir, second.id);
    const blocker = { authorization: `Bearer ${blocking.token}` };
    await call('POST', '/tasks/{id}/block', `/tasks/${second.id}/block`, { reason: 'r' }, blocker);
    // Another verdict from a run that gave its own: refused.
    await call('POST', '/tasks/{id}/complete', `/tasks/${second.id}/complete`, {}, blocker);
    await call('POST', '/tasks/{id}/unblock', `/tasks/${second.id}/unblock`);
    const third = (await call('POST', '/tasks', '/tasks', { title: 'reclaimed' })).body as {
      id: string;
    };
    await claim(gw.kanban.board, gw.dataDir, third.id);
    await call('POST', '/tasks/{id}/reclaim', `/tasks/${third.id}/reclaim`, {});
    await call('GET', '/tasks/{id}', `/tasks/${parent.id}`);
    mkdirSync(join(gw.dataDir, 'runs', run.run.id), { recursive: true });
    writeFileSync(run.run.logPath, 'a line\n');
    await raw('GET', '/runs/{runId}/log', `/runs/${run.run.id}/log`, AUTH);
    await call('GET', '/runs/{runId}/transcript', `/runs/${run.run.id}/transcript`);
    await call('GET', '/runs/{runId}/transcript', '/runs/r_000000000000/transcript');
    await call('GET', '/runs/{runId}/transcript', `/runs/${run.run.id}/transcript?after=-1`);
    await call('DELETE', '/tasks/{id}', `/tasks/${task.id}`);
    await call('POST', '/tasks/{id}/archive', `/tasks/${task.id}/archive`);
    await call('POST', '/tasks/{id}/archive', `/tasks/${task.id}/archive`);
    // Best of N: attempts started (and again: 409; of no task: 404), listed, one picked once
    // both ended (archived here), then again (409), and of no task (404).
    await gw.attempts.start();
    const tried = (await call('POST', '/tasks', '/tasks', { title: 'tried twice' })).body as {
      id: string;
    };
    await call('POST', '/tasks/{id}/attempts', `/tasks/${tried.id}/attempts`, { n: 2 });
    await call('POST', '/tasks/{id}/attempts', `/tasks/${tried.id}/attempts`, { n: 2 });
    await call('POST', '/tasks/{id}/attempts', '/tasks/t_000000000000/attempts', { n: 2 });
    const group = (await call('GET', '/tasks/{id}/attempts', `/tasks/${tried.id}/attempts`))
      .body as { attempts: { id: string }[] };
    await call('GET', '/tasks/{id}/attempts', '/tasks/t_000000000000/attempts');
    for (const a of group.attempts)
      await api(gw.url, 'POST', `/tasks/${a.id}/archive`, undefined, AUTH);
    await waitFor('the attempts ended', async () => {
      const t = await api(gw.url, 'GET', `/tasks/${tried.id}`, undefined, AUTH);
      return t.body.status === 'review' || null;
    });
    const pickPath = `/tasks/${tried.id}/attempts/${group.attempts[0]!.id}/pick`;
    await call('POST', '/tasks/{id}/attempts/{attemptId}/pick', pickPath);
    await call('POST', '/tasks/{id}/attempts/{attemptId}/pick', pickPath);
    await call(
      'POST',
      '/tasks/{id}/attempts/{attemptId}/pick',
      `/tasks/t_000000000000/attempts/${group.attempts[0]!.id}/pick`,
    );
    // A budget raised, on an archived task (409), of no task (404), and a bad one (400).
    await call('POST', '/tasks/{id}/budget', `/tasks/${third.id}/budget`, { runs: 5 });
    await call('POST', '/tasks/{id}/budget', `/tasks/${task.id}/budget`, { runs: 5 });
    await call('POST', '/tasks/{id}/budget', '/tasks/t_000000000000/budget', { runs: 5 });
    await call('POST', '/tasks/{id}/budget', `/tasks/${third.id}/budget`, { runs: 0 });
    await call('PATCH', '/tasks/{id}', `/tasks/${task.id}`, { priority: 4 });
    await call('DELETE', '/tasks/{id}', `/tasks/${task.id}`);
    await call('GET', '/platform', '/platform');
    await call('GET', '/platform/{name}', '/platform/ops');
    await call('POST', '/platform/{name}/send', '/platform/ops/send', { text: 'hello' });
    for (const action of ['pause', 'resume', 'reconnect'])
      await call('POST', `/platform/{name}/${action}`, `/platform/ops/${action}`);
    await call('POST', '/platform/{name}/pause', '/platform/ops/pause');
    await call('POST', '/platform/{name}/send', '/platform/ops/send', { text: 'paused' });
    const inbound = JSON.stringify({ channel: 'c', text: '/tasks' });
    const signed = signedHeaders(receiver.secret, inbound);
    await call('POST', '/platform/{name}/inbound', '/platform/ops/inbound', inbound, signed);
    await call('POST', '/platform/{name}/inbound', '/platform/ops/inbound', inbound, signed);
    await call('POST', '/platform/{name}/resume', '/platform/ops/resume');
    await call('POST', '/platform/{name}/inbound', '/platform/ops/inbound', inbound, signed);
    await call('POST', '/platform/{name}/inbound', '/platform/ops/inbound', inbound, signed);
    await call('POST', '/platform/{name}/inbound', '/platform/ops/inbound', inbound, {
      ...signedHeaders(receiver.secret, inbound),
    });
    await call('POST', '/platform/{name}/inbound', '/platform/ops/inbound', inbound, {});
    const event = sl.signedEvent('C1', '/tasks', 'Ev1');
    await call('POST', '/platform/{name}/events', '/platform/sl/events', event.body, event.headers);
    await call('POST', '/platform/{name}/pause', '/platform/sl/pause');
    const paused = sl.signedEvent('C1', '/tasks', 'Ev2');
    await call(
      'POST',
      '/platform/{name}/events',
      '/platform/sl/events',
      paused.body,
      paused.headers,
    );
    await call('POST', '/platform/{name}/events', '/platform/sl/events', event.body, {
      'content-type': 'application/json',
    });
    await call('GET', '/workers', '/workers');
    // A profile's rate-limit hold: released (false: none), or no such profile.
    await call('POST', '/profiles/{name}/release', '/profiles/demo/release');
    await call('POST', '/profiles/{name}/release', '/profiles/nobody/release');
    // Schedules: listed, paused and resumed (and an unknown one), run now.
    await call('GET', '/schedules', '/schedules');
    await call('POST', '/schedules/{name}/pause', '/schedules/nightly/pause');
    await call('POST', '/schedules/{name}/pause', '/schedules/weekly/pause');
    await call('POST', '/schedules/{name}/resume', '/schedules/nightly/resume');
    await call('POST', '/schedules/{name}/run', '/schedules/nightly/run');
    await call('POST', '/schedules/{name}/run', '/schedules/..%2Fx/run');
    await call('GET', '/stats/throughput', '/stats/throughput?window=hour');
    await call('GET', '/stats/throughput', '/stats/throughput?window=day');
    await call('GET', '/health', '/health');
    // Not ready: it dispatches nothing. A gateway that dispatches is.
    await call('GET', '/ready', '/ready');
    const dispatching = await startGateway({ api: { token: TOKEN } }, { dispatch: true });
    note('GET', '/ready', await api(dispatching.url, 'GET', '/ready', undefined, AUTH));
    // A task's worktree: 409 while its setup runs, its diff once it is made.
    const repo = makeRepo();
    const go = join(tempDir(), 'go');
    const worktrees = await startGateway(
      {
        api: { token: TOKEN },
        workers: {
          tickSeconds: 0.1,
          defaultProfile: 'agent',
          profiles: {
            agent: {
              command: ['/bin/sh', '-c', 'echo x > new.txt'],
              workspace: 'worktree',
              repo: 'app',
            },
          },
        },
        workspaces: {
          minFreeBytes: 0,
          repos: {
            app: {
              path: repo,
              setup: ['/bin/sh', '-c', `while [ ! -f ${go} ]; do sleep 0.05; done`],
            },
          },
        },
      },
      { dispatch: true },
    );
    const worked = (await api(worktrees.url, 'POST', '/tasks', { title: 'diff' }, AUTH)).body as {
      id: string;
    };
    const diffOf = () => api(worktrees.url, 'GET', `/tasks/${worked.id}/diff`, undefined, AUTH);
    await waitFor('its worktree being made', async () => (await diffOf()).status === 409);
    note('GET', '/tasks/{id}/diff', await diffOf());
    note('GET', '/workspaces', await api(worktrees.url, 'GET', '/workspaces', undefined, AUTH));
    writeFileSync(go, '');
    await waitFor('its worker to have run', async () => {
      const t = (await api(worktrees.url, 'GET', `/tasks/${worked.id}`, undefined, AUTH)).body as {
        status: string;
      };
      return t.status !== 'ready' && t.status !== 'running';
    });
    note('GET', '/tasks/{id}/diff', await diffOf());
    // A task's pull request on a forge double: opened, bound, synced, and the forge's webhook.
    const { model, checkout } = ForgeModel.withRepository();
    const forge = await githubDouble(model);
    try {
      const prs = await startGateway(
        {
          api: { token: TOKEN },
          workers: {
            tickSeconds: 0.1,
            defaultProfile: 'dev',
            profiles: {
              dev: {
                command: [
                  '/bin/sh',
                  '-c',
                  'echo x > new.txt; printf \'{"status":"done"}\' > "$GATEHOUSE_RUN_DIR/result.json"',
                ],
                workspace: 'worktree',
                repo: 'app',
              },
            },
          },
          workspaces: {
            minFreeBytes: 0,
            repos: {
              app: {
                path: checkout,
                base: 'main',
                pr: {
                  provider: 'github',
                  api: forge.url,
                  project: model.project,
                  tokenEnv: 'GH_T',
                  webhookSecretEnv: 'GH_H',
                },
              },
            },
          },
        },
        { dispatch: true, env: { GH_T: forge.token, GH_H: 'hook-secret' } },
      );
      const pr = (await api(prs.url, 'POST', '/tasks', { title: 'with a PR' }, AUTH)).body as {
        id: string;
      };
      await waitFor('its PR opened', async () => {
        const t = (await api(prs.url, 'GET', `/tasks/${pr.id}`, undefined, AUTH)).body as {
          pr: unknown;
        };
        return t.pr !== null;
      });
      const prCall = (method: string, route: string, path: string, body?: unknown) =>
        api(prs.url, method, path, body, AUTH).then((res) => note(method, route, res));
      await prCall('POST', '/tasks/{id}/pr', `/tasks/${pr.id}/pr`, {});
      await prCall('POST', '/tasks/{id}/pr', `/tasks/${pr.id}/pr`, {
        url: 'https://github.com/other/repo/pull/1',
      });
      await prCall('POST', '/tasks/{id}/pr/sync', `/tasks/${pr.id}/pr/sync`);
      const plain = (await call('POST', '/tasks', '/tasks', { title: 'no repository' })).body as {
        id: string;
      };
      note(
        'POST',
        '/tasks/{id}/pr/sync',
        await api(gw.url, 'POST', `/tasks/${plain.id}/pr/sync`, undefined, AUTH),
      );
      const hook = (event: string, payload: unknown, id: string, secret = 'hook-secret') => {
        const body = JSON.stringify(payload);
        return rawRequest(
          prs.url,
          'POST',
          '/forges/app/webhook',
          {
            host: new URL(prs.url).host,
            'content-type': 'application/json',
            'content-length': String(Buffer.byteLength(body)),
            'x-github-event': event,
            'x-github-delivery': id,
            'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
          },
          body,
        ).then((res) => note('POST', '/forges/{repo}/webhook', res));
      };
      await hook('ping', { zen: 'x' }, 'd-1');
      await hook('ping', { zen: 'x' }, 'd-1');
      await hook('ping', { zen: 'x' }, 'd-2', 'wrong');
      note(
        'POST',
        '/forges/{repo}/webhook',
        await rawRequest(
          prs.url,
          'POST',
          '/forges/nope/webhook',
          {
            host: new URL(prs.url).host,
            'content-type': 'application/json',
            'content-length': '2',
          },
          '{}',
        ),
      );
    } finally {
      await forge.close();
    }
    const { hosts } = (await call('GET', '/hosts', '/hosts')).body as {
      hosts: { state: string }[];
    };
    // This daemon, and on PostgreSQL the host the test's claims are made for.
    expect(hosts.length).toBeGreaterThan(0);
    for (const h of hosts) expect(h.state).toBe('active');
    await raw('GET', '/metrics', '/metrics', AUTH);
    await call('POST', '/admin/restart', '/admin/restart');
    await call('POST', '/admin/stop', '/admin/stop');

    // What every route answers whatever it does: its common errors, provoked one by one.
    const declared = Object.entries(doc.paths).flatMap(([route, methods]) =>
      Object.entries(methods).map(([m, op]) => ({
        method: m.toUpperCase(),
        route,
        statuses: Object.keys(op.responses).map(Number),
      })),
    );
    const concrete = (route: string, value?: string) =>
      route
        .replace('{id}', value ?? 't_000000000000')
        .replace('{runId}', value ?? 'r_000000000000')
        .replace('{name}', value ?? 'nope')
        .replace('{repo}', value ?? 'nope');
    const tooLong = 'x'.repeat(65);
    for (const { method, route, statuses } of declared) {
      const key = `${method} ${route}`;
      const valid = VALID_BODY[key] === undefined ? undefined : JSON.stringify(VALID_BODY[key]);
      const json = { 'content-type': 'application/json' };
      const path = concrete(route);
      await raw(method, route, path, { host: 'evil.example', ...AUTH });
      if (statuses.includes(401) && !signedRoutes.includes(route))
        await raw(method, route, path, valid ? json : {}, valid);
      if (statuses.includes(404))
        await raw(method, route, path, { ...AUTH, ...(valid ? json : {}) }, valid);
      if (route.includes('{')) await raw(method, route, concrete(route, tooLong), AUTH);
      else if (BAD_QUERY[key]) await raw(method, route, `${path}${BAD_QUERY[key]}`, AUTH);
      if (!MUTATING.has(method)) continue;
      if (!route.includes('{')) await raw(method, route, path, { ...AUTH, ...json }, '{');
      await raw(method, route, path, { ...AUTH, origin: 'http://evil.example' });
      await raw(
        method,
        route,
        path,
        { ...AUTH, ...json },
        JSON.stringify({ pad: 'x'.repeat(1_100_000) }),
      );
      await raw(method, route, path, { ...AUTH, 'content-type': 'text/plain' }, 'x');
    }

    // While the board database cannot be reached, the port answers every route but /health
    // with 503 (tokens still checked).
    const port = await freePort();
    const waiting = new WaitingServer('127.0.0.1', port, TOKEN, (err) => {
      throw err;
    });
    waiting.waiting('the test keeps it away');
    await waitFor('the waiting server listening', async () => {
      try {
        return (await fetch(`http://127.0.0.1:${port}/health`)).ok;
      } catch {
        return false;
      }
    });
    try {
      for (const { method, route } of declared)
        note(
          method,
          route,
          await rawRequest(`http://127.0.0.1:${port}`, method, concrete(route), {
            host: `127.0.0.1:${port}`,
            ...AUTH,
          }),
        );
      // Without the API token, the routes that authenticate otherwise (a signature, a run
      // token) hear "come back" too, not "unauthorized" (which their callers take as final),
      // and nothing of why: their callers need no token.
      for (const path of [
        '/platform/ops/inbound',
        '/platform/sl/events',
        '/tasks/t_000000000000/complete',
        '/tasks/t_000000000000/heartbeat',
      ]) {
        const res = await rawRequest(`http://127.0.0.1:${port}`, 'POST', path, {
          host: `127.0.0.1:${port}`,
        });
        expect(res.status, path).toBe(503);
        expect(res.headers['retry-after'], path).toBe('1');
        expect(JSON.stringify(res.body), path).not.toContain('keeps it away');
      }
      expect(
        (
          await rawRequest(`http://127.0.0.1:${port}`, 'GET', '/tasks', {
            host: `127.0.0.1:${port}`,
          })
        ).status,
      ).toBe(401);
    } finally {
      await waiting.close();
    }

    // 500 is declared everywhere and provoked nowhere: no test can make a route fail inside.
    const missing = declared.flatMap(({ method, route, statuses }) =>
      statuses
        .filter((s) => s !== 500 && !seen.has(`${method} ${route} ${s}`))
        .map((s) => `${method} ${route} ${s}`),
    );
    expect(missing, 'declared but never answered').toEqual([]);
  }, 150_000);

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
  const status: 'todo' | 'ready' | 'running' | 'review' | 'blocked' | 'done' | 'archived' = task.status;
  void status;
  return task;
}
// An event's payload is narrowed by its kind.
type Event = components['schemas']['Event'];
export function pidOf(event: Event): number | null {
  return event.kind === 'spawned' ? event.payload.pid : null;
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
