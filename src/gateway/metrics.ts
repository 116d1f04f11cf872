// Prometheus metrics (/metrics): read from the board, dispatcher and platforms at scrape time.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { PlatformView } from '../platforms/supervisor.js';

export interface MetricSources {
  taskCounts(): Record<string, number>;
  runOutcomes(): Record<string, number>;
  workersByProfile(): Record<string, number>;
  platforms(): PlatformView[];
  notificationBacklog(): number;
}

export interface Metrics {
  registry: Registry;
  observeTick(ms: number): void;
  /** Counts what a retention pass removed, by kind (run_folders, events, deliveries). */
  countPruned(done: Record<string, number>): void;
}

const BREAKER_VALUE = { closed: 0, half_open: 1, open: 2 } as const;

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
  const gauge = (name: string, help: string, label: string, read: () => Record<string, number>) =>
    new Gauge({
      name,
      help,
      labelNames: [label],
      registers: [registry],
      collect() {
        this.reset();
        for (const [key, value] of Object.entries(read())) this.set({ [label]: key }, value);
      },
    });
  const perPlatform = (value: (p: PlatformView) => number) => () =>
    Object.fromEntries(src.platforms().map((p) => [p.name, value(p)]));
  gauge('gatehouse_tasks', 'Tasks by status', 'status', () => src.taskCounts());
  gauge('gatehouse_runs', 'Finished runs by outcome', 'outcome', () => src.runOutcomes());
  gauge('gatehouse_workers', 'Live workers by profile', 'profile', () => src.workersByProfile());
  gauge(
    'gatehouse_platform_breaker_state',
    'Circuit breaker per platform: 0 closed, 1 half-open, 2 open',
    'platform',
    perPlatform((p) => BREAKER_VALUE[p.breaker.state]),
  );
  gauge(
    'gatehouse_platform_connected',
    '1 while the platform is connected',
    'platform',
    perPlatform((p) => (p.state === 'connected' ? 1 : 0)),
  );
  new Gauge({
    name: 'gatehouse_notification_backlog',
    help: 'Notification streams with messages waiting to be sent',
    registers: [registry],
    collect() {
      this.set(src.notificationBacklog());
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
    help: 'What retention removed: run folders, events, inbound delivery ids',
    labelNames: ['what'],
    registers: [registry],
  });
  return {
    registry,
    observeTick: (ms) => tick.observe(ms / 1000),
    countPruned: (done) => {
      for (const [what, n] of Object.entries(done)) pruned.inc({ what }, n);
    },
  };
}
