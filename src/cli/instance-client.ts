// Finding the running instance of a data dir (pid file, identity) and calling its API.
import { join } from 'node:path';
import { ConfigError, loadConfig, type ConfigOverrides } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { ExitCode, ExitError } from '../gateway/exit-codes.js';
import { PID_FILE, ownerIsLive, readPidFile, type PidRecord } from '../gateway/pid-file.js';

export function cliConfig(overrides: ConfigOverrides): Config {
  try {
    return loadConfig(overrides);
  } catch (err) {
    if (err instanceof ConfigError)
      throw new ExitError(ExitCode.config, `configuration error: ${err.message}`);
    throw err;
  }
}

/** The live owner of the configured data dir, or null. */
export function findInstance(config: Config): PidRecord | null {
  const record = readPidFile(join(config.dataDir, PID_FILE));
  return record && ownerIsLive(record, config.dataDir) ? record : null;
}

/** Says which data dir was looked at and how to point a command at another one. */
export function notRunning(dataDir: string): string {
  return `no instance is running for the data dir ${dataDir}; start one with 'gatehouse run', or point this command at the running one with --data-dir D, --config F or GATEHOUSE_DATA_DIR`;
}

export function requireInstance(config: Config): PidRecord {
  const record = findInstance(config);
  if (!record) throw new ExitError(ExitCode.failure, notRunning(config.dataDir));
  return record;
}

function connectHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

export function baseUrl(config: Config, record: PidRecord): string {
  return `http://${connectHost(config.server.host)}:${record.port}`;
}

export interface ApiResponse {
  status: number;
  body: unknown;
}

/** One JSON request; network failures become a clear error. */
export async function callApi(
  url: string,
  method: string,
  token: string | null,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...extraHeaders };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers,
      body: body === undefined ? null : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new ExitError(ExitCode.failure, `cannot reach ${url}: ${(err as Error).message}`);
  }
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON (the metrics text, a log): keep the text.
  }
  return { status: res.status, body: parsed };
}

/** Throws with the API's own error message unless the status is 2xx. */
export function expectOk(res: ApiResponse): unknown {
  if (res.status >= 200 && res.status < 300) return res.body;
  const error = (res.body as { error?: { code?: string; message?: string } } | null)?.error;
  throw new ExitError(
    ExitCode.failure,
    error ? `${error.code ?? 'ERROR'}: ${error.message ?? ''}` : `HTTP ${res.status}`,
  );
}
