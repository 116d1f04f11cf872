// contrib/prometheus and contrib/grafana are accepted by the tools they are for, and name only
// metrics the daemon exports.
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, startGateway } from '../helpers/app.js';
import { ROOT, tempDir } from '../helpers/daemon.js';
import { webhookSecret } from '../helpers/doubles.js';

const CONTRIB = join(ROOT, 'contrib');

function promtool(args: string[], cwd: string): string {
  const run = spawnSync('promtool', args, { cwd, encoding: 'utf8' });
  if (run.error)
    throw new Error(`promtool is missing: apt-get install prometheus (${run.error.message})`);
  expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
  return run.stdout;
}

/** Metric names in a PromQL expression (words followed by a selector, a range or the end). */
function metricNames(expr: string): string[] {
  const names = new Set<string>();
  const functions = new Set([
    'sum',
    'by',
    'rate',
    'increase',
    'histogram_quantile',
    'changes',
    'count',
    'min_over_time',
    'deriv',
    'and',
    'or',
    'le',
    'max',
    'min',
    'avg',
    'without',
    'on',
    'ignoring',
  ]);
  const stripped = expr.replace(/\{[^}]*\}/g, '{}').replace(/"[^"]*"/g, '""');
  for (const m of stripped.matchAll(/\b([a-z_][a-z0-9_]*)\b/g)) {
    const word = m[1]!;
    if (functions.has(word) || !/_/.test(word) || /^\d/.test(word)) continue;
    names.add(word);
  }
  return [...names];
}

describe('contrib for Prometheus and Grafana', () => {
  it('passes promtool check config, check rules and the unit tests of every alert', () => {
    const dir = tempDir();
    for (const f of ['gatehouse.rules.yml', 'gatehouse.rules.test.yml'])
      copyFileSync(join(CONTRIB, 'prometheus', f), join(dir, f));
    const token = join(dir, 'token');
    writeFileSync(token, 'a-token\n');
    writeFileSync(
      join(dir, 'prometheus.yml'),
      readFileSync(join(CONTRIB, 'prometheus/prometheus.yml'), 'utf8').replaceAll(
        '/etc/prometheus/gatehouse.token',
        token,
      ),
    );
    expect(promtool(['check', 'config', 'prometheus.yml'], dir)).toContain('SUCCESS');
    expect(promtool(['check', 'rules', 'gatehouse.rules.yml'], dir)).toContain('6 rules found');
    expect(promtool(['test', 'rules', 'gatehouse.rules.test.yml'], dir)).toContain('SUCCESS');
    // Every alert has a unit test.
    const rules = readFileSync(join(dir, 'gatehouse.rules.yml'), 'utf8');
    const tests = readFileSync(join(dir, 'gatehouse.rules.test.yml'), 'utf8');
    for (const [, alert] of rules.matchAll(/- alert: (\w+)/g))
      expect(tests, alert).toContain(`alertname: ${alert}`);
  });

  it('names in the dashboard and the alerts only metrics the daemon exports', async () => {
    const gw = await startGateway({
      platforms: [
        {
          name: 'ops',
          type: 'webhook',
          options: { url: 'http://127.0.0.1:9/x', secret: webhookSecret('contrib') },
        },
      ],
    });
    await api(gw.url, 'POST', '/tasks', { title: 'counted' });
    const text = (await api(gw.url, 'GET', '/metrics')).body as string;
    const exported = new Set(['up']);
    for (const [, family, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      exported.add(family!);
      if (type === 'histogram')
        for (const suffix of ['_bucket', '_sum', '_count']) exported.add(`${family}${suffix}`);
    }
    const dashboard = JSON.parse(readFileSync(join(CONTRIB, 'grafana/gatehouse.json'), 'utf8'));
    const exprs: string[] = dashboard.panels.flatMap((p: { targets: { expr: string }[] }) =>
      p.targets.map((t) => t.expr),
    );
    // The hosts of a shared board have panels of their own: by state, lease left, declared dead.
    for (const family of [
      'gatehouse_hosts',
      'gatehouse_host_lease_expiry_timestamp_seconds',
      'gatehouse_hosts_declared_dead_total',
    ])
      expect(exprs.some((e) => metricNames(e).includes(family))).toBe(true);
    const rules = readFileSync(join(CONTRIB, 'prometheus/gatehouse.rules.yml'), 'utf8');
    exprs.push(...[...rules.matchAll(/expr: (\|\n(?:\s{10}.*\n)+|.*)/g)].map((m) => m[1]!));
    expect(exprs.length).toBeGreaterThan(15);
    const unknown = exprs.flatMap(metricNames).filter((name) => !exported.has(name));
    expect(unknown).toEqual([]);
  });
});
