// gatehouse's MCP endpoint (docs/mcp.md): a tools/call of get_task from a live run against the
// same task read through GET /tasks/:id on the same daemon (interleaved, one request at a time:
// what an agent's calls cost it), and cold start with an MCP profile configured against the
// same configuration without it (the SDK is loaded at the first call, not at start).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  envWithout,
  gatehouse,
  median,
  p99,
  printTable,
  removeDir,
  stopAll,
  tempDir,
  waitFor,
  waitServing,
} from './lib.mjs';

const CALLS = Number(process.env.BENCH_MCP_CALLS ?? 400);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const env = envWithout('GATEHOUSE_');

function config(dataDir, profile) {
  const path = join(dataDir, 'config.json');
  writeFileSync(
    path,
    JSON.stringify({
      shutdown: { workers: 'terminate' },
      workers: { tickSeconds: 0.1, defaultProfile: 'probe', profiles: { probe: profile } },
    }),
  );
  return path;
}

/** A run that leaves its MCP URL and token where the bench reads them, then waits. */
function holder(tokenFile, mcp) {
  return {
    command: [
      '/bin/sh',
      '-c',
      `printf '%s %s' "$GATEHOUSE_MCP_URL" "$GATEHOUSE_MCP_TOKEN" > '${tokenFile}'; exec sleep 600`,
    ],
    ...(mcp ? { mcp: { enabled: true, maxCallsPerMinute: 100_000 } } : {}),
  };
}

async function timed(fn) {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

async function roundTrips() {
  const dir = tempDir();
  const tokenFile = join(dir, 'token');
  const d = gatehouse(
    ['run', '--data-dir', dir, '--port', '0', '--config', config(dir, holder(tokenFile, true))],
    { env },
  );
  try {
    const url = await waitServing(dir, d.pid);
    const { id } = await (
      await fetch(`${url}/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'read over MCP' }),
      })
    ).json();
    const [mcpUrl, token] = await waitFor('the run’s token', () => {
      try {
        const got = readFileSync(tokenFile, 'utf8').split(' ');
        return got.length === 2 && got[1] ? got : null;
      } catch {
        return null;
      }
    });
    const call = async () => {
      const res = await fetch(mcpUrl, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'get_task', arguments: {} },
        }),
      });
      const text = await res.text();
      if (!res.ok || !text.includes(id))
        throw new Error(`get_task answered ${res.status}: ${text}`);
    };
    const get = async () => {
      const res = await fetch(`${url}/tasks/${id}`);
      if (!res.ok) throw new Error(`GET /tasks/:id answered ${res.status}`);
      await res.arrayBuffer();
    };
    // The first call loads the SDK: not what a run's calls cost after it.
    await call();
    await get();
    const mcp = [];
    const rest = [];
    for (let i = 0; i < CALLS; i++) {
      mcp.push(await timed(call));
      rest.push(await timed(get));
    }
    return { mcp, rest };
  } finally {
    d.kill('SIGTERM');
    await d.exited;
    removeDir(dir);
  }
}

async function coldStart(mcp) {
  const dir = tempDir();
  const path = config(dir, holder(join(dir, 'token'), mcp));
  const t0 = performance.now();
  const d = gatehouse(['run', '--data-dir', dir, '--port', '0', '--config', path], { env });
  await waitServing(dir, d.pid);
  const ms = performance.now() - t0;
  d.kill('SIGTERM');
  await d.exited;
  removeDir(dir);
  return ms;
}

export async function run() {
  try {
    const { mcp, rest } = await roundTrips();
    const plain = [];
    const withMcp = [];
    for (let i = 0; i < RUNS; i++) {
      plain.push(await coldStart(false));
      withMcp.push(await coldStart(true));
    }
    return printTable(`MCP (${CALLS} calls, ${RUNS} starts each, medians)`, [
      {
        figure: `tools/call get_task from a live run, round trip (p99 ${p99(mcp).toFixed(2)} ms)`,
        value: median(mcp),
        unit: 'ms',
        baselineName: 'GET /tasks/:id, same daemon, interleaved',
        baseline: median(rest),
        goal: '<= 2x',
      },
      {
        figure: 'cold start to /health 200 with an MCP profile configured',
        value: median(withMcp),
        unit: 'ms',
        baselineName: 'the same configuration without mcp',
        baseline: median(plain),
        goal: '<= 1.05x',
      },
    ]);
  } finally {
    stopAll();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
