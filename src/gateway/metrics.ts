// Prometheus metrics (/metrics): read from the board, dispatcher and platforms at scrape time.
import { Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
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
}

const BREAKER_VALUE = { closed: 0, half_open: 1, open: 2 } as const;

/** Labels are bounded: statuses, outcomes, profile and platform names from config, never ids. */
export function createMetrics(src: MetricSources): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const set = (gauge: Gauge<string>, label: string, values: Record<string, number>) => {
    gauge.reset();
    for (const [key, value] of Object.entries(values)) gauge.set({ [label]: key }, value);
  };
  new Gauge({
    name: 'gatehouse_tasks',
    help: 'Tasks by status',
    labelNames: ['status'],
    registers: [registry],
    collect() {
      set(this, 'status', src.taskCounts());
    },
  });
  new Gauge({
    name: 'gatehouse_runs',
    help: 'Finished runs by outcome',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      set(this, 'outcome', src.runOutcomes());
    },
  });
  new Gauge({
    name: 'gatehouse_workers',
    help: 'Live workers by profile',
    labelNames: ['profile'],
    registers: [registry],
    collect() {
      set(this, 'profile', src.workersByProfile());
    },
  });
  new Gauge({
    name: 'gatehouse_platform_breaker_state',
    help: 'Circuit breaker per platform: 0 closed, 1 half-open, 2 open',
    labelNames: ['platform'],
    registers: [registry],
    collect() {
      set(
        this,
        'platform',
        Object.fromEntries(src.platforms().map((p) => [p.name, BREAKER_VALUE[p.breaker.state]])),
      );
    },
  });
  new Gauge({
    name: 'gatehouse_platform_connected',
    help: '1 while the platform is connected',
    labelNames: ['platform'],
    registers: [registry],
    collect() {
      set(
        this,
        'platform',
        Object.fromEntries(src.platforms().map((p) => [p.name, p.state === 'connected' ? 1 : 0])),
      );
    },
  });
  new Gauge({
    name: 'gatehouse_notification_backlog',
    help: 'Subscriptions with notifications waiting to be sent',
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
  return { registry, observeTick: (ms) => tick.observe(ms / 1000) };
}
