#!/usr/bin/env node
// Starts the bundled daemon on a scratch data dir and loopback port 0, asks it what a first
// client asks (health, the page, the board, metrics), stops it with SIGTERM, and records the
// code V8 compiled on the way as the bundle's code cache.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DAEMON_CODE_CACHE, loadDaemon } from '../dist/cli/daemon-loader.js';
import { PID_FILE, readPidFile } from '../dist/gateway/pid-file.js';
import { waitUntil } from '../dist/proc/index.js';
import { releaseYoungGeneration } from '../dist/gateway/young-generation.js';

const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-train-'));
for (const name of Object.keys(process.env))
  if (name.startsWith('GATEHOUSE_')) delete process.env[name];

const daemon = loadDaemon();
let recorded = false;
process.on('exit', () => {
  // Only a start that went all the way is worth recording (the build says when it did not).
  // Under the flags the next start reads it with (the daemon changed one as it started).
  releaseYoungGeneration();
  if (recorded) writeFileSync(DAEMON_CODE_CACHE, daemon.codeCache());
  rmSync(dataDir, { recursive: true, force: true });
});

const port = () => readPidFile(join(dataDir, PID_FILE))?.port ?? 0;

// Its own config: never a gatehouse.json (platforms, tokens) that happens to be nearby, and a
// token of its own, so that nobody else on the machine can have it start a worker with the
// build's environment while it runs.
const token = randomBytes(24).toString('hex');
const config = join(dataDir, 'config.json');
writeFileSync(config, `${JSON.stringify({ api: { token } })}\n`);
const running = daemon.runDaemon({ overrides: { config, dataDir, port: 0 }, replace: false });
if (!(await waitUntil(() => port() > 0, 10_000)))
  throw new Error('the daemon did not serve within 10 s');
const base = `http://127.0.0.1:${port()}`;
for (const path of ['/health', '/ready', '/', '/tasks?limit=100', '/metrics']) {
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`GET ${path} answered ${res.status}`);
  await res.arrayBuffer();
}
recorded = true;
process.kill(process.pid, 'SIGTERM');
await running;
