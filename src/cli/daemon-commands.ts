// `gatehouse status` and `stop`: the daemon's own lifecycle from the command line (`run` is
// run-command.ts).
import { systemClock } from '../clock.js';
import { ExitCode, ExitError } from '../gateway/exit-codes.js';
import { pidExists, waitUntil } from '../proc/index.js';
import { callApi, type Schemas } from './api-client.js';
import { parseFlags } from './args.js';
import {
  cliConfig,
  notRunning,
  requireInstance,
  resolveTarget,
  targetFlags,
  unauthorized,
} from './instance-client.js';
import { formatDuration, print } from './output.js';
import { configFlags } from './run-command.js';

export async function statusCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values } = parseFlags(args, { ...targetFlags, json: { type: 'boolean' } });
  const { url, record, config, token } = resolveTarget(values, env);
  const json = values.json ?? false;
  if (url === null) {
    print(json, { running: false, dataDir: config.dataDir }, () => notRunning(config.dataDir));
    return 3;
  }
  let ready: Awaited<ReturnType<typeof callApi>>;
  try {
    ready = await callApi(`${url}/ready`, 'GET', token);
  } catch (err) {
    if (!(err instanceof ExitError)) throw err;
    if (!record) {
      print(json, { running: false, url }, () => err.message);
      return 3;
    }
    // It owns the data dir but does not answer: starting, or waiting out a crash-loop backoff.
    const starting = { running: true, serving: false, pid: record.pid, dataDir: record.dataDir };
    print(
      json,
      starting,
      () =>
        `gatehouse pid ${record.pid} owns ${record.dataDir} but is not serving yet: it is starting or waiting out a crash-loop backoff (its log says which)`,
    );
    return 0;
  }
  if (ready.status === 401) throw unauthorized(url);
  // Ready or not (503), the answer is the readiness report; anything else says nothing of it.
  const report = (ready.status === 200 || ready.status === 503 ? ready.body : {}) as Partial<
    Schemas['Ready']
  >;
  const where = record
    ? {
        pid: record.pid,
        port: record.port,
        dataDir: record.dataDir,
        version: record.version,
        startedAt: record.startedAt,
        uptimeSeconds: Math.floor((systemClock.wall() - record.startedAt) / 1000),
      }
    : { url };
  const status = {
    running: true,
    serving: true,
    ...where,
    ready: report.ready ?? false,
    platforms: report.platforms ?? [],
    board: report.board ?? {},
  };
  print(json, status, () =>
    [
      record
        ? `gatehouse ${record.version} running: pid ${record.pid}, port ${record.port}, up ${formatDuration(systemClock.wall() - record.startedAt)}\ndata dir: ${record.dataDir}`
        : `gatehouse serving at ${url}`,
      `ready: ${status.ready ? 'yes' : 'no'}`,
      `board: ${
        Object.entries(status.board)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ') || '(empty)'
      }`,
      `platforms: ${status.platforms.map((p) => `${p.name} ${p.state}`).join(', ') || '(none)'}`,
    ].join('\n'),
  );
  return 0;
}

/** Planned stop: SIGTERM to the proven owner, then wait for it to end (it exits 0). */
export async function stopCommand(args: string[]): Promise<number> {
  const { values } = parseFlags(args, configFlags);
  const config = cliConfig({ config: values.config, dataDir: values['data-dir'] });
  const record = requireInstance(config);
  const identity = { pid: record.pid, startTime: record.startTime, bootId: record.bootId };
  if (pidExists(record.pid, identity)) process.kill(record.pid, 'SIGTERM');
  const waitMs = (config.shutdown.timeoutSeconds + 5) * 1000;
  if (!(await waitUntil(() => !pidExists(record.pid, identity), waitMs, 50))) {
    throw new ExitError(
      ExitCode.failure,
      `pid ${record.pid} did not stop within ${waitMs / 1000}s`,
    );
  }
  process.stdout.write(`stopped gatehouse (pid ${record.pid})\n`);
  return 0;
}
