// Prometheus metrics (/metrics): gauges read from the board, dispatcher and platforms at scrape
// time; counters and histograms of what happened, from the board's events and the HTTP server.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AgentUsage } from '../agents/types.js';
import type { BoardEvent, RunEndPayload } from '../kanban/model/events.js';
import { HOST_STATES, RUN_OUTCOMES, type Host } from '../kanban/model/types.js';
import type { PlatformView } from '../platforms/supervisor.js';
import { VERSION } from '../version.js';

export interface MetricSources {
  taskCounts(): Promise<Record<string, number>>;
  runOutcomes(): Promise<Record<string, number>>;
  workersByProfile(): Record<string, number>;
  platforms(): PlatformView[];
  notificationBacklog(): Promise<number>;
  /** The board's hosts (one on SQLite). */
  hosts(): Promise<Host[]>;
  /** This host's workspaces by state, and their bytes, as last looked at. */
  workspaces(): { count: Record<string, number>; bytes: Record<string, number> };
  /** Followed pull requests by state (open, closed), as last listed. */
  pullRequests(): Record<string, number>;
  /** Each profile's spend since the start of the UTC day, all hosts together (docs/budgets.md). */
  dailySpend(): Promise<Record<string, { usd: number; tokens: number }>>;
}

export interface Metrics {
  registry: Registry;
  observeTick(ms: number): void;
  /** Counts what a retention pass removed, by kind (run_folders, events, deliveries). */
  countPruned(done: Record<string, number>): void;
  /** Counts a committed board event (runs finished, spawns, retries, timeouts, gave_up). */
  observeEvent(event: BoardEvent): void;
  /** One answered HTTP request: its route pattern (not its URL), method and status. */
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  /** One request to a forge, by provider and how it ended (ok, not_modified, rate_limited…). */
  countForgeRequest(provider: string, outcome: string): void;
}

const BREAKER_VALUE = { closed: 0, half_open: 1, open: 2 } as const;
const BREAKER_STATES = Object.keys(BREAKER_VALUE) as (keyof typeof BREAKER_VALUE)[];
const OUTCOMES: ReadonlySet<string> = new Set(RUN_OUTCOMES);
/** Seconds: a run of a few seconds to one of hours, a wait of milliseconds to hours. */
const LONG_BUCKETS = [0.01, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 14_400];

const MISNAMED_GAUGES = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** Labels are bounded: statuses, outcomes, profile and platform names from config, never ids. */
export function createMetrics(src: MetricSources): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // prom-client also offers three gauges under a counter's _total suffix, which promtool (and
  // Prometheus' naming rules) reject; the same values stand without the suffix.
  for (const name of MISNAMED_GAUGES) registry.removeSingleMetric(name);
  /** A gauge whose labelled values are read from `read()` at scrape time. */
  const gauge = (
    name: string,
    help: string,
    label: string,
    read: () => Record<string, number> | Promise<Record<string, number>>,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: [label],
      registers: [registry],
      async collect() {
        const values = await read();
        this.reset();
        for (const [key, value] of Object.entries(values)) this.set({ [label]: key }, value);
      },
    });
  const perPlatform = (value: (p: PlatformView) => number) => () =>
    Object.fromEntries(src.platforms().map((p) => [p.name, value(p)]));
  gauge('gatehouse_tasks', 'Tasks by status', 'status', () => src.taskCounts());
  gauge(
    'gatehouse_runs',
    'Finished runs kept on the board, by outcome (shrinks with retention; rate() the _total counter instead)',
    'outcome',
    () => src.runOutcomes(),
  );
  gauge('gatehouse_workers', 'Live workers by profile', 'profile', () => src.workersByProfile());
  gauge(
    'gatehouse_workspaces',
    "This host's workspaces by state (as last looked at)",
    'state',
    () => src.workspaces().count,
  );
  gauge(
    'gatehouse_workspace_bytes',
    "Bytes of this host's workspaces by state",
    'state',
    () => src.workspaces().bytes,
  );
  gauge(
    'gatehouse_platform_breaker_state',
    'Circuit breaker per platform: 0 closed, 1 half-open, 2 open',
    'platform',
    perPlatform((p) => BREAKER_VALUE[p.breaker.state]),
  );
  new Gauge({
    name: 'gatehouse_platform_breaker',
    help: 'Circuit breaker per platform: 1 for its current state, 0 for the others',
    labelNames: ['platform', 'state'],
    registers: [registry],
    collect() {
      this.reset();
      for (const p of src.platforms())
        for (const state of BREAKER_STATES)
          this.set({ platform: p.name, state }, p.breaker.state === state ? 1 : 0);
    },
  });
  /** A counter kept by the platform (persisted, so it never goes back), read at scrape time. */
  const platformCounter = (name: string, help: string, value: (p: PlatformView) => number) =>
    new Counter({
      name,
      help,
      labelNames: ['platform'],
      registers: [registry],
      collect() {
        this.reset();
        for (const p of src.platforms()) this.inc({ platform: p.name }, value(p));
      },
    });
  platformCounter(
    'gatehouse_platform_messages_sent_total',
    'Messages sent',
    (p) => p.counters.sent,
  );
  platformCounter(
    'gatehouse_platform_messages_failed_total',
    'Sends that failed (refused, unreachable, breaker open)',
    (p) => p.counters.sendFailures,
  );
  platformCounter(
    'gatehouse_platform_messages_received_total',
    'Inbound messages received',
    (p) => p.counters.received,
  );
  new Gauge({
    name: 'gatehouse_build_info',
    help: 'The running version (always 1)',
    labelNames: ['version'],
    registers: [registry],
    collect() {
      this.set({ version: VERSION }, 1);
    },
  });
  gauge(
    'gatehouse_platform_connected',
    '1 while the platform is connected',
    'platform',
    perPlatform((p) => (p.state === 'connected' ? 1 : 0)),
  );
  /** One series per live host, by its configured name (dead hosts are only counted). */
  const perHost = (name: string, help: string, value: (h: Host) => number) =>
    gauge(name, help, 'host', async () =>
      Object.fromEntries(
        (await src.hosts()).filter((h) => h.state !== 'dead').map((h) => [h.name, value(h)]),
      ),
    );
  perHost(
    'gatehouse_host_lease_expiry_timestamp_seconds',
    "When each live host's lease runs out, by the database's clock",
    (h) => h.leaseExpiresAt / 1000,
  );
  perHost(
    'gatehouse_host_running',
    'Workers each live host ran at its last renewal',
    (h) => h.running,
  );
  perHost('gatehouse_host_capacity', "Each live host's workers.maxConcurrent", (h) => h.capacity);
  gauge('gatehouse_hosts', 'Hosts of the board by state', 'state', async () => {
    const counts: Record<string, number> = Object.fromEntries(HOST_STATES.map((s) => [s, 0]));
    for (const h of await src.hosts()) counts[h.state]!++;
    return counts;
  });
  new Gauge({
    name: 'gatehouse_notification_backlog',
    help: 'Notification streams with messages waiting to be sent',
    registers: [registry],
    async collect() {
      this.set(await src.notificationBacklog());
    },
  });
  const tick = new Histogram({
    name: 'gatehouse_dispatcher_tick_seconds',
    help: 'Duration of the dispatcher tick',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [registry],
  });
  const pruned = new Counter({
    name: 'gatehouse_pruned_total',
    help: 'What retention removed: run folders, events, inbound delivery ids, idempotency keys',
    labelNames: ['what'],
    registers: [registry],
  });
  const runsFinished = new Counter({
    name: 'gatehouse_runs_finished_total',
    help: 'Runs finished since start, by outcome',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of RUN_OUTCOMES) runsFinished.inc({ outcome }, 0);
  const count = (name: string, help: string) => new Counter({ name, help, registers: [registry] });
  const spawns = count('gatehouse_spawns_total', 'Worker processes started');
  const retries = count('gatehouse_retries_total', 'Runs started again after a counted failure');
  const timeouts = count('gatehouse_timeouts_total', 'Runs ended for passing their max runtime');
  const gaveUp = count('gatehouse_gave_up_total', 'Tasks blocked by the failure breaker');
  const hostsDead = count(
    'gatehouse_hosts_declared_dead_total',
    'Hosts this daemon declared dead (their lease ran out), taking over their runs',
  );
  const agentTokens = new Counter({
    name: 'gatehouse_agent_tokens_total',
    help: 'Tokens agent runs reported, by profile and kind (input, output, cached)',
    labelNames: ['profile', 'kind'],
    registers: [registry],
  });
  const agentCost = new Counter({
    name: 'gatehouse_agent_cost_usd_total',
    help: 'Cost in US dollars agent runs reported (kinds that print one), by profile',
    labelNames: ['profile'],
    registers: [registry],
  });
  const runDuration = new Histogram({
    name: 'gatehouse_run_duration_seconds',
    help: 'From a run’s start to its end, by outcome',
    labelNames: ['outcome'],
    buckets: LONG_BUCKETS,
    registers: [registry],
  });
  const readyWait = new Histogram({
    name: 'gatehouse_ready_wait_seconds',
    help: 'How long a task waited since it was last changed (made ready) before it was claimed',
    buckets: LONG_BUCKETS,
    registers: [registry],
  });
  const requests = new Histogram({
    name: 'gatehouse_http_request_duration_seconds',
    help: 'HTTP requests answered, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers: [registry],
  });
  new Gauge({
    name: 'gatehouse_profile_spend_today',
    help: 'What each profile’s runs spent since 00:00 UTC, on every host together: usd, or input + output tokens',
    labelNames: ['profile', 'unit'],
    registers: [registry],
    async collect() {
      const spend = await src.dailySpend();
      this.reset();
      for (const [profile, s] of Object.entries(spend)) {
        this.set({ profile, unit: 'usd' }, s.usd);
        this.set({ profile, unit: 'tokens' }, s.tokens);
      }
    },
  });
  gauge('gatehouse_prs', 'Pull requests of tasks followed on their forge, by state', 'state', () =>
    src.pullRequests(),
  );
  const prRounds = new Counter({
    name: 'gatehouse_pr_feedback_rounds_total',
    help: 'Feedback from a pull request sent back to its agent, by source (checks, review)',
    labelNames: ['source'],
    registers: [registry],
  });
  for (const source of ['checks', 'review']) prRounds.inc({ source }, 0);
  const forgeRequests = new Counter({
    name: 'gatehouse_forge_requests_total',
    help: 'Requests to forges, by provider and outcome (not_modified: a 304 to a conditional GET)',
    labelNames: ['provider', 'outcome'],
    registers: [registry],
  });
  const countUsage = (profile: string, usage: AgentUsage) => {
    const tokens = {
      input: usage.inputTokens,
      output: usage.outputTokens,
      cached: usage.cachedTokens,
    };
    for (const [kind, n] of Object.entries(tokens))
      if (n !== null && n > 0) agentTokens.inc({ profile, kind }, n);
    if (usage.costUsd !== null && usage.costUsd > 0) agentCost.inc({ profile }, usage.costUsd);
  };
  return {
    registry,
    observeEvent: (event) => {
      if (OUTCOMES.has(event.kind)) {
        runsFinished.inc({ outcome: event.kind });
        const ms = (event.payload as { durationMs?: number | null }).durationMs;
        if (typeof ms === 'number') runDuration.observe({ outcome: event.kind }, ms / 1000);
        const agent = (event.payload as RunEndPayload).agent;
        if (agent?.usage) countUsage(agent.profile, agent.usage);
      }
      if (event.kind === 'spawned') spawns.inc();
      else if (event.kind === 'timed_out') timeouts.inc();
      else if (event.kind === 'gave_up') gaveUp.inc();
      else if (event.kind === 'host_dead') hostsDead.inc();
      else if (event.kind === 'pr_feedback') prRounds.inc({ source: event.payload.source });
      else if (event.kind === 'claimed') {
        if (event.payload.retry) retries.inc();
        if (event.payload.waitedMs !== undefined) readyWait.observe(event.payload.waitedMs / 1000);
      }
    },
    observeRequest: (route, method, status, seconds) =>
      requests.observe({ route, method, status: String(status) }, seconds),
    observeTick: (ms) => tick.observe(ms / 1000),
    countForgeRequest: (provider, outcome) => forgeRequests.inc({ provider, outcome }),
    countPruned: (done) => {
      for (const [what, n] of Object.entries(done)) pruned.inc({ what }, n);
    },
  };
}
