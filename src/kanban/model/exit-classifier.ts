// One function turns "how the worker's process ended + what it said" into a run outcome (docs/workers.md).
import type { ExitRecord, RunOutcome, Verdict } from './types.js';

export interface Classification {
  outcome: RunOutcome;
  exitCode: number | null;
  signal: string | null;
  error: string | null;
  summary?: string | null;
  result?: unknown;
  blockReason?: string;
}

/** A run whose wrapper refused to start its worker, its host's lease run out (docs/operations.md). */
export const LEASE_LOST_BEFORE_START = 'its host lost its lease before the worker was started';

/** EX_TEMPFAIL: the worker was rate-limited and should be retried after a cooldown. */
export const EXIT_TEMPFAIL = 75;

/**
 * @param exit how it ended, or null when unknown (adopted, no exit record)
 * @param verdict result.json: a verdict, null when absent, or why it is not one
 * @param logTail the last lines of the run's log, for crash messages
 */
export function classifyExit(
  exit: ExitRecord | null,
  verdict: Verdict | null | string,
  logTail: string,
  pid: number | null,
): Classification {
  const withLog = (what: string) => (logTail.trim() ? `${what}\n${logTail.trimEnd()}` : what);
  if (exit === null) {
    return {
      outcome: 'crashed',
      exitCode: null,
      signal: null,
      error: `pid ${pid ?? '?'} not alive (no exit record)`,
    };
  }
  // Not the run's failure: nothing of it ran, and the task may run elsewhere already.
  if (exit.notStarted)
    return { outcome: 'interrupted', exitCode: null, signal: null, error: LEASE_LOST_BEFORE_START };
  const { exitCode, signal } = exit;
  if (signal !== null)
    return { outcome: 'crashed', exitCode, signal, error: withLog(`killed by ${signal}`) };
  if (exitCode === 0) {
    if (verdict !== null && typeof verdict === 'object') {
      return verdict.status === 'done'
        ? {
            outcome: 'completed',
            exitCode,
            signal,
            error: null,
            summary: verdict.summary,
            result: verdict.result,
          }
        : { outcome: 'blocked', exitCode, signal, error: null, blockReason: verdict.reason };
    }
    const why = typeof verdict === 'string' ? verdict : 'exited 0 without reporting a result';
    return { outcome: 'protocol_violation', exitCode, signal, error: why };
  }
  if (exitCode === EXIT_TEMPFAIL) return { outcome: 'rate_limited', exitCode, signal, error: null };
  return { outcome: 'crashed', exitCode, signal, error: withLog(`exit code ${exitCode}`) };
}
