// Reading the tail of a run's log with bounded memory and time, whatever the log looks like
// (docs/api.md: at most 1 MiB, long lines cut with a marker).
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

/** Never more than this is read from the end of a log. */
export const MAX_TAIL_BYTES = 1024 * 1024;

export interface TailOptions {
  /** How many lines, counted from the end. */
  lines: number;
  /** A longer line keeps its last part, after a marker saying how much was cut. */
  maxLineChars?: number;
}

function cutLine(line: string, max: number): string {
  return line.length <= max ? line : `[… ${line.length - max} characters cut] ${line.slice(-max)}`;
}

/** The last `lines` lines of the file ('' if it does not exist yet). */
export async function readLogTail(path: string, opts: TailOptions): Promise<string> {
  let handle;
  try {
    // O_NONBLOCK: a FIFO a worker put in place of its log must not hang the open.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return '';
    const { size } = stat;
    const length = Math.min(size, MAX_TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    let text = buffer.toString('utf8');
    const trailing = text.endsWith('\n');
    if (trailing) text = text.slice(0, -1);
    let all = text.split('\n');
    // The first line started before what was read: say so rather than pass it off as whole.
    if (length < size && all.length > 0) all[0] = `[… earlier part cut] ${all[0]}`;
    all = all.slice(-opts.lines);
    const max = opts.maxLineChars ?? MAX_TAIL_BYTES;
    const out = all.map((line) => cutLine(line, max)).join('\n') + (trailing ? '\n' : '');
    return out.length > MAX_TAIL_BYTES ? out.slice(-MAX_TAIL_BYTES) : out;
  } finally {
    await handle.close();
  }
}
