import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { startCluster } from '../scripts/pg-cluster.mjs';
import { loadConfig } from '../dist/config/load.js';
import { composeGateway } from '../dist/gateway/compose.js';
import { openBoard } from '../dist/kanban/store/open.js';
import { tempDir, waitFor, median } from './lib.mjs';
const TRIVIAL = ['/bin/sh', '-c', `printf '{"status":"done"}' > "$GATEHOUSE_RUN_DIR/result.json"`];
const silent = pino({ level: 'silent' });
const OPEN_HOOKS = { onRepair: () => {}, onRetry: () => {}, onIdleError: () => {} };
async function one(store, n) {
  const dataDir = tempDir();
  const configPath = join(dataDir, 'config.json');
  writeFileSync(configPath, JSON.stringify({ dataDir, store, workers: { tickSeconds: 1, maxConcurrent: 8, profiles: { t: { command: TRIVIAL, maxConcurrent: 8 } } } }));
  const config = loadConfig({ config: configPath }, process.env, dataDir);
  const s = await openBoard(config.store, dataDir, OPEN_HOOKS);
  const counts = globalThis.__counts = { tx: 0, reads: 0, txq: 0, stacks: new Map() };
  if (s.pool) {
    const q = s.pool.query.bind(s.pool);
    s.pool.query = (...a) => { counts.reads++; const k = new Error().stack.split('\n').slice(2, 6).map((l) => l.trim().replace(/\(.*\/dist\//, '(').replace(/:\d+\)$/, ')')).join(' < '); counts.stacks.set(k, (counts.stacks.get(k) ?? 0) + 1); return q(...a); };
    const t = s.transaction.bind(s);
    s.transaction = (fn) => { counts.tx++; return t(fn); };
  }
  const gw = await composeGateway({ config, store: s, logger: silent, requestStop: () => {} });
  await gw.app.listen({ host: '127.0.0.1', port: 0 });
  await gw.dispatcher.start(`http://127.0.0.1:${gw.app.server.address().port}`);
  const t0 = performance.now();
  const tasks = await Promise.all(Array.from({ length: n }, (_, i) => gw.kanban.board.create({ title: `life ${i}`, assignee: 't' }, { kind: 'api' })));
  await waitFor('all done', async () => { const c = await gw.kanban.board.counts(); return c.done + c.blocked === n; }, 120_000, 10);
  const rate = n / ((performance.now() - t0) / 1000);
  const gaps = {};
  for (const t of tasks.slice(n / 2)) {
    const ev = await gw.kanban.board.events.listForTask(t.id, 0, 100);
    for (let i = 1; i < ev.length; i++) (gaps[`${ev[i - 1].kind}->${ev[i].kind}`] ??= []).push(ev[i].at - ev[i - 1].at);
  }
  for (const step of gw.closeSteps) await step.run();
  return { rate, gaps: Object.fromEntries(Object.entries(gaps).map(([k, v]) => [k, `${median(v)} (n=${v.length})`])) };
}
const cluster = await startCluster({ durable: true });
try {
  const pg = () => ({ kind: 'postgres', url: cluster.url, schema: 's' + Math.random().toString(36).slice(2, 8), poolSize: 10 });
  await one(pg(), 40);
  const pgm = (await import('pg')).default;
  const c = new pgm.Client({ connectionString: cluster.url }); await c.connect();
  const stat = async () => (await c.query("SELECT xact_commit::int AS x FROM pg_stat_database WHERE datname = 'postgres'")).rows[0].x;
  const x0 = await stat();
  console.log('pg', await one(pg(), 300));
  await new Promise((r) => setTimeout(r, 1000));
  console.log('commits per task', (await stat() - x0) / 300, 'tx', globalThis.__counts.tx / 300, 'reads', globalThis.__counts.reads / 300);
  console.log([...globalThis.__counts.stacks].sort((a, b) => b[1] - a[1]).slice(0, 14).map(([k, v]) => (v / 300).toFixed(2) + ' ' + k).join('\n'));
  await c.end();
} finally { cluster.stop(); }
