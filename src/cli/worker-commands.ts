// `gatehouse worker …`: for use inside a worker; reads the run's env vars and calls the API.
// A verdict survives a daemon restart: while the daemon cannot be reached the call is retried
// with backoff for --wait seconds, and then written to result.json, which the daemon reads
// when the worker exits. A refusal (4xx) is final and exits non-zero at once.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExitCode, ExitError } from '../gateway/exit-codes.js';
import { parseDuration, parseFlags, usageError } from './args.js';
import { callApi, expectOk, type ApiResponse } from './api-client.js';

interface RunEnv {
  url: string;
  taskId: string;
  token: string;
  runDir: string | undefined;
}

/** How long complete and block keep trying (docs/workers.md), and heartbeat, which is not worth more. */
const VERDICT_WAIT_SECONDS = 600;
const HEARTBEAT_WAIT_SECONDS = 30;
const MAX_BACKOFF_MS = 5000;

function runEnv(env: NodeJS.ProcessEnv): RunEnv {
  const { GATEHOUSE_URL: url, GATEHOUSE_TASK_ID: taskId, GATEHOUSE_RUN_TOKEN: token } = env;
  if (!url || !taskId || !token) {
    throw usageError(
      'worker commands run inside a worker: GATEHOUSE_URL, GATEHOUSE_TASK_ID and GATEHOUSE_RUN_TOKEN must be set',
    );
  }
  return { url, taskId, token, runDir: env.GATEHOUSE_RUN_DIR };
}

/** One call; null when the daemon could not be reached or answered that it cannot serve now. */
async function attempt(env: RunEnv, action: string, body: object): Promise<ApiResponse | null> {
  const url = `${env.url}/tasks/${encodeURIComponent(env.taskId)}/${action}`;
  try {
    const res = await callApi(url, 'POST', env.token, body);
    return res.status >= 500 ? null : res;
  } catch (err) {
    if (err instanceof ExitError) return null;
    throw err;
  }
}

/**
 * Posts until the daemon answers (or `waitSeconds` pass). Returns false if it never could;
 * throws with the API's message when it refused.
 */
async function post(
  env: RunEnv,
  action: string,
  body: object,
  waitSeconds: number,
): Promise<boolean> {
  const deadline = performance.now() + waitSeconds * 1000;
  for (let delay = 250; ; delay = Math.min(delay * 2, MAX_BACKOFF_MS)) {
    const res = await attempt(env, action, body);
    if (res) {
      expectOk(res);
      return true;
    }
    const left = deadline - performance.now();
    if (left <= 0) return false;
    await sleep(Math.min(delay, left));
  }
}

/** The verdict goes to result.json, where the daemon finds it once the worker exits 0. */
function writeVerdict(env: RunEnv, verdict: object, waitSeconds: number): void {
  if (!env.runDir)
    throw new ExitError(
      ExitCode.failure,
      `gatehouse could not be reached for ${waitSeconds}s and GATEHOUSE_RUN_DIR is not set`,
    );
  const path = join(env.runDir, 'result.json');
  writeFileSync(`${path}.tmp`, `${JSON.stringify(verdict)}\n`);
  renameSync(`${path}.tmp`, path);
  process.stderr.write(
    `gatehouse could not be reached for ${waitSeconds}s; the verdict is in ${path} (exit 0 and it counts)\n`,
  );
}

async function verdict(env: RunEnv, action: 'complete' | 'block', body: object, wait: number) {
  if (!(await post(env, action, body, wait)))
    writeVerdict(env, { status: action === 'complete' ? 'done' : 'blocked', ...body }, wait);
}

function readResult(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch (err) {
    throw new ExitError(ExitCode.failure, `--result-file ${path}: ${(err as Error).message}`);
  }
}

function waitFlag(text: string | undefined, fallback: number): number {
  return text === undefined ? fallback : parseDuration('--wait', text);
}

export async function workerCommand(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const [sub, ...rest] = args;
  const wait = { wait: { type: 'string' } } as const;
  if (sub === 'complete') {
    const { values } = parseFlags(rest, {
      summary: { type: 'string' },
      'result-file': { type: 'string' },
      ...wait,
    });
    const body: Record<string, unknown> = {};
    if (values.summary !== undefined) body.summary = values.summary;
    if (values['result-file'] !== undefined) body.result = readResult(values['result-file']);
    await verdict(runEnv(env), 'complete', body, waitFlag(values.wait, VERDICT_WAIT_SECONDS));
  } else if (sub === 'block') {
    const { values } = parseFlags(rest, { reason: { type: 'string' }, ...wait });
    if (!values.reason) throw usageError('worker block needs --reason R');
    const seconds = waitFlag(values.wait, VERDICT_WAIT_SECONDS);
    await verdict(runEnv(env), 'block', { reason: values.reason }, seconds);
  } else if (sub === 'heartbeat') {
    const { values } = parseFlags(rest, { note: { type: 'string' }, ...wait });
    const seconds = waitFlag(values.wait, HEARTBEAT_WAIT_SECONDS);
    const body = values.note === undefined ? {} : { note: values.note };
    if (!(await post(runEnv(env), 'heartbeat', body, seconds)))
      throw new ExitError(ExitCode.failure, `gatehouse could not be reached for ${seconds}s`);
  } else {
    throw usageError('worker needs one of: complete, block, heartbeat');
  }
}
