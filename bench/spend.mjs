// Budgets and schedules (docs/budgets.md, docs/schedules.md): the daemon's CPU for agent runs
// whose task and profile have budgets (each claim reads the task's runs and the profile's spend
// today; each live run's tokens are watched) against the same runs without, interleaved in one
// process; and a schedule's firing → its task made, against a task posted to the API.
import { wallClock } from '../dist/clock.js';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dispatchingGateway, median, printTable, removeDir, tempDir, waitFor } from './lib.mjs';

const TASKS = Number(process.env.BENCH_SPEND_TASKS ?? 200);
const ROUNDS = Number(process.env.BENCH_RUNS ?? 3);
const FIRINGS = Number(process.env.BENCH_FIRINGS ?? 7);

/** A stand-in claude: prints an answer's usage and a result with its cost, as claude -p does. */
function fakeClaude(dir) {
  const path = join(dir, 'claude');
  const start = JSON.stringify({
    type: 'stream_event',
    event: {
      type: 'message_start',
      message: { id: 'msg_1', usage: { input_tokens: 120, output_tokens: 1 } },
    },
  });
  const result = JSON.stringify({
    type: 'result',
    subtype: 'success',
    is_error: false,
    result: 'done',
    session_id: 's',
    num_turns: 1,
    total_cost_usd: 0.0012,
    usage: { input_tokens: 120, output_tokens: 30 },
  });
  writeFileSync(path, `#!/bin/sh\ncat > /dev/null\necho '${start}'\necho '${result}'\n`);
  chmodSync(path, 0o755);
  return path;
}

function agentProfile(bin, budgets) {
  return {
    agent: { kind: 'claude', bin },
    sandbox: { kind: 'none' },
    maxConcurrent: 8,
    ...(budgets
      ? {
          budget: { usd: 1000, tokens: 1e9, runs: 100 },
          dailyBudget: { usd: 1e5, tokens: 1e12 },
        }
      : {}),
  };
}

/** The daemon's own CPU (ms) to run TASKS agent tasks to done with this profile. */
async function claimCpu(budgets) {
  const dir = tempDir();
  const gw = await dispatchingGateway(dir, {
    workers: {
      tickSeconds: 0.05,
      maxConcurrent: 8,
      defaultProfile: 'agent',
      profiles: { agent: agentProfile(fakeClaude(dir), budgets) },
    },
  });
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < TASKS; i++)
    await gw.kanban.board.create({ title: `spend ${i}` }, { kind: 'api' });
  await waitFor(
    'all done',
    async () => (await gw.kanban.board.counts()).done === TASKS || null,
    300_000,
    20,
  );
  const used = process.cpuUsage(cpu0);
  await gw.close();
  removeDir(dir);
  return (used.user + used.system) / 1000;
}

/** A schedule firing every minute, on a clock set 1.5 s before a minute: fire time → created. */
async function firingLatency() {
  const dir = tempDir();
  const now = Date.now();
  const offset = Math.ceil(now / 60_000) * 60_000 + 60_000 - 1500 - now;
  const clock = () => Date.now() + offset;
  const gw = await dispatchingGateway(
    dir,
    {
      workers: { maxConcurrent: 0 },
      schedules: { minutely: { cron: '* * * * *', task: { title: 'minutely' } } },
    },
    { clock: wallClock(clock) },
  );
  await gw.scheduler.start();
  const fireTime = Math.ceil(clock() / 60_000) * 60_000;
  const created = await waitFor(
    'the firing',
    async () =>
      (await gw.kanban.board.events.list(0, 100)).find((e) => e.kind === 'created') ?? null,
    10_000,
    1,
  );
  await gw.close();
  removeDir(dir);
  return created.at - fireTime;
}

/** A task posted to the API: request sent → its created event. */
async function postLatency() {
  const dir = tempDir();
  const gw = await dispatchingGateway(dir, { workers: { maxConcurrent: 0 } });
  const url = `http://127.0.0.1:${gw.app.server.address().port}`;
  const sent = Date.now();
  const res = await fetch(`${url}/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'posted' }),
  });
  const { id } = await res.json();
  const [created] = await gw.kanban.board.events.listForTask(id, 0, 10);
  await gw.close();
  removeDir(dir);
  return created.at - sent;
}

export async function run() {
  const withBudgets = [];
  const without = [];
  for (let i = 0; i < ROUNDS; i++) {
    without.push(await claimCpu(false));
    withBudgets.push(await claimCpu(true));
  }
  const fired = [];
  const posted = [];
  for (let i = 0; i < FIRINGS; i++) {
    fired.push(await firingLatency());
    posted.push(await postLatency());
  }
  const rows = [
    {
      figure: `daemon CPU for ${TASKS} agent runs, budgets on the task and profile`,
      value: median(withBudgets),
      unit: 'ms',
      baseline: median(without),
      baselineName: 'the same runs without budgets',
      goal: '≤ 1.1×',
    },
    {
      figure: 'a schedule’s fire time → its task made, median',
      value: median(fired),
      unit: 'ms',
      baseline: median(posted),
      baselineName: 'POST /tasks sent → made',
      goal: '≤ 1000 ms',
    },
  ];
  printTable('spend and schedules', rows);
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
