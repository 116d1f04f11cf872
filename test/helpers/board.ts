// Board helpers for API tests: a claimed run (with its token) and, when wanted, a real process behind it.
import { join } from 'node:path';
import type { Board } from '../../src/kanban/board.js';
import { claimTask, type Claim } from '../../src/kanban/moves/claim.js';
import { recordFoundProcess } from '../../src/kanban/moves/records.js';
import { identityOf } from '../../src/proc/index.js';
import { spawnTracked } from './procs.js';

/** Claims `taskId` as the dispatcher would (no process yet); throws if it is not claimable. */
export async function claim(board: Board, dataDir: string, taskId: string): Promise<Claim> {
  const claimed = await board.transact((tx) =>
    claimTask(tx, {
      taskId,
      profile: 'demo',
      host: 'test-host',
      leaseMs: 60_000,
      keepDescendants: false,
      logPathFor: (runId) => join(dataDir, 'runs', runId, 'log'),
    }),
  );
  if (!claimed) throw new Error(`could not claim ${taskId}`);
  return claimed;
}

/** Puts a real process group (`sleep`, in its own session) behind a claimed run. */
export async function attachSleeper(board: Board, claimed: Claim): Promise<number> {
  const sleeper = spawnTracked(['sleep', '60'], {
    env: { ...process.env, GATEHOUSE_RUN_ID: claimed.run.id },
  });
  const id = identityOf(sleeper.pid)!;
  await board.transact((tx) =>
    recordFoundProcess(tx, claimed.run.id, {
      pid: id.pid,
      pgid: id.pid,
      startTime: id.startTime,
      bootId: id.bootId,
    }),
  );
  return sleeper.pid;
}
