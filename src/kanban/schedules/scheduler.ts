// The scheduler (docs/schedules.md): wakes at each schedule's next fire time (and at least once a
// minute, so a clock moved under it is noticed), and makes each firing into its task through the
// fireSchedule move, which makes it once across hosts and restarts. A firing missed while no
// daemon ran is made at start if it is less than one period old, else skipped with an event.
import type { Clock } from '../../clock.js';
import { readCalendar, type Calendar } from '../../config/calendar.js';
import type { ScheduleConfig } from '../../config/schema.js';
import type { Board } from '../board.js';
import type { Task } from '../model/types.js';
import { fireSchedule, makeTask, setPaused, type Fired } from '../moves/schedule.js';

/** The longest sleep between two looks at the clock. */
const MAX_SLEEP_MS = 60_000;
/** Between tries to read the schedules' state at start, while the board cannot be reached. */
const START_RETRY_MS = 1000;

export interface SchedulerDeps {
  board: Board;
  schedules: Readonly<Record<string, ScheduleConfig>>;
  /** Wall-clock time, epoch ms (tests move it). */
  clock: Clock;
  keyLifetimeMs: number;
  /** Whether a new task of this assignee waits for a person's approval of its first run. */
  needsApproval: (assignee: string | null) => boolean;
  onError: (err: unknown, schedule: string) => void;
}

/** A schedule as GET /schedules shows it. */
export interface ScheduleView {
  name: string;
  cron: string;
  timezone: string;
  overlap: 'skip' | 'queue';
  enabled: boolean;
  paused: boolean;
  /** ISO 8601, or null: none (disabled, or the calendar has no more). */
  nextFireTime: string | null;
  lastFireTime: string | null;
  lastTaskId: string | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export class Scheduler {
  private readonly calendars = new Map<string, Calendar>();
  /** Per schedule, the latest fire time this daemon has handled (or started after). */
  private readonly cursor = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly deps: SchedulerDeps) {
    for (const s of Object.values(deps.schedules)) {
      const calendar = readCalendar(s.cron, s.timezone);
      // The configuration was checked at load: a string here is a bug, not input.
      if (typeof calendar === 'string') throw new Error(`schedules.${s.name}: ${calendar}`);
      this.calendars.set(s.name, calendar);
    }
  }

  /** Reads where each schedule got to, makes what was missed, and wakes at each fire time. */
  async start(): Promise<void> {
    if (this.calendars.size === 0 || this.stopped) return;
    const now = this.deps.clock.wall();
    let states;
    try {
      states = new Map((await this.deps.board.schedules.states()).map((s) => [s.name, s]));
    } catch (err) {
      // The board unreachable as the daemon starts: tried again, never the daemon's end.
      this.deps.onError(err, '(start)');
      this.timer = setTimeout(() => void this.start(), START_RETRY_MS);
      this.timer.unref();
      return;
    }
    for (const name of this.calendars.keys())
      this.cursor.set(name, states.get(name)?.lastFireAt ?? now);
    await this.check();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Makes every firing due by now (one at a time: a wake-up during one waits for it). */
  async check(): Promise<void> {
    while (this.checking) await this.checking;
    this.checking = this.checkNow();
    try {
      await this.checking;
    } finally {
      this.checking = null;
      this.arm();
    }
  }

  private async checkNow(): Promise<void> {
    const now = this.deps.clock.wall();
    for (const s of Object.values(this.deps.schedules)) {
      if (!s.enabled) continue;
      const calendar = this.calendars.get(s.name)!;
      const latest = calendar.latest(now);
      const cursor = this.cursor.get(s.name) ?? now;
      if (latest === null || latest <= cursor) continue;
      // A period: the time between this firing and the one before it.
      const before = calendar.latest(latest - 1);
      const missed = before !== null && now - latest >= latest - before;
      try {
        await this.fire(s, latest, missed);
        this.cursor.set(s.name, latest);
      } catch (err) {
        // Tried again at the next wake: the firing is recorded only with what it made.
        this.deps.onError(err, s.name);
      }
    }
  }

  private fire(s: ScheduleConfig, fireTime: number, missed: boolean): Promise<Fired> {
    return this.deps.board.transact((tx) =>
      fireSchedule(tx, {
        schedule: s,
        fireTime,
        missed,
        keyLifetimeMs: this.deps.keyLifetimeMs,
        needsApproval: this.deps.needsApproval(s.task.assignee),
      }),
    );
  }

  private arm(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    const now = this.deps.clock.wall();
    let wait = MAX_SLEEP_MS;
    for (const s of Object.values(this.deps.schedules)) {
      const next = s.enabled ? this.calendars.get(s.name)!.next(now) : null;
      if (next !== null) wait = Math.min(wait, next - now);
    }
    this.timer = setTimeout(() => void this.check(), Math.max(wait, 0) + 5);
    this.timer.unref();
  }

  /** Every configured schedule, with its next and last firing. */
  async list(): Promise<ScheduleView[]> {
    const now = this.deps.clock.wall();
    const states = new Map((await this.deps.board.schedules.states()).map((s) => [s.name, s]));
    return Object.values(this.deps.schedules).map((s) => {
      const state = states.get(s.name);
      const paused = state?.paused ?? false;
      return {
        name: s.name,
        cron: s.cron,
        timezone: s.timezone,
        overlap: s.overlap,
        enabled: s.enabled,
        paused,
        nextFireTime: s.enabled && !paused ? iso(this.calendars.get(s.name)!.next(now)) : null,
        lastFireTime: iso(state?.lastFireAt ?? null),
        lastTaskId: state?.lastTaskId ?? null,
      };
    });
  }

  has(name: string): boolean {
    return Object.hasOwn(this.deps.schedules, name);
  }

  /** Pauses or resumes it on every host; whether it changed. */
  setPaused(name: string, paused: boolean, by: string): Promise<boolean> {
    return this.deps.board.transact((tx) => setPaused(tx, name, paused, by));
  }

  /** Makes its task now, whatever its calendar, pause or overlap say (a person asked). */
  async runNow(name: string): Promise<Task> {
    const s = this.deps.schedules[name]!;
    const made = await this.deps.board.transact((tx) =>
      makeTask(tx, {
        schedule: s,
        fireTime: this.deps.clock.wall(),
        keyLifetimeMs: this.deps.keyLifetimeMs,
        needsApproval: this.deps.needsApproval(s.task.assignee),
      }),
    );
    if ('made' in made) return made.made;
    throw new Error(`schedule ${name}: run now made nothing (${made.skipped})`);
  }
}
