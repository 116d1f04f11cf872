// Reading the tail of a run's log file without loading all of it.
import { open } from 'node:fs/promises';

const CHUNK = 64 * 1024;

/** The last `lines` lines of the file ('' if it does not exist yet). */
export async function readLogTail(path: string, lines: number): Promise<string> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
  try {
    const { size } = await handle.stat();
    let position = size;
    let text = '';
    let newlines = 0;
    while (position > 0 && newlines <= lines) {
      const length = Math.min(CHUNK, position);
      position -= length;
      const buffer = Buffer.alloc(length);
      await handle.read(buffer, 0, length, position);
      const chunk = buffer.toString('utf8');
      newlines += chunk.split('\n').length - 1;
      text = chunk + text;
    }
    const all = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
    return all.slice(-lines).join('\n') + (text.endsWith('\n') ? '\n' : '');
  } finally {
    await handle.close();
  }
}
