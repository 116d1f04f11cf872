// buildApp: assembles the Fastify app from its dependencies; it never listens.
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
} from 'fastify';
import websocket from '@fastify/websocket';
import { AppError, ERROR_STATUS, type ErrorCode } from '../errors.js';
import type { StorageFailure } from '../kanban/store/contract.js';
import type { ApprovalRules } from '../kanban/approval-rules.js';
import type { Board } from '../kanban/board.js';
import type { OperatorActions } from '../kanban/operator-actions.js';
import type { WorkerActions } from '../kanban/worker-actions.js';
import type { Platforms } from '../platforms/platforms.js';
import type { PullRequests } from '../pulls/pull-requests.js';
import { authPlugin } from './auth.js';
import { browserGuard } from './browser-guard.js';
import { installJsonParser } from './json-body.js';
import type { EventStreamHub } from './event-stream.js';
import { healthRoutes } from './health-routes.js';
import type { ReadyReport } from './readiness.js';
import { activityRoutes, type ProfileLoad } from './routes/activity-routes.js';
import { profileRoutes } from './routes/profile-routes.js';
import { scheduleRoutes } from './routes/schedule-routes.js';
import { budgetRoutes } from './routes/budget-routes.js';
import { attemptRoutes } from './routes/attempt-routes.js';
import type { Attempts } from '../kanban/attempts/attempts.js';
import type { Scheduler } from '../kanban/schedules/scheduler.js';
import { adminRoutes } from './routes/admin-routes.js';
import { eventRoutes } from './routes/event-routes.js';
import type { Metrics } from './metrics.js';
import { apiDocs } from './routes/api-docs.js';
import { opsRoutes } from './routes/ops-routes.js';
import { platformRoutes } from './routes/platform-routes.js';
import { prRoutes } from './routes/pr-routes.js';
import { loginRoutes } from './routes/login-routes.js';
import { mcpRoutes } from './routes/mcp-routes.js';
import type { McpService } from '../mcp/service.js';
import type { LoginCodes } from './api-token.js';
import { slackRoutes } from './routes/slack-routes.js';
import { taskActionRoutes } from './routes/task-action-routes.js';
import { taskHistoryRoutes } from './routes/task-history-routes.js';
import { taskRoutes, type TaskRouteDeps, type WorkerSample } from './routes/task-routes.js';
import { transcriptRoutes, type TranscriptRouteDeps } from './routes/transcript-routes.js';
import { workspaceRoutes, type WorkspaceRouteDeps } from './routes/workspace-routes.js';
import { workerRoutes } from './routes/worker-routes.js';
import { validatorCompiler } from './validation.js';

export interface AppDeps {
  logger: FastifyBaseLogger;
  bodyLimitBytes: number;
  /** A request (headers and body) must arrive within this; a slow sender is answered 408. */
  requestTimeoutMs: number;
  /** Open connections at most (websockets included); more are closed as they arrive. */
  maxConnections: number;
  apiToken: string | null;
  /** server.host and server.allowedHosts: the Host names this daemon answers to. */
  serverHost: string;
  allowedHosts: readonly string[];
  readiness: () => Promise<ReadyReport>;
  board: Board;
  operator: OperatorActions;
  worker: WorkerActions;
  hub: EventStreamHub;
  platforms: Platforms;
  metrics: Metrics;
  profiles: () => Promise<readonly string[]>;
  workerInfo: (taskId: string) => WorkerSample | null;
  profileLoad: () => ProfileLoad[];
  requestStop: (code: number, reason: string) => void;
  /** How long an Idempotency-Key holds (api.idempotencyHours). */
  idempotencyMs: number;
  repoProblem: (repo: string, assignee: string | null) => string | null;
  modelProblem: (model: string, assignee: string | null) => string | null;
  budgetProblem: TaskRouteDeps['budgetProblem'];
  profileBudget: TaskRouteDeps['profileBudget'];
  /** A task's worktree's diff against its base (GET /tasks/:id/diff). */
  diff: (taskId: string) => Promise<string>;
  workspaces: WorkspaceRouteDeps['workspaces'];
  /** Tasks' pull requests (docs/pull-requests.md). */
  pulls: PullRequests;
  /** Tasks made on a calendar (docs/schedules.md). */
  scheduler: Scheduler;
  /** Best of N (docs/attempts.md). */
  attempts: Attempts;
  /** Whose approval a task's first run waits for (docs/mcp.md). */
  approvals: ApprovalRules;
  /** The MCP endpoint's callers and tools (docs/mcp.md). */
  mcp: McpService;
  /** The agent kind a profile runs, or null (a run's transcript, docs/mcp.md). */
  agentKindOf: TranscriptRouteDeps['agentKindOf'];
  /** The dashboard's one-time login links (a token of the daemon's own making), if any. */
  loginCodes?: LoginCodes;
}

/** "body.title: must be string", "body: unknown field \"bogus\"", "querystring.limit: must be <= 1000". */
function describeValidation(err: FastifyError): string {
  const first = err.validation?.[0];
  const where = `${err.validationContext ?? 'request'}${(first?.instancePath ?? '').replaceAll('/', '.')}`;
  if (!first) return `${where}: invalid`;
  if (first.keyword === 'additionalProperties') {
    return `${where}: unknown field "${String(first.params.additionalProperty)}"`;
  }
  return `${where}: ${first.message ?? 'invalid'}`;
}

/** A 4xx from Fastify or a plugin (the docs' static files), given the registry's code. */
function codeFor(status: number): string {
  const byStatus: Record<number, ErrorCode> = {
    401: 'UNAUTHORIZED',
    403: 'FORBIDDEN',
    404: 'NOT_FOUND',
    413: 'PAYLOAD_TOO_LARGE',
    415: 'UNSUPPORTED_MEDIA_TYPE',
  };
  return byStatus[status] ?? 'BAD_REQUEST';
}

function errorBody(code: string, message: string) {
  return { error: { code, message } };
}

/**
 * Maps every error to `{error: {code, message}}`; 5xx bodies say nothing internal. A read the
 * board's database failed (a lost connection) is a 503 like a failed write.
 */
function installErrorHandling(
  app: FastifyInstance,
  storageFailure: (err: unknown) => StorageFailure | null,
): void {
  app.setErrorHandler((err: FastifyError | AppError, req, reply) => {
    if (err instanceof AppError) {
      return reply.code(err.status).headers(err.headers).send(errorBody(err.code, err.message));
    }
    const failure = storageFailure(err);
    if (failure) {
      req.log.warn({ err }, 'the board database failed a read');
      const busy = failure.kind === 'busy';
      return reply
        .code(503)
        .headers(busy ? { 'retry-after': '1' } : {})
        .send(errorBody(busy ? 'STORAGE_BUSY' : 'STORAGE_UNAVAILABLE', failure.message));
    }
    if (err.validation) {
      return reply.code(400).send(errorBody('VALIDATION_FAILED', describeValidation(err)));
    }
    if (err.statusCode === 413 || err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply.code(413).send(errorBody('PAYLOAD_TOO_LARGE', 'request body is too large'));
    }
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.code(415).send(errorBody('UNSUPPORTED_MEDIA_TYPE', 'send application/json'));
    }
    if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
      return reply.code(err.statusCode).send(errorBody(codeFor(err.statusCode), err.message));
    }
    req.log.error({ err }, 'request failed');
    return reply.code(ERROR_STATUS.INTERNAL).send(errorBody('INTERNAL', 'internal error'));
  });
  app.setNotFoundHandler((req, reply) =>
    reply.code(404).send(errorBody('NOT_FOUND', `no route ${req.method} ${req.url.split('?')[0]}`)),
  );
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export function buildApp(deps: AppDeps): FastifyInstance {
  const app = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: deps.bodyLimitBytes,
    // A sender that trickles its headers or body, authenticated or not, cannot hold a socket.
    requestTimeout: deps.requestTimeoutMs,
    // An idle keep-alive connection holds one of server.maxConnections: not for long.
    keepAliveTimeout: 5000,
    // Node checks the timeout every 30 s by default: a fraction of it, so 408 comes on time.
    http: {
      connectionsCheckingInterval: Math.max(250, Math.min(30_000, deps.requestTimeoutMs / 4)),
    },
    forceCloseConnections: 'idle',
    // One log line per request would flood the journal; failures are logged where they happen.
    logController: new LogController({ disableRequestLogging: true }),
  });
  app.server.headersTimeout = Math.min(deps.requestTimeoutMs, 10_000);
  app.server.maxConnections = deps.maxConnections;
  app.setValidatorCompiler(validatorCompiler);
  // Response schemas document the answers (and the contract test checks real ones against
  // them); they do not reshape what is sent.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  installErrorHandling(app, (err) => deps.board.storageFailure(err));
  // Labels stay bounded: the route's pattern (never the URL) and a known method.
  app.addHook('onResponse', (req, reply, done) => {
    const method = KNOWN_METHODS.has(req.method) ? req.method : 'OTHER';
    deps.metrics.observeRequest(
      req.routeOptions.url ?? 'unmatched',
      method,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });
  installJsonParser(app);
  // JSON is the only body this API reads: a web page's simple cross-site request (text/plain,
  // a form) is refused with 415 before any route sees it.
  app.removeContentTypeParser('text/plain');
  void app.register(websocket, { options: { maxPayload: 4096 } });
  void app.register(browserGuard, { serverHost: deps.serverHost, allowedHosts: deps.allowedHosts });
  void app.register(authPlugin, { apiToken: deps.apiToken });
  apiDocs(app);
  // Routes go in a plugin so that they register after apiDocs, which keeps them for /openapi.json.
  void app.register(async (scope) => {
    healthRoutes(scope, deps.readiness);
    taskRoutes(scope, deps);
    taskActionRoutes(scope, deps);
    taskHistoryRoutes(scope, deps.board);
    workspaceRoutes(scope, deps);
    prRoutes(scope, deps.pulls);
    budgetRoutes(scope, deps);
    attemptRoutes(scope, deps);
    scheduleRoutes(scope, deps.scheduler);
    if (deps.loginCodes) loginRoutes(scope, deps.loginCodes, deps.apiToken);
    workerRoutes(scope, deps.worker);
    mcpRoutes(scope, deps.mcp);
    eventRoutes(scope, deps.board, deps.hub);
    transcriptRoutes(scope, deps);
    activityRoutes(scope, deps);
    profileRoutes(scope, {
      board: deps.board,
      profileNames: () => deps.profileLoad().map((p) => p.name),
    });
    platformRoutes(scope, deps.platforms);
    slackRoutes(scope, deps.platforms);
    opsRoutes(scope, deps.metrics, deps.board);
    adminRoutes(scope, deps.requestStop);
  });
  return app;
}
