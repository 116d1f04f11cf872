// The dashboard's views in a real Chromium against a real daemon: a task opened cold from its
// link, search and filters kept in the URL, a column paged past its first cards, a bulk action,
// the throughput chart (runs from before the page), the workers view, and the token flow.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../helpers/app.js';
import { startDaemon, tempDir, waitServing, writeConfig } from '../helpers/daemon.js';
import { launchChromium } from '../helpers/browser.js';
import { waitFor } from '../helpers/wait.js';
import { profile } from '../helpers/workers.js';

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

const TOKEN = 'a-dashboard-views-token';

/** The page's sessionStorage, as the tests use it (the suite's types have no DOM). */
interface TabStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}
const auth = { authorization: `Bearer ${TOKEN}` };

/** A daemon (token set) whose `ok` workers complete, `slow` ones hang (one at a time), `bad` ones block their task. */
async function daemon(extra: object = {}) {
  const dataDir = tempDir();
  const d = startDaemon({
    dataDir,
    config: writeConfig(tempDir(), {
      api: { token: TOKEN },
      workers: {
        tickSeconds: 0.1,
        defaultProfile: 'ok',
        profiles: {
          ok: profile('complete'),
          slow: { ...profile('hang'), maxConcurrent: 1 },
          bad: profile('block'),
        },
      },
      ...extra,
    }),
  });
  const url = await waitServing(dataDir, d.pid);
  const call = (method: string, path: string, body?: unknown) => api(url, method, path, body, auth);
  return { url, call };
}

/** A page that has been given the token (kept in the tab's sessionStorage, as the form does). */
async function pageWithToken(
  url: string,
  path = '/',
  viewport = { width: 1280, height: 900 },
  before: (page: Page) => Promise<void> = async () => undefined,
) {
  const context = await browser.newContext({ viewport });
  await context.addInitScript(
    (token) =>
      (globalThis as unknown as { sessionStorage: TabStorage }).sessionStorage.setItem(
        'gatehouse-token',
        token,
      ),
    TOKEN,
  );
  const page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  await before(page);
  await page.goto(`${url}${path}`);
  await page.locator('#conn.live').waitFor();
  return page;
}

function column(page: Page, status: string) {
  return page.locator(`.column[data-status="${status}"]`);
}

async function waitStatus(
  call: Awaited<ReturnType<typeof daemon>>['call'],
  id: string,
  status: string,
) {
  await waitFor(
    `${id} ${status}`,
    async () => (await call('GET', `/tasks/${id}`)).body.status === status,
    20_000,
  );
}

describe('the dashboard views, in a real browser', () => {
  it('opens a task cold from its link, with its fields, runs, result, parents and children, and edits and comments on it', async () => {
    const { url, call } = await daemon();
    const parent = (await call('POST', '/tasks', { title: 'the parent', body: 'why it matters' }))
      .body;
    const child = (await call('POST', '/tasks', { title: 'the child', parents: [parent.id] })).body;
    await waitStatus(call, parent.id, 'done');
    await call('POST', `/tasks/${parent.id}/comments`, { text: 'looks right', author: 'ana' });

    const page = await pageWithToken(url, `/#/tasks/${parent.id}`);
    const detail = page.locator('#detail');
    await detail.locator('#detail-title', { hasText: 'the parent' }).waitFor();
    await detail.locator('#runs', { hasText: 'completed' }).waitFor();
    // The exit status is recorded once the worker has exited, after its verdict: the open panel
    // shows it when it is.
    await detail.locator('#runs', { hasText: 'exit 0' }).waitFor();
    expect(await detail.locator('#fields').textContent()).toContain('took');
    expect(await detail.locator('[aria-label="Body"]').textContent()).toBe('why it matters');
    await detail.locator('#comments', { hasText: 'looks right' }).waitFor();
    expect(await detail.locator('#result').textContent()).toContain('"ok": true');
    expect(page.url()).toContain(`#/tasks/${parent.id}`);

    // Its child is a link; following it opens the child, and the URL says so.
    await detail.getByRole('link', { name: child.id }).click();
    await detail.locator('#detail-title', { hasText: 'the child' }).waitFor();
    expect(page.url()).toContain(`#/tasks/${child.id}`);

    await detail.getByRole('button', { name: 'Edit the child' }).click();
    await page.getByLabel('Rename to').fill('the renamed child');
    await page.getByLabel('Set priority').fill('7');
    await page.getByRole('button', { name: 'Save' }).click();
    await detail.locator('#detail-title', { hasText: 'the renamed child' }).waitFor();
    await page.getByLabel('Comment', { exact: true }).fill('renamed it');
    await page.getByRole('button', { name: 'Add comment' }).click();
    await detail.locator('#comments', { hasText: 'renamed it' }).waitFor();
    const edited = (await call('GET', `/tasks/${child.id}`)).body;
    expect([edited.title, edited.priority]).toEqual(['the renamed child', 7]);

    // Escape closes it, back to the board.
    await page.keyboard.press('Escape');
    await detail.waitFor({ state: 'hidden' });
    expect(new URL(page.url()).hash).toBe('#/');
    // A done card says when it finished and how long it took, and no "0 failures" or profile.
    const doneCard = column(page, 'done').locator('.card', { hasText: 'the parent' });
    const meta = await doneCard.locator('.meta').first().textContent();
    expect(meta).toMatch(/done \d+[smhd] ago · took \d/);
    expect(meta).not.toMatch(/failure|default/);
  });

  it('searches and filters from the URL, with counts from the server, and pages a column past its first cards', async () => {
    const { url, call } = await daemon();
    for (let i = 0; i < 30; i++)
      await call('POST', '/tasks', { title: `Deploy step ${i}`, assignee: 'slow' });
    for (let i = 0; i < 3; i++)
      await call('POST', '/tasks', { title: `unrelated ${i}`, assignee: 'slow' });

    const page = await pageWithToken(url);
    await page.getByLabel('Search').fill('deploy');
    await page.getByRole('button', { name: 'Filter' }).click();
    await waitFor('the filter in the URL', () => page.url().includes('q=deploy'));
    // One of the 30 runs (slow: one at a time); 29 wait, of which the column shows 25.
    await column(page, 'ready').locator('h2', { hasText: 'ready (29)' }).waitFor();
    expect(await column(page, 'ready').locator('.card').count()).toBe(25);
    expect(await page.locator('.card', { hasText: 'unrelated' }).count()).toBe(0);
    // A ready card says why it waits: its profile is at its cap.
    await column(page, 'ready')
      .locator('.reason', { hasText: 'profile slow at its cap (1/1)' })
      .first()
      .waitFor();
    await page.getByRole('button', { name: 'Show more ready' }).click();
    await waitFor(
      '29 cards',
      async () => (await column(page, 'ready').locator('.card').count()) === 29,
    );
    expect(await page.getByRole('button', { name: 'Show more ready' }).count()).toBe(0);

    // Opened cold with the filter in its URL, the page shows the same.
    const cold = await pageWithToken(url, '/#/?q=unrelated');
    await column(cold, 'ready').locator('h2', { hasText: 'ready (3)' }).waitFor();
    expect(await cold.getByLabel('Search').inputValue()).toBe('unrelated');
  });

  it('reads a long column a page of at most 200 cards at a time, however far it is shown', async () => {
    const { url, call } = await daemon({ workers: { maxConcurrent: 0 } });
    for (let i = 0; i < 260; i++) await call('POST', '/tasks', { title: `queued ${i}` });
    const page = await pageWithToken(url);
    const limits: number[] = [];
    page.on('request', (req) => {
      const asked = new URL(req.url());
      if (asked.pathname === '/tasks' && asked.searchParams.get('status') === 'ready')
        limits.push(Number(asked.searchParams.get('limit')));
    });
    await column(page, 'ready').locator('h2', { hasText: 'ready (260)' }).waitFor();
    for (let shown = 25; shown < 260; shown += 25) {
      await page.getByRole('button', { name: 'Show more ready' }).click();
      const want = Math.min(260, shown + 25);
      await waitFor(
        `${want} cards`,
        async () => (await column(page, 'ready').locator('.card').count()) === want,
      );
    }
    expect(await page.getByRole('button', { name: 'Show more ready' }).count()).toBe(0);
    expect(limits.length).toBeGreaterThan(0);
    expect(Math.max(...limits)).toBeLessThanOrEqual(200);
    // Every card once, newest first.
    const titles = await column(page, 'ready').locator('.card h3').allTextContents();
    expect(new Set(titles).size).toBe(260);
    expect(titles[0]).toBe('queued 259');
  });

  it('unblocks every blocked task at once after a confirmation', async () => {
    const { url, call } = await daemon();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await call('POST', '/tasks', { title: `blocks ${i}`, assignee: 'bad' })).body.id);
    for (const id of ids) await waitStatus(call, id, 'blocked');
    // They would block again once unblocked: a slow profile keeps them out of blocked.
    for (const id of ids) await call('PATCH', `/tasks/${id}`, { assignee: 'slow' });

    // The counts are held back until the confirmation shows: it must say how many tasks it
    // will act on, not what the page has counted so far.
    const dialogs: string[] = [];
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const page = await pageWithToken(url, '/', undefined, async (p) => {
      await p.route('**/tasks/counts*', async (route) => {
        await released;
        await route.continue().catch(() => undefined);
      });
      p.on('dialog', (d) => {
        dialogs.push(d.message());
        release();
      });
    });
    await column(page, 'blocked').locator('.card').nth(2).waitFor();
    await page.getByRole('button', { name: 'Unblock all blocked' }).click();
    await page.locator('#bulk-status', { hasText: 'Unblocked 3 of 3' }).waitFor();
    expect(dialogs).toEqual(['Unblock all: 3 blocked tasks?']);
    await column(page, 'blocked').locator('h2', { hasText: 'blocked (0)' }).waitFor();
    for (const id of ids)
      expect((await call('GET', `/tasks/${id}`)).body.status).not.toBe('blocked');
  });

  it('charts runs that finished before the page was opened, and lists live workers with their pid', async () => {
    const { url, call } = await daemon();
    const done = [];
    for (let i = 0; i < 3; i++)
      done.push((await call('POST', '/tasks', { title: `earlier ${i}` })).body.id);
    for (const id of done) await waitStatus(call, id, 'done');
    const hanging = (await call('POST', '/tasks', { title: 'still working', assignee: 'slow' }))
      .body;
    const pid = await waitFor(
      'a pid',
      async () => (await call('GET', `/tasks/${hanging.id}`)).body.runs[0]?.pid,
    );

    const page = await pageWithToken(url);
    const chart = page.locator('#chart[data-completed="3"]');
    await chart.waitFor({ state: 'attached' });
    expect(await page.locator('#chart rect').count()).toBeGreaterThan(0);
    expect(await page.locator('#totals').textContent()).toContain('3 completed');

    await page.getByRole('link', { name: 'Workers' }).click();
    const row = page.locator('#worker-rows tr', { hasText: 'still working' });
    await row.waitFor();
    expect(await row.textContent()).toContain(String(pid));
    expect(await row.textContent()).toContain('slow');
    expect(page.url()).toContain('#/workers');
    await page.locator('#profile-load', { hasText: 'slow: 1 of 1 running here' }).waitFor();
  });

  it('says a token is needed (not "reconnecting"), takes it, and forgets it on request', async () => {
    const { url } = await daemon();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(url);
    await page.locator('#conn.auth', { hasText: 'token needed' }).waitFor();
    await page.locator('#token-why', { hasText: 'asks for its API token' }).waitFor();
    expect(await page.locator('#platform-list').textContent()).toBe(
      'shown once the API token is given',
    );
    expect(await page.locator('#error').textContent()).toBe('');

    await page.locator('#token').fill('not-the-token');
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.locator('#token-why', { hasText: 'was refused' }).waitFor();
    expect(await page.locator('#conn').getAttribute('class')).toBe('auth');

    await page.locator('#token').fill(TOKEN);
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.locator('#conn.live').waitFor();
    await page.locator('#platform-list', { hasText: 'none configured' }).waitFor();

    await page.getByRole('button', { name: 'Forget token' }).click();
    await page.locator('#conn.auth').waitFor();
    expect(
      await page.evaluate(() =>
        (globalThis as unknown as { sessionStorage: TabStorage }).sessionStorage.getItem(
          'gatehouse-token',
        ),
      ),
    ).toBeNull();
    expect(await page.locator('#token-form').isVisible()).toBe(true);
    expect(await page.locator('.card').count()).toBe(0);
    await context.close();
  });

  it('is readable on a phone: the columns stack and a task fills the screen', async () => {
    const { url, call } = await daemon();
    const task = (await call('POST', '/tasks', { title: 'seen on a phone' })).body;
    await waitStatus(call, task.id, 'done');
    const page = await pageWithToken(url, '/', { width: 390, height: 844 });
    await column(page, 'done').locator('.card', { hasText: 'seen on a phone' }).waitFor();
    const { overflow, todo, ready } = await page.evaluate(() => {
      const { document } = globalThis as unknown as {
        document: {
          documentElement: { scrollWidth: number; clientWidth: number };
          querySelector(s: string): { getBoundingClientRect(): { x: number; y: number } };
        };
      };
      const at = (s: string) => document.querySelector(s).getBoundingClientRect();
      return {
        overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
        todo: at('.column[data-status="todo"]'),
        ready: at('.column[data-status="ready"]'),
      };
    });
    expect(overflow).toBeLessThanOrEqual(0);
    expect(ready.y).toBeGreaterThan(todo.y);
    expect(ready.x).toBe(todo.x);
    await column(page, 'done').getByRole('link', { name: 'seen on a phone' }).click();
    const box = await page.locator('#detail').boundingBox();
    expect(box?.width).toBe(390);
  });
});
