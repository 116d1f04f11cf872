// A platform's connection as a state machine (docs/platforms.md): what each happening does to
// its state, and how long it waits before trying to connect again. Pure: the supervisor
// (supervisor.ts) carries the moves out.

export type PlatformState =
  'connecting' | 'connected' | 'retrying' | 'paused' | 'failed' | 'disabled' | 'standby';

/** What happens to a platform's connection. */
export type ConnectionEvent =
  /** The operator pauses it. */
  | 'pause'
  /** The operator resumes it or asks it to reconnect (the breaker reset). */
  | 'reconnect'
  /** Another host of the board holds the platform now. */
  | 'standby'
  /** This host holds it (again). */
  | 'take'
  /** A connect succeeded. */
  | 'connected'
  /** A connect failed, or the connection was lost: tried again after a delay. */
  | 'failed'
  /** The platform refused for good (a revoked token): nothing more is tried. */
  | 'refused';

const LIVE = {
  pause: 'paused',
  reconnect: 'connecting',
  standby: 'standby',
  connected: 'connected',
  failed: 'retrying',
  refused: 'failed',
} as const;

/**
 * Each state's moves; a happening a state has no move for changes nothing. A disabled platform
 * stays disabled whatever happens (only its configuration enables it); one on standby only
 * waits to be taken (the operator's pause and reconnect are refused there, by the supervisor);
 * paused and failed wait for the operator.
 */
export const CONNECTION_MOVES: Readonly<
  Record<PlatformState, Readonly<Partial<Record<ConnectionEvent, PlatformState>>>>
> = {
  connecting: LIVE,
  connected: LIVE,
  retrying: LIVE,
  paused: { pause: 'paused', reconnect: 'connecting' },
  failed: { pause: 'paused', reconnect: 'connecting' },
  disabled: {},
  standby: { take: 'connecting' },
};

/** The state after `event`, or null when it changes nothing. */
export function nextState(state: PlatformState, event: ConnectionEvent): PlatformState | null {
  return CONNECTION_MOVES[state][event] ?? null;
}

/** Nothing connects in these states: what connected meanwhile is closed again. */
export function halts(state: PlatformState): boolean {
  return nextState(state, 'connected') === null;
}

/** The longest wait between two connects. */
export const MAX_BACKOFF_MS = 60_000;

export interface RetryInputs {
  /** Failed connects in a row, this one included (1 or more). */
  attempts: number;
  /** The breaker's reset timeout: the first wait is at most 1 s, and never more than it. */
  resetTimeoutMs: number;
  /** Until the open breaker lets a probe through, or 0. */
  untilProbeMs: number;
  /** What the platform asked for (a 429's Retry-After), or 0. */
  retryAfterMs: number;
  /** A random number in [0, 1): the delay is spread ±20 % so that platforms do not retry together. */
  random: number;
}

/**
 * How long to wait before the next connect: doubling from min(1 s, reset timeout) up to
 * MAX_BACKOFF_MS, spread ±20 %; never before the open breaker would let it through, nor before
 * the platform asked.
 */
export function retryDelay(r: RetryInputs): number {
  const base = Math.min(1000, r.resetTimeoutMs);
  const backoff = Math.min(MAX_BACKOFF_MS, base * 2 ** (r.attempts - 1));
  const spread = backoff * (0.8 + r.random * 0.4);
  return Math.max(spread, r.untilProbeMs + 10, r.retryAfterMs);
}
