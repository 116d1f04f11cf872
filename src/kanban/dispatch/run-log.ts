// Reading the tail of a run's log with bounded memory and time, whatever the log looks like
// (docs/api.md: at most 1 MiB, long lines cut with a marker).
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

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

/** The file opened to read, or null when it does not exist yet. */
async function openLog(path: string): Promise<FileHandle | null> {
  try {
    // O_NONBLOCK: a FIFO a worker put in place of its log must not hang the open.
    return await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** The last `lines` lines of the file ('' if it does not exist yet). */
export async function readLogTail(path: string, opts: TailOptions): Promise<string> {
  const handle = await openLog(path);
  if (!handle) return '';
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

/** What a run's log holds from `offset` on, in whole lines, and where the next read starts. */
export interface LogChunk {
  text: string;
  next: number;
  /** The file's size when read: a reader that reached it has read everything so far. */
  size: number;
}

/**
 * The whole lines of the file from byte `offset` on, at most MAX_TAIL_BYTES of them; a line
 * still being written waits for the next read (an ended run's last line is whole). A line longer than MAX_TAIL_BYTES is given as it
 * was read and passed over. An offset past the end (a file bounded since) reads nothing.
 */
export async function readLogFrom(
  path: string,
  offset: number,
  /** Its run has ended: a last line without its newline is whole. */
  ended: boolean,
): Promise<LogChunk> {
  const handle = await openLog(path);
  if (!handle) return { text: '', next: 0, size: 0 };
  try {
    const stat = await handle.stat();
    // Not a file (a folder or a FIFO put in its place): nothing to read, and nothing more to come.
    if (!stat.isFile()) return { text: '', next: offset, size: offset };
    if (offset >= stat.size) return { text: '', next: stat.size, size: stat.size };
    const length = Math.min(stat.size - offset, MAX_TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, offset);
    const end = buffer.lastIndexOf(0x0a, bytesRead - 1);
    // No line ends in what a read may take: that much of one line is all it gets.
    const atEnd = ended && offset + bytesRead >= stat.size;
    const whole = atEnd || (end === -1 && bytesRead === MAX_TAIL_BYTES) ? bytesRead : end + 1;
    return {
      text: buffer.subarray(0, whole).toString('utf8'),
      next: offset + whole,
      size: stat.size,
    };
  } finally {
    await handle.close();
  }
}
