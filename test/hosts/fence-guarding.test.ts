// When the fence keeper guards what this daemon starts (src/kanban/dispatch/fence.ts): only once
// the keeper has said it is up, while every message sent to it has reached its pipe, and never
// once the fence is closed at a stop.
import { systemClock } from '../../src/clock.js';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Fence } from '../../src/kanban/hosts/fence.js';
import { bootNowMs } from '../../src/proc/index.js';
import { KEEPERS_DIR } from '../../src/proc/fence-protocol.js';
import { tempDir } from '../helpers/daemon.js';
import { waitFor } from '../helpers/wait.js';

const log = pino({ level: 'silent' });
const fences: { fence: Fence; dataDir: string }[] = [];

/** The keepers' pids this fence started (their files in the data dir). */
function keeperPids(dataDir: string): number[] {
  try {
    return readdirSync(join(dataDir, KEEPERS_DIR)).map((f) => Number.parseInt(f, 10));
  } catch {
    return [];
  }
}

function newFence(env: Record<string, string> = {}) {
  const dataDir = tempDir();
  const fence = new Fence(
    dataDir,
    log,
    { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    systemClock,
  );
  fences.push({ fence, dataDir });
  return { fence, dataDir };
}

afterEach(async () => {
  for (const { fence, dataDir } of fences.splice(0)) {
    for (const pid of keeperPids(dataDir)) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // gone
      }
    }
    // Its keeper goes once the daemon's side is closed and it guards nothing.
    fence.set(bootNowMs() + 60_000, bootNowMs() + 61_000);
    fence.close();
    await waitFor('the keeper gone', () => keeperPids(dataDir).length === 0, 10_000);
  }
});

describe("the fence's guard", () => {
  it('guards while the keeper takes its messages, not once the fence is closed', async () => {
    const { fence, dataDir } = newFence();
    fence.set(bootNowMs() + 60_000, bootNowMs() + 61_000);
    expect(fence.guarding).toBe(false);
    // Guarding once the keeper it started says it is up.
    await waitFor('the keeper up', () => fence.guarding);
    expect(keeperPids(dataDir)).toHaveLength(1);
    fence.close();
    expect(fence.guarding).toBe(false);
  });

  it('does not guard while the keeper’s pipe holds messages back (a starved keeper)', async () => {
    const { fence, dataDir } = newFence();
    fence.set(bootNowMs() + 60_000, bootNowMs() + 61_000);
    await waitFor('the keeper up', () => fence.guarding);
    const [keeper] = keeperPids(dataDir);
    process.kill(keeper!, 'SIGSTOP');
    await waitFor('it stopped', () =>
      /^\d+ \(.*\) T/.test(readFileSync(`/proc/${keeper}/stat`, 'utf8')),
    );
    // Guards and releases until the pipe (64 KiB) is full and Node holds the rest.
    let sent = 0;
    while (fence.guarding && sent < 100_000) {
      fence.guard(`r_${String(sent).padStart(12, '0')}`, null, null);
      fence.release(`r_${String(sent++).padStart(12, '0')}`);
    }
    expect(fence.guarding).toBe(false);
    process.kill(keeper!, 'SIGCONT');
    await waitFor('the keeper caught up', () => fence.guarding, 10_000);
  });

  it('does not guard with a keeper that has not said it is up: one that dies at every start guards nothing', async () => {
    const dir = tempDir();
    const starts = join(dir, 'starts');
    const crash = join(dir, 'crash.cjs');
    // Node runs it before the keeper's own code: each keeper dies as it starts.
    writeFileSync(
      crash,
      `require('fs').appendFileSync(${JSON.stringify(starts)}, 'x'); process.exit(1);\n`,
    );
    const { fence } = newFence({ NODE_OPTIONS: `--require=${crash}` });
    let guarded = 0;
    const sampler = setInterval(() => (guarded += fence.guarding ? 1 : 0), 1);
    try {
      fence.set(bootNowMs() + 60_000, bootNowMs() + 61_000);
      fence.guard('r_000000000001', null, null);
      // Three keepers started and dead, the fence trying again after each.
      await waitFor(
        'three keepers dead at their start',
        () => existsSync(starts) && readFileSync(starts, 'utf8').length >= 3,
        15_000,
      );
    } finally {
      clearInterval(sampler);
    }
    expect(guarded).toBe(0);
    expect(fence.guarding).toBe(false);
  });

  it('hears the keeper say it is up after whatever a preload printed first', async () => {
    const dir = tempDir();
    const chatty = join(dir, 'chatty.cjs');
    writeFileSync(
      chatty,
      `process.stdout.write('a banner\\nup-to-date\\n' + 'x'.repeat(10000));\n`,
    );
    const { fence } = newFence({ NODE_OPTIONS: `--require=${chatty}` });
    let told = 0;
    fence.whenUp(() => told++);
    fence.set(bootNowMs() + 60_000, bootNowMs() + 61_000);
    await waitFor('the keeper up', () => fence.guarding, 10_000);
    expect(told).toBe(1);
  });
});
