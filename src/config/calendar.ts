// A schedule's calendar (docs/schedules.md): its five-field cron expression read in its time zone
// by croner, and the fire times the scheduler asks about. Pure: time is passed in.
import { Cron } from 'croner';

export interface Calendar {
  /** The latest fire time at or before `at`, or null when there is none. */
  latest(at: number): number | null;
  /** The first fire time after `at`, or null when there is none. */
  next(at: number): number | null;
}

/** The expression read, or an error message saying what is wrong with it. */
export function readCalendar(cron: string, timezone: string): Calendar | string {
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    return `"${timezone}" is not an IANA time zone (e.g. "Europe/Berlin", "UTC")`;
  }
  let job: Cron;
  try {
    job = new Cron(cron, { timezone, mode: '5-part', paused: true });
  } catch (err) {
    return `"${cron}" is not a five-field cron expression: ${(err as Error).message}`;
  }
  if (job.nextRun(new Date(0)) === null) return `"${cron}" never fires`;
  return {
    latest(at) {
      // croner's previous runs are strictly before the reference: a fire exactly at `at` counts.
      const [found] = job.previousRuns(1, new Date(at + 1));
      return found ? found.getTime() : null;
    },
    next(at) {
      return job.nextRun(new Date(at))?.getTime() ?? null;
    },
  };
}
