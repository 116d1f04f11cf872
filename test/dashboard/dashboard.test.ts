import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../helpers/app.js';
import {
  ROOT,
  freePort,
  startDaemon,
  tempDir,
  waitServing,
  writeConfig,
} from '../helpers/daemon.js';
import { launchChromium } from '../helpers/browser.js';
import { webhookReceiver } from '../helpers/doubles.js';
import { waitFor } from '../helpers/wait.js';
import { profile } from '../helpers/workers.js';
import { makeRepo } from '../helpers/git.js';

let browser: Browser;

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

async function daemonWithPage(receiverUrl: string, secret: string) {
  const dataDir = tempDir();
  const port = await freePort();
  const config = writeConfig(tempDir(), {
    workers: {
      tickSeconds: 0.1,
      defaultProfile: 'ok',
      profiles: { ok: profile('complete'), slow: profile('hang') },
    },
    platforms: [
      {
        name: 'ops',
        type: 'webhook',
        options: { url: receiverUrl, secret },
        breaker: {
          timeoutMs: 500,
          errorThresholdPercentage: 50,
          resetTimeoutMs: 60_000,
          volumeThreshold: 2,
        },
      },
    ],
  });
  const daemon = startDaemon({ dataDir, port, config });
  const url = await waitServing(dataDir, daemon.pid);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(url);
  await page.locator('#conn.live').waitFor();
  return { dataDir, port, config, daemon, url, page };
}

/** A daemon whose API needs `token`, and a fresh page that has not loaded it yet. */
async function tokenDaemonWithPage(token: string) {
  const dataDir = tempDir();
  const daemon = startDaemon({
    dataDir,
    config: writeConfig(tempDir(), {
      api: { token },
      workers: { tickSeconds: 0.1, defaultProfile: 'ok', profiles: { ok: profile('complete') } },
    }),
  });
  const url = await waitServing(dataDir, daemon.pid);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  return { url, context, page: await context.newPage() };
}

function card(page: Page, status: string, title: string) {
  return page.locator(`.column[data-status="${status}"] .card`, { hasText: title });
}

describe('the dashboard, in a real browser', () => {
  it('creates a task from the form and shows it reach done live, with its log tail', async () => {
    const receiver = await webhookReceiver();
    const { page } = await daemonWithPage(receiver.url, receiver.secret);
    // A marker on the window survives only if the page is never reloaded.
    await page.evaluate(() => Object.assign(globalThis, { untouched: true }));
    await page.getByLabel('Title').fill('render the board');
    await page.getByRole('button', { name: 'Create task' }).click();
    await card(page, 'done', 'render the board').waitFor({ timeout: 15_000 });
    expect(await page.evaluate(() => (globalThis as { untouched?: boolean }).untouched)).toBe(true);
    await page.locator('.column[data-status="done"] h2', { hasText: 'done (1)' }).waitFor();
    // This daemon in the hosts panel, with its lease.
    const host = page.locator('#host-list .host');
    await host.filter({ hasText: 'active' }).waitFor();
    expect(await host.textContent()).toMatch(/running \d+ of \d+ · lease ends in \d+ s/);
    await card(page, 'done', 'render the board').getByRole('link').click();
    await page.locator('#log', { hasText: 'working' }).waitFor();
    await page.locator('#runs', { hasText: 'completed' }).waitFor();
    mkdirSync(join(ROOT, 'test-artifacts'), { recursive: true });
    await page.screenshot({ path: join(ROOT, 'test-artifacts/dashboard.png'), fullPage: true });
  });

  it('shows a task’s worktree: its diff coloured, each run’s changes, and the preserved ref once archived', async () => {
    const repo = makeRepo({ 'README.md': '# app\nold line\n' });
    const dataDir = tempDir();
    const daemon = startDaemon({
      dataDir,
      config: writeConfig(tempDir(), {
        workers: {
          tickSeconds: 0.1,
          defaultProfile: 'agent',
          profiles: {
            agent: {
              command: [
                '/bin/sh',
                '-c',
                'printf "# app\\nnew line\\n" > README.md; echo hello > new.txt; echo \'{"status":"done"}\' > "$GATEHOUSE_RUN_DIR/result.json"',
              ],
              workspace: 'worktree',
              repo: 'app',
            },
          },
        },
        workspaces: { repos: { app: { path: repo } }, minFreeBytes: 0 },
      }),
    });
    const url = await waitServing(dataDir, daemon.pid);
    const { id } = (await api(url, 'POST', '/tasks', { title: 'edit the readme' })).body;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${url}/#/tasks/${id}`);
    await page.locator('#runs', { hasText: 'completed' }).waitFor({ timeout: 15_000 });
    await page.locator('#runs', { hasText: '2 files +2 −1, uncommitted' }).waitFor();
    await page.locator('#changes:not(.hidden)').waitFor();
    expect(await page.locator('#diff-files li').allTextContents()).toEqual([
      'README.md',
      'new.txt',
    ]);
    expect(await page.locator('#diff .add').allTextContents()).toEqual(
      expect.arrayContaining(['+new line', '+hello']),
    );
    expect(await page.locator('#diff .del').allTextContents()).toEqual(['-old line']);
    await page.locator('#fields', { hasText: `on gatehouse/${id} from main (active` }).waitFor();
    await page.locator('#detail-actions').getByRole('button', { name: 'Archive' }).click();
    await page
      .locator('#fields', { hasText: `refs/gatehouse/preserved/${id}` })
      .waitFor({ timeout: 15_000 });
    await page.locator('#changes.hidden').waitFor({ state: 'attached' });
    await context.close();
  });

  it('shows a task’s attempts side by side with their judge, and keeps the one picked', async () => {
    const repo = makeRepo();
    const dataDir = tempDir();
    const answering = (n: number) => ({
      command: [
        '/bin/sh',
        '-c',
        `echo ${n} > answer.txt; echo '{"status":"done","summary":"answered ${n}"}' > "$GATEHOUSE_RUN_DIR/result.json"`,
      ],
      workspace: 'worktree',
      repo: 'app',
    });
    const daemon = startDaemon({
      dataDir,
      config: writeConfig(tempDir(), {
        workers: {
          tickSeconds: 0.1,
          defaultProfile: 'right',
          profiles: { right: answering(42), wrong: answering(41) },
        },
        workspaces: { repos: { app: { path: repo } }, minFreeBytes: 0 },
      }),
    });
    const url = await waitServing(dataDir, daemon.pid);
    const made = await api(url, 'POST', '/tasks', {
      title: 'answer it',
      attempts: {
        variants: [{ assignee: 'wrong' }, { assignee: 'right' }],
        judge: { command: ['/bin/sh', '-c', 'test "$(cat answer.txt)" = 42'] },
      },
    });
    const [wrong, right] = made.body.attempts.ids as [string, string];
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${url}/#/tasks/${made.body.id}`);
    const row = (id: string) => page.locator(`#attempt-rows tr[data-attempt="${id}"]`);
    await row(right).filter({ hasText: 'passed' }).waitFor({ timeout: 20_000 });
    await row(wrong).filter({ hasText: 'failed (1)' }).waitFor();
    expect(await row(right).textContent()).toContain('1 files +1 -0');
    // Until a pick, the task cannot be approved or sent back: no button offers it.
    await expect(
      page.locator('#detail-actions').getByRole('button', { name: 'Approve' }).count(),
    ).resolves.toBe(0);
    await row(right).getByRole('button', { name: 'Pick' }).click();
    await page.locator('#detail-meta', { hasText: 'done' }).waitFor({ timeout: 15_000 });
    await page.locator(`#attempt-rows tr.picked[data-attempt="${right}"]`).waitFor();
    expect(await page.locator('#attempt-rows button').count()).toBe(0);
    await context.close();
  });

  it('takes a task through a review round: Request changes, then Approve', async () => {
    const dataDir = tempDir();
    const daemon = startDaemon({
      dataDir,
      config: writeConfig(tempDir(), {
        workers: {
          tickSeconds: 0.1,
          defaultProfile: 'ok',
          profiles: { ok: profile('complete', { review: true }) },
        },
      }),
    });
    const url = await waitServing(dataDir, daemon.pid);
    const { id } = (await api(url, 'POST', '/tasks', { title: 'review in the browser' })).body;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(url);
    await card(page, 'review', 'review in the browser').waitFor({ timeout: 15_000 });
    await page.goto(`${url}/#/tasks/${id}`);
    const actions = page.locator('#detail-actions');
    // The reviewer's text is asked for in a dialog, and sent back as what to change.
    page.once('dialog', (dialog) => void dialog.accept('say it in fewer words'));
    await actions.getByRole('button', { name: 'Request changes' }).click();
    await waitFor('sent back and in review again', async () => {
      const t = (await api(url, 'GET', `/tasks/${id}`)).body;
      return t.status === 'review' && t.runs.length === 2 && t.runs[1].endedAt ? t : null;
    });
    await page.locator('#runs tr').nth(1).waitFor({ timeout: 15_000 });
    const sent = (await api(url, 'GET', `/tasks/${id}/events`)).body.events.find(
      (e: { kind: string }) => e.kind === 'changes_requested',
    );
    expect(sent.payload.text).toBe('say it in fewer words');
    await page.locator('#detail[data-status="review"]').waitFor();
    await actions.getByRole('button', { name: 'Approve' }).click();
    await card(page, 'done', 'review in the browser').waitFor({ timeout: 15_000 });
    expect((await api(url, 'GET', `/tasks/${id}`)).body.status).toBe('done');
    await context.close();
  });

  it('approves a gated task from its card, and answers its agent’s question from the panel', async () => {
    const dataDir = tempDir();
    // Asks over MCP on its first run; on the next, reports what it was answered.
    const asker = [
      'if [ -n "$GATEHOUSE_INSTRUCTIONS_FILE" ]; then',
      '  printf \'{"status":"done","summary":"%s"}\' "$(tail -n 1 "$GATEHOUSE_INSTRUCTIONS_FILE")" > "$GATEHOUSE_RUN_DIR/result.json"; exit 0',
      'fi',
      'curl -sSf -X POST "$GATEHOUSE_MCP_URL" -H "authorization: Bearer $GATEHOUSE_MCP_TOKEN" \\',
      '  -H "content-type: application/json" -H "accept: application/json, text/event-stream" \\',
      '  -d \'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_human","arguments":{"question":"Blue or green?"}}}\' -o /dev/null || exit 3',
      'printf \'{"status":"done","summary":"asked"}\' > "$GATEHOUSE_RUN_DIR/result.json"',
    ].join('\n');
    const daemon = startDaemon({
      dataDir,
      config: writeConfig(tempDir(), {
        workers: {
          tickSeconds: 0.1,
          defaultProfile: 'asker',
          profiles: {
            asker: {
              command: ['/bin/sh', '-c', asker],
              approval: 'before_run',
              mcp: { enabled: true },
            },
          },
        },
      }),
    });
    const url = await waitServing(dataDir, daemon.pid);
    const { id } = (await api(url, 'POST', '/tasks', { title: 'pick a colour' })).body;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(url);
    const gated = card(page, 'todo', 'pick a colour');
    await gated.getByText('needs approval (revision 1)').waitFor({ timeout: 15_000 });
    await gated.getByRole('button', { name: 'Approve pick a colour' }).click();
    const blocked = card(page, 'blocked', 'pick a colour');
    // On a loaded machine this is a dispatch, a spawn, a first MCP call and a settle: if it does
    // not come, the failure says where the task went instead.
    await blocked
      .getByText('question: Blue or green?')
      .waitFor({ timeout: 30_000 })
      .catch(async (err: Error) => {
        const task = (await api(url, 'GET', `/tasks/${id}`)).body;
        const events = (await api(url, 'GET', `/tasks/${id}/events`)).body;
        throw new Error(
          `${err.message}\ntask: ${JSON.stringify(task)}\nevents: ${JSON.stringify(events)}`,
        );
      });
    expect((await api(url, 'GET', `/tasks/${id}`)).body.approval).toMatchObject({
      approvedRevision: 1,
    });
    await page.goto(`${url}/#/tasks/${id}`);
    await page.locator('#fields').getByText('Blue or green?', { exact: true }).waitFor();
    page.once('dialog', (dialog) => {
      expect(dialog.message()).toContain('Blue or green?');
      void dialog.accept('green');
    });
    await page.locator('#detail-actions').getByRole('button', { name: 'Answer' }).click();
    await card(page, 'done', 'pick a colour').waitFor({ timeout: 15_000 });
    expect((await api(url, 'GET', `/tasks/${id}`)).body.summary).toBe('green');
    await context.close();
  });

  it('keeps the newest board when an older refresh answers last', async () => {
    const receiver = await webhookReceiver();
    const { page, url } = await daemonWithPage(receiver.url, receiver.secret);
    // On a loaded machine two refreshes' answers can cross. Hold back the first answer that shows
    // the task running until the board shows the newer state, then deliver it.
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let olderDelivered = null as Promise<void> | null;
    await page.route('**/tasks?limit=*', async (route) => {
      const response = await route.fetch().catch(() => null);
      if (!response) return route.abort().catch(() => {});
      const json = (await response.json()) as { tasks: { title: string; status: string }[] };
      const status = json.tasks.find((t) => t.title === 'crossing answers')?.status;
      if (status === 'running' && olderDelivered === null) {
        olderDelivered = released.then(() => route.fulfill({ response, json }));
        return;
      }
      await route.fulfill({ response, json });
    });
    const task = (await api(url, 'POST', '/tasks', { title: 'crossing answers', assignee: 'slow' }))
      .body;
    await waitFor('the running answer to be held', () => olderDelivered !== null);
    expect((await api(url, 'POST', `/tasks/${task.id}/archive`)).status).toBe(200);
    await card(page, 'archived', 'crossing answers').waitFor();
    const taken = async () => Number(await page.locator('html').getAttribute('data-board'));
    const before = await taken();
    release();
    await olderDelivered;
    // The page has taken in the late answer (and drawn it, or not) once its count moves.
    await waitFor('the late answer to be taken in', async () => (await taken()) > before);
    expect(await card(page, 'running', 'crossing answers').count()).toBe(0);
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    expect(await card(page, 'archived', 'crossing answers').count()).toBe(1);
  });

  it('does not ask for the token again when a request sent without it is refused late', async () => {
    const token = 'a-late-refusal-token';
    const { url, context, page } = await tokenDaemonWithPage(token);
    // The page's first ask for the platforms is held until the token has been given; it was
    // sent without one, so the daemon refuses it, late.
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let held: Promise<void> | null = null;
    await page.route('**/platform', async (route) => {
      if (held !== null || route.request().headers().authorization) return route.continue();
      held = released.then(() => route.continue());
      await held;
    });
    await page.goto(url);
    await page.locator('#token').waitFor();
    await waitFor('the first platforms request to be held', () => held !== null);
    await page.locator('#token').fill(token);
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.locator('#conn.live').waitFor();
    const refused = page.waitForResponse(
      (res) => new URL(res.url()).pathname === '/platform' && res.status() === 401,
    );
    release();
    await refused;
    await api(
      url,
      'POST',
      '/tasks',
      { title: 'after a late refusal' },
      { authorization: `Bearer ${token}` },
    );
    await card(page, 'done', 'after a late refusal').waitFor();
    expect(await page.locator('#token-form').isHidden()).toBe(true);
    await context.close();
  });

  it("shows a failing platform's open breaker and closes it with the Reconnect button", async () => {
    const receiver = await webhookReceiver();
    receiver.status = 500;
    const { page, url } = await daemonWithPage(receiver.url, receiver.secret);
    for (let i = 0; i < 2; i++)
      await api(url, 'POST', '/platform/ops/send', { channel: 'c', text: 'x' });
    const row = page.locator('.platform[data-platform="ops"]');
    await page.reload();
    await row.locator('.breaker.state-open').waitFor();
    await row.locator('.last-error', { hasText: 'HTTP 500' }).waitFor();
    // Not "connected": its sends fail and its breaker is open.
    expect(await row.locator('.platform-state').textContent()).not.toBe('connected');
    receiver.status = 200;
    await row.getByRole('button', { name: 'reconnect ops' }).click();
    await row.locator('.breaker.state-closed').waitFor();
    expect((await api(url, 'GET', '/platform/ops')).body.breaker.state).toBe('closed');
  });

  it('recovers after the daemon restarts and keeps updating live', async () => {
    const receiver = await webhookReceiver();
    const { page, dataDir, port, config, daemon, url } = await daemonWithPage(
      receiver.url,
      receiver.secret,
    );
    daemon.child.kill('SIGTERM');
    await daemon.exited;
    await page.locator('#conn.down').waitFor();
    const next = startDaemon({ dataDir, port, config });
    await waitServing(dataDir, next.pid);
    await page.locator('#conn.live').waitFor({ timeout: 15_000 });
    await api(url, 'POST', '/tasks', { title: 'after the restart', assignee: 'slow' });
    await card(page, 'running', 'after the restart').waitFor();
    expect(await page.locator('#conn').textContent()).toBe('live');
  });

  it('asks for the token before any click when the API needs one, and keeps what was typed', async () => {
    const token = 'a-dashboard-api-token';
    const { url, context, page } = await tokenDaemonWithPage(token);
    const notFound: string[] = [];
    page.on('response', (res) => {
      if (res.status() === 404) notFound.push(res.url());
    });
    let events = 0;
    page.on('websocket', (ws) => ws.on('framereceived', () => events++));
    await page.goto(url);
    await page.locator('#token').waitFor();
    await page.getByLabel('Title').fill('typed before the token');
    await page.locator('#token').fill(token);
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.locator('#conn.live').waitFor();
    expect(await page.getByLabel('Title').inputValue()).toBe('typed before the token');
    await page.getByRole('button', { name: 'Create task' }).click();
    await card(page, 'done', 'typed before the token').waitFor({ timeout: 15_000 });

    // Events are coalesced into refreshes: far fewer requests than events, not a refresh (one
    // request per column and panel) per event. How many refreshes a burst takes depends on how
    // long its runs last, so the measure is requests per event, not a fixed count.
    const requests: string[] = [];
    page.on('request', (req) => {
      if (new URL(req.url()).pathname !== '/events/stream') requests.push(req.url());
    });
    events = 0;
    for (let i = 0; i < 20; i++)
      await api(
        url,
        'POST',
        '/tasks',
        { title: `burst ${i}` },
        { authorization: `Bearer ${token}` },
      );
    await card(page, 'done', 'burst 19').waitFor({ timeout: 15_000 });
    const perBurst = requests.filter((r) => r.includes('/tasks?')).length;
    expect(events).toBeGreaterThanOrEqual(60);
    expect(perBurst).toBeLessThan(events / 2);
    expect(notFound).toEqual([]);
    await context.close();
  });

  it('leaves the focus in the field being typed in when a late request is refused', async () => {
    const token = 'a-dashboard-api-token';
    const { url, context, page } = await tokenDaemonWithPage(token);
    // The platforms panel's first request is answered late: its 401 arrives after the token
    // form has shown and the operator has started typing a title.
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/platform', async (route) => {
      await released;
      await route.continue();
    });
    await page.goto(url);
    await page.locator('#token').waitFor();
    await page.getByLabel('Title').click();
    await page.keyboard.type('half ');
    release();
    // A resource's timing entry is written once its body has arrived, after the page's code has
    // seen the 401 (that code runs as soon as the status and headers are in).
    await page.waitForFunction(() =>
      performance
        .getEntriesByType('resource')
        .some((e) => new URL(e.name).pathname === '/platform'),
    );
    await page.keyboard.type('typed');
    expect(await page.getByLabel('Title').inputValue()).toBe('half typed');
    expect(await page.locator('#token').inputValue()).toBe('');
    await context.close();
  });

  it('fits all seven columns at 1280 and 1920 px, with no empty band under the header', async () => {
    const receiver = await webhookReceiver();
    const { page } = await daemonWithPage(receiver.url, receiver.secret);
    mkdirSync(join(ROOT, 'test-artifacts'), { recursive: true });
    // The columns are drawn by the first refresh, which may come after the page says "live".
    await page.locator('.column[data-status="archived"]').waitFor();
    for (const width of [1280, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      // Measured in one turn of the page: a live refresh redraws the columns between two
      // separate reads, and a replaced column has no box.
      const { board, last, header } = await page.evaluate(() => {
        const { document } = globalThis as unknown as {
          document: { querySelector(selector: string): { getBoundingClientRect(): Box } | null };
        };
        const box = (selector: string) => {
          const { x, y, width, height } = document.querySelector(selector)!.getBoundingClientRect();
          return { x, y, width, height };
        };
        return {
          board: box('#board'),
          last: box('.column[data-status="archived"]'),
          header: box('header'),
        };
      });
      expect(last.x + last.width, `${width} px`).toBeLessThanOrEqual(board.x + board.width + 1);
      expect(board.y - (header.y + header.height), `${width} px`).toBeLessThan(24);
      await page.screenshot({ path: join(ROOT, `test-artifacts/dashboard-${width}.png`) });
    }
  });
});
