// An agent's stdout (`agent.jsonl` in its run folder) read as it grows, or whole after a
// restart: the same cursor either way, in chunks, so a long run costs its new bytes only.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { AgentKind, AgentReader, AgentReading } from './types.js';

const CHUNK = 256 * 1024;
/** A longer line (a huge tool output echoed) is skipped, not parsed: no verdict is that long. */
const MAX_LINE_BYTES = 4 * 1024 * 1024;
const NEWLINE = 0x0a;

export class AgentOutput {
  private offset = 0;
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private skipping = false;
  private readonly reader: AgentReader;
  private readonly needles: Buffer[];
  private readonly buffer = Buffer.allocUnsafe(CHUNK);

  constructor(
    private readonly path: string,
    kind: AgentKind,
  ) {
    this.reader = kind.reader();
    this.needles = kind.needles.map((n) => Buffer.from(n));
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

  private take(chunk: Buffer): number {
    let lines = 0;
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      if (this.partialBytes === 0 && !this.skipping) {
        // The whole line is in this chunk (the usual case): read where it lies.
        if (nl - start <= MAX_LINE_BYTES) this.parse(chunk.subarray(start, nl));
      } else {
        this.keep(chunk.subarray(start, nl));
        if (!this.skipping) this.parse(Buffer.concat(this.partial, this.partialBytes));
        this.partial = [];
        this.partialBytes = 0;
        this.skipping = false;
      }
      lines++;
      start = nl + 1;
    }
    this.keep(chunk.subarray(start));
    return lines;
  }

  private keep(piece: Buffer): void {
    if (this.skipping || piece.length === 0) return;
    this.partialBytes += piece.length;
    if (this.partialBytes > MAX_LINE_BYTES) {
      this.skipping = true;
      this.partial = [];
      this.partialBytes = 0;
      return;
    }
    // A copy: the read buffer is reused.
    this.partial.push(Buffer.from(piece));
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
  return output.reading();
}
