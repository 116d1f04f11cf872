// The crash-loop guard: back off before starting after too many unclean ends in a short window.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';

export interface CrashLoopOptions {
  maxStarts: number;
  windowMs: number;
  maxBackoffMs: number;
}

interface StartEntry {
  at: number;
  unclean: boolean;
}

const KEEP = 100;

function readEntries(path: string): StartEntry[] {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  const entries: StartEntry[] = [];
  for (const line of text.split('\n')) {
    const [at, kind] = line.split(' ');
    if (at && /^\d+$/.test(at) && (kind === 'unclean' || kind === 'clean')) {
      entries.push({ at: Number(at), unclean: kind === 'unclean' });
    }
  }
  return entries;
}

/** Unclean starts in the window since the last clean one, newest last. */
export function uncleanStreak(entries: StartEntry[], now: number, windowMs: number): number {
  let count = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (!entry.unclean || now - entry.at > windowMs) break;
    count++;
  }
  return count;
}

/** Milliseconds to wait: 0 up to `maxStarts`, then 1 s, 2 s, 4 s … capped. */
export function backoffMs(streak: number, opts: CrashLoopOptions): number {
  if (streak <= opts.maxStarts) return 0;
  return Math.min(opts.maxBackoffMs, 1000 * 2 ** (streak - opts.maxStarts - 1));
}

/** Records this start in starts.log and says how long to wait before serving. */
export function recordStart(
  path: string,
  unclean: boolean,
  now: number,
  opts: CrashLoopOptions,
): { streak: number; delayMs: number } {
  const entries = [...readEntries(path), { at: now, unclean }];
  const lines = entries.slice(-KEEP).map((e) => `${e.at} ${e.unclean ? 'unclean' : 'clean'}\n`);
  if (entries.length > KEEP) writeFileSync(path, lines.join(''));
  else appendFileSync(path, lines.at(-1)!);
  const streak = uncleanStreak(entries, now, opts.windowMs);
  return { streak, delayMs: backoffMs(streak, opts) };
}
