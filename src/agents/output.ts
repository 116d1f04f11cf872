// An agent's stdout (`agent.jsonl` in its run folder) read as it grows, or whole after a
// restart: the same cursor either way, in chunks, so a long run costs its new bytes only.
import { closeSync, fstatSync, openSync, readSync, renameSync, writeSync } from 'node:fs';
import type { AgentKind, AgentReader, AgentReading } from './types.js';

const CHUNK = 256 * 1024;
/**
 * A longer line (a huge tool output echoed, a final text of megabytes) is not held whole: its
 * head and tail are, and it is read as one whose longest string was cut in the middle (see
 * cutLine), so a verdict of any size is still judged, in bounded memory.
 */
const MAX_LINE_BYTES = 4 * 1024 * 1024;
const KEEP_BYTES = 64 * 1024;
const NEWLINE = 0x0a;
const BACKSLASH = 0x5c;

export class AgentOutput {
  private offset = 0;
  private partial: Buffer[] = [];
  private partialBytes = 0;
  /** A line past MAX_LINE_BYTES: its head, and a rolling tail. */
  private skipping = false;
  private head: Buffer | null = null;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private readonly reader: AgentReader;
  private readonly needles: Buffer[];
  private readonly buffer = Buffer.allocUnsafe(CHUNK);

  constructor(
    private readonly path: string,
    kind: AgentKind,
  ) {
    this.reader = kind.reader();
    // A writer that puts a space after its colons (`"type": "result"`) is read too.
    this.needles = kind.needles.flatMap((n) => [
      Buffer.from(n),
      Buffer.from(n.replace('":', '": ')),
    ]);
  }

  /** Reads what was added since the last call; how many lines it found (0: silent). */
  poll(): number {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return 0;
    }
    let lines = 0;
    try {
      if (!fstatSync(fd).isFile()) return 0;
      for (;;) {
        const n = readSync(fd, this.buffer, 0, CHUNK, this.offset);
        if (n <= 0) break;
        this.offset += n;
        lines += this.take(this.buffer.subarray(0, n));
      }
    } finally {
      closeSync(fd);
    }
    return lines;
  }

  reading(): AgentReading {
    return this.reader.reading();
  }

  /**
   * The output is over (its writer has exited): a last line printed without its newline is a
   * line all the same.
   */
  end(): void {
    if (this.partialBytes > 0 || this.skipping) this.endLine();
  }

  private take(chunk: Buffer): number {
    let lines = 0;
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      if (this.partialBytes === 0 && !this.skipping && nl - start <= MAX_LINE_BYTES) {
        // The whole line is in this chunk (the usual case): read where it lies.
        this.parse(chunk.subarray(start, nl));
      } else {
        this.keep(chunk.subarray(start, nl));
        this.endLine();
      }
      lines++;
      start = nl + 1;
    }
    this.keep(chunk.subarray(start));
    return lines;
  }

  private endLine(): void {
    if (this.skipping) {
      const cut = cutLine(this.head!, Buffer.concat(this.tail, this.tailBytes));
      if (cut) this.parse(cut);
    } else this.parse(Buffer.concat(this.partial, this.partialBytes));
    this.partial = [];
    this.partialBytes = 0;
    this.skipping = false;
    this.head = null;
    this.tail = [];
    this.tailBytes = 0;
  }

  private keep(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.skipping) {
      // Only the line's last KEEP_BYTES are held.
      this.tail.push(Buffer.from(piece));
      this.tailBytes += piece.length;
      while (this.tail.length > 1 && this.tailBytes - this.tail[0]!.length >= KEEP_BYTES)
        this.tailBytes -= this.tail.shift()!.length;
      return;
    }
    this.partialBytes += piece.length;
    // A copy: the read buffer is reused.
    this.partial.push(Buffer.from(piece));
    if (this.partialBytes > MAX_LINE_BYTES) {
      const whole = Buffer.concat(this.partial, this.partialBytes);
      this.skipping = true;
      this.head = Buffer.from(whole.subarray(0, KEEP_BYTES));
      this.tail = [Buffer.from(whole.subarray(whole.length - KEEP_BYTES))];
      this.tailBytes = KEEP_BYTES;
      this.partial = [];
      this.partialBytes = 0;
    }
  }

  private parse(line: Buffer): void {
    if (line.length === 0 || !this.needles.some((n) => line.includes(n))) return;
    let value: unknown;
    try {
      value = JSON.parse(line.toString('utf8'));
    } catch {
      return;
    }
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      this.reader.line(value as Record<string, unknown>);
  }
}

/** What a whole output file says (a run judged after a restart, or at its end). */
export function readAgentOutput(path: string, kind: AgentKind): AgentReading {
  const output = new AgentOutput(path, kind);
  output.poll();
  output.end();
  return output.reading();
}

/** Whether the byte at `at` is escaped (an odd run of backslashes before it). */
function escaped(line: Buffer, at: number): boolean {
  let n = 0;
  for (let i = at - 1; i >= 0 && line[i] === BACKSLASH; i--) n++;
  return n % 2 === 1;
}

/** A cut may not split a UTF-8 sequence: moved back to the start of one. */
function charStart(line: Buffer, at: number): number {
  let i = at;
  while (i > 0 && (line[i]! & 0xc0) === 0x80) i--;
  return i;
}

/**
 * A line too long to hold, read from its head and tail as if the middle of the string they both
 * lie in were cut out (the final text of a verdict, a tool's huge output): JSON again when the
 * cut falls inside one string, else null. The verdict's fields before and after it are whole.
 */
export function cutLine(head: Buffer, tail: Buffer): Buffer | null {
  let end = charStart(head, head.length);
  // Back out of an escape sequence the cut would split (\uXXXX included).
  for (let i = Math.max(0, end - 6); i < end; i++)
    if (head[i] === BACKSLASH && !escaped(head, i)) {
      end = i;
      break;
    }
  // What came before the tail is unknown: it starts after a byte that is no backslash, so it
  // cannot begin inside an escape, and at the start of a character.
  let start = 1;
  while (start < tail.length && (tail[start - 1] === BACKSLASH || (tail[start]! & 0xc0) === 0x80))
    start++;
  const joined = Buffer.concat([
    head.subarray(0, end),
    Buffer.from(' [… cut …] '),
    tail.subarray(start),
  ]);
  try {
    JSON.parse(joined.toString('utf8'));
    return joined;
  } catch {
    return null;
  }
}

/** An agent's output is kept whole up to this size once its run is over. */
export const OUTPUT_KEEP_BYTES = 8 * 1024 * 1024;
const HEAD_KEEP = 1024 * 1024;
const TAIL_KEEP = 4 * 1024 * 1024;

/**
 * Bounds a finished run's output file (it was read, the verdict taken): a larger one keeps its
 * first lines (the session's start), a line saying how much was dropped, and its last lines,
 * where the verdict is. Written beside and renamed over, so a reader sees one or the other.
 */
export function boundOutput(path: string, max = OUTPUT_KEEP_BYTES): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return false;
  }
  try {
    const size = fstatSync(fd).size;
    if (size <= max) return false;
    const head = Buffer.allocUnsafe(HEAD_KEEP);
    const got = readSync(fd, head, 0, HEAD_KEEP, 0);
    const headEnd = head.subarray(0, got).lastIndexOf(NEWLINE) + 1;
    const tail = Buffer.allocUnsafe(TAIL_KEEP);
    const from = size - TAIL_KEEP;
    const n = readSync(fd, tail, 0, TAIL_KEEP, from);
    const tailStart = tail.subarray(0, n).indexOf(NEWLINE) + 1;
    const dropped = from + tailStart - headEnd;
    const note = `${JSON.stringify({ type: 'gatehouse_cut', bytes: dropped })}\n`;
    const out = openSync(`${path}.bound`, 'w', 0o600);
    try {
      writeFullSync(out, head.subarray(0, headEnd));
      writeFullSync(out, Buffer.from(note));
      writeFullSync(out, tail.subarray(tailStart, n));
    } finally {
      closeSync(out);
    }
    renameSync(`${path}.bound`, path);
    return true;
  } finally {
    closeSync(fd);
  }
}

function writeFullSync(fd: number, data: Buffer): void {
  let at = 0;
  while (at < data.length) at += writeSync(fd, data, at);
}
