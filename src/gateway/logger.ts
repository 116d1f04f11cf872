// The daemon's structured logger (pino), shared by Fastify and every subsystem. When stdout is
// the journal, each line starts with its syslog priority (<4> warn…), so journald files it at
// that priority and `journalctl -p warning` shows the warnings.
import { fstatSync } from 'node:fs';
import { pino, type DestinationStream, type Logger } from 'pino';

/** pino level → syslog priority (sd-daemon(3) prefixes). */
const PRIORITY: Record<number, number> = { 10: 7, 20: 7, 30: 6, 40: 4, 50: 3, 60: 2 };

/** True when stdout is the stream JOURNAL_STREAM names (not, say, redirected to a file). */
function stdoutIsJournal(journalStream: string | null): boolean {
  if (journalStream === null) return false;
  try {
    const { dev, ino } = fstatSync(1);
    return journalStream === `${dev}:${ino}`;
  } catch {
    return false;
  }
}

function journalDestination(): DestinationStream {
  const out = pino.destination({ fd: 1, sync: true });
  return {
    write(line: string) {
      const level = Number(/"level":(\d+)/.exec(line)?.[1] ?? 30);
      out.write(`<${PRIORITY[level] ?? 6}>${line}`);
    },
  };
}

export function createLogger(level = 'info', journalStream: string | null = null): Logger {
  const options = { level, base: { pid: process.pid } };
  return stdoutIsJournal(journalStream) ? pino(options, journalDestination()) : pino(options);
}
