import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { identityOf, isPid, pidExists, readCmdline, readProcStat } from '../../src/proc/index.js';
import { parseProcStat } from '../../src/proc/proc-stat.js';
import { tempDir } from '../helpers/daemon.js';
import { spawnTracked } from '../helpers/procs.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A zombie: a child exits while its parent (exec'd into sleep) never reaps it. The child waits
 * for a file that appears only once the parent is sleep, so no shell is left to reap it.
 */
async function makeZombie(): Promise<number> {
  const go = join(tempDir(), 'go');
  const parent = spawnTracked([
    'sh',
    '-c',
    'while [ ! -e "$0" ]; do sleep 0.01; done & echo $!; exec sleep 60',
    go,
  ]);
  const pid = Number(await waitFor('the child pid', () => parent.output().trim() || null));
  await waitFor('the parent to be sleep', () => readCmdline(parent.pid)?.[0] === 'sleep');
  writeFileSync(go, '');
  await waitFor('the child to become a zombie', () => readProcStat(pid)?.state === 'Z');
  return pid;
}

describe('pidExists', () => {
  it('calls a zombie dead although kill(pid, 0) calls it alive', async () => {
    const zombie = await makeZombie();
    expect(() => process.kill(zombie, 0)).not.toThrow();
    expect(pidExists(zombie)).toBe(false);
    expect(identityOf(zombie)).toBeNull();
  });

  it('calls a reaped pid dead', async () => {
    const child = spawn('true');
    const pid = child.pid!;
    await new Promise((res) => child.on('exit', res));
    expect(pidExists(pid)).toBe(false);
  });

  it('calls a live pid with a different start time dead, and the same identity alive', () => {
    const { pid } = spawnTracked(['sleep', '60']);
    const identity = identityOf(pid)!;
    expect(pidExists(pid, identity)).toBe(true);
    expect(pidExists(pid, { ...identity, startTime: identity.startTime + 1 })).toBe(false);
    expect(pidExists(pid, { ...identity, bootId: 'another-boot' })).toBe(false);
  });

  it('knows a process by the boot id it sees itself, in a mount namespace shown another one', async () => {
    // As in a systemd-nspawn container: the container's root sees a boot id of its own, a
    // sandboxed unit in it the machine's. The process below is shown a boot id of its own.
    const dir = tempDir();
    const fake = '00000000-1111-2222-3333-444444444444';
    writeFileSync(join(dir, 'boot_id'), `${fake}\n`);
    const shown = spawnTracked([
      'unshare',
      '--mount',
      '--propagation',
      'private',
      'sh',
      '-c',
      'mount --bind "$0" /proc/sys/kernel/random/boot_id && echo mounted && exec sleep 60',
      join(dir, 'boot_id'),
    ]);
    await waitFor('the boot id shown', () => shown.output().includes('mounted'));
    const live = identityOf(shown.pid)!;
    expect(live.bootId).not.toBe(fake);
    expect(pidExists(shown.pid, { ...live, bootId: fake })).toBe(true);
    expect(pidExists(shown.pid, { ...live, bootId: '55555555-6666-7777-8888-999999999999' })).toBe(
      false,
    );
    expect(pidExists(shown.pid, { ...live, startTime: live.startTime + 1, bootId: fake })).toBe(
      false,
    );

    // In a user namespace of its own, a process shapes what it is shown as it likes (an
    // unprivileged one could fake an old boot id): that is no proof.
    const own = spawnTracked([
      'unshare',
      '--user',
      '--map-root-user',
      '--mount',
      'sh',
      '-c',
      'mount --bind "$0" /proc/sys/kernel/random/boot_id && echo mounted && exec sleep 60',
      join(dir, 'boot_id'),
    ]);
    await waitFor('the boot id shown in a user namespace', () => own.output().includes('mounted'));
    expect(pidExists(own.pid, { ...identityOf(own.pid)!, bootId: fake })).toBe(false);
  });

  it('rejects pids that are not pids', () => {
    for (const bad of [0, -5, 1.5, Number.NaN, 2 ** 40]) expect(pidExists(bad)).toBe(false);
    expect(isPid(32768)).toBe(true);
  });
});

describe('parseProcStat', () => {
  it('reads fields after the last parenthesis, whatever the command name holds', () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
    fields[0] = 'S';
    const stat = parseProcStat(42, `42 (evil) (name) R 1 2) ${fields.join(' ')}`);
    expect(stat).toMatchObject({ pid: 42, state: 'S', ppid: 4, pgid: 5, sid: 6, startTime: 22 });
    // utime 14 + stime 15 clock ticks (100 per second here); rss 24 pages.
    expect(stat?.cpuSeconds).toBeCloseTo(0.29);
    expect(stat?.rssBytes).toBe(24 * 4096);
  });

  it('returns null for garbage', () => {
    expect(parseProcStat(1, 'hello')).toBeNull();
    expect(parseProcStat(1, '1 (x) S')).toBeNull();
  });
});
