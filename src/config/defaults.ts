// Built-in defaults: what `npm start` runs with when there is no config file.
import { fileURLToPath } from 'node:url';
import type { BreakerOptions, RawConfig } from './schema.js';

/**
 * The package's own folder, so the demo worker is found from any working directory. Every form
 * of this module sits two folders down: src/config, dist/config and the bundle in dist/bundle.
 */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export const DEFAULT_BREAKER: BreakerOptions = {
  timeoutMs: 10_000,
  errorThresholdPercentage: 50,
  resetTimeoutMs: 30_000,
  volumeThreshold: 3,
};

export function defaultConfig(): RawConfig {
  return {
    dataDir: '.gatehouse',
    store: { kind: 'sqlite' },
    server: {
      host: '127.0.0.1',
      port: 8787,
      bodyLimitBytes: 1_048_576,
      requestTimeoutSeconds: 30,
      maxConnections: 1024,
      allowedHosts: [],
    },
    log: { level: 'info' },
    api: { token: null, idempotencyHours: 24 },
    replace: { timeoutSeconds: 10, killTimeoutSeconds: 5 },
    shutdown: { timeoutSeconds: 10, workers: 'leave' },
    retention: { runDays: 30, eventDays: null },
    cluster: { hostName: null, leaseSeconds: 30, renewSeconds: 5, reclaimGraceSeconds: 20 },
    crashLoop: { maxStarts: 5, windowSeconds: 120, maxBackoffSeconds: 300 },
    workers: {
      defaultProfile: 'demo',
      maxConcurrent: 8,
      failureLimit: 2,
      tickSeconds: 1,
      claimTtlSeconds: 900,
      heartbeatMaxStaleSeconds: 3600,
      killGraceSeconds: 5,
      reclaimDeferSeconds: 120,
      rateLimitCooldownSeconds: 300,
      secretEnv: [],
      profiles: {
        demo: {
          command: [process.execPath, `${PACKAGE_ROOT}examples/workers/demo.mjs`],
          cwd: null,
          env: {},
          maxConcurrent: 2,
          maxRuntimeSeconds: 600,
        },
      },
    },
    platforms: [],
    workspaces: { root: null, repos: {}, keepDays: 14, minFreeBytes: 1024 ** 3 },
    schedules: {},
  };
}
