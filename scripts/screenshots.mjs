// `npm run screenshots`: the dashboard's board, task detail and workers views at desktop and phone
// widths, written to docs/screenshots/ (the README shows them). Runs the built daemon on a
// throwaway data dir with tasks in every state, working in worktrees of a real repository (one
// given to two attempts and judged, one in review), in Debian's headless Chromium.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { chromium } from 'playwright-core';
import {
  BIN,
  envWithout,
  gatehouse,
  removeDir,
  stopAll,
  tempDir,
  waitFor,
  waitServing,
} from '../bench/lib.mjs';

const OUT = join(import.meta.dirname, '..', 'docs/screenshots');
const node = process.execPath;
const worker = (...args) => [node, BIN, 'worker', ...args];

const dataDir = tempDir();
// The project the agents work on: a real repository, each task in a worktree of its own.
const repo = join(tempDir(), 'shop');
mkdirSync(join(repo, 'src'), { recursive: true });
writeFileSync(join(repo, 'README.md'), '# shop\n');
writeFileSync(join(repo, 'src/cart.js'), 'export function total(items) {\n  return 0;\n}\n');
const git = (...args) => execFileSync('git', ['-C', repo, ...args], { stdio: 'ignore' });
git('init', '--quiet', '--initial-branch=main');
git('add', '--all');
git('-c', 'user.name=ana', '-c', 'user.email=ana@example.org', 'commit', '--quiet', '-m', 'first');
/** A worker that changes the project in its worktree, then reports done with a summary. */
const change = (file, text, summary) => ({
  command: [
    'sh',
    '-c',
    `sleep 1; printf '%s\\n' "${text}" > "${file}"; exec "$0" "$@"`,
    ...worker('complete', '--summary', summary),
  ],
  workspace: 'worktree',
  repo: 'shop',
});
const config = join(dataDir, 'config.json');
writeFileSync(
  config,
  JSON.stringify({
    workspaces: { repos: { shop: { path: repo, base: 'main' } }, minFreeBytes: 0 },
    workers: {
      tickSeconds: 0.2,
      defaultProfile: 'coder',
      profiles: {
        coder: change(
          'src/cart.js',
          'export const total = (items) => items.reduce((s, i) => s + i.price * i.qty, 0);',
          'cart total sums price × quantity',
        ),
        careful: change(
          'src/cart.js',
          'export function total(items) { let s = 0; for (const i of items) s += i.price * i.qty; return s; }',
          'cart total in a loop, with a test',
        ),
        docs: { ...change('CART.md', '# The cart', 'documented the cart'), review: true },
        review: {
          command: ['sh', '-c', 'echo waiting for a reviewer; sleep 600'],
          maxConcurrent: 1,
        },
        triage: { command: worker('block', '--reason', 'needs a person to pick the fix') },
      },
    },
    shutdown: { workers: 'terminate' },
  }),
);

const daemon = gatehouse(['run', '--data-dir', dataDir, '--port', '0', '--config', config], {
  env: envWithout('GATEHOUSE_'),
});
try {
  const url = await waitServing(dataDir, daemon.pid, 60_000);
  const post = async (path, body) =>
    (
      await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json();
  const release = await post('/tasks', {
    title: 'Release 2.4',
    body: 'Cut the release once the cart fix is in.',
  });
  const fix = await post('/tasks', {
    title: 'Fix the cart total',
    body: 'The total ignores quantities.',
    budget: { runs: 3 },
    attempts: {
      variants: [{ assignee: 'coder' }, { assignee: 'careful' }],
      judge: { command: ['sh', '-c', 'grep -q qty src/cart.js'] },
    },
  });
  const docs = await post('/tasks', { title: 'Document the cart', assignee: 'docs' });
  for (const title of ['Add a coupon field', 'Round prices to cents'])
    await post('/tasks', { title });
  await post('/tasks', { title: 'Publish the docs', parents: [release.id] });
  await post('/tasks', { title: 'Review the API change', assignee: 'review' });
  await post('/tasks', { title: 'Flaky upload on the mirror', assignee: 'triage' });
  const archived = await post('/tasks', {
    title: 'Old experiment',
    assignee: 'review',
    priority: -1,
  });
  await post(`/tasks/${archived.id}/archive`, {});
  await post(`/tasks/${release.id}/comments`, {
    text: 'Waiting for the cart fix.',
    author: 'ana',
  });
  await waitFor(
    'the work done, in review and blocked',
    async () => {
      const { counts } = await (await fetch(`${url}/tasks/counts`)).json();
      const t = await (await fetch(`${url}/tasks/${fix.id}`)).json();
      return counts.done >= 2 && counts.review >= 2 && counts.blocked >= 1 && t.status === 'review';
    },
    60_000,
    200,
  );

  mkdirSync(OUT, { recursive: true });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu'],
  });
  for (const [device, viewport] of [
    ['desktop', { width: 1280, height: 800 }],
    ['phone', { width: 390, height: 844 }],
  ]) {
    const page = await browser.newPage({ viewport, deviceScaleFactor: 1 });
    for (const [name, hash] of [
      ['board', '#/'],
      ['detail', `#/tasks/${fix.id}`],
      ['workers', '#/workers'],
    ]) {
      await page.goto(`${url}/${hash}`);
      await page.locator('#conn.live').waitFor();
      await page.waitForFunction(
        () =>
          Number(document.documentElement.dataset.board) >= 1 &&
          Number(document.documentElement.dataset.chart) >= 1,
      );
      if (name === 'detail') await page.getByText('cart total in a loop').first().waitFor();
      if (name === 'workers') await page.locator('#worker-rows tr[data-run-id]').first().waitFor();
      await page.screenshot({ path: join(OUT, `${name}-${device}.png`) });
    }
    await page.close();
  }
  await browser.close();
  console.log(`screenshots in ${OUT}`);
} finally {
  daemon.kill('SIGTERM');
  await daemon.exited;
  stopAll();
  removeDir(dataDir);
  removeDir(dirname(repo));
}
