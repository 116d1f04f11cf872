// A platform's connection as a state machine (src/platforms/connection.ts): each happening's
// move, the states where nothing connects, and the delay before the next connect.
import { describe, expect, it } from 'vitest';
import {
  CONNECTION_MOVES,
  MAX_BACKOFF_MS,
  halts,
  nextState,
  retryDelay,
  type PlatformState,
} from '../../src/platforms/connection.js';

const STATES = Object.keys(CONNECTION_MOVES) as PlatformState[];
const retry = (over: Partial<Parameters<typeof retryDelay>[0]>) =>
  retryDelay({
    attempts: 1,
    resetTimeoutMs: 30_000,
    untilProbeMs: 0,
    retryAfterMs: 0,
    random: 0.5,
    ...over,
  });

describe('a platform connection', () => {
  it('connects, fails over to retrying, is refused for good, and waits for the operator when paused or failed', () => {
    expect(nextState('connecting', 'connected')).toBe('connected');
    expect(nextState('connected', 'failed')).toBe('retrying');
    expect(nextState('retrying', 'connected')).toBe('connected');
    expect(nextState('retrying', 'refused')).toBe('failed');
    expect(nextState('failed', 'connected')).toBeNull();
    expect(nextState('paused', 'failed')).toBeNull();
    expect(nextState('paused', 'reconnect')).toBe('connecting');
    expect(nextState('failed', 'reconnect')).toBe('connecting');
  });

  it('hands over to another host and back, and leaves a paused or failed platform as the operator left it', () => {
    for (const live of ['connecting', 'connected', 'retrying'] as const)
      expect(nextState(live, 'standby')).toBe('standby');
    expect(nextState('paused', 'standby')).toBeNull();
    expect(nextState('failed', 'standby')).toBeNull();
    expect(nextState('standby', 'take')).toBe('connecting');
    expect(nextState('standby', 'connected')).toBeNull();
  });

  it('keeps a disabled platform disabled whatever happens', () => {
    for (const event of [
      'pause',
      'reconnect',
      'standby',
      'take',
      'connected',
      'failed',
      'refused',
    ] as const)
      expect(nextState('disabled', event)).toBeNull();
  });

  it('connects in no state that halts, and only from a live one', () => {
    expect(STATES.filter(halts).sort()).toEqual(['disabled', 'failed', 'paused', 'standby']);
  });

  it('doubles its wait from a second up to a minute, spread ±20 %, and never before the breaker or the platform allows', () => {
    expect(retry({ attempts: 1, random: 0.5 })).toBe(1000);
    expect(retry({ attempts: 3, random: 0.5 })).toBe(4000);
    expect(retry({ attempts: 3, random: 0 })).toBe(3200);
    expect(retry({ attempts: 3, random: 0.999 })).toBeCloseTo(4798.4, 5);
    expect(retry({ attempts: 30, random: 0.5 })).toBe(MAX_BACKOFF_MS);
    // A breaker whose reset is shorter than a second starts there.
    expect(retry({ attempts: 1, resetTimeoutMs: 200 })).toBe(200);
    expect(retry({ untilProbeMs: 25_000 })).toBe(25_010);
    expect(retry({ retryAfterMs: 90_000 })).toBe(90_000);
  });
});
