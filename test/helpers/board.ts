// Board helpers for API tests: a claimed run (with its token) and, when wanted, a real process behind it.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Board } from '../../src/kanban/board.js';
import { claimTask, type Claim } from '../../src/kanban/moves/claim.js';
import { recordFoundProcess } from '../../src/kanban/moves/records.js';
import { identityOf } from '../../src/proc/index.js';
import { spawnTracked } from './procs.js';

const hosts = new WeakMap<Board, Promise<number>>();

/** The id of a host registered on `board` for claims made by tests (once per board). */
export function testHostId(board: Board): Promise<number> {
  let id = hosts.get(board);
  if (!id) {
    id = board
      .transact((tx) =>
        tx.store.hosts.register({
          name: 'test-host',
          capacity: 8,
          profiles: ['demo'],
          version: 'test',
          leaseMs: 3_600_000,
        }),
      )
      .then((host) => host.id);
    hosts.set(board, id);
  }
  return id;
}

/** Claims `taskId` as the dispatcher would (no process yet); throws if it is not claimable. */
export async function claim(board: Board, dataDir: string, taskId: string): Promise<Claim> {
  const hostId = await testHostId(board);
  const claimed = await board.transact((tx) =>
    claimTask(tx, {
      taskId,
      profile: 'demo',
      host: 'test-host',
      hostId,
      leaseMs: 60_000,
      keepDescendants: false,
      logPathFor: (runId) => join(dataDir, 'runs', runId, 'log'),
    }),
  );
  if (!claimed) throw new Error(`could not claim ${taskId}`);
  // Its folder, as a spawn makes it: on a shared board, what shows the run is this daemon's.
  mkdirSync(join(dataDir, 'runs', claimed.run.id), { recursive: true });
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
