// What /ready reports, and the 503 it answers when the daemon is not ready.
export type SubsystemStatus = 'ok' | 'degraded' | 'down';

export interface ReadyReport {
  ready: boolean;
  subsystems: Record<string, { status: SubsystemStatus; detail?: string }>;
  platforms: { name: string; state: string; status: SubsystemStatus }[];
  board: Record<string, number>;
}

/**
 * A report that is not ready, as its 503 says it: the report with an error whose code is
 * NOT_READY (docs/errors.md) and whose message names each subsystem that is down.
 */
export function notReady(
  report: ReadyReport,
): ReadyReport & { error: { code: 'NOT_READY'; message: string } } {
  const down = Object.entries(report.subsystems)
    .filter(([, s]) => s.status === 'down')
    .map(([name, s]) => `${name} is down${s.detail ? `: ${s.detail}` : ''}`);
  const message = down.length > 0 ? `not ready: ${down.join('; ')}` : 'not ready';
  return { ...report, error: { code: 'NOT_READY', message } };
}
