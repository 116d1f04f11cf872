// An answered write is on disk: the daemon, traced by strace, syncs the board's WAL after it has
// read a request and before it writes the answer.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  cleanEnv,
  gatehouseArgs,
  pidRecord,
  ROOT,
  tempDir,
  writeConfig,
} from '../helpers/daemon.js';
import { spawnTracked } from '../helpers/procs.js';
import { waitFor } from '../helpers/wait.js';

describe('durable answers', () => {
  it('syncs the board to disk after reading a POST /tasks and before answering it', async () => {
    const dataDir = tempDir();
    const traceFile = join(tempDir(), 'strace.txt');
    const config = writeConfig(dataDir, { workers: { maxConcurrent: 0 } });
    const daemon = spawnTracked(
      [
        'strace',
        '-f',
        '-qq',
        '-y',
        '-s',
        '4096',
        '-e',
        'trace=read,readv,recvfrom,write,writev,sendto,fsync,fdatasync',
        '-o',
        traceFile,
        ...gatehouseArgs('run', { dataDir, config }),
        '--port',
        '0',
      ],
      { cwd: ROOT, env: cleanEnv() },
    );
    const url = await waitFor('the traced daemon to serve', async () => {
      const record = pidRecord(dataDir);
      if (!record || record.port === 0) return null;
      const res = await fetch(`http://127.0.0.1:${record.port}/health`);
      return res.ok ? `http://127.0.0.1:${record.port}` : null;
    });
    const res = await fetch(`${url}/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'must survive a power loss' }),
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    await fetch(`${url}/admin/stop`, { method: 'POST' });
    expect((await daemon.exited).code).toBe(0);

    const lines = readFileSync(traceFile, 'utf8').split('\n');
    const request = lines.findIndex((l) => /^\d+\s+(read|readv|recvfrom)\(.*POST \/tasks /.test(l));
    const answer = lines.findIndex(
      (l, i) => i > request && /^\d+\s+(write|writev|sendto)\(/.test(l) && l.includes(id),
    );
    expect(request).toBeGreaterThanOrEqual(0);
    expect(answer).toBeGreaterThan(request);
    const synced = lines
      .slice(request + 1, answer)
      .filter((l) => /^\d+\s+f(data)?sync\(\d+<[^>]*gatehouse\.db-wal>\)\s+= 0/.test(l));
    expect(synced.length).toBeGreaterThanOrEqual(1);
  });
});
