// The dashboard (public/index.html): its forms and buttons wired, then the first draw.
import { askToken, call, setConn, showError } from './api';
import { drawColumn } from './board';
import { closeTask, refreshDetail } from './detail';
import { $, query } from './dom';
import { connect, scheduleRefresh } from './live';
import { refreshChart, refreshHosts, refreshWorkers } from './panels';
import { markAll, markBoard, whenMarked } from './refresh';
import { applyRoute } from './route';
import { COLUMNS, PAGE, state } from './state';

// A view's mark schedules the refresh of live.ts.
whenMarked(scheduleRefresh);

$('create').addEventListener('submit', async (e) => {
  e.preventDefault();
  const body: Record<string, unknown> = { title: $('title').value };
  if ($('assignee').value.trim()) body.assignee = $('assignee').value.trim();
  if ($('body').value) body.body = $('body').value;
  if ($('priority').value !== '') body.priority = Number($('priority').value);
  const parents = $('parents')
    .value.split(/[\s,]+/)
    .filter(Boolean);
  if (parents.length > 0) body.parents = parents;
  if ($('max-runtime').value !== '') body.maxRuntimeSeconds = Number($('max-runtime').value);
  try {
    await call('POST', '/tasks', body);
    for (const id of ['title', 'body', 'priority', 'parents', 'max-runtime']) $(id).value = '';
    showError(null);
    markBoard();
  } catch (err) {
    showError(err);
  }
});

$('filters').addEventListener('submit', (e) => {
  e.preventDefault();
  const q = query({ q: $('q').value.trim(), assignee: $('assignee-filter').value.trim() });
  const base =
    state.route.view === 'workers'
      ? '#/workers'
      : state.route.taskId
        ? `#/tasks/${state.route.taskId}`
        : '#/';
  location.hash = q ? `${base}?${q}` : base;
});

$('edit-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  // Only what changed: the others are checked again by the server (an assignee no host
  // runs any more would refuse a rename).
  const task = state.editing;
  const wanted = {
    title: $('edit-title').value,
    body: $('edit-body').value,
    assignee: $('edit-assignee').value.trim() || null,
    priority: Number($('edit-priority').value || 0),
    maxRuntimeSeconds:
      $('edit-max-runtime').value === '' ? null : Number($('edit-max-runtime').value),
    maxRetries: $('edit-max-retries').value === '' ? null : Number($('edit-max-retries').value),
  };
  const patch = Object.fromEntries(Object.entries(wanted).filter(([k, v]) => v !== task[k]));
  try {
    await call('PATCH', `/tasks/${state.route.taskId}`, patch);
    $('edit-form').classList.add('hidden');
    showError(null);
    markAll();
  } catch (err) {
    showError(err);
  }
});
$('edit-cancel').addEventListener('click', () => $('edit-form').classList.add('hidden'));

$('comment-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const text = $('comment').value.trim();
  if (!text) return;
  try {
    await call('POST', `/tasks/${state.route.taskId}/comments`, {
      text,
      author: 'dashboard',
    });
    $('comment').value = '';
    showError(null);
    state.dirty.detail = true;
    scheduleRefresh();
  } catch (err) {
    showError(err);
  }
});

$('detail-close').addEventListener('click', closeTask);
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && !$('edit-form').classList.contains('hidden')) {
    $('edit-form').classList.add('hidden');
    $('detail').focus();
  } else if (e.key === 'Escape' && state.route.taskId) closeTask();
  const typing = ['INPUT', 'TEXTAREA'].includes(document.activeElement?.tagName ?? '');
  if (e.key === '/' && !typing) {
    e.preventDefault();
    $('q').focus();
  }
});
for (const w of ['hour', 'day'])
  $(`window-${w}`).addEventListener('click', () => {
    state.window = w;
    refreshChart().catch(showError);
  });

$('token-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const token: string = $('token').value;
  state.token = token;
  sessionStorage.setItem('gatehouse-token', token);
  $('token-form').classList.add('hidden');
  $('forget').classList.remove('hidden');
  state.needToken = false;
  setConn('connecting…', '');
  showError(null);
  const old = state.ws;
  state.ws = null;
  old?.close();
  connect();
  markAll();
  if (state.route.taskId) $('detail').classList.remove('hidden');
});

$('forget').addEventListener('click', () => {
  sessionStorage.removeItem('gatehouse-token');
  state.token = null;
  $('token').value = '';
  $('forget').classList.add('hidden');
  clearTimeout(state.reconnectTimer);
  const old = state.ws;
  state.ws = null;
  state.wasLive = false;
  state.lastId = null;
  old?.close();
  // Nothing the token showed stays on the page, and nothing asked for with it is drawn.
  state.epoch++;
  state.counts = {};
  state.detailEvents = { taskId: null, events: [] };
  for (const status of COLUMNS) {
    state.columns[status] = { tasks: [], next: null, shown: PAGE };
    drawColumn(status);
  }
  for (const id of ['host-list', 'worker-rows', 'chart', 'totals', 'profile-load'])
    $(id).replaceChildren();
  if (state.route.taskId) closeTask();
  askToken('needed');
});

window.addEventListener('hashchange', applyRoute);
// Hosts renew their leases without events.
setInterval(() => {
  if (!state.needToken && !document.hidden) refreshHosts().catch(() => {});
}, 5000);
// The open task's live worker figures and log, and the workers view, change without events.
setInterval(() => {
  if (state.needToken || document.hidden) return;
  if (state.route.taskId) refreshDetail().catch(() => {});
  if (state.route.view === 'workers') refreshWorkers().catch(() => {});
}, 2000);
// The chart's buckets move on with the clock.
setInterval(() => {
  if (!state.needToken && !document.hidden) refreshChart().catch(() => {});
}, 30_000);
/** The start's one-time login link (#login=CODE): exchanged for the API token, once. */
async function login() {
  const code = /^#login=([A-Za-z0-9_-]{1,200})$/.exec(location.hash)?.[1];
  if (!code) return;
  history.replaceState(null, '', location.pathname);
  const res = await fetch('/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  }).catch(() => null);
  const body = res?.ok ? await res.json() : null;
  if (typeof body?.token !== 'string') return;
  const token: string = body.token;
  state.token = token;
  sessionStorage.setItem('gatehouse-token', token);
}

void login().finally(() => {
  if (state.token) $('forget').classList.remove('hidden');
  for (const status of COLUMNS) drawColumn(status);
  applyRoute();
  // Ask the API first: with a token set and none given, the form shows before any click.
  markAll();
  connect();
});
