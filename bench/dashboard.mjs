// The dashboard's load in headless Chromium (Debian's): from navigation until the board's six
// columns, their counts and the throughput chart are drawn, on a board of 100,000 tasks beside
// the same on an empty board, and how many requests the page makes that are not data calls.
import { chromium } from 'playwright-core';
import { startGatehouse } from './api.mjs';
import { median, p99, printTable, removeDir, seedTasks, stopAll, tempDir } from './lib.mjs';

const LOADS = Number(process.env.BENCH_DASHBOARD_LOADS ?? 15);
const TASKS = 100_000;

/** Milliseconds from navigation to the board drawn, and the page's non-data requests. */
async function load(browser, url) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const assets = [];
  page.on('request', (req) => {
    const path = new URL(req.url()).pathname;
    if (req.resourceType() !== 'fetch' && req.resourceType() !== 'websocket') assets.push(path);
  });
  const t0 = performance.now();
  await page.goto(url);
  await page.waitForFunction(() => {
    const d = document.documentElement.dataset;
    return Number(d.board) >= 1 && Number(d.chart) >= 1;
  });
  const ms = performance.now() - t0;
  const cards = await page.locator('.card').count();
  await context.close();
  return { ms, assets, cards };
}

export async function run() {
  const dirs = [tempDir(), tempDir()];
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    seedTasks(dirs[1], TASKS);
    // No worker starts: the seeded ready tasks stay where they are.
    const [empty, full] = [
      (await startGatehouse(dirs[0])).url,
      (await startGatehouse(dirs[1])).url,
    ];
    const times = { empty: [], full: [] };
    let assets = [];
    let cards = 0;
    for (let i = 0; i < LOADS + 2; i++) {
      // Interleaved, the first two of each left out (Chromium and the daemons warming up).
      const a = await load(browser, empty);
      const b = await load(browser, full);
      if (i < 2) continue;
      times.empty.push(a.ms);
      times.full.push(b.ms);
      assets = b.assets;
      cards = b.cards;
    }
    const rows = [
      {
        figure: `dashboard drawn, ${TASKS.toLocaleString('en')} tasks (median)`,
        value: median(times.full),
        unit: 'ms',
        baselineName: 'empty board',
        baseline: median(times.empty),
        goal: '< 1000 ms',
      },
      {
        figure: `dashboard drawn, ${TASKS.toLocaleString('en')} tasks (p99)`,
        value: p99(times.full),
        unit: 'ms',
        baselineName: 'empty board',
        baseline: p99(times.empty),
        goal: '< 1000 ms',
      },
      {
        figure: 'requests to load the page, data calls aside',
        value: assets.length,
        unit: `(${assets.join(', ')}; ${cards} cards drawn)`,
        goal: '1',
      },
    ];
    printTable('dashboard', rows);
    return rows;
  } finally {
    await browser.close();
    stopAll();
    for (const dir of dirs) removeDir(dir);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
