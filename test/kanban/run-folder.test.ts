// A run's folder as its start writes it (src/kanban/dispatch/run-files.ts):
// every file whole, the log opened for appending and not inherited by what the daemon starts,
// and a folder that cannot be written refused as Node's fs would refuse it.
import {
  closeSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  writeRunFolder,
  type RunFileContent,
  type RunFileName,
} from '../../src/kanban/dispatch/run-files.js';
import { tempDir } from '../helpers/daemon.js';

const files = (entries: [RunFileName, RunFileContent][]) => new Map(entries);

describe('writeRunFolder', () => {
  it('makes the folder and its parents, writes each file whole, and opens the log for appending', async () => {
    const dir = join(tempDir(), 'runs', 'r_1');
    // Multi-byte text, and more than one write's worth of it.
    const long = 'é→✓ '.repeat(300_000);
    const task = { id: 't_1', title: 'naïve "quoted"\n' };
    const fd = await writeRunFolder(
      dir,
      files([
        ['task.json', { json: task }],
        ['proc.json', { text: '' }],
        ['instructions.md', { text: long }],
      ]),
      join(dir, 'log'),
    );
    try {
      writeSync(fd, 'second\n');
    } finally {
      closeSync(fd);
    }
    expect(readdirSync(dir).sort()).toEqual(['instructions.md', 'log', 'proc.json', 'task.json']);
    expect(JSON.parse(readFileSync(join(dir, 'task.json'), 'utf8'))).toEqual(task);
    expect(readFileSync(join(dir, 'task.json'), 'utf8')).toBe(`${JSON.stringify(task, null, 2)}\n`);
    expect(readFileSync(join(dir, 'proc.json'), 'utf8')).toBe('');
    expect(readFileSync(join(dir, 'instructions.md'), 'utf8')).toBe(long);
    // The process's umask applies, as to any file Node makes.
    const mask = process.umask();
    expect(statSync(join(dir, 'task.json')).mode & 0o777).toBe(0o666 & ~mask);
    expect(statSync(dir).mode & 0o777).toBe(0o777 & ~mask);

    // Written again (a folder its workspace's setup made, a log it wrote to): the log is
    // appended to, the files replaced.
    writeFileSync(join(dir, 'log'), 'setup\n');
    const again = await writeRunFolder(
      dir,
      files([['proc.json', { text: 'x' }]]),
      join(dir, 'log'),
    );
    try {
      writeSync(again, 'worker\n');
      // Not inherited by a program the daemon starts.
      const flags = readFileSync(`/proc/self/fdinfo/${again}`, 'utf8').match(
        /^flags:\s+(\d+)/m,
      )![1]!;
      expect(Number.parseInt(flags, 8) & 0o2000000).not.toBe(0);
    } finally {
      closeSync(again);
    }
    expect(readFileSync(join(dir, 'log'), 'utf8')).toBe('setup\nworker\n');
    expect(readFileSync(join(dir, 'proc.json'), 'utf8')).toBe('x');
  });

  it('rejects with the errno, the call and the path when the folder cannot be written', async () => {
    const root = tempDir();
    writeFileSync(join(root, 'runs'), 'a file where the runs folder should be');
    const dir = join(root, 'runs', 'r_1');
    await expect(
      writeRunFolder(dir, files([['task.json', { json: {} }]]), join(dir, 'log')),
    ).rejects.toMatchObject({
      code: 'ENOTDIR',
      syscall: 'mkdir',
      message: expect.stringContaining(`mkdir '${dir}'`),
    });

    // A folder in place of a file.
    const ok = join(root, 'ok');
    mkdirSync(join(ok, 'task.json'), { recursive: true });
    await expect(
      writeRunFolder(ok, files([['task.json', { json: {} }]]), join(ok, 'log')),
    ).rejects.toMatchObject({
      code: 'EISDIR',
      path: join(ok, 'task.json'),
      message: expect.stringMatching(/^EISDIR: .*, open '.*task\.json'$/),
    });
    // Nothing after the failed file was made.
    expect(readdirSync(ok)).toEqual(['task.json']);
  });
});
