// Pull requests (docs/pull-requests.md) against the GitHub double the tests use: a signed
// webhook to the follow-up's worker spawned (tick 1 s) beside a follow-up posted to the API; the
// forge requests an open PR costs an hour while nothing happens (a moved clock, pollSeconds
// 60) beside one conditional request a minute; 200 open PRs synced once beside 200 bare fetch
// calls to the same double. Run by `npm run bench` through vitest, which reads the TypeScript
// double; its rows go to the file named by GH_BENCH_ROWS.
import { wallClock } from '../src/clock.js';
import { writeFileSync } from 'node:fs';
import { it } from 'vitest';
import { api, startGateway, type TestGateway } from '../test/helpers/app.js';
import { githubDeliver, githubDouble } from '../test/helpers/forges/github.js';
import { ForgeModel } from '../test/helpers/forges/model.js';
import { waitFor } from '../test/helpers/wait.js';
import { createTask, getTask } from '../test/helpers/workers.js';
import { recordPr } from '../src/kanban/moves/pull-request.js';
import { newPrSync } from '../src/kanban/model/pull-request.js';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const SECRET = 'bench-hook-secret';
const WORKER = {
  command: [
    '/bin/sh',
    '-c',
    `echo x >> change.txt; printf '{"status":"done"}' > "$GATEHOUSE_RUN_DIR/result.json"`,
  ],
  workspace: 'worktree',
  repo: 'app',
};

async function gateway(
  model: ForgeModel,
  checkout: string,
  url: string,
  token: string,
  pr: object,
  extra = {},
) {
  return startGateway(
    {
      workers: { tickSeconds: 1, defaultProfile: 'dev', profiles: { dev: WORKER } },
      workspaces: {
        minFreeBytes: 0,
        repos: {
          app: {
            path: checkout,
            base: 'main',
            pr: {
              provider: 'github',
              api: url,
              project: model.project,
              tokenEnv: 'BENCH_TOKEN',
              webhookSecretEnv: 'BENCH_HOOK',
              feedback: { debounceSeconds: 0, maxRounds: 100 },
              ...pr,
            },
          },
        },
      },
    },
    { dispatch: true, env: { BENCH_TOKEN: token, BENCH_HOOK: SECRET }, ...extra },
  );
}

async function spawnedRuns(gw: TestGateway, id: string): Promise<number> {
  const events = (await api(gw.url, 'GET', `/tasks/${id}/events`)).body.events as {
    kind: string;
  }[];
  return events.filter((e) => e.kind === 'spawned').length;
}

async function webhookToSpawn(): Promise<{ hook: number; api: number }> {
  const { model, checkout } = ForgeModel.withRepository();
  const double = await githubDouble(model);
  const gw = await gateway(model, checkout, double.url, double.token, {
    requiredChecks: ['ci'],
    pollSeconds: 3600,
  });
  const { id } = await createTask(gw, { title: 'bench' });
  const hook: number[] = [];
  const direct: number[] = [];
  for (let i = 0; i < 9; i++) {
    const task = await waitFor(
      'in review with its PR, its last run pushed',
      async () => {
        const t = await getTask(gw, id);
        const sync = await gw.kanban.board.tasks.prSync(id);
        return t.status === 'review' && t.pr && t.runs.at(-1)?.endedAt && sync?.publish === null
          ? t
          : null;
      },
      30_000,
    );
    // Its head as the forge has it now (the last run pushed to it).
    task.pr.headSha = model.headSha(`gatehouse/${id}`);
    const before = await spawnedRuns(gw, id);
    const check = model.check(task.pr.headSha, 'ci', 'failure', 'boom');
    const t = performance.now();
    await githubDeliver(`${gw.url}/forges/app/webhook`, SECRET, 'check_run', {
      action: 'completed',
      check_run: {
        id: check.id,
        head_sha: task.pr.headSha,
        pull_requests: [{ number: task.pr.number }],
      },
    });
    await waitFor(
      'the follow-up spawned',
      async () => (await spawnedRuns(gw, id)) > before,
      30_000,
      5,
    );
    hook.push(performance.now() - t);
    // The baseline: a person's follow-up through the API, on the same task.
    const runs = task.runs.length + 1;
    await waitFor(
      'back in review',
      async () => {
        const t2 = await getTask(gw, id);
        return t2.status === 'review' && t2.runs.length === runs && t2.runs.at(-1)?.endedAt
          ? t2
          : null;
      },
      30_000,
    );
    const before2 = await spawnedRuns(gw, id);
    const t2 = performance.now();
    await api(gw.url, 'POST', `/tasks/${id}/follow-up`, { text: 'again' });
    await waitFor(
      'the follow-up spawned',
      async () => (await spawnedRuns(gw, id)) > before2,
      30_000,
      5,
    );
    direct.push(performance.now() - t2);
  }
  await gw.close();
  await double.close();
  return { hook: median(hook), api: median(direct) };
}

async function requestsPerHour(): Promise<{ all: number; notModified: number }> {
  const { model, checkout } = ForgeModel.withRepository();
  const double = await githubDouble(model);
  let now = Date.now();
  const gw = await gateway(
    model,
    checkout,
    double.url,
    double.token,
    { pollSeconds: 60 },
    { clock: wallClock(() => now) },
  );
  const { id } = await createTask(gw, { title: 'idle PR' });
  const task = await waitFor(
    'in review with its PR',
    async () => {
      const t = await getTask(gw, id);
      return t.status === 'review' && t.pr ? t : null;
    },
    30_000,
  );
  model.check(task.pr.headSha, 'ci', 'success');
  // Settled: its checks pass, nothing is waiting; from here nothing happens for an hour.
  await waitFor(
    'its checks passing',
    async () => (await getTask(gw, id)).pr.checks === 'passing',
    30_000,
  );
  // One full read with the checks passing, then an hour of nothing.
  now += 61_000;
  const before = double.server.requests.length;
  gw.pulls.wake();
  await waitFor('a sync', async () => double.server.requests.length > before);
  await new Promise((r) => setTimeout(r, 200));
  const start = double.server.requests.length;
  for (let minute = 0; minute < 60; minute++) {
    now += 60_000;
    const seen = double.server.requests.length;
    gw.pulls.wake();
    await waitFor("the minute's poll", async () => double.server.requests.length > seen, 10_000, 5);
    await new Promise((r) => setTimeout(r, 30));
  }
  const hour = double.server.requests.slice(start);

  await gw.close();
  await double.close();
  return { all: hour.length, notModified: hour.filter((r) => r.status === 304).length };
}

async function twoHundred(): Promise<{ sync: number; bare: number }> {
  const { model, checkout } = ForgeModel.withRepository();
  const double = await githubDouble(model);
  const gw = await startGateway(
    {
      workers: {
        tickSeconds: 1,
        defaultProfile: 'dev',
        profiles: { dev: { ...WORKER, maxConcurrent: 0 } },
      },
      workspaces: {
        minFreeBytes: 0,
        repos: {
          app: {
            path: checkout,
            base: 'main',
            pr: {
              provider: 'github',
              api: double.url,
              project: model.project,
              tokenEnv: 'BENCH_TOKEN',
              webhookSecretEnv: 'BENCH_HOOK',
              pollSeconds: 3600,
              requiredChecks: [],
            },
          },
        },
      },
    },
    { dispatch: true, env: { BENCH_TOKEN: double.token, BENCH_HOOK: SECRET } },
  );
  // 200 tasks, each bound to an open PR of the double.
  const ids: string[] = [];
  for (let i = 0; i < 200; i++) {
    const { id } = await createTask(gw, { title: `pr ${i}` });
    const pr = model.open(`gatehouse/${id}`, 'main', `pr ${i}`, '', false);
    await gw.kanban.board.transact((tx) =>
      recordPr(tx, id, null, {
        pr: {
          provider: 'github',
          number: pr.number,
          url: `https://github.com/${model.project}/pull/${pr.number}`,
          state: 'open',
          draft: false,
          headSha: null,
          checks: 'pending',
          review: 'none',
          rounds: 0,
          syncedAt: null,
        },
        sync: newPrSync('app', null),
      }),
    );
    ids.push(id);
  }
  const t = performance.now();
  const from = Date.now();
  await githubDeliver(`${gw.url}/forges/app/webhook`, SECRET, 'ping', { zen: 'sync every one' });
  await waitFor(
    'all synced',
    async () => {
      const tasks = await Promise.all(ids.map((id) => gw.kanban.board.tasks.get(id)));
      return tasks.every((task) => (task!.pr!.syncedAt ?? 0) >= from);
    },
    300_000,
    20,
  );
  const sync = performance.now() - t;
  const b = performance.now();
  for (const pr of model.prs)
    await (
      await fetch(`${double.url}/repos/${model.project}/pulls/${pr.number}`, {
        headers: { authorization: `Bearer ${double.token}` },
      })
    ).text();
  const bare = performance.now() - b;
  await gw.close();
  await double.close();
  return { sync, bare };
}

it('measures pull requests', async () => {
  const w = await webhookToSpawn();
  const h = await requestsPerHour();
  const s = await twoHundred();
  const rows = [
    {
      figure: 'signed webhook received → the follow-up’s worker spawned (tick 1 s)',
      unit: 'ms',
      value: w.hook,
      baselineName: 'a follow-up posted to the API → spawned',
      baseline: w.api,
      goal: '≤ 2 s median',
    },
    {
      figure: 'forge requests per open PR per hour while nothing changes (pollSeconds 60)',
      unit: 'requests',
      value: h.all,
      baselineName: 'one conditional request a minute',
      baseline: 60,
      goal: `≤ 70 (${h.notModified} of them 304)`,
    },
    {
      figure: '200 open PRs synced once (a delivery naming none)',
      unit: 'ms',
      value: s.sync,
      baselineName: '200 bare fetch calls, one after another, to the same double',
      baseline: s.bare,
      goal: '≤ 2×',
    },
  ];
  console.table(rows);
  if (process.env.GH_BENCH_ROWS) writeFileSync(process.env.GH_BENCH_ROWS, JSON.stringify(rows));
}, 600_000);
