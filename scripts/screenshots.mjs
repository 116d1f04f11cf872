// `npm run screenshots`: the dashboard's board, task detail and workers views at desktop and phone
// widths, written to docs/screenshots/ (the README shows them). Runs the built daemon on a
// throwaway data dir with a few tasks in every state, in Debian's headless Chromium.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
const config = join(dataDir, 'config.json');
writeFileSync(
  config,
  JSON.stringify({
    workers: {
      tickSeconds: 0.2,
      defaultProfile: 'build',
      profiles: {
        build: {
          command: [
            'sh',
            '-c',
            'echo building; sleep 1; exec "$0" "$@"',
            ...worker('complete', '--summary', 'built and tested'),
          ],
        },
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
    body: 'Cut the release once the checks pass.',
  });
  for (const title of ['Build the arm64 image', 'Run the migration tests', 'Update the changelog'])
    await post('/tasks', { title });
  await post('/tasks', { title: 'Publish the docs', parents: [release.id] });
  for (const title of ['Review the API change', 'Review the dashboard change'])
    await post('/tasks', { title, assignee: 'review' });
  await post('/tasks', { title: 'Flaky upload on the mirror', assignee: 'triage' });
  const archived = await post('/tasks', {
    title: 'Old experiment',
    assignee: 'review',
    priority: -1,
  });
  await post(`/tasks/${archived.id}/archive`, {});
  await post(`/tasks/${release.id}/comments`, {
    text: 'Waiting for the arm64 image.',
    author: 'ana',
  });
  await waitFor(
    'the builds done',
    async () => {
      const { counts } = await (await fetch(`${url}/tasks/counts`)).json();
      return counts.done >= 4 && counts.blocked >= 1 && counts.running >= 1;
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
      ['detail', `#/tasks/${release.id}`],
      ['workers', '#/workers'],
    ]) {
      await page.goto(`${url}/${hash}`);
      await page.locator('#conn.live').waitFor();
      await page.waitForFunction(
        () =>
          Number(document.documentElement.dataset.board) >= 1 &&
          Number(document.documentElement.dataset.chart) >= 1,
      );
      if (name === 'detail') await page.locator('#runs tr').first().waitFor();
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
}
