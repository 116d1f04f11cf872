// Wires the subsystems into one gateway (board, event stream, app); the daemon and tests both use it.
import { systemClock, type Clock } from '../clock.js';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from '../config/schema.js';
import { Dispatcher } from '../kanban/dispatch/dispatcher.js';
import { interruptAll } from '../kanban/dispatch/interrupt.js';
import { Retention } from '../kanban/dispatch/retention.js';
import { WorkspaceReconciler } from '../kanban/dispatch/workspace-reconcile.js';
import { createKanban, type Kanban } from '../kanban/kanban.js';
import { repoProblem } from '../config/workspaces.js';
import { modelProblem } from '../config/agents.js';
import { budgetProblem } from '../config/budgets.js';
import { spentOf, utcDay } from '../kanban/model/budget.js';
import type { RunTerminator } from '../kanban/dispatch/run-terminator.js';
import type { BoardStore } from '../kanban/store/contract.js';
import type { AdapterFactory } from '../platforms/adapter.js';
import { openPlatforms, type Platforms } from '../platforms/platforms.js';
import { PullRequests, type ForgeView } from '../pulls/pull-requests.js';
import { Scheduler } from '../kanban/schedules/scheduler.js';
import { Attempts } from '../kanban/attempts/attempts.js';
import { buildApp } from './app.js';
import { CLOSE_RESTARTING, EventStreamHub, type StreamOptions } from './event-stream.js';
import { createMetrics } from './metrics.js';
import type { LoginCodes } from './api-token.js';
import { RepeatLimiter } from '../repeat-limit.js';
import { McpService } from '../mcp/service.js';

export interface GatewayDeps {
  config: Config;
  store: BoardStore;
  logger: FastifyBaseLogger;
  requestStop: (code: number, reason: string) => void;
  clock?: Clock;
  terminator?: RunTerminator;
  stream?: StreamOptions;
  /** Adapter factories by platform name, replacing the configured type's (tests). */
  adapters?: Record<string, AdapterFactory>;
  notifyRetryMs?: number;
  /** How long a keyed request waits for its twin (tests). */
  keyedWaitMs?: number;
  /** One-time dashboard login links, when the API's token is the daemon's own. */
  loginCodes?: LoginCodes;
}

export interface Gateway {
  kanban: Kanban;
  dispatcher: Dispatcher;
  retention: Retention;
  /** The managed root reconciled with the board (workspace-reconcile.ts). */
  reconciler: WorkspaceReconciler;
  /** Tasks' pull requests: published after their runs, followed on their forge. */
  pulls: PullRequests;
  /** Tasks made on a calendar (docs/schedules.md). */
  scheduler: Scheduler;
  /** Best of N (docs/attempts.md): judging and picking attempts. */
  attempts: Attempts;
  platforms: Platforms;
  hub: EventStreamHub;
  app: FastifyInstance;
  /** Shutdown steps in order, for the owner's Shutdown (workers are stopped only in container mode). */
  closeSteps: { name: string; run: () => unknown }[];
}

export async function composeGateway(deps: GatewayDeps): Promise<Gateway> {
  const { config, store, logger } = deps;
  const kanban = createKanban(config, store, {
    ...(deps.clock ? { clock: deps.clock } : {}),
    ...(deps.terminator ? { terminator: deps.terminator } : {}),
    ...(deps.keyedWaitMs !== undefined ? { keyedWaitMs: deps.keyedWaitMs } : {}),
    onListenerError: (err) => logger.error({ err }, 'event listener failed'),
    log: logger,
  });
  await kanban.board.follow();
  const hub = new EventStreamHub(kanban.board, deps.stream);
  const platformFailures = new RepeatLimiter();
  const platforms = await openPlatforms({
    configs: config.platforms,
    store: store.platforms,
    board: kanban.board,
    onError: (err, what) =>
      platformFailures.report((obj, msg) => logger.warn(obj, msg), err, `platform: ${what} failed`),
    ...(deps.adapters ? { factories: deps.adapters } : {}),
    ...(deps.notifyRetryMs ? { notifyRetryMs: deps.notifyRetryMs } : {}),
    host: () => (dispatcher.host.joined ? dispatcher.host : null),
    holdEveryMs: config.cluster.renewSeconds * 1000,
    holdGraceMs: config.cluster.reclaimGraceSeconds * 1000,
    approvals: kanban.approvals,
  });
  // The sources are read at scrape time; the dispatcher and platforms exist by then.
  const metrics = createMetrics({
    taskCounts: () => kanban.board.counts(),
    runOutcomes: () => kanban.board.runs.countByOutcome(),
    workersByProfile: () => dispatcher.liveByProfile(),
    platforms: () => platforms.views(),
    notificationBacklog: () => platforms.notificationBacklog(),
    hosts: () => kanban.board.hosts.list(),
    workspaces: () => reconciler.byState(),
    pullRequests: () => pulls.countByState(),
    dailySpend: async () => {
      const since = utcDay(kanban.board.clock.wall()).start;
      const out: Record<string, { usd: number; tokens: number }> = {};
      for (const name of Object.keys(config.workers.profiles)) {
        const s = spentOf(await kanban.board.runs.usageSince(name, since));
        out[name] = { usd: s.usd, tokens: s.tokens };
      }
      return out;
    },
  });
  // What this host did: with many hosts, each exports its own counts (sum them across hosts).
  kanban.board.committed.subscribe((event) => metrics.observeEvent(event));
  const dispatcher = new Dispatcher({
    config,
    kanban,
    log: logger,
    observeTick: (ms) => metrics.observeTick(ms),
  });
  const retention = new Retention(
    kanban.board,
    config,
    kanban.ownership,
    () => store.open,
    logger,
    (done) => metrics.countPruned(done),
  );
  const reconciler = new WorkspaceReconciler(
    kanban.board,
    kanban.workspaces,
    config,
    logger,
    () => store.open,
  );
  const pulls = new PullRequests({
    config,
    board: kanban.board,
    room: kanban.workspaces.room,
    baseUrl: () => dispatcher.url,
    host: () => (dispatcher.host.joined ? dispatcher.host : null),
    log: logger,
    onRequest: (provider, outcome) => metrics.countForgeRequest(provider, outcome),
  });
  const scheduler = new Scheduler({
    board: kanban.board,
    schedules: config.schedules,
    clock: deps.clock ?? systemClock,
    keyLifetimeMs: config.api.idempotencyHours * 3_600_000,
    needsApproval: (assignee) => kanban.approvals.needed(assignee, undefined),
    onError: (err, schedule) => logger.error({ err, schedule }, 'a schedule could not fire'),
  });
  const attempts = new Attempts({
    board: kanban.board,
    config,
    room: kanban.workspaces.room,
    onError: (err, taskId) => logger.error({ err, taskId }, 'attempts could not go on'),
  });
  const app = buildApp({
    logger,
    bodyLimitBytes: config.server.bodyLimitBytes,
    requestTimeoutMs: config.server.requestTimeoutSeconds * 1000,
    maxConnections: config.server.maxConnections,
    apiToken: config.api.token,
    serverHost: config.server.host,
    allowedHosts: config.server.allowedHosts,
    readiness: async () => {
      const writes = store.open ? await kanban.board.writable() : { ok: false, error: 'closed' };
      const host = dispatcher.host.status();
      return {
        ready: store.open && writes.ok && dispatcher.running && host.status !== 'down',
        subsystems: {
          host,
          database: writes.ok
            ? { status: 'ok' }
            : { status: 'down', detail: `cannot be written: ${writes.error}` },
          dispatcher: { status: dispatcher.running ? 'ok' : 'down' },
          workspaces: workspacesStatus(kanban.workspaces.diskFloor()),
          ...limitsStatus(dispatcher.unenforcedLimits()),
          ...forgesStatus(pulls.views()),
        },
        platforms: platforms.views().map((p) => ({
          name: p.name,
          state: p.state,
          status: p.state === 'connected' && p.breaker.state === 'closed' ? 'ok' : 'degraded',
        })),
        // The report is the answer, whatever fails: never an error in /ready's place.
        board: store.open ? await kanban.board.counts().catch(() => ({})) : {},
      };
    },
    board: kanban.board,
    operator: kanban.operator,
    worker: kanban.worker,
    hub,
    platforms,
    metrics,
    profiles: () => kanban.board.profilesServed(Object.keys(config.workers.profiles)),
    workerInfo: (taskId) => dispatcher.workerInfo(taskId),
    profileLoad: () => {
      const running = dispatcher.liveByProfile();
      return Object.values(config.workers.profiles).map((p) => ({
        name: p.name,
        running: running[p.name] ?? 0,
        maxConcurrent: p.maxConcurrent,
        isDefault: p.name === config.workers.defaultProfile,
      }));
    },
    requestStop: deps.requestStop,
    idempotencyMs: config.api.idempotencyHours * 3_600_000,
    diff: (taskId) => kanban.workspaces.diff(taskId),
    workspaces: () => reconciler.report(),
    repoProblem: (repo, assignee) => repoProblem(config, repo, assignee),
    modelProblem: (model, assignee) => modelProblem(config, model, assignee),
    budgetProblem: (budget, assignee) => budgetProblem(config, budget, assignee),
    profileBudget: (assignee) =>
      config.workers.profiles[assignee ?? config.workers.defaultProfile]?.budget ?? null,
    agentKindOf: (profile) => config.workers.profiles[profile]?.agent?.kind ?? null,
    pulls,
    scheduler,
    attempts,
    approvals: kanban.approvals,
    mcp: new McpService({
      board: kanban.board,
      operator: kanban.operator,
      approvals: kanban.approvals,
      config,
      tokens: kanban.runTokens,
      owns: (run) => kanban.ownership.owns(run),
      inputProblem: ({ repo, model, assignee }) => {
        const who = assignee ?? null;
        const r = repo ? repoProblem(config, repo, who) : null;
        if (r) return `repo: ${r}`;
        const m = model ? modelProblem(config, model, who) : null;
        return m ? `model: ${m}` : null;
      },
    }),
    ...(deps.loginCodes ? { loginCodes: deps.loginCodes } : {}),
  });
  return {
    kanban,
    dispatcher,
    retention,
    reconciler,
    pulls,
    scheduler,
    attempts,
    platforms,
    hub,
    app,
    closeSteps: [
      { name: 'schedules', run: () => scheduler.stop() },
      { name: 'attempts', run: () => attempts.stop() },
      { name: 'retention', run: () => retention.stop() },
      { name: 'pull requests', run: () => pulls.stop() },
      { name: 'workspaces', run: () => reconciler.stop() },
      // A setup is the daemon's own child: ended, its run interrupted (not counted).
      {
        name: 'workspace setups',
        run: () => kanban.workspaces.room.stopSetups('gatehouse is stopping'),
      },
      { name: 'dispatcher', run: () => dispatcher.stop() },
      ...(config.shutdown.workers === 'terminate'
        ? [
            {
              name: 'workers',
              run: async () => {
                await interruptAll(kanban, logger);
                await dispatcher.reapLingering();
              },
            },
          ]
        : []),
      { name: 'platform notices', run: () => platforms.announce(2000, 'gatehouse is restarting') },
      {
        name: 'websocket clients',
        run: () => hub.closeAll(CLOSE_RESTARTING, 'gatehouse is restarting'),
      },
      { name: 'http', run: () => app.close() },
      { name: 'platform adapters', run: () => platforms.stop(2000) },
      // What was queued last (a platform's state, a notice's failure) is written, not lost.
      { name: 'board writes', run: () => kanban.board.settled() },
      { name: 'event feed', run: () => kanban.board.unfollow() },
      { name: 'database', run: () => store.close() },
    ],
  };
}

/** /ready's forges: a refused token is down (an operator must act), a busy forge degraded. */
function forgesStatus(
  views: ForgeView[],
): Record<string, { status: 'ok' | 'degraded' | 'down'; detail?: string }> {
  return Object.fromEntries(
    views.map((v) => [
      `forge:${v.repo}`,
      v.status === 'ok'
        ? { status: 'ok' }
        : {
            status: v.status === 'failed' ? 'down' : 'degraded',
            detail: `${v.provider}: ${v.status}${v.detail ? `: ${v.detail}` : ''}`,
          },
    ]),
  );
}

/** /ready's sandbox limits: said when the host cannot enforce them (docs/sandbox.md). */
function limitsStatus(profiles: string[]): Record<string, { status: 'degraded'; detail: string }> {
  if (profiles.length === 0) return {};
  return {
    limits: {
      status: 'degraded',
      detail: `sandbox.limits of ${profiles.join(', ')} are not enforced: this host has no cgroup v2 that gatehouse may use (docs/sandbox.md)`,
    },
  };
}

/** /ready's workspaces: degraded (tasks that need a new workspace wait) below the disk floor. */
function workspacesStatus(floor: string | null): { status: 'ok' | 'degraded'; detail?: string } {
  return floor === null ? { status: 'ok' } : { status: 'degraded', detail: floor };
}
