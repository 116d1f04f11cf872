// The dashboard's constants and its one state: what the page shows and what it waits for.
export const COLUMNS = ['todo', 'ready', 'running', 'review', 'blocked', 'done', 'archived'];
/** Cards a column shows at first; "Show more" adds as many again. */
export const PAGE = 25;
/** The most cards one answer brings: a long column is read a page of these at a time. */
export const ANSWER = 200;
/** Outcomes drawn as failures in the chart; the rest but completed are "other". */
export const FAILED = new Set([
  'crashed',
  'protocol_violation',
  'timed_out',
  'stale',
  'spawn_failed',
  'lost',
]);
/** Which columns an event can change (all of them when the kind is not here). */
export const MOVES = {
  created: ['todo', 'ready'],
  promoted: ['todo', 'ready'],
  claimed: ['ready', 'running'],
  spawned: [],
  adopted: [],
  heartbeat: [],
  claim_extended: [],
  commented: [],
  completed: ['running', 'done'],
  approved: ['review', 'done'],
  changes_requested: ['review', 'todo', 'ready'],
  unblocked: ['blocked', 'todo', 'ready'],
  deleted: ['archived'],
};
/** A task, a run, an event, as the API answers them (docs/api.md); read field by field. */
export type Json = any;
export type Timer = number | undefined;

export interface State {
  token: string | null;
  lastId: number | null;
  ws: WebSocket | null;
  retry: number;
  refreshTimer: Timer;
  firstDirtyAt: number;
  wasLive: boolean;
  needToken: boolean;
  route: { view: string; taskId: string | null; q: string; assignee: string };
  columns: Record<string, { tasks: Json[]; next: string | null; shown: number }>;
  counts: Record<string, number>;
  profiles: { name: string; running: number; maxConcurrent: number; isDefault: boolean }[];
  window: string;
  dirty: {
    columns: Set<string>;
    counts: boolean;
    platforms: boolean;
    detail: boolean;
    chart: boolean;
  };
  started: Record<string, number>;
  drawn: Record<string, number>;
  epoch: number;
  countsShown: number;
  reconnectTimer: Timer;
  editing: Json;
  detailEvents: { taskId: string | null; events: Json[] };
  transcript: {
    runId: string | null;
    kind: string | null;
    next: number;
    ws: WebSocket | null;
    ended: boolean;
    retry: Timer;
    retryMs: number;
  };
}

export const state: State = {
  token: sessionStorage.getItem('gatehouse-token'),
  lastId: null,
  ws: null,
  retry: 500,
  refreshTimer: undefined,
  firstDirtyAt: 0,
  /** The socket was open once: a close now is a lost connection, not a first attempt. */
  wasLive: false,
  /** The API answered 401: nothing is fetched or connected until a token is given. */
  needToken: false,
  /** What the URL asks for: the view, the open task, the filters. */
  route: { view: 'board', taskId: null, q: '', assignee: '' },
  /** Each column's cards, its next page's cursor and how many it shows. */
  columns: Object.fromEntries(COLUMNS.map((s) => [s, { tasks: [], next: null, shown: PAGE }])),
  counts: {},
  /** This host's profiles (running, cap), for the "at its cap" reason on ready cards. */
  profiles: [],
  window: 'hour',
  /** What changed since the last refresh, so a burst of events refetches only that. */
  dirty: {
    columns: new Set(COLUMNS),
    counts: true,
    platforms: true,
    detail: true,
    chart: true,
  },
  /** Requests started, per part (and per column): only the newest one's answer is drawn. */
  started: {},
  /** The newest request drawn, per part: an answer older than it is not drawn. */
  drawn: {},
  /** Bumped when the token is forgotten: answers to requests from before are dropped. */
  epoch: 0,
  /** The newest counts request drawn (its answer may come after a newer column's). */
  countsShown: 0,
  reconnectTimer: undefined,
  /** The task the edit form opened with: only what differs from it is sent. */
  editing: null,
  /** The open task's events read so far (read on from the last one). */
  detailEvents: { taskId: null, events: [] },
  /** The open task's latest run's transcript: pushed over its socket, from `next` on. */
  transcript: {
    runId: null,
    kind: null,
    next: 0,
    ws: null,
    ended: false,
    retry: undefined,
    retryMs: 1000,
  },
};
