// `gatehouse worker …`: for use inside a worker; reads the run's env vars and calls the API.
import { readFileSync } from 'node:fs';
import { ExitCode, ExitError } from '../gateway/exit-codes.js';
import { parseFlags, usageError } from './args.js';
import { callApi, expectOk } from './instance-client.js';

interface RunEnv {
  url: string;
  taskId: string;
  token: string;
}

function runEnv(env: NodeJS.ProcessEnv): RunEnv {
  const { GATEHOUSE_URL: url, GATEHOUSE_TASK_ID: taskId, GATEHOUSE_RUN_TOKEN: token } = env;
  if (!url || !taskId || !token) {
    throw usageError(
      'worker commands run inside a worker: GATEHOUSE_URL, GATEHOUSE_TASK_ID and GATEHOUSE_RUN_TOKEN must be set',
    );
  }
  return { url, taskId, token };
}

async function post(env: RunEnv, action: string, body: object): Promise<void> {
  const res = await callApi(
    `${env.url}/tasks/${encodeURIComponent(env.taskId)}/${action}`,
    'POST',
    env.token,
    body,
  );
  expectOk(res);
}

function readResult(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch (err) {
    throw new ExitError(ExitCode.failure, `--result-file ${path}: ${(err as Error).message}`);
  }
}

export async function workerCommand(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === 'complete') {
    const { values } = parseFlags(rest, {
      summary: { type: 'string' },
      'result-file': { type: 'string' },
    });
    const body: Record<string, unknown> = {};
    if (values.summary !== undefined) body.summary = values.summary;
    if (values['result-file'] !== undefined) body.result = readResult(values['result-file']);
    await post(runEnv(env), 'complete', body);
  } else if (sub === 'block') {
    const { values } = parseFlags(rest, { reason: { type: 'string' } });
    if (!values.reason) throw usageError('worker block needs --reason R');
    await post(runEnv(env), 'block', { reason: values.reason });
  } else if (sub === 'heartbeat') {
    const { values } = parseFlags(rest, { note: { type: 'string' } });
    await post(runEnv(env), 'heartbeat', values.note === undefined ? {} : { note: values.note });
  } else {
    throw usageError('worker needs one of: complete, block, heartbeat');
  }
}
