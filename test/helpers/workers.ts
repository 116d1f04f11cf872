// Worker profiles built from the fixture worker, and waits on a task's state over the API.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, type TestGateway } from './app.js';
import { BIN, ROOT } from './daemon.js';
import { waitFor } from './wait.js';

export const FIXTURE = join(ROOT, 'test/fixtures/workers/behave.mjs');

/** A profile running the fixture worker with `behaviour` (and its argument). */
export function profile(behaviour: string, extra: object = {}, arg?: string) {
  return {
    command: [process.execPath, FIXTURE, behaviour, ...(arg === undefined ? [] : [arg])],
    ...extra,
  };
}

export async function createTask(gw: TestGateway, body: object): Promise<{ id: string }> {
  const res = await api(gw.url, 'POST', '/tasks', body);
  if (res.status !== 201) throw new Error(`create failed: ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function getTask(gw: TestGateway, id: string): Promise<any> {
  return (await api(gw.url, 'GET', `/tasks/${id}`)).body;
}

export async function eventsOf(
  gw: TestGateway,
  id: string,
): Promise<{ kind: string; payload: any; runId: string | null }[]> {
  return (await api(gw.url, 'GET', `/tasks/${id}/events`)).body.events;
}

/** Waits until the task is in `status` and no run is open; returns the task with its runs. */
export function settledIn(
  gw: TestGateway,
  id: string,
  status: string,
  timeoutMs = 15_000,
): Promise<any> {
  return waitFor(
    `task ${id} to settle in ${status}`,
    async () => {
      const task = await getTask(gw, id);
      // A task is ready before its first run too: settling back in ready needs a run.
      return task.status === status &&
        (status !== 'ready' || task.runs.length > 0) &&
        task.runs.every((r: { endedAt: number | null }) => r.endedAt !== null)
        ? task
        : null;
    },
    timeoutMs,
  );
}

/**
 * A profile whose worker waits for RUN_DIR/go, then reports through `gatehouse worker complete`
 * (of the checkout at `bin`, default this one) with `flags`.
 */
export function reportsWhenToldProfile(summary: string, flags: string[] = [], bin = BIN) {
  return {
    command: [
      'sh',
      '-c',
      `node=$0 bin=$1; shift; while [ ! -e "$GATEHOUSE_RUN_DIR/go" ]; do sleep 0.05; done; exec "$node" "$bin" worker complete --summary "${summary}" "$@"`,
      process.execPath,
      bin,
      ...flags,
    ],
  };
}

/** The pid a worker wrote to RUN_DIR/<name> (a `stubborn` worker's grandchild, a job). */
export function pidFromRunFile(gw: TestGateway, runId: string, name: string): Promise<number> {
  return waitFor(`the pid in ${name}`, () => {
    try {
      return Number(readFileSync(join(gw.dataDir, 'runs', runId, name), 'utf8')) || null;
    } catch {
      return null;
    }
  });
}

/** The pid a `stubborn` worker wrote for its grandchild. */
export const grandchildPid = (gw: TestGateway, runId: string) =>
  pidFromRunFile(gw, runId, 'grandchild');

/** Waits until the dispatcher has completed `n` more ticks: time enough for anything it would do. */
export async function ticksPass(gw: TestGateway, n = 3): Promise<void> {
  const start = gw.dispatcher.ticks;
  await waitFor(`${n} dispatcher ticks`, () => gw.dispatcher.ticks >= start + n);
}
