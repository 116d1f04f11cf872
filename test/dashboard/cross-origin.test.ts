// In a real browser: a page on another origin cannot create a task or stop the daemon, while
// the dashboard on the daemon's own origin still can.
import { createServer } from 'node:http';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../helpers/app.js';
import { launchChromium } from '../helpers/browser.js';
import { startDaemon, tempDir, waitServing, writeConfig } from '../helpers/daemon.js';
import { pidExists } from '../../src/proc/index.js';
import { waitFor } from '../helpers/wait.js';

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

/** What a hostile page does: every simple cross-site request it can make, then says it is done. */
function evilPage(target: string): string {
  return `<!doctype html><body><form id="f" method="POST" action="${target}/tasks" enctype="text/plain" target="sink">
<input name='{"title":"from a form","x":"' value='"}'></form><iframe name="sink"></iframe>
<script>
(async () => {
  const tries = [
    fetch('${target}/tasks', { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ title: 'from fetch' }) }),
    fetch('${target}/tasks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: 'from cors' }) }),
    fetch('${target}/admin/stop', { method: 'POST', mode: 'no-cors' }),
    fetch('${target}/admin/stop', { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: 'x' }),
  ];
  await Promise.allSettled(tries);
  document.getElementById('f').submit();
  setTimeout(() => { document.title = 'done'; }, 500);
})();
</script></body>`;
}

describe('a page on another origin', () => {
  it('cannot create a task or stop the daemon; the dashboard on its own origin can create one', async () => {
    const dataDir = tempDir();
    const daemon = startDaemon({
      dataDir,
      config: writeConfig(tempDir(), { workers: { maxConcurrent: 0 } }),
    });
    const url = await waitServing(dataDir, daemon.pid);
    const evil = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end(evilPage(url)),
    );
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    const evilUrl = `http://127.0.0.1:${(evil.address() as { port: number }).port}/`;
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(evilUrl);
      await page.waitForFunction('document.title === "done"');
      expect(pidExists(daemon.pid)).toBe(true);
      expect((await api(url, 'GET', '/health')).status).toBe(200);
      expect((await api(url, 'GET', '/tasks')).body.tasks).toEqual([]);

      const own = await context.newPage();
      await own.goto(url);
      await own.locator('#conn.live').waitFor();
      await own.getByLabel('Title').fill('from the dashboard');
      await own.getByRole('button', { name: 'Create task' }).click();
      await own.getByText('from the dashboard').waitFor();
      const titles = (await api(url, 'GET', '/tasks')).body.tasks.map(
        (t: { title: string }) => t.title,
      );
      expect(titles).toEqual(['from the dashboard']);
      await context.close();
    } finally {
      evil.closeAllConnections();
      await new Promise((r) => evil.close(r));
    }
  });
});

describe('the dashboard framed by a page on another origin', () => {
  it('shows nothing in the frame, so no button of it can be clicked, and runs under its own policy at home', async () => {
    const dataDir = tempDir();
    const daemon = startDaemon({
      dataDir,
      config: writeConfig(tempDir(), { workers: { maxConcurrent: 0 } }),
    });
    const url = await waitServing(dataDir, daemon.pid);
    await api(url, 'POST', '/tasks', { title: 'keep me' });
    // The hostile page frames the dashboard, and a page of its own as the control.
    const framer = createServer((req, res) => {
      if (req.url === '/inner')
        return res.writeHead(200, { 'content-type': 'text/html' }).end('<p id="inner">framed</p>');
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          `<!doctype html><iframe id="own" src="/inner"></iframe><iframe id="board" src="${url}/"></iframe>`,
        );
    });
    await new Promise<void>((r) => framer.listen(0, '127.0.0.1', r));
    const framerUrl = `http://127.0.0.1:${(framer.address() as { port: number }).port}/`;
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(framerUrl);
      await page.frameLocator('#own').locator('#inner').waitFor();
      const framed = page
        .frames()
        .find((f) => f.parentFrame() !== null && f.url() !== `${framerUrl}inner`);
      expect(framed).toBeDefined();
      // Refused by frame-ancestors: the frame holds Chromium's error page, not the board.
      await waitFor('the frame refused', () => framed!.url().startsWith('chrome-error://'));
      expect(await page.frameLocator('#board').locator('#board, button').count()).toBe(0);

      // At home the page runs under the same policy without one violation.
      const violations: string[] = [];
      const own = await context.newPage();
      own.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      const answer = await own.goto(url);
      expect(answer?.headers()['x-content-type-options']).toBe('nosniff');
      expect(answer?.headers()['referrer-policy']).toBe('no-referrer');
      await own.locator('#conn.live').waitFor();
      await own.getByText('keep me').waitFor();
      expect(violations).toEqual([]);
      expect(
        (await api(url, 'GET', '/tasks')).body.tasks.map((t: { status: string }) => t.status),
      ).toEqual(['ready']);
      await context.close();
    } finally {
      framer.closeAllConnections();
      await new Promise((r) => framer.close(r));
    }
  });
});
