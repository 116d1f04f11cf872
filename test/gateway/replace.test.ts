import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pidExists, readProcStat } from '../../src/proc/index.js';
import {
  BIN,
  ROOT,
  cleanEnv,
  freePort,
  pidRecord,
  startDaemon,
  tempDir,
  waitServing,
  writeConfig,
} from '../helpers/daemon.js';
import { spawnTracked } from '../helpers/procs.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Starts the daemon under a parent that never reaps it (sh exec'd into sleep), as systemd does
 * between a crash and its reaping; returns the daemon's pid.
 */
async function daemonUnderNonReapingParent(dataDir: string): Promise<number> {
  const parent = spawnTracked(
    [
      'sh',
      '-c',
      `"${process.execPath}" "${BIN}" run --data-dir "${dataDir}" --port 0 >/dev/null 2>&1 & echo $!; exec sleep 120`,
    ],
    { cwd: ROOT, env: cleanEnv() },
  );
  const pid = Number(await waitFor('the daemon pid', () => parent.output().trim() || null));
  await waitServing(dataDir, pid);
  return pid;
}

async function zombieOwner(dataDir: string): Promise<number> {
  const pid = await daemonUnderNonReapingParent(dataDir);
  process.kill(pid, 'SIGKILL');
  await waitFor('the owner to be a zombie', () => readProcStat(pid)?.state === 'Z');
  return pid;
}

describe('--replace and zombie owners', () => {
  it('treats a zombie owner as gone: plain run serves at once', async () => {
    const dataDir = tempDir();
    const zombie = await zombieOwner(dataDir);
    const next = startDaemon({ dataDir });
    await waitServing(dataDir, next.pid);
    expect(pidRecord(dataDir)?.pid).toBe(next.pid);
    expect(readProcStat(zombie)?.state).toBe('Z');
  });

  it('treats a zombie owner as gone: run --replace serves at once without waiting out a timeout', async () => {
    const dataDir = tempDir();
    const zombie = await zombieOwner(dataDir);
    // A wait for the owner would last the whole replace timeout: 300 s here, so serving
    // within a minute cannot be a slow machine's luck either way.
    const config = writeConfig(tempDir(), {
      dataDir,
      replace: { timeoutSeconds: 300, killTimeoutSeconds: 300 },
    });
    const next = startDaemon({ dataDir, config, replace: true });
    await waitServing(dataDir, next.pid, 60_000);
    expect(pidRecord(dataDir)?.pid).toBe(next.pid);
    expect(readProcStat(zombie)?.state).toBe('Z');
  });

  it('replaces a live owner: the owner exits 0 and the newcomer serves on the same port', async () => {
    const dataDir = tempDir();
    const port = await freePort();
    const owner = startDaemon({ dataDir, port });
    await waitServing(dataDir, owner.pid);
    const next = startDaemon({ dataDir, port, replace: true });
    expect((await owner.closed).code).toBe(0);
    expect(owner.output()).toContain(`replaced by pid ${next.pid}`);
    const url = await waitServing(dataDir, next.pid);
    expect(url).toBe(`http://127.0.0.1:${port}`);
  });

  it('SIGKILLs an owner that ignores SIGTERM after the replace timeout', async () => {
    const dataDir = tempDir();
    const stubborn = spawnTracked(
      [process.execPath, join(ROOT, 'test/fixtures/stubborn/gatehouse.js'), dataDir],
      { cwd: ROOT },
    );
    await waitFor('the stubborn owner', () => stubborn.output().includes('ready'));
    const config = writeConfig(tempDir(), {
      replace: { timeoutSeconds: 0.5, killTimeoutSeconds: 2 },
    });
    const next = startDaemon({ dataDir, config, replace: true });
    expect(await stubborn.closed).toEqual({ code: null, signal: 'SIGKILL' });
    expect(stubborn.output()).toContain('TERM');
    await waitServing(dataDir, next.pid);
    expect(next.output()).toContain('after SIGKILL');
  });

  it('does not signal an owner whose identity no longer matches its pid file', async () => {
    const dataDir = tempDir();
    // Holds the lock but its pid file records another start time: unverifiable, so untouchable.
    const other = spawnTracked(
      [process.execPath, join(ROOT, 'test/fixtures/stubborn/gatehouse.js'), dataDir, '7'],
      { cwd: ROOT },
    );
    await waitFor('the other owner', () => other.output().includes('ready'));
    const config = writeConfig(tempDir(), {
      replace: { timeoutSeconds: 0.5, killTimeoutSeconds: 0.5 },
    });
    const next = startDaemon({ dataDir, config, replace: true });
    expect((await next.closed).code).toBe(73);
    expect(next.output()).toContain('does not name a live gatehouse');
    expect(other.output()).not.toContain('TERM');
    expect(pidExists(other.pid, other.identity)).toBe(true);
  });
});
