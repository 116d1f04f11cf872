// Workspaces (docs/workspaces.md) on a 10,000-file repository: claim → spawned with a new worktree against
// `git worktree add` alone; 20 tasks claimed at once against 20 sequential `git worktree add`;
// a run's evidence against `git diff --stat` alone. Baselines run in the same process, on the
// same repository, interleaved with the figures they are beside.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runEvidence } from '../dist/workspaces/evidence.js';
import { dispatchingGateway, median, printTable, removeDir, tempDir, waitFor } from './lib.mjs';

const FILES = 10_000;
const ROUNDS = 11;
const AT_ONCE = 20;
const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@localhost',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@localhost',
};
const git = (cwd, ...args) => execFileSync('git', ['-C', cwd, ...args], { env: GIT_ENV });

function bigRepo(dir) {
  const repo = join(dir, 'repo');
  for (let i = 0; i < FILES; i++) {
    const sub = join(repo, `d${i % 100}`, `e${Math.floor(i / 100) % 10}`);
    if (i < 1000) mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, `f${i}.js`), `export const v${i} = ${i};\n`.repeat(10));
  }
  git(repo, 'init', '-q', '--initial-branch=main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'ten thousand files');
  return repo;
}

function timed(fn) {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

function gateway(dataDir, repo) {
  return dispatchingGateway(dataDir, {
    workers: {
      tickSeconds: 1,
      maxConcurrent: AT_ONCE,
      defaultProfile: 'agent',
      profiles: {
        agent: {
          command: [
            '/bin/sh',
            '-c',
            'printf \'{"status":"done"}\' > "$GATEHOUSE_RUN_DIR/result.json"',
          ],
          workspace: 'worktree',
          repo: 'app',
          maxConcurrent: AT_ONCE,
        },
      },
    },
    workspaces: {
      repos: { app: { path: repo, base: 'main', escapeCheck: false } },
      minFreeBytes: 0,
    },
  });
}

/** ms from each task's claimed event to its spawned event. */
async function claimToSpawned(gw, ids) {
  const out = [];
  for (const id of ids) {
    const events = await waitFor(
      `${id} spawned`,
      async () => {
        const list = await gw.kanban.board.events.listForTask(id, 0, 100);
        return list.some((e) => e.kind === 'spawned') ? list : null;
      },
      120_000,
    );
    const claimed = events.find((e) => e.kind === 'claimed');
    const spawned = events.find((e) => e.kind === 'spawned');
    out.push(spawned.at - claimed.at);
  }
  return out;
}

export async function run() {
  const dir = tempDir();
  try {
    const repo = bigRepo(dir);
    mkdirSync(join(dir, 'daemon'));
    const gw = await gateway(join(dir, 'daemon'), repo);
    const board = gw.kanban.board;
    // One at a time: a new worktree per task, beside `git worktree add` alone on the same repo.
    const single = [];
    const bare = [];
    for (let i = 0; i < ROUNDS; i++) {
      bare.push(
        timed(() =>
          git(repo, 'worktree', 'add', '-q', '-b', `bare${i}`, join(dir, `bare${i}`), 'main'),
        ),
      );
      const task = await board.create({ title: `one ${i}` }, { kind: 'api' });
      single.push(...(await claimToSpawned(gw, [task.id])));
    }
    // Twenty at once, against twenty sequential `git worktree add`.
    const sequential = timed(() => {
      for (let i = 0; i < AT_ONCE; i++)
        git(repo, 'worktree', 'add', '-q', '-b', `seq${i}`, join(dir, `seq${i}`), 'main');
    });
    const started = performance.now();
    const ids = [];
    for (let i = 0; i < AT_ONCE; i++)
      ids.push((await board.create({ title: `many ${i}` }, { kind: 'api' })).id);
    await claimToSpawned(gw, ids);
    const allSpawned = performance.now() - started;
    await gw.close();

    // Evidence of a run that changed 20 files and added 5, against `git diff --stat` alone.
    const wt = join(dir, 'bare0');
    // As an agent's own `git status` leaves it: the index refreshed a second after the checkout,
    // so git trusts its stat cache (right after a checkout, git itself hashes every file again).
    await new Promise((resolve) => setTimeout(resolve, 1100));
    git(wt, 'status', '--porcelain');
    for (let i = 0; i < 20; i++)
      writeFileSync(join(wt, `d${i}`, 'e0', `f${i}.js`), `changed ${i}\n`);
    for (let i = 0; i < 5; i++) writeFileSync(join(wt, `new${i}.txt`), 'new\n');
    const head = git(wt, 'rev-parse', 'HEAD').toString().trim();
    const evidence = [];
    const stat = [];
    const walk = [];
    for (let i = 0; i < ROUNDS; i++) {
      stat.push(timed(() => git(wt, 'diff', '--stat', 'main')));
      walk.push(timed(() => git(wt, 'status', '--porcelain', '--untracked-files=all')));
      const t = performance.now();
      await runEvidence(wt, 'main', head);
      evidence.push(performance.now() - t);
    }
    return printTable('Workspaces, on a 10,000-file repository', [
      {
        figure: 'claim → spawned with a new worktree, median',
        unit: 'ms',
        value: median(single),
        baselineName: '`git worktree add` alone, median',
        baseline: median(bare),
        goal: '≤ 2×',
      },
      {
        figure: `${AT_ONCE} tasks claimed at once: all spawned`,
        unit: 'ms',
        value: allSpawned,
        baselineName: `${AT_ONCE} sequential \`git worktree add\``,
        baseline: sequential,
        goal: '≤ 2×',
      },
      {
        figure: 'a run’s evidence (diff stat, untracked files included), median',
        unit: 'ms',
        value: median(evidence),
        baselineName: '`git diff --stat` alone, median',
        baseline: median(stat),
        goal: '≤ 1.5×',
      },
      {
        figure: 'the same evidence, beside its floor',
        unit: 'ms',
        value: median(evidence),
        baselineName: 'finding untracked files alone (`git status --untracked-files=all`), median',
        baseline: median(walk),
        goal: '-',
      },
    ]);
  } finally {
    removeDir(dir);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
