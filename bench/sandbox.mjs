// The sandbox (docs/sandbox.md): what it adds to a run's start (the wrapper's spawn to the
// worker's first line of output, bubblewrap with a real run's view against none), and what the
// git view adds to a task's workspace on a 10,000-file repository, against `git worktree add`
// alone and against the design not chosen (a task-owned `git clone --shared`). Baselines run in
// the same process, interleaved.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepareGitView } from '../dist/workspaces/git-view.js';
import { bwrapArgs } from '../dist/sandbox/view.js';
import { runView } from '../dist/sandbox/run-view.js';
import { median, printTable, removeDir, tempDir } from './lib.mjs';

const STARTS = 31;
const FILES = 10_000;
const ROUNDS = 7;
const WRAPPER = join(import.meta.dirname, '../libexec/run-worker.sh');
const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@localhost',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@localhost',
};
const git = (cwd, ...args) => execFileSync('git', ['-C', cwd, ...args], { env: GIT_ENV });

/** From the wrapper's spawn to the worker's first byte on stdout, in ms. */
function firstLine(args) {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn('/bin/sh', [WRAPPER, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let at = null;
    child.stdout.once('data', () => (at = performance.now() - t));
    child.once('exit', (code) =>
      code === 0 && at !== null ? resolve(at) : reject(new Error(`exit ${code}`)),
    );
  });
}

async function starts(dir) {
  const runDir = join(dir, 'data', 'runs', 'r_bench');
  const workspace = join(dir, 'data', 'workspaces', 't_bench');
  const home = join(dir, 'data', 'homes', 'agent');
  for (const d of [runDir, workspace, home]) mkdirSync(d, { recursive: true });
  const profile = {
    name: 'agent',
    command: ['/bin/echo'],
    agent: { kind: 'claude' },
    sandbox: { kind: 'bwrap', network: 'host', writable: [], readOnly: [], hidden: [], limits: {} },
  };
  const view = runView({
    config: {
      dataDir: join(dir, 'data'),
      source: join(dir, 'etc', 'gatehouse.json'),
      workspaces: { root: join(dir, 'data', 'workspaces'), repos: {} },
    },
    profile,
    runDir,
    env: { PATH: process.env.PATH, HOME: home },
    cwd: workspace,
    workspace,
    gitMounts: [],
  });
  const argsFile = join(runDir, 'sandbox.args');
  writeFileSync(argsFile, `${bwrapArgs(view).join('\0')}\0`);
  const exit = join(runDir, 'exit.json');
  const plain = [];
  const boxed = [];
  for (let i = 0; i < STARTS; i++) {
    plain.push(await firstLine([exit, '/bin/echo', 'first line']));
    boxed.push(await firstLine(['--sandbox', argsFile, exit, '/bin/echo', 'first line']));
  }
  return { plain: median(plain), boxed: median(boxed) };
}

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

async function workspaces(dir) {
  const repo = bigRepo(dir);
  const root = join(dir, 'root');
  mkdirSync(root);
  const add = [];
  const view = [];
  const clone = [];
  for (let i = 0; i < ROUNDS; i++) {
    let t = performance.now();
    git(repo, 'worktree', 'add', '-q', '-b', `plain/${i}`, join(root, `p${i}`), 'main');
    add.push(performance.now() - t);
    t = performance.now();
    const id = `t_${String(i).padStart(12, '0')}`;
    git(repo, 'worktree', 'add', '-q', '-b', `gatehouse/${id}`, join(root, id), 'main');
    await prepareGitView(root, id, join(root, id), `gatehouse/${id}`);
    view.push(performance.now() - t);
    t = performance.now();
    execFileSync(
      'git',
      ['clone', '-q', '--shared', '--branch', 'main', repo, join(root, `c${i}`)],
      { env: GIT_ENV },
    );
    clone.push(performance.now() - t);
  }
  return { add: median(add), view: median(view), clone: median(clone) };
}

export async function run() {
  const dir = tempDir();
  try {
    const s = await starts(dir);
    const w = await workspaces(dir);
    return printTable('Sandbox', [
      {
        figure: "a sandboxed run's start: wrapper spawned → its worker's first line",
        unit: 'ms',
        value: s.boxed,
        baselineName: 'the same run unsandboxed',
        baseline: s.plain,
        goal: `≤ +50 ms (here +${(s.boxed - s.plain).toFixed(1)} ms)`,
      },
      {
        figure: "a task's workspace with the sandbox's git view, 10,000-file repository",
        unit: 'ms',
        value: w.view,
        baselineName: 'git worktree add',
        baseline: w.add,
        goal: '≤ 2×',
      },
      {
        figure: 'the design not chosen: a task-owned git clone --shared, same repository',
        unit: 'ms',
        value: w.clone,
        baselineName: 'git worktree add',
        baseline: w.add,
        goal: '-',
      },
    ]);
  } finally {
    removeDir(dir);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
