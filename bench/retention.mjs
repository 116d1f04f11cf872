// Retention: what 1,000 finished tasks leave on disk and in the events table, before and after
// retention (runDays 30, eventDays 7) has run, and how long its batched passes take.
import { wallClock } from '../dist/clock.js';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../dist/config/load.js';
import { composeGateway } from '../dist/gateway/compose.js';
import { recordGone } from '../dist/kanban/moves/records.js';
import { openStore } from '../dist/kanban/store/sqlite/store.js';
import { claimForDemo, printTable, removeDir, tempDir } from './lib.mjs';

const TASKS = 1000;
const DAY = 24 * 3600 * 1000;

const du = (dir) => Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);

export async function run() {
  const dataDir = tempDir();
  writeFileSync(
    join(dataDir, 'c.json'),
    JSON.stringify({ dataDir, retention: { runDays: 30, eventDays: 7 } }),
  );
  const config = loadConfig({ config: join(dataDir, 'c.json') }, process.env, dataDir);
  let now = Date.now();
  const store = openStore(join(dataDir, 'gatehouse.db'));
  const gw = await composeGateway({
    config,
    store,
    logger: pino({ level: 'silent' }),
    requestStop: () => {},
    clock: wallClock(() => now),
  });
  const { board, worker } = gw.kanban;
  // What a finished run leaves, as the dispatcher and a worker write it.
  const log = 'a line a worker printed while it worked\n'.repeat(500);
  for (let i = 0; i < TASKS; i++) {
    const task = await board.create({ title: `finished ${i}` }, { kind: 'api' });
    const claim = await claimForDemo(board, task.id, (id) => join(dataDir, 'runs', id, 'log'));
    const dir = join(dataDir, 'runs', claim.run.id);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'log'), log);
    writeFileSync(join(dir, 'task.json'), JSON.stringify(task));
    writeFileSync(join(dir, 'proc.json'), '{"pid":1,"pgid":1,"startTime":1,"bootId":"b"}');
    writeFileSync(join(dir, 'exit.json'), '{"status":0}\n');
    await worker.heartbeat(task.id, claim.token, 'working');
    await worker.complete(task.id, claim.token, { summary: 'done' });
    await board.transact((tx) => recordGone(tx, claim.run.id));
  }
  const rows = () => countEvents(store);
  const before = { disk: du(join(dataDir, 'runs')), events: await rows() };
  now += 31 * DAY;
  const started = performance.now();
  let passes = 0;
  for (;;) {
    passes++;
    const done = await gw.retention.pass();
    if (done.run_folders + done.events === 0) break;
  }
  const ms = performance.now() - started;
  const after = { disk: du(join(dataDir, 'runs')), events: await rows() };
  for (const step of gw.closeSteps) await step.run();
  removeDir(dataDir);
  return printTable('retention, per 1,000 finished tasks', [
    {
      figure: 'run folders on disk, after retention',
      unit: 'MB',
      value: after.disk / 1e6,
      baselineName: 'before',
      baseline: before.disk / 1e6,
    },
    {
      figure: 'event rows, after retention',
      unit: 'rows',
      value: after.events,
      baselineName: 'before',
      baseline: before.events,
    },
    { figure: `time to prune it all (${passes} batched passes)`, unit: 'ms', value: ms },
  ]);
}

async function countEvents(store) {
  return (await store.events.list(0, 1_000_000)).length;
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
