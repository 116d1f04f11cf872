import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, rawRequest, startGateway } from '../helpers/app.js';
import { ROOT } from '../helpers/daemon.js';
import { waitFor } from '../helpers/wait.js';
import { profile } from '../helpers/workers.js';

interface Family {
  name: string;
  type: string;
  metrics: {
    value?: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    count?: string;
  }[];
}

function byLabel(families: Family[], name: string, label: string): Record<string, number> {
  const family = families.find((f) => f.name === name);
  if (!family) throw new Error(`no metric ${name}`);
  return Object.fromEntries(family.metrics.map((m) => [m.labels?.[label] ?? '', Number(m.value)]));
}

describe('/metrics', () => {
  it('parses as Prometheus text and agrees with the API', async () => {
    const gw = await startGateway(
      {
        workers: {
          tickSeconds: 0.1,
          profiles: { ok: profile('complete'), fail: profile('exit', {}, '1') },
          failureLimit: 1,
        },
      },
      { dispatch: true },
    );
    await api(gw.url, 'POST', '/tasks', { title: 'a', assignee: 'ok' });
    await api(gw.url, 'POST', '/tasks', { title: 'b', assignee: 'fail' });
    await waitFor(
      'both settled',
      async () =>
        (await gw.kanban.board.counts()).done === 1 &&
        (await gw.kanban.board.counts()).blocked === 1,
    );
    await waitFor('a tick', () => gw.dispatcher.tickDurations.length > 0);
    const res = await fetch(`${gw.url}/metrics`);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    const families = parsePrometheusTextFormat(text) as Family[];
    const ready = (await api(gw.url, 'GET', '/ready')).body;
    expect(byLabel(families, 'gatehouse_tasks', 'status')).toEqual(ready.board);
    expect(byLabel(families, 'gatehouse_runs', 'outcome')).toEqual({ completed: 1, crashed: 1 });
    // Counters of what happened, which rate() can read (the gauge above shrinks with retention).
    const finished = byLabel(families, 'gatehouse_runs_finished_total', 'outcome');
    expect(finished).toMatchObject({ completed: 1, crashed: 1, timed_out: 0 });
    const single = (name: string) => byLabel(families, name, '')[''];
    expect(single('gatehouse_spawns_total')).toBe(2);
    expect(single('gatehouse_gave_up_total')).toBe(1);
    expect(single('gatehouse_retries_total')).toBe(0);
    expect(single('gatehouse_timeouts_total')).toBe(0);
    // This daemon as a host of its board: its lease (a timestamp), running and capacity.
    const [host] = (await api(gw.url, 'GET', '/hosts')).body.hosts;
    expect(byLabel(families, 'gatehouse_hosts', 'state')).toEqual({
      active: 1,
      draining: 0,
      dead: 0,
    });
    expect(byLabel(families, 'gatehouse_host_capacity', 'host')).toEqual({ [host.name]: 8 });
    expect(
      byLabel(families, 'gatehouse_host_lease_expiry_timestamp_seconds', 'host')[host.name],
    ).toBeGreaterThan(Date.now() / 1000);
    expect(single('gatehouse_hosts_declared_dead_total')).toBe(0);
    expect(byLabel(families, 'gatehouse_build_info', 'version')).toEqual({
      [JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version]: 1,
    });
    // Histograms with labels, read from the text (the parser drops their labels).
    expect(text).toMatch(/^gatehouse_run_duration_seconds_count\{outcome="completed"\} 1$/m);
    expect(text).toMatch(/^gatehouse_run_duration_seconds_count\{outcome="crashed"\} 1$/m);
    expect(text).toMatch(/^gatehouse_ready_wait_seconds_count 2$/m);
    expect(text).toMatch(
      /^gatehouse_http_request_duration_seconds_count\{route="\/tasks",method="POST",status="201"\} 2$/m,
    );
    const tick = families.find((f) => f.name === 'gatehouse_dispatcher_tick_seconds');
    expect(tick?.type).toBe('HISTOGRAM');
    expect(Number(tick?.metrics[0]?.count)).toBeGreaterThan(0);
    expect(families.some((f) => f.name === 'process_cpu_user_seconds_total')).toBe(true);
  });

  it('describes every route in /openapi.json and serves /docs', async () => {
    const gw = await startGateway();
    const doc = (await api(gw.url, 'GET', '/openapi.json')).body;
    expect(doc.openapi).toMatch(/^3\./);
    // @fastify/websocket hides /events/stream (OpenAPI cannot describe a websocket); docs/api.md does.
    for (const path of [
      '/tasks',
      '/tasks/{id}',
      '/tasks/{id}/complete',
      '/events',
      '/platform/{name}/send',
    ]) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
    expect(
      doc.paths['/tasks'].post.requestBody.content['application/json'].schema.properties.title
        .maxLength,
    ).toBe(500);
    expect((await fetch(`${gw.url}/docs/`)).status).toBe(200);
  });

  it("serves the docs' files whole, and a 304 with nothing added to it", async () => {
    const gw = await startGateway();
    const file = await fetch(`${gw.url}/docs/static/swagger-ui-bundle.js`);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toMatch(/javascript/);
    const body = await file.arrayBuffer();
    expect(body.byteLength).toBeGreaterThan(100_000);
    expect(body.byteLength).toBe(Number(file.headers.get('content-length')));
    // fetch would ask caches to revalidate (no-cache), which a static file server answers 200.
    const again = await rawRequest(gw.url, 'GET', '/docs/static/swagger-ui-bundle.js', {
      host: new URL(gw.url).host,
      'if-none-match': file.headers.get('etag')!,
    });
    expect(again.status).toBe(304);
    expect(again.headers['content-type']).toBeUndefined();
    const head = await fetch(`${gw.url}/docs/static/swagger-ui-bundle.js`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(file.headers.get('content-length'));
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });

  it('passes promtool check metrics (Debian prometheus; .ci/run installs it)', async () => {
    const gw = await startGateway({
      platforms: [
        {
          name: 'ops',
          type: 'webhook',
          options: {
            url: 'http://127.0.0.1:9/x',
            secret: 'whsec_c3Nzc3Nzc3Nzc3Nzc3Nzc3Nzc3Nzc3Nz',
          },
        },
      ],
    });
    await api(gw.url, 'POST', '/tasks', { title: 'counted' });
    const text = (await api(gw.url, 'GET', '/metrics')).body as string;
    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    if (check.error)
      throw new Error(`promtool is missing: apt-get install prometheus (${check.error.message})`);
    expect(`${check.stdout}${check.stderr}`).toBe('');
    expect(check.status).toBe(0);
    expect(text).toMatch(/^nodejs_active_handles(\{[^}]*\})? \d+$/m);
    // The breaker as one series per state, for alerting on `state="open"`.
    expect(text).toMatch(/^gatehouse_platform_breaker\{platform="ops",state="closed"\} 1$/m);
    expect(text).toMatch(/^gatehouse_platform_breaker\{platform="ops",state="open"\} 0$/m);
    expect(text).not.toMatch(/^nodejs_active_handles_total/m);
  });
});
