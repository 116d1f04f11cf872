// Broken environments and hostile files never wedge the daemon: a bad data dir or listen
// address is a configuration error (exit 78, no stack trace); logs and run files of any shape
// are read with bounded memory and time; errors say what is wrong and what is allowed.
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  readExitRecord,
  readProcRecord,
  readVerdict,
} from '../../src/kanban/dispatch/run-files.js';
import { api, boardSnapshot, rawRequest, startGateway } from '../helpers/app.js';
import { claim } from '../helpers/board.js';
import { ROOT, runCli, startDaemon, tempDir, writeConfig } from '../helpers/daemon.js';
import { spawnTracked } from '../helpers/procs.js';
import { waitFor } from '../helpers/wait.js';
import { settledIn } from '../helpers/workers.js';

async function exitsWithConfigError(daemon: ReturnType<typeof startDaemon>, names: string) {
  const { code } = await daemon.closed;
  expect(code, daemon.stderr()).toBe(78);
  expect(daemon.stderr()).toContain(names);
  expect(daemon.stderr()).not.toMatch(/\n\s+at /);
}

describe('environment errors at start exit 78, naming the path or key', () => {
  it('a data dir that is a file', async () => {
    const file = join(tempDir(), 'not-a-dir');
    writeFileSync(file, 'x');
    await exitsWithConfigError(startDaemon({ dataDir: file }), `dataDir ${file}`);
  });

  it('a data dir on a read-only file system', async () => {
    const dir = tempDir();
    // A read-only mount in a mount namespace of its own (unshare needs no privileges).
    const daemon = spawnTracked(
      [
        'unshare',
        '-rm',
        'sh',
        '-c',
        'mount -t tmpfs -o ro tmpfs "$1" && exec "$0" "$2" run --data-dir "$1" --port 0',
        process.execPath,
        dir,
        join(ROOT, 'bin/gatehouse.js'),
      ],
      { cwd: ROOT },
    );
    await exitsWithConfigError(daemon, `dataDir ${dir}: is not writable (EROFS)`);
  });

  it('a server.host that cannot be resolved or bound', async () => {
    for (const host of ['nonexistent.invalid', '192.0.2.1']) {
      const daemon = startDaemon({
        dataDir: tempDir(),
        extraArgs: ['--host', host],
        env: { GATEHOUSE_TOKEN: 'a-token-for-a-public-bind' },
      });
      await exitsWithConfigError(daemon, `server.host ${host}`);
    }
  });

  it('a full disk: one line saying so, and nothing left behind', async () => {
    // A 64 KiB file system of the test's own, in a mount namespace of its own, filled up.
    const root = tempDir();
    const script = `
      set -e
      mount -t tmpfs -o size=64k tmpfs "$1"
      dd if=/dev/zero of="$1/filler" bs=1k count=64 2>/dev/null || true
      set +e
      "$2" "$3" run --data-dir "$1/data" --port 0
      echo "exit=$?"
      "$2" --input-type=module -e "import('$4').then((m) => { try { m.writePidFile('$1/data/gatehouse.pid', {}); } catch (e) { console.log('pid-write=' + e.code); } })"
      echo "left=$(ls -A "$1/data" | tr '\n' ' ')"
    `;
    const unshare = process.getuid?.() === 0 ? ['unshare', '-m'] : ['unshare', '-Urm'];
    const child = spawnTracked(
      [
        ...unshare,
        'sh',
        '-c',
        script,
        'sh',
        root,
        process.execPath,
        join(ROOT, 'bin/gatehouse.js'),
        join(ROOT, 'dist/gateway/pid-file.js'),
      ],
      { env: { ...process.env } },
    );
    await child.closed;
    const out = child.output();
    expect(out).toMatch(/no space left on device/);
    expect(out).toContain('exit=78');
    expect(out).not.toMatch(/\n\s+at /);
    expect(out).toContain('pid-write=ENOSPC');
    expect(out).toMatch(/left=\s*$/m);
  });

  it('a resolver that is not up yet (EAI_AGAIN) exits 1, to be tried again, not 78', async () => {
    // With no attempts allowed, glibc's resolver answers "try again" without any traffic.
    const env = { RES_OPTIONS: 'attempts:0' };
    const probe = spawnTracked(
      [
        process.execPath,
        '-e',
        "require('dns').lookup('gatehouse-test.example', (e) => console.log(e && e.code))",
      ],
      { env: { ...process.env, ...env } },
    );
    await probe.closed;
    expect(probe.stdout().trim()).toBe('EAI_AGAIN');
    const config = writeConfig(tempDir(), { replace: { timeoutSeconds: 0.5 } });
    const daemon = startDaemon({
      dataDir: tempDir(),
      config,
      extraArgs: ['--host', 'gatehouse-test.example'],
      env: { ...env, GATEHOUSE_TOKEN: 'a-token-for-a-public-bind' },
    });
    const { code } = await daemon.closed;
    expect(code).toBe(1);
    expect(daemon.stderr()).toMatch(/EAI_AGAIN\); a restart tries again/);
    expect(daemon.stderr()).not.toMatch(/\n\s+at /);
  });

  it('a duration no timer can hold, and a short token, each with what is allowed', async () => {
    const cases: [object, string][] = [
      [{ workers: { tickSeconds: 3_000_000 } }, 'workers.tickSeconds: must be at most 60'],
      [{ workers: { claimTtlSeconds: 1e9 } }, 'workers.claimTtlSeconds: must be at most 2073600'],
      [{ api: { token: 'fifteen-chars!!' } }, 'api.token: must be at least 16 characters, or null'],
      [{ shutdown: { workers: 'kill' } }, 'shutdown.workers: must be one of "leave", "terminate"'],
    ];
    for (const [config, message] of cases) {
      const daemon = startDaemon({ dataDir: tempDir(), config: writeConfig(tempDir(), config) });
      await exitsWithConfigError(daemon, message);
    }
  });
});

describe('hostile files are read with bounded memory and time', () => {
  it('answers the tail of a 700 MB log without a newline at once and with a bounded body', async () => {
    const gw = await startGateway();
    const task = await gw.kanban.board.create({ title: 'huge log' }, { kind: 'api' });
    const run = (await claim(gw.kanban.board, gw.dataDir, task.id)).run;
    mkdirSync(join(gw.dataDir, 'runs', run.id), { recursive: true });
    writeFileSync(run.logPath, '');
    truncateSync(run.logPath, 700 * 1024 * 1024);
    const before = process.memoryUsage().rss;
    const res = await api(gw.url, 'GET', `/runs/${run.id}/log?tail=5`);
    expect(res.status).toBe(200);
    expect(Buffer.byteLength(res.body)).toBeLessThanOrEqual(1024 * 1024);
    expect(res.body).toMatch(/^\[… \d+ characters cut\]/);
    expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024);
  });

  it('keeps a crash reason short when the worker printed one enormous line', async () => {
    const gw = await startGateway(
      {
        workers: {
          tickSeconds: 0.1,
          failureLimit: 1,
          profiles: {
            loud: { command: ['sh', '-c', 'head -c 5000000 /dev/zero | tr "\\0" x; exit 3'] },
          },
        },
      },
      { dispatch: true },
    );
    const task = (await api(gw.url, 'POST', '/tasks', { title: 'loud', assignee: 'loud' })).body;
    const blocked = await settledIn(gw, task.id, 'blocked');
    expect(blocked.runs[0]).toMatchObject({ outcome: 'crashed', exitCode: 3 });
    expect(blocked.runs[0].error.length).toBeLessThan(2000);
    expect(blocked.runs[0].error).toContain('characters cut');
  });

  it('reads a FIFO, a device, a huge file or a deep document in place of a run file as no record', () => {
    const dir = join(tempDir(), 'r_000000000001');
    mkdirSync(dir);
    for (const name of ['proc.json', 'exit.json', 'result.json']) {
      execFileSync('mkfifo', [join(dir, name)]);
    }
    expect(readProcRecord(dir)).toBeNull();
    expect(readExitRecord(dir)).toBeNull();
    expect(readVerdict(dir)).toBe('result.json is not a regular file');
    const other = join(tempDir(), 'r_000000000002');
    mkdirSync(other);
    symlinkSync('/dev/zero', join(other, 'exit.json'));
    symlinkSync('/dev/zero', join(other, 'result.json'));
    expect(readExitRecord(other)).toBeNull();
    expect(readVerdict(other)).toBe('result.json is not a regular file');
    const big = join(tempDir(), 'r_000000000003');
    mkdirSync(big);
    writeFileSync(join(big, 'proc.json'), ' '.repeat(100_000));
    writeFileSync(
      join(big, 'result.json'),
      `{"status":"done","summary":"${'x'.repeat(1_100_000)}"}`,
    );
    expect(readProcRecord(big)).toBeNull();
    expect(readVerdict(big)).toMatch(/larger than 1048576 bytes/);
    writeFileSync(
      join(big, 'result.json'),
      `{"status":"done","result":${'['.repeat(65)}${']'.repeat(65)}}`,
    );
    expect(readVerdict(big)).toMatch(/nested deeper than 64 levels/);
  });
});

describe('errors a person can act on', () => {
  it('says what is wrong with a __proto__ body, a blank-looking title, a bad id and a traversal', async () => {
    const gw = await startGateway();
    const proto = await api(gw.url, 'POST', '/tasks', '{"title":"x","__proto__":{"a":1}}');
    expect(proto.status).toBe(400);
    expect(proto.body.error.message).toMatch(/__proto__/);
    for (const title of ['\u200b', ' \u200b\u2060 ', '\u0000']) {
      const blank = await api(gw.url, 'POST', '/tasks', { title });
      expect(blank.status, JSON.stringify(title)).toBe(400);
    }
    const traversal = await rawRequest(gw.url, 'GET', '/docs/static/../../tasks', {
      host: new URL(gw.url).host,
    });
    expect(traversal.status).toBeGreaterThanOrEqual(400);
    expect(traversal.status).toBeLessThan(500);
    expect(traversal.body.error.code).not.toBe('BAD_REQUEST');
    const cli = await runCli(['task', 'show', '..', '--data-dir', gw.dataDir]);
    expect(cli.code).toBe(64);
    expect(cli.stderr).toContain('is not a task id');
    expect(cli.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('a neighbour holding the board database’s write lock', () => {
  it('keeps the event loop serving, answers writes 503 without changing anything, and is not ready until the lock goes', async () => {
    const gw = await startGateway({ workers: { maxConcurrent: 0 } }, { dispatch: true });
    expect((await api(gw.url, 'GET', '/ready')).status).toBe(200);
    const task = await api(gw.url, 'POST', '/tasks', { title: 'before the lock' });
    const before = await boardSnapshot(gw);
    // What an operator's `sqlite3 gatehouse.db` with BEGIN IMMEDIATE, or a backup, holds.
    const neighbour = new Database(join(gw.dataDir, 'gatehouse.db'));
    neighbour.exec('BEGIN IMMEDIATE');
    try {
      const order: string[] = [];
      const post = api(gw.url, 'POST', '/tasks', { title: 'during the lock' }).then((res) => {
        order.push('post');
        return res;
      });
      // Sent after the POST, answered before it: the loop is not frozen while the POST waits.
      const health = api(gw.url, 'GET', '/health').then((res) => {
        order.push('health');
        return res;
      });
      expect((await health).status).toBe(200);
      const refused = await post;
      expect(order).toEqual(['health', 'post']);
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('STORAGE_BUSY');
      expect(refused.body.error.message).toMatch(/locked by another process/);
      expect(refused.headers.get('retry-after')).toBe('1');
      const comment = await api(gw.url, 'POST', `/tasks/${task.body.id}/comments`, { text: 'x' });
      expect(comment.status).toBe(503);
      const ready = await api(gw.url, 'GET', '/ready');
      expect(ready.status).toBe(503);
      expect(ready.body.subsystems.database).toMatchObject({ status: 'down' });
      expect(ready.body.subsystems.database.detail).toMatch(/locked by another process/);
      expect(await boardSnapshot(gw)).toEqual(before);
    } finally {
      neighbour.exec('ROLLBACK');
      neighbour.close();
    }
    await waitFor('ready again once the lock is gone', async () =>
      (await api(gw.url, 'GET', '/ready')).status === 200 ? true : null,
    );
    expect((await api(gw.url, 'POST', '/tasks', { title: 'after the lock' })).status).toBe(201);
  });
});

describe('senders that hold sockets', () => {
  /** A raw connection to the gateway; resolves `closed` when the server ends it. */
  function rawSocket(url: string) {
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => undefined);
    const opened = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    return { socket, closed, opened, received: () => received };
  }

  it('answers a body that trickles in, with or without a token, 408 and closes its socket', async () => {
    const gw = await startGateway({
      api: { token: 'a-long-enough-api-token' },
      server: { requestTimeoutSeconds: 1 },
    });
    const slow = [rawSocket(gw.url), rawSocket(gw.url)];
    await Promise.all(slow.map((s) => s.opened));
    for (const [i, s] of slow.entries()) {
      const auth = i === 0 ? 'authorization: Bearer a-long-enough-api-token\r\n' : '';
      s.socket.write(
        `POST /tasks HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n${auth}content-length: 100\r\n\r\n{`,
      );
    }
    await Promise.race([
      Promise.all(slow.map((s) => s.closed)),
      new Promise((_, reject) => setTimeout(() => reject(new Error('sockets still held')), 20_000)),
    ]);
    // The one with the token waited for its body until the timeout; the other was refused at once.
    expect(slow[0]!.received()).toMatch(/^HTTP\/1\.1 408/);
    expect(slow[1]!.received()).toMatch(/^HTTP\/1\.1 401/);
    expect((await gw.kanban.board.counts()).ready).toBe(0);
  });

  it('closes connections beyond server.maxConnections and serves again once they go', async () => {
    const gw = await startGateway({ server: { maxConnections: 8 } });
    const held = Array.from({ length: 8 }, () => rawSocket(gw.url));
    await Promise.all(held.map((s) => s.opened));
    const extra = rawSocket(gw.url);

    await extra.closed;
    expect(extra.received()).toBe('');
    for (const s of held) s.socket.destroy();
    // Each try bounded: a connection made while the server still counted the old ones is closed.
    await waitFor('a request served again', async () =>
      (await fetch(`${gw.url}/health`, { signal: AbortSignal.timeout(1000) })).status === 200
        ? true
        : null,
    );
  });
});
