// The fence keeper: one process per daemon on a shared board, in a session of its own, that ends
// the daemon's runs before its lease can run out, even when the daemon is frozen, cut off from
// the database or dead. `node fence-keeper.js DATA_DIR`. The daemon tells it, on its stdin (a
// pipe no worker holds), when to end them on the boot clock (which never steps) and which runs
// are its; nothing it reads is a file a worker could write. At the fence it ends each run's
// whole tree: its cgroup where it has one (which nothing in it leaves by accident), its group
// while its leader is proven alive, and anywhere on the machine the processes carrying the
// run's marker (escapees that called setsid). Its daemon gone, it keeps
// the last fence; a new daemon of the same data dir that took the lease back takes its runs
// over and tells it to go (SIGUSR2), once its own keeper guards them.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { bootNowMs } from './boot-clock.js';
import { cgroupPopulated, killCgroup, signalCgroup } from './cgroup.js';
import { identityOf, type ProcessIdentity } from './identity.js';
import { KEEPER_UP, KEEPERS_DIR, type KeeperMessage } from './fence-protocol.js';
import { terminateMarkedRun } from './terminate.js';

interface Guarded {
  leader: ProcessIdentity | null;
  cgroup: string | null;
  /** Its ending has begun (TERM sent). */
  ending: boolean;
  /** Its group and the processes carrying its marker are gone (or survived KILL). */
  marked: boolean;
}

function main(dataDir: string): void {
  const runs = new Map<string, Guarded>();
  let fence: { termAt: number; killAt: number } | null = null;
  let daemonGone = false;
  const log = (what: string) => process.stderr.write(`${new Date().toISOString()} ${what}\n`);

  const dir = join(dataDir, KEEPERS_DIR);
  const self = join(dir, `${process.pid}.json`);
  // Who it is, for a later daemon of this data dir to hand its runs over to its own keeper. A
  // keeper that cannot say so (a full disk) still keeps its fence: it only cannot be relieved.
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(self, JSON.stringify(identityOf(process.pid)));
  } catch (err) {
    log(`cannot write ${self}: ${String(err)}`);
  }
  const leave = (code: number) => {
    rmSync(self, { force: true });
    process.exit(code);
  };
  // Broad signals an agent might send by accident (kill -TERM -1 as the same user, a terminal's
  // hangup) do not end the fence. Only a proven successor's SIGUSR2 does, and SIGKILL.
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGPIPE'] as const) process.on(sig, () => {});
  process.on('SIGUSR2', () => {
    log(`handed over: ${runs.size} runs are guarded by the keeper of a newer daemon`);
    leave(0);
  });

  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    let message: KeeperMessage;
    try {
      message = JSON.parse(line) as KeeperMessage;
    } catch {
      return log(`not JSON, ignored: ${line.slice(0, 200)}`);
    }
    if ('fence' in message) fence = message.fence;
    else if ('guard' in message)
      runs.set(message.guard.runId, {
        leader: message.guard.leader,
        cgroup: message.guard.cgroup ?? null,
        ending: false,
        marked: false,
      });
    else if ('release' in message) runs.delete(message.release);
    check();
  });
  lines.on('close', () => {
    daemonGone = true;
    check();
  });
  // Said once, on a line of its own whatever a preload printed before: a daemon gone before it
  // reads this must not end the keeper (EPIPE).
  process.stdout.on('error', () => {});
  process.stdout.write(`\n${KEEPER_UP}\n`);

  const check = () => {
    if (daemonGone && runs.size === 0) return leave(0);
    if (fence === null) return;
    const now = bootNowMs();
    if (now < fence.termAt) return;
    for (const [runId, run] of runs) {
      // KILL time: the cgroup's whole tree at once, again each tick until it is empty.
      if (run.cgroup !== null && now >= fence.killAt) killCgroup(run.cgroup);
      if (run.ending) continue;
      run.ending = true;
      log(`fence: ending run ${runId} (its host's lease was not renewed in time)`);
      if (run.cgroup !== null) signalCgroup(run.cgroup, 'SIGTERM');
      terminateMarkedRun(runId, run.leader, null, {
        graceMs: Math.max(0, fence.killAt - now),
        killWaitMs: 2000,
      })
        .then((result) => {
          if (result.survived)
            log(`fence: run ${runId} survived SIGKILL: ${result.survivors.join(' ')}`);
        })
        .catch((err: unknown) => log(`fence: ending run ${runId} failed: ${String(err)}`))
        .finally(() => (run.marked = true));
    }
    // A run is done with once its group and marked processes are gone, and its cgroup is empty.
    for (const [runId, run] of runs)
      if (run.marked && (run.cgroup === null || !cgroupPopulated(run.cgroup))) runs.delete(runId);
    if (daemonGone && runs.size === 0) leave(0);
  };
  // Ticks on the boot clock: a timer may come late (a suspended machine), never early.
  setInterval(check, 200);
}

const dataDir = process.argv[2];
if (!dataDir) {
  process.stderr.write('usage: fence-keeper.js DATA_DIR (started by gatehouse run)\n');
  process.exit(64);
}
main(dataDir);
