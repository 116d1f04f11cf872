// In a real browser: a page on another origin cannot create a task or stop the daemon, while
// the dashboard on the daemon's own origin still can.
import { createServer } from 'node:http';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../helpers/app.js';
import { launchChromium } from '../helpers/browser.js';
import { startDaemon, tempDir, waitServing, writeConfig } from '../helpers/daemon.js';
import { pidExists } from '../../src/proc/index.js';

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
