import { readdirSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InstanceLock, LOCK_FILE, LOCK_PATIENCE_MS } from '../../src/gateway/instance-lock.js';
import { identityOf, pidExists } from '../../src/proc/index.js';
import {
  ROOT,
  pidRecord,
  startDaemon,
  tempDir,
  waitServing,
  writeConfig,
} from '../helpers/daemon.js';
import { spawnTracked } from '../helpers/procs.js';
import { waitFor } from '../helpers/wait.js';

describe('single instance per data dir', () => {
  it('refuses a second plain run with exit 73 while the owner keeps serving', async () => {
    const dataDir = tempDir();
    const owner = startDaemon({ dataDir });
    const url = await waitServing(dataDir, owner.pid);
    const second = startDaemon({ dataDir });
    expect((await second.closed).code).toBe(73);
    expect(second.output()).toContain(`pid ${owner.pid}`);
    expect(second.output()).toContain('--replace');
    expect((await fetch(`${url}/health`)).status).toBe(200);
    expect(pidRecord(dataDir)?.pid).toBe(owner.pid);
  });

  it('refuses a second daemon given the first one’s workspaces.root with exit 78, whatever its data dir', async () => {
    const root = join(tempDir(), 'workspaces');
    const config = writeConfig(tempDir(), { workspaces: { root } });
    const firstDir = tempDir();
    const first = startDaemon({ dataDir: firstDir, config });
    const url = await waitServing(firstDir, first.pid);
    const second = startDaemon({ dataDir: tempDir(), config });
    expect((await second.closed).code).toBe(78);
    expect(second.output()).toContain(`workspaces.root: ${root} is in use by another gatehouse`);
    expect((await fetch(`${url}/health`)).status).toBe(200);
  });

  it('lets exactly one of two racing starts serve; the other exits 73', async () => {
    for (let round = 0; round < 3; round++) {
      const dataDir = tempDir();
      const a = startDaemon({ dataDir });
      const b = startDaemon({ dataDir });
      const first = await Promise.race([a.exited.then(() => a), b.exited.then(() => b)]);
      const winner = first === a ? b : a;
      expect((await first.exited).code).toBe(73);
      await waitServing(dataDir, winner.pid);
    }
  });

  it('takes the lock that a racing start touched only for a moment', async () => {
    // Two starts at the same instant both read the lock file before either can lock it; with
    // no patience at all each saw the other and both exited 73, leaving nobody serving.
    const path = join(tempDir(), LOCK_FILE);
    InstanceLock.tryAcquire(path)!.release();
    const reader = spawnTracked(
      [
        process.execPath,
        '-e',
        `const db = new (require('better-sqlite3'))(process.argv[1]);
         db.exec('BEGIN'); db.prepare('SELECT count(*) FROM sqlite_master').get();
         console.log('reading');
         setTimeout(() => db.exec('COMMIT'), 30);`,
        path,
      ],
      { cwd: ROOT },
    );
    await waitFor('the reader to hold its lock', () => reader.output().includes('reading'));
    const lock = InstanceLock.tryAcquire(path, LOCK_PATIENCE_MS);
    expect(lock).not.toBeNull();
    lock?.release();
    expect((await reader.closed).code).toBe(0);
  });

  it.each([
    ['hello', 'hello'],
    ['a negative pid', '-5'],
    [
      'a huge pid',
      JSON.stringify({
        pid: 99999999999,
        startTime: 1,
        bootId: 'x',
        argv: [],
        port: 1,
        dataDir: '/',
        startedAt: 1,
        version: '0',
      }),
    ],
    ['pid 1 and nothing else', '{"pid":1}'],
    ['an empty file', ''],
  ])('starts normally over a pid file holding %s', async (_name, content) => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'gatehouse.pid'), content);
    const daemon = startDaemon({ dataDir });
    await waitServing(dataDir, daemon.pid);
    expect(daemon.output()).toContain('replacing stale pid file');
  });

  it.each([
    ['its real start time', 0],
    ['another start time', 1],
  ])(
    'never signals a live unrelated process named in the pid file with %s',
    async (_name, offset) => {
      const dataDir = tempDir();
      // Looks like gatehouse to a careless check: argv holds "gatehouse.js".
      const bystander = spawnTracked([
        process.execPath,
        '-e',
        'process.on("SIGTERM",()=>console.log("TERM"));setInterval(()=>{},1e3)',
        'gatehouse.js',
      ]);
      const identity = identityOf(bystander.pid)!;
      writeFileSync(
        join(dataDir, 'gatehouse.pid'),
        JSON.stringify({
          ...identity,
          startTime: identity.startTime + offset,
          argv: ['node', 'gatehouse.js'],
          port: 1,
          dataDir,
          startedAt: 1,
          version: '0',
        }),
      );
      for (const replace of [false, true]) {
        const daemon = startDaemon({ dataDir, replace });
        await waitServing(dataDir, daemon.pid);
        daemon.child.kill('SIGTERM');
        expect((await daemon.exited).code).toBe(0);
      }
      expect(pidExists(bystander.pid, identity)).toBe(true);
      expect(bystander.output()).not.toContain('TERM');
    },
  );

  it('exits 0 on SIGTERM and removes its pid file', async () => {
    const dataDir = tempDir();
    const daemon = startDaemon({ dataDir });
    await waitServing(dataDir, daemon.pid);
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expect(pidRecord(dataDir)).toBeNull();
  });

  it('exits 75 for a planned restart, by POST /admin/restart or SIGUSR1, and 0 for POST /admin/stop', async () => {
    const dataDir = tempDir();
    const first = startDaemon({ dataDir });
    const url = await waitServing(dataDir, first.pid);
    expect((await fetch(`${url}/admin/restart`, { method: 'POST' })).status).toBe(200);
    expect((await first.exited).code).toBe(75);
    const second = startDaemon({ dataDir });
    await waitServing(dataDir, second.pid);
    second.child.kill('SIGUSR1');
    expect((await second.exited).code).toBe(75);
    const third = startDaemon({ dataDir });
    const thirdUrl = await waitServing(dataDir, third.pid);
    await fetch(`${thirdUrl}/admin/stop`, { method: 'POST' });
    expect(await third.exited).toEqual({ code: 0, signal: null });
    expect(pidRecord(dataDir)).toBeNull();
  });

  it('exits 78 naming the key for a wrong type or an unknown key, and 64 for a bad flag', async () => {
    const dataDir = tempDir();
    const wrongType = writeConfig(tempDir(), { workers: { tickSeconds: 'fast' } });
    const a = startDaemon({ dataDir, config: wrongType });
    expect((await a.closed).code).toBe(78);
    expect(a.output()).toContain('workers.tickSeconds');
    const unknown = writeConfig(tempDir(), { sever: { port: 1 } });
    const b = startDaemon({ dataDir, config: unknown });
    expect((await b.closed).code).toBe(78);
    expect(b.output()).toContain('sever: unknown key');
    const c = startDaemon({ dataDir, extraArgs: ['--bogus'] });
    expect((await c.exited).code).toBe(64);
    const d = startDaemon({ dataDir, port: 70000 });
    expect((await d.exited).code).toBe(64);
    expect(pidRecord(dataDir)).toBeNull();
  });

  it('backs off after too many unclean starts and logs why; a clean stop resets it', async () => {
    const dataDir = tempDir();
    const config = writeConfig(tempDir(), {
      crashLoop: { maxStarts: 2, windowSeconds: 60, maxBackoffSeconds: 1 },
    });
    const outputs: string[] = [];
    for (let i = 0; i < 4; i++) {
      const daemon = startDaemon({ dataDir, config });
      await waitServing(dataDir, daemon.pid);
      outputs.push(daemon.output());
      daemon.child.kill('SIGKILL');
      await daemon.exited;
    }
    // Starts 2..4 follow an unclean end; only the 4th is past maxStarts (2).
    expect(outputs.slice(0, 3).some((o) => o.includes('crash-loop guard'))).toBe(false);
    expect(outputs[3]).toContain('crash-loop guard: 3 unclean starts');
    const clean = startDaemon({ dataDir, config });
    await waitServing(dataDir, clean.pid);
    clean.child.kill('SIGTERM');
    await clean.exited;
    const after = startDaemon({ dataDir, config });
    await waitServing(dataDir, after.pid);
    expect(after.output()).not.toContain('crash-loop guard');
  });

  it('paces starts that keep failing before they serve (a port another program holds)', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as AddressInfo;
    try {
      const dataDir = tempDir();
      const config = writeConfig(tempDir(), {
        replace: { timeoutSeconds: 0.2 },
        crashLoop: { maxStarts: 1, windowSeconds: 60, maxBackoffSeconds: 1 },
      });
      const outputs: string[] = [];
      for (let i = 0; i < 3; i++) {
        const daemon = startDaemon({ dataDir, config, port });
        const { code } = await daemon.closed;
        expect(code).toBe(1);
        expect(daemon.stderr()).toContain('EADDRINUSE');
        outputs.push(daemon.output());
      }
      // Each failed start leaves the data dir as a clean stop would, but counts for the guard.
      expect(outputs.slice(0, 2).some((o) => o.includes('crash-loop guard'))).toBe(false);
      expect(outputs[2]).toContain('crash-loop guard: 2 unclean starts');
      expect(readdirSync(dataDir).filter((f) => /pid|-wal|-shm/.test(f))).toEqual([]);
    } finally {
      holder.close();
    }
  });
});
