// Live: the event socket, and the refresh a burst of events comes to.
import { call, setConn, showError } from './api';
import { refreshBoard } from './board';
import { refreshDetail } from './detail';
import { refreshChart, refreshHosts, refreshPlatforms } from './panels';
import { markAll } from './refresh';
import { COLUMNS, MOVES, state } from './state';

/** Marks what an event changed; a burst of events becomes one refresh of just that. */
export function noteEvent(event) {
  if (event.taskId === null) state.dirty.platforms = true;
  else {
    // A task is created into the status its event says; unblocked, into its new one.
    const moves =
      event.kind === 'created'
        ? [event.payload.status]
        : event.kind === 'unblocked'
          ? ['blocked', event.payload.status]
          : event.kind === 'completed'
            ? [
                'running',
                // In review, or blocked on the question its agent asked, or done.
                event.payload.review ? 'review' : event.payload.question ? 'blocked' : 'done',
              ]
            : (MOVES[event.kind] ?? COLUMNS);
    for (const status of moves) state.dirty.columns.add(status);
    if (moves.length > 0) state.dirty.counts = true;
    if (!(event.kind in MOVES) || event.kind === 'completed') state.dirty.chart = true;
  }
  if (event.taskId !== null && event.taskId === state.route.taskId) state.dirty.detail = true;
}

export function scheduleRefresh() {
  if (state.needToken) return;
  clearTimeout(state.refreshTimer);
  // Quiet for 150 ms, or at most 1 s after the first change: a long burst still shows.
  const now = Date.now();
  if (!state.refreshTimer) state.firstDirtyAt = now;
  const wait = Math.max(0, Math.min(150, state.firstDirtyAt + 1000 - now));
  state.refreshTimer = setTimeout(() => {
    state.refreshTimer = undefined;
    const { columns, counts, platforms, detail, chart } = state.dirty;
    state.dirty = {
      columns: new Set(),
      counts: false,
      platforms: false,
      detail: false,
      chart: false,
    };
    const board = state.route.view === 'board' && (columns.size > 0 || counts);
    Promise.all([
      board ? refreshBoard(COLUMNS.filter((s) => columns.has(s))) : null,
      platforms ? refreshPlatforms() : null,
      platforms ? refreshHosts() : null,
      detail ? refreshDetail() : null,
      chart ? refreshChart() : null,
    ])
      .then(() => showError(null))
      .catch(showError);
  }, wait);
}

export function connect() {
  clearTimeout(state.reconnectTimer);
  state.reconnectTimer = undefined;
  if (state.needToken) return;
  const params = new URLSearchParams();
  if (state.lastId !== null) params.set('after', String(state.lastId));
  if (state.token) params.set('token', state.token);
  const ws = new WebSocket(
    `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/events/stream?${params}`,
  );
  state.ws = ws;
  let opened = false;
  ws.onopen = () => {
    opened = true;
    state.wasLive = true;
    setConn('live', 'live');
    state.retry = 500;
    markAll();
  };
  ws.onmessage = (msg) => {
    if (state.ws !== ws) return;
    const event = JSON.parse(msg.data);
    state.lastId = event.id;
    noteEvent(event);
    scheduleRefresh();
  };
  ws.onclose = () => {
    if (state.ws !== ws) return;
    // Lost after it was live: say so. Before it ever opened, it is still connecting.
    if (state.wasLive && !state.needToken) setConn('reconnecting…', 'down');
    // A socket refused before it opened may be a 401 (browsers do not show the status):
    // ask the API, which says so, instead of retrying forever.
    // If the API answers, the socket was refused for its after: the board is not the one
    // this page saw (restored from a backup, a new data dir). Resume from now; the open
    // refreshes everything.
    const probe = opened
      ? Promise.resolve()
      : call('GET', '/tasks/counts').then(() => {
          state.lastId = null;
        });
    void probe
      .catch(() => undefined)
      .then(() => {
        if (state.needToken || state.ws !== ws) return;
        state.reconnectTimer = setTimeout(connect, state.retry);
        state.retry = Math.min(state.retry * 2, 5000);
      });
  };
}
