import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startCluster } from '../scripts/pg-cluster.mjs';
import { interleaved, startChild } from './api.mjs';
import { envWithout, removeDir, start, stopAll, tempDir, waitServing } from './lib.mjs';
const cluster = await startCluster({ durable: true });
const schema = () => `bench_${randomBytes(4).toString('hex')}`;
const dirs = [];
try {
  const servers = {};
  for (const [name, root] of [['base', '/tmp/base'], ['main', '/work/main']]) {
    const dir = tempDir(); dirs.push(dir);
    const configPath = join(dir, 'config.json');
    writeFileSync(configPath, JSON.stringify({ store: { kind: 'postgres', url: cluster.url, schema: schema(), poolSize: 10 }, workers: { maxConcurrent: 0 } }));
    const d = start([process.execPath, '--max-semi-space-size=1', `${root}/bin/gatehouse.js`, 'run', '--data-dir', dir, '--port', '0', '--config', configPath], { env: envWithout('GATEHOUSE_') });
    servers[name] = await waitServing(dir, d.pid);
  }
  servers.bare = (await startChild('bench/bare-pg-server.mjs', [cluster.url, schema(), '10'])).url;
  const out = await interleaved(servers);
  for (const [name, r] of Object.entries(out))
    console.log(name, 'POST', r.post.map((x) => Math.round(x.requests.average)).join(' '), 'GET', r.get.map((x) => Math.round(x.requests.average)).join(' '));
} finally {
  stopAll();
  for (const d of dirs) removeDir(d);
  cluster.stop();
}
