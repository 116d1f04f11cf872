// `gatehouse run`: the one entry that reads config, takes the data dir, starts subsystems, listens and owns signals.
import { systemClock } from '../clock.js';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, loadConfig, type ConfigOverrides } from '../config/load.js';
import type { Config } from '../config/schema.js';
import type { BoardStore } from '../kanban/store/contract.js';
import { openBoard, StoreConfigError } from '../kanban/store/open.js';
import { VERSION } from '../version.js';
import { composeGateway } from './compose.js';
import { API_TOKEN_FILE, LoginCodes, withApiToken } from './api-token.js';
import { sandboxProblem } from '../sandbox/probe.js';
import { diskFull, isDiskFull, prepareDataDir } from './data-dir.js';
import { recordFailedStart, recordStart } from './crash-loop.js';
import { ExitCode, ExitError, isExitError } from './exit-codes.js';
import { acquireInstance, type Instance } from './instance.js';
import { lockWorkspacesRoot } from './instance-lock.js';
import { listenWithRetry } from './listen.js';
import { createLogger } from './logger.js';
import type { Logger } from 'pino';
import { removePidFileIfOurs, writePidFile } from './pid-file.js';
import { serviceManager, type ServiceManager } from './service-manager.js';
import { Shutdown } from './shutdown.js';
import { WaitingServer } from './waiting-server.js';
import { TAKEOVER_FILE, readTakeover } from './takeover.js';

export interface RunOptions {
  overrides: ConfigOverrides;
  replace: boolean;
}

function readConfig(overrides: ConfigOverrides): Config {
  try {
    return loadConfig(overrides);
  } catch (err) {
    if (err instanceof ConfigError)
      throw new ExitError(ExitCode.config, `configuration error: ${err.message}`);
    throw err;
  }
}

/** Runs the daemon until a signal, a stop request or a fatal error ends the process. */
export async function runDaemon(opts: RunOptions): Promise<void> {
  const configured = readConfig(opts.overrides);
  prepareDataDir(configured.dataDir);
  const problem = sandboxProblem(configured);
  if (problem) throw new ExitError(ExitCode.config, `${problem.key}: ${problem.message}`);
  // A sandboxed agent reaches the loopback: the API then needs a token, its own if none is set.
  const { config, own } = withApiToken(configured);
  const log = createLogger(config.log.level, config.journalStream);
  // From here the start is held open under systemd, until the daemon serves.
  const manager = serviceManager(process.env, (msg) => log.warn(msg));
  let instance: Instance;
  try {
    instance = await acquireInstance({
      dataDir: config.dataDir,
      replace: opts.replace,
      replaceTimeoutMs: config.replace.timeoutSeconds * 1000,
      killTimeoutMs: config.replace.killTimeoutSeconds * 1000,
      port: config.server.port,
      version: VERSION,
      log: (msg) => log.info(msg),
    });
  } catch (err) {
    throw isDiskFull(err) ? diskFull(config.dataDir) : err;
  }

  try {
    instance.rootLock = lockWorkspacesRoot(config.workspaces.root);
    await serve(config, instance, log, manager, own ? new LoginCodes() : null);
  } catch (err) {
    // A start that failed after taking the data dir leaves it as a clean stop would, and says
    // so in starts.log when it exits 1, so that a loop of such starts is paced.
    removePidFileIfOurs(instance.pidPath, instance.self);
    instance.rootLock?.release();
    instance.lock.release();
    manager.close();
    if (isDiskFull(err)) throw diskFull(config.dataDir);
    if (!isExitError(err) || err.exitCode === ExitCode.failure) {
      try {
        recordFailedStart(join(config.dataDir, 'starts.log'), systemClock.wall());
      } catch {
        // Not recorded: this start simply does not count.
      }
    }
    throw err;
  }
}

async function serve(
  config: Config,
  instance: Instance,
  log: Logger,
  manager: ServiceManager,
  loginCodes: LoginCodes | null,
): Promise<void> {
  const shutdown = new Shutdown({
    deadlineMs: config.shutdown.timeoutSeconds * 1000,
    log: (msg, err) => (err ? log.error({ err }, msg) : log.info(msg)),
    begin: (reason) => manager.stopping(`shutting down: ${reason}`),
    exit: (code) => {
      log.flush();
      manager.close();
      process.exit(code);
    },
  });
  installSignals(shutdown, instance, config, log.warn.bind(log));

  await crashLoopGuard(config, instance, (msg) => {
    log.warn(msg);
    manager.waiting(msg);
  });
  let listenPort: number;

  // A database that is not up yet is waited for with the port answering: /ready says why.
  const waiting = new WaitingServer(
    config.server.host,
    config.server.port,
    config.api.token,
    (err) => log.warn({ err }, 'cannot answer on the port while the board database is unreachable'),
  );
  let store: BoardStore;
  try {
    store = await openBoardStore(config, log, (why) => {
      waiting.waiting(why);
      manager.waiting(why);
    });
  } finally {
    listenPort = (await waiting.close()) ?? config.server.port;
  }
  let gateway: Awaited<ReturnType<typeof composeGateway>>;
  try {
    gateway = await composeGateway({
      config,
      store,
      logger: log,
      requestStop: (code, reason) => void shutdown.run(code, reason),
      ...(loginCodes ? { loginCodes } : {}),
    });
  } catch (err) {
    await store.close();
    throw err;
  }
  for (const step of gateway.closeSteps) shutdown.add(step.name, step.run);
  shutdown.add('pid file', () => removePidFileIfOurs(instance.pidPath, instance.self));
  shutdown.add('lock', () => {
    instance.rootLock?.release();
    instance.lock.release();
  });

  let port: number;
  try {
    port = await listenWithRetry(
      gateway.app,
      config.server.host,
      listenPort,
      config.replace.timeoutSeconds * 1000,
    );
  } catch (err) {
    // Nothing started yet: the board closes as at a stop, leaving no -wal or -shm behind.
    await store.close();
    throw err;
  }
  writePidFile(instance.pidPath, { ...instance.record, port });
  await gateway.dispatcher.start(workerBaseUrl(config.server.host, port));
  store.serving();
  gateway.retention.start();
  gateway.reconciler.start();
  await gateway.pulls.start();
  await gateway.scheduler.start();
  await gateway.attempts.start();
  await gateway.platforms.start();
  log.info({ host: config.server.host, port, dataDir: config.dataDir }, 'gatehouse serving');
  const unenforced = gateway.dispatcher.unenforcedLimits();
  if (unenforced.length > 0)
    log.warn(
      { profiles: unenforced },
      'sandbox.limits are not enforced: this host has no cgroup v2 that gatehouse may use',
    );
  if (loginCodes)
    log.info(
      { tokenFile: join(config.dataDir, API_TOKEN_FILE) },
      `the API needs a token (a profile is sandboxed); the dashboard, logged in once: ${workerBaseUrl(config.server.host, port)}/#login=${loginCodes.issue()}`,
    );
  manager.ready(`serving on port ${port}`);
}

/** The URL workers call back on: a wildcard bind is reached through loopback. */
function workerBaseUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

async function openBoardStore(
  config: Config,
  log: Logger,
  waiting: (why: string) => void,
): Promise<BoardStore> {
  try {
    return await openBoard(config.store, config.dataDir, {
      onRepair: (note) => log.warn(`board upgrade: ${note}`),
      onRetry: (err, delayMs) => {
        const why = `board database unreachable (${(err as Error).message}); trying again in ${delayMs / 1000} s`;
        log.warn({ err }, why);
        waiting(why);
      },
      onIdleError: (err) => log.warn({ err }, 'an idle board database connection failed'),
      olderDaemons: {
        onWait: (why) => {
          log.warn(why);
          waiting(why);
        },
        onError: (err) =>
          log.warn({ err }, "the board lock's connection failed; taking the lock again"),
      },
    });
  } catch (err) {
    if (err instanceof StoreConfigError) throw new ExitError(ExitCode.config, err.message);
    throw err;
  }
}

async function crashLoopGuard(config: Config, instance: Instance, warn: (msg: string) => void) {
  const { streak, delayMs } = recordStart(
    join(config.dataDir, 'starts.log'),
    instance.uncleanPrevious,
    systemClock.wall(),
    {
      maxStarts: config.crashLoop.maxStarts,
      windowMs: config.crashLoop.windowSeconds * 1000,
      maxBackoffMs: config.crashLoop.maxBackoffSeconds * 1000,
    },
  );
  if (delayMs > 0) {
    warn(
      `crash-loop guard: ${streak} unclean starts within ${config.crashLoop.windowSeconds}s; waiting ${delayMs / 1000}s before starting`,
    );
    await sleep(delayMs);
  }
}

function installSignals(
  shutdown: Shutdown,
  instance: Instance,
  config: Config,
  warn: (obj: object, msg: string) => void,
): void {
  const onSignal = (signal: NodeJS.Signals, code: number) => {
    if (shutdown.inProgress) {
      // A second signal means "now": leave at once, tidying only our own pid file.
      removePidFileIfOurs(instance.pidPath, instance.self);
      process.exit(ExitCode.failure);
    }
    const mark = readTakeover(join(config.dataDir, TAKEOVER_FILE), process.pid);
    void shutdown.run(code, mark ? `replaced by pid ${mark.by}` : signal);
  };
  process.on('SIGTERM', () => onSignal('SIGTERM', ExitCode.ok));
  process.on('SIGINT', () => onSignal('SIGINT', ExitCode.ok));
  process.on('SIGUSR1', () => onSignal('SIGUSR1', ExitCode.restart));
  process.on('SIGHUP', () => undefined);
  const fatal = (err: unknown) => {
    warn({ err }, 'unexpected failure');
    void shutdown.run(ExitCode.failure, 'unexpected failure');
  };
  process.on('uncaughtException', fatal);
  process.on('unhandledRejection', fatal);
}
