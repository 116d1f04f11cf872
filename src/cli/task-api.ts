// What every `gatehouse task …` command starts from: the instance's API, and a task id.
import { callApi, expectOk } from './api-client.js';
import { usageError } from './args.js';
import { ExitCode, ExitError } from '../gateway/exit-codes.js';
import {
  notRunning,
  resolveTarget,
  targetFlags,
  unauthorized,
  type TargetValues,
} from './instance-client.js';

export const common = { ...targetFlags, json: { type: 'boolean' } } as const;

export interface Api {
  call: (
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ) => Promise<unknown>;
  /** The daemon runs beside this command (found by its data dir), not only at a URL. */
  local: boolean;
}

export function connect(values: TargetValues): Api {
  const { url, record, config, token } = resolveTarget(values, process.env);
  if (url === null) throw new ExitError(ExitCode.failure, notRunning(config.dataDir));
  return {
    local: record !== null,
    call: async (method, path, body, headers = {}) => {
      const res = await callApi(`${url}${path}`, method, token, body, {
        ...headers,
        'x-gatehouse-client': 'cli',
      });
      if (res.status === 401) throw unauthorized(url);
      return expectOk(res);
    },
  };
}

export function oneId(positionals: string[], what: string): string {
  const id = positionals[0];
  if (!id) throw usageError(`${what} needs a task id`);
  if (!/^t_[0-9a-f]{12}$/.test(id))
    throw usageError(`${what}: "${id}" is not a task id (t_ and 12 hex digits, as task ls shows)`);
  return id;
}
