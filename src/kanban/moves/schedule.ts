// Moves: a schedule's firing made into its task once (docs/schedules.md), whichever host gets to
// it first and however often it is tried; a pause and a resume. The firing is recorded on the
// schedule's row before anything is made: a second host (or a restart) trying the same fire
// time finds it taken. The task is made under the idempotency key `schedule:NAME:<fire time>`,
// as a client posting it with that key would.
import type { ScheduleConfig } from '../../config/schema.js';
import type { Task } from '../model/types.js';
import { createTask } from './create-task.js';
import { once } from './once.js';
import type { Tx } from './tx.js';

/** A task still open: a firing with overlap "skip" makes nothing while it is. */
const OPEN = new Set(['todo', 'ready', 'running', 'review']);

export interface Firing {
  schedule: ScheduleConfig;
  fireTime: number;
  /** Missed while no daemon ran and more than a period old: recorded and skipped. */
  missed: boolean;
  /** How long an idempotency key holds (api.idempotencyHours). */
  keyLifetimeMs: number;
  /** Its task's first run waits for a person (its profile's approval, docs/mcp.md). */
  needsApproval: boolean;
}

export type Fired =
  /** replayed: made by an earlier try of the same fire time (run now twice in a millisecond). */
  { made: Task; replayed?: true } | { skipped: 'taken' | 'paused' | 'missed' | 'previous open' };

export function scheduleKey(name: string, fireTime: number): string {
  return `schedule:${name}:${new Date(fireTime).toISOString()}`;
}

async function stateOf(tx: Tx, name: string) {
  return (await tx.store.schedules.states()).find((s) => s.name === name);
}

export async function fireSchedule(tx: Tx, f: Firing): Promise<Fired> {
  const { name } = f.schedule;
  if (!(await tx.store.schedules.fire(name, f.fireTime, tx.now))) return { skipped: 'taken' };
  const state = await stateOf(tx, name);
  if (state?.paused) return { skipped: 'paused' };
  const fireTime = new Date(f.fireTime).toISOString();
  if (f.missed) {
    tx.emit({
      taskId: null,
      runId: null,
      kind: 'schedule_skipped',
      payload: { schedule: name, fireTime, reason: 'missed' },
    });
    return { skipped: 'missed' };
  }
  const previous = state?.lastTaskId ? await tx.store.tasks.get(state.lastTaskId) : null;
  if (f.schedule.overlap === 'skip' && previous && OPEN.has(previous.status)) {
    tx.emit({
      taskId: previous.id,
      runId: null,
      kind: 'schedule_skipped',
      payload: { schedule: name, fireTime, reason: 'previous open' },
    });
    return { skipped: 'previous open' };
  }
  return makeTask(tx, f);
}

/** The route a schedule's keys are recorded under (no client route is named so). */
const SCHEDULE_ROUTE = 'schedule';

/** Makes the schedule's task for `fireTime` now (a firing, or a person's "run now"). */
export async function makeTask(
  tx: Tx,
  { schedule, fireTime, keyLifetimeMs, needsApproval }: Omit<Firing, 'missed'>,
): Promise<Fired> {
  const key = scheduleKey(schedule.name, fireTime);
  const input = { ...schedule.task, needsApproval };
  const origin = {
    kind: 'schedule' as const,
    name: schedule.name,
    fireTime: new Date(fireTime).toISOString(),
  };
  // A client that sent this key first (to a route of its own) does not keep the firing from
  // being made: the schedule's row already makes it once.
  const taken = await tx.store.idempotency.find(key);
  const answer =
    taken && taken.route !== SCHEDULE_ROUTE
      ? { status: 201, body: await createTask(tx, input, origin), replayed: false }
      : await once<Task>(
          tx,
          { key, route: SCHEDULE_ROUTE, digest: schedule.name, lifetimeMs: keyLifetimeMs },
          async () => ({ status: 201, body: await createTask(tx, input, origin) }),
        );
  if (answer.replayed) return { made: answer.body, replayed: true };
  await tx.store.schedules.madeTask(schedule.name, answer.body.id, tx.now);
  return { made: answer.body };
}

/** Pauses or resumes the schedule on every host; whether it changed. */
export async function setPaused(
  tx: Tx,
  name: string,
  paused: boolean,
  by: string,
): Promise<boolean> {
  const state = await stateOf(tx, name);
  if ((state?.paused ?? false) === paused) return false;
  await tx.store.schedules.setPaused(name, paused, tx.now);
  tx.emit({
    taskId: null,
    runId: null,
    kind: paused ? 'schedule_paused' : 'schedule_resumed',
    payload: { schedule: name, by },
  });
  return true;
}
