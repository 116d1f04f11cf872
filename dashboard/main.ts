'use strict';
const COLUMNS = ['todo', 'ready', 'running', 'review', 'blocked', 'done', 'archived'];
/** Cards a column shows at first; "Show more" adds as many again. */
const PAGE = 25;
/** The most cards one answer brings: a long column is read a page of these at a time. */
const ANSWER = 200;
/** Outcomes drawn as failures in the chart; the rest but completed are "other". */
const FAILED = new Set([
  'crashed',
  'protocol_violation',
  'timed_out',
  'stale',
  'spawn_failed',
  'lost',
]);
/** Which columns an event can change (all of them when the kind is not here). */
const MOVES = {
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
type Json = any;
type Timer = number | undefined;

interface State {
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

const state: State = {
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
/** An element of the page by id (the page's own: it is there). */
const $ = (id: string): any => document.getElementById(id);

/**
 * Fetches for one part of the page, and says whether its answer is to be drawn: two
 * refreshes' answers can cross on a loaded machine, and an older one must never be drawn
 * over a newer one (nor anything asked for before the token was forgotten).
 */
async function fetchLatest(part, fetcher) {
  const mine = (state.started[part] = (state.started[part] ?? 0) + 1);
  const epoch = state.epoch;
  const data = await fetcher();
  const newest = epoch === state.epoch && mine > (state.drawn[part] ?? 0);
  if (newest) state.drawn[part] = mine;
  return { data, newest, mine };
}

/** Counted on the page, drawn or not, so a test can tell an answer was taken in. */
function taken(part) {
  const answers = document.documentElement.dataset;
  answers[part] = String(Number(answers[part] ?? 0) + 1);
}

function el(tag: string, attrs: Record<string, any> = {}, ...children: any[]): HTMLElement {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v);
  }
  for (const c of children)
    if (c !== null && c !== undefined && c !== '')
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function query(params: Record<string, string | number | null | undefined>) {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null && v !== '') out.set(k, String(v));
  return out.toString();
}

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const headers: Record<string, string> = {};
  const sentWith = state.token;
  if (sentWith) headers.authorization = `Bearer ${sentWith}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // Refused with a token the operator has since replaced: ask again with the new one,
  // instead of asking for a token that was just given.
  if (res.status === 401 && state.token !== sentWith) return call(method, path, body);
  if (res.status === 401) {
    askToken(sentWith ? 'refused' : 'needed');
    throw new Error(sentWith ? 'that API token was refused' : 'an API token is needed');
  }
  const text = await res.text();
  const data = text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
  if (!res.ok) throw new Error(data?.error?.message ?? `HTTP ${res.status}`);
  return data;
}

function showError(err) {
  // Asking for the token is not an error: the form says what is going on.
  $('error').textContent = err && !state.needToken ? String(err.message ?? err) : '';
}

function setConn(text, kind) {
  $('conn').textContent = text;
  $('conn').className = kind;
}

/**
 * Shows the token form, saying why. Every request refused while no token works lands
 * here, some long after the form has shown: only the first showing takes the focus, and
 * only from nothing (never from a field the operator is typing in).
 */
function askToken(why) {
  state.needToken = true;
  setConn('token needed', 'auth');
  $('token-why').textContent =
    why === 'refused'
      ? 'That API token was refused: give the one in this gatehouse’s api.token (or GATEHOUSE_TOKEN).'
      : 'This gatehouse asks for its API token (api.token in its config, or GATEHOUSE_TOKEN). It is kept in this tab only.';
  $('platform-list').textContent = 'shown once the API token is given';
  // The form comes first: an open task (full screen on a phone) would cover it.
  $('detail').classList.add('hidden');
  const form = $('token-form');
  if (!form.classList.contains('hidden')) return;
  form.classList.remove('hidden');
  const active = document.activeElement;
  if (!active || active === document.body) $('token').focus();
}

function age(ms) {
  const s = Math.max(0, Math.floor((Date.now() - ms) / 1000));
  return s < 60
    ? `${s}s`
    : s < 3600
      ? `${Math.floor(s / 60)}m`
      : s < 86400
        ? `${Math.floor(s / 3600)}h`
        : `${Math.floor(s / 86400)}d`;
}

function duration(ms) {
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)}s` : age(Date.now() - ms);
}

function mib(bytes) {
  return bytes === null || bytes === undefined ? '' : `${Math.round(bytes / 1048576)} MiB`;
}

function taskLink(id, text = id) {
  return el('a', { href: `#/tasks/${id}${filterSuffix(state.route.view)}` }, text);
}

/** The filters (and, over the workers view, that view) as the URL keeps them. */
function filterSuffix(view = 'board') {
  const q = query({
    view: view === 'workers' ? 'workers' : '',
    q: state.route.q,
    assignee: state.route.assignee,
  });
  return q ? `?${q}` : '';
}

function act(id: string, action: string, body?: unknown) {
  return async () => {
    try {
      await call('POST', `/tasks/${id}/${action}`, body);
      showError(null);
      markAll();
    } catch (err) {
      showError(err);
    }
  };
}

function actionButton(label, title, onclick) {
  return el(
    'button',
    { class: 'secondary', type: 'button', onclick, 'aria-label': `${label} ${title}` },
    label,
  );
}

/** Why a todo or ready task is not running yet, when the page can tell. */
function reason(task) {
  if (task.awaiting === 'approval')
    return el(
      'div',
      { class: 'reason badge', 'data-awaiting': 'approval' },
      `needs approval (revision ${task.approval.revision})`,
    );
  if (task.status === 'todo' && task.parents.length > 0)
    return el(
      'div',
      { class: 'reason' },
      'waiting on parent ',
      ...task.parents.flatMap((p, i) => [i ? ', ' : '', taskLink(p)]),
    );
  if (
    (task.status === 'todo' || task.status === 'ready') &&
    task.notBefore &&
    task.notBefore > Date.now()
  )
    return el(
      'div',
      { class: 'reason' },
      `not before ${new Date(task.notBefore).toLocaleTimeString()}`,
    );
  if (task.status === 'ready') {
    const profile = state.profiles.find((p) =>
      task.assignee === null ? p.isDefault : p.name === task.assignee,
    );
    if (profile && profile.maxConcurrent !== null && profile.running >= profile.maxConcurrent)
      return el(
        'div',
        { class: 'reason' },
        `profile ${profile.name} at its cap (${profile.running}/${profile.maxConcurrent})`,
      );
  }
  return null;
}

/** The task's pull request as a link to the forge (an http(s) URL only). */
function prLink(pr) {
  const safe = /^https?:\/\//.test(pr.url);
  return el(
    'a',
    safe ? { href: pr.url, rel: 'noopener noreferrer', target: '_blank' } : {},
    `PR #${pr.number}`,
  );
}

function prText(pr) {
  const parts = [pr.state];
  if (pr.state === 'open') parts.push(`checks ${pr.checks}`);
  if (pr.review !== 'none') parts.push(pr.review.replace('_', ' '));
  if (pr.rounds > 0) parts.push(`${pr.rounds} round${pr.rounds === 1 ? '' : 's'}`);
  return parts.join(' · ');
}

function card(task) {
  const actions = el('div', { class: 'actions' });
  if (task.status !== 'archived')
    actions.append(actionButton('Archive', task.title, act(task.id, 'archive')));
  if (task.status === 'running')
    actions.append(actionButton('Reclaim', task.title, act(task.id, 'reclaim', {})));
  if (task.status === 'blocked')
    actions.append(actionButton('Unblock', task.title, act(task.id, 'unblock')));
  // A task whose PR is open waits for the forge: it is merged there, not approved here;
  // one given to attempts waits for a pick.
  if (task.status === 'review' && task.pr?.state !== 'open' && !awaitsPick(task))
    actions.append(actionButton('Approve', task.title, act(task.id, 'approve', {})));
  if (task.awaiting === 'approval') actions.append(approveRevision(task));
  if (task.blockKind === 'question')
    actions.append(actionButton('Answer', task.title, answerPrompt(task)));
  const meta = [task.id];
  if (task.assignee) meta.push(task.assignee);
  if (task.status === 'done' && task.completedAt) {
    meta.push(`done ${age(task.completedAt)} ago`);
    if (task.startedAt) meta.push(`took ${duration(task.completedAt - task.startedAt)}`);
  } else if (task.status === 'running' && task.startedAt)
    meta.push(`running ${age(task.startedAt)}`);
  else meta.push(`${age(task.createdAt)} old`);
  if (task.consecutiveFailures > 0)
    meta.push(`${task.consecutiveFailures} failure${task.consecutiveFailures === 1 ? '' : 's'}`);
  return el(
    'article',
    { class: 'card', 'data-task-id': task.id, 'data-status': task.status },
    el('h3', {}, taskLink(task.id, task.title)),
    el('div', { class: 'meta' }, meta.join(' · ')),
    task.pr ? el('div', { class: 'meta pr' }, prLink(task.pr), ` ${prText(task.pr)}`) : null,
    task.blockReason ? el('div', { class: 'meta' }, task.blockReason) : null,
    task.status === 'running' && task.progress ? progressLine(task.progress) : null,
    reason(task),
    actions,
  );
}

/** A task's attempts as a group, compared side by side, each with its Pick (docs/attempts.md). */
function drawAttempts(task, attempts) {
  $('attempts').classList.toggle('hidden', !attempts);
  if (!attempts) return;
  const picking = task.status === 'review' && task.attempts.picked === null;
  $('attempt-rows').replaceChildren(
    ...attempts.map((a) =>
      el(
        'tr',
        { 'data-attempt': a.id, class: a.id === task.attempts.picked ? 'picked' : '' },
        el('td', {}, el('a', { href: `#/tasks/${a.id}` }, a.id)),
        el('td', {}, [a.assignee ?? '(default)', a.model].filter(Boolean).join(' · ')),
        el('td', {}, a.status),
        el(
          'td',
          {},
          a.judge
            ? a.judge.exitCode === 0
              ? 'passed'
              : `failed (${a.judge.exitCode ?? 'killed'})`
            : '',
        ),
        el(
          'td',
          {},
          a.evidence
            ? `${a.evidence.filesChanged} files +${a.evidence.insertions} -${a.evidence.deletions}`
            : '',
        ),
        el('td', {}, `${a.tokens.toLocaleString('en')} · $${a.costUsd.toFixed(2)}`),
        el('td', {}, a.summary ?? ''),
        el(
          'td',
          {},
          picking ? actionButton('Pick', a.id, act(task.id, `attempts/${a.id}/pick`)) : '',
        ),
      ),
    ),
  );
}

/** Its attempts ended and none is picked yet: approving or sending it back is refused. */
function awaitsPick(task) {
  return Boolean(task.attempts) && task.attempts.picked === null;
}

/** Approves a task's first run: the revision shown is the one approved. */
function approveRevision(task) {
  return actionButton(
    'Approve',
    task.title,
    act(task.id, 'approve', { revision: task.approval.revision }),
  );
}

/** The progress its agent last reported. */
function progressLine(progress) {
  const percent = progress.percent === null ? '' : `${Math.round(progress.percent)}% · `;
  return el('div', { class: 'meta progress' }, `${percent}${progress.note}`);
}

/** Asks for the answer to the task's question, and sends it. */
function answerPrompt(task) {
  return () => {
    const text = prompt(`${task.question?.text ?? 'Its agent asks'}\n\nYour answer:`);
    if (text && text.trim()) return act(task.id, 'answer', { text })();
  };
}

const BULK = {
  blocked: { label: 'Unblock all', action: 'unblock', done: 'Unblocked' },
  done: { label: 'Archive all', action: 'archive', done: 'Archived' },
};

function drawColumn(status) {
  const col = state.columns[status];
  const count = state.counts[status] ?? col.tasks.length;
  const bulk = BULK[status];
  const section = el(
    'section',
    { class: 'column', 'data-status': status, 'aria-label': status },
    el(
      'div',
      { class: 'column-head' },
      el('h2', {}, `${status} (${count})`),
      bulk && count > 0
        ? el(
            'button',
            {
              type: 'button',
              class: 'secondary',
              onclick: () => runBulk(status),
              'aria-label': `${bulk.label} ${status}`,
            },
            bulk.label,
          )
        : null,
    ),
    ...col.tasks.map(card),
    col.next
      ? el(
          'button',
          {
            type: 'button',
            class: 'secondary more-tasks',
            onclick: () => showMore(status),
            'aria-label': `Show more ${status}`,
          },
          'Show more',
        )
      : null,
  );
  const old = document.querySelector(`.column[data-status="${status}"]`);
  if (old) old.replaceWith(section);
  else $('board').append(section);
}

function listPath(status, limit, cursor) {
  return `/tasks?${query({ limit, order: 'desc', status, q: state.route.q, assignee: state.route.assignee, cursor })}`;
}

/**
 * One column's first cards again (as many as it shows, read at most ANSWER at a time by
 * their cursors), drawn only if still the newest.
 */
async function refreshColumn(status) {
  const col = state.columns[status];
  col.shown = Math.min(1000, Math.max(PAGE, col.shown));
  const { data, newest } = await fetchLatest(`column-${status}`, async () => {
    const tasks: Json[] = [];
    let cursor;
    do {
      const limit = Math.min(ANSWER, col.shown - tasks.length);
      const page = await call('GET', listPath(status, limit, cursor));
      tasks.push(...page.tasks);
      cursor = page.nextCursor ?? undefined;
    } while (cursor && tasks.length < col.shown);
    return { tasks, nextCursor: cursor ?? null };
  });
  if (!newest) return;
  col.tasks = data.tasks;
  col.next = data.nextCursor;
  drawColumn(status);
}

/** One page more in the column: read with the rest, in order with its other refreshes. */
async function showMore(status) {
  state.columns[status].shown += PAGE;
  try {
    await refreshColumn(status);
    showError(null);
  } catch (err) {
    showError(err);
  }
}

/** The counts the filters pick; drawn by the caller once its cards are in. */
async function fetchCounts() {
  const { data, newest, mine } = await fetchLatest('counts', () =>
    call('GET', `/tasks/counts?${query({ q: state.route.q, assignee: state.route.assignee })}`),
  );
  return newest ? { counts: data.counts, mine } : null;
}

function drawCounts(counts) {
  const before = state.counts;
  state.counts = counts;
  for (const status of COLUMNS) {
    // A bulk button comes or goes with its column's count: that column is drawn anew.
    if (BULK[status] && (before[status] ?? 0) > 0 !== counts[status] > 0) drawColumn(status);
    const h = document.querySelector(`.column[data-status="${status}"] h2`);
    if (h) h.textContent = `${status} (${counts[status]})`;
  }
}

/**
 * The dirty columns, the counts and (for ready cards' reasons) the profiles' load; the
 * counts are drawn once the cards are, so a header never counts cards not shown yet.
 */
async function refreshBoard(columns) {
  try {
    const [counts] = await Promise.all([
      fetchCounts(),
      ...columns.map(refreshColumn),
      columns.includes('ready') ? refreshProfiles() : null,
    ]);
    // Drawn after the cards, so a newer refresh may have drawn its counts meanwhile.
    if (counts && counts.mine > state.countsShown) {
      state.countsShown = counts.mine;
      drawCounts(counts.counts);
    }
  } finally {
    taken('board');
  }
}

/** This host's profiles' load (and the live workers): ready cards' reasons follow it. */
async function refreshProfiles() {
  const result = await fetchLatest('workers', () => call('GET', '/workers'));
  if (!result.newest) return result;
  state.profiles = result.data.profiles;
  drawColumn('ready');
  return result;
}

/** Acts on every task of the column that the filters pick, after the operator agrees. */
/**
 * Acts on every task of the column that the filters pick, after the operator agrees to
 * that exact number: the ids are read first (acting while paging would move the pages).
 */
async function runBulk(status) {
  const bulk = BULK[status];
  const filtered = state.route.q || state.route.assignee ? ' (those the filters pick)' : '';
  try {
    const ids: string[] = [];
    let cursor;
    do {
      const page = await call('GET', listPath(status, 1000, cursor));
      ids.push(...page.tasks.map((t) => t.id));
      cursor = page.nextCursor;
    } while (cursor);
    const n = ids.length;
    if (!confirm(`${bulk.label}: ${n} ${status} task${n === 1 ? '' : 's'}${filtered}?`)) return;
    let done = 0;
    const failed: string[] = [];
    for (const id of ids) {
      try {
        await call('POST', `/tasks/${id}/${bulk.action}`);
        done++;
      } catch (err) {
        failed.push(`${id}: ${(err as Error).message}`);
      }
      $('bulk-status').textContent = `${bulk.done} ${done} of ${n}`;
    }
    $('bulk-status').textContent =
      `${bulk.done} ${done} of ${n}` + (failed.length ? `; refused: ${failed.join('; ')}` : '');
    markAll();
  } catch (err) {
    showError(err);
  }
}

/** The board's hosts: live ones first, each with its lease; dead ones in a count. */
async function refreshHosts() {
  const { data, newest } = await fetchLatest('hosts', () => call('GET', '/hosts'));
  taken('hosts');
  if (!newest) return;
  const live = data.hosts.filter((h) => h.state !== 'dead');
  const dead = data.hosts.length - live.length;
  $('host-list').replaceChildren(
    ...live.map((h) =>
      el(
        'div',
        { class: 'platform host', 'data-host': String(h.id) },
        el('strong', {}, `${h.name} (host ${h.id})`),
        ' ',
        el('span', { class: 'platform-state' }, h.state),
        el(
          'div',
          { class: 'meta' },
          `running ${h.running} of ${h.capacity} · lease ends in ${Math.max(0, Math.round((h.leaseExpiresAt - Date.now()) / 1000))} s · v${h.version}`,
        ),
      ),
    ),
    dead > 0 ? el('div', { class: 'meta' }, `${dead} dead (taken over)`) : '',
  );
}

async function refreshPlatforms() {
  const { data, newest } = await fetchLatest('platforms', () => call('GET', '/platform'));
  taken('platforms');
  if (!newest) return;
  const { platforms } = data;
  if (platforms.length === 0) {
    $('platform-list').textContent = 'none configured';
    return;
  }
  $('platform-list').replaceChildren(
    ...platforms.map((p) => {
      const b = p.breaker;
      const control = (action) =>
        el(
          'button',
          {
            class: 'secondary',
            type: 'button',
            'aria-label': `${action} ${p.name}`,
            onclick: async () => {
              try {
                await call('POST', `/platform/${p.name}/${action}`);
                showError(null);
                void refreshPlatforms();
              } catch (err) {
                showError(err);
              }
            },
          },
          action[0].toUpperCase() + action.slice(1),
        );
      return el(
        'div',
        { class: 'platform', 'data-platform': p.name },
        el('strong', {}, `${p.name} (${p.type})`),
        ' ',
        // A connected platform whose breaker is not closed is not healthy: say so.
        p.state === 'connected' && b.state !== 'closed'
          ? el('span', { class: 'platform-state degraded' }, 'degraded')
          : el('span', { class: 'platform-state' }, p.state),
        el(
          'div',
          { class: 'meta' },
          'breaker: ',
          el('span', { class: `breaker state-${b.state}` }, b.state.replace('_', '-')),
          ` · failures ${b.failures} · rejects ${b.rejects} · timeouts ${b.timeouts}`,
        ),
        b.lastError ? el('div', { class: 'meta last-error' }, `last error: ${b.lastError}`) : '',
        b.nextAttemptAt
          ? el(
              'div',
              { class: 'meta' },
              `next attempt ${new Date(b.nextAttemptAt).toLocaleTimeString()}`,
            )
          : '',
        el('div', { class: 'actions' }, control('pause'), control('resume'), control('reconnect')),
      );
    }),
  );
}

/** Runs finished per bucket, kept by the board (so runs from before the page count too). */
async function refreshChart() {
  const { data, newest } = await fetchLatest('chart', () =>
    call('GET', `/stats/throughput?window=${state.window}`),
  );
  taken('chart');
  if (!newest) return;
  const sums = (outcomes: Record<string, number>) => {
    let ok = 0,
      bad = 0,
      other = 0;
    for (const [outcome, n] of Object.entries(outcomes)) {
      if (outcome === 'completed') ok += n;
      else if (FAILED.has(outcome)) bad += n;
      else other += n;
    }
    return { ok, bad, other };
  };
  const bars = data.buckets.map((b) => ({ at: b.at, ...sums(b.outcomes) }));
  const top = Math.max(1, ...bars.map((b) => b.ok + b.bad + b.other));
  const width = 600 / bars.length;
  const svg = $('chart');
  const ns = 'http://www.w3.org/2000/svg';
  const rect = (x, y, h, fill, label) => {
    const r = document.createElementNS(ns, 'rect');
    for (const [k, v] of Object.entries({
      x,
      y,
      width: Math.max(1, width - 1),
      height: h,
      fill,
    }))
      r.setAttribute(k, String(v));
    const t = document.createElementNS(ns, 'title');
    t.textContent = label;
    r.append(t);
    return r;
  };
  const shapes: SVGElement[] = [];
  bars.forEach((b, i) => {
    const x = i * width;
    const at = new Date(b.at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
    let y = 120;
    for (const [n, fill, what] of [
      [b.ok, '#146c2e', 'completed'],
      [b.bad, '#a50e0e', 'failed'],
      [b.other, '#8a96a3', 'other'],
    ]) {
      if (n === 0) continue;
      const h = (n / top) * 116;
      y -= h;
      shapes.push(rect(x, y, h, fill, `${at}: ${n} ${what}`));
    }
  });
  svg.replaceChildren(...shapes);
  const t = sums(data.totals);
  svg.dataset.completed = String(t.ok);
  svg.dataset.failed = String(t.bad);
  $('totals').replaceChildren(
    `last ${state.window}: `,
    el('span', { class: 'swatch-ok' }, `${t.ok} completed`),
    ' · ',
    el('span', { class: 'swatch-bad' }, `${t.bad} failed`),
    ` · ${t.other} other`,
  );
  $('window-hour').setAttribute('aria-pressed', String(state.window === 'hour'));
  $('window-day').setAttribute('aria-pressed', String(state.window === 'day'));
}

async function refreshWorkers() {
  const { data, newest } = await refreshProfiles();
  taken('workers');
  if (!newest) return;
  const now = Date.now();
  $('profile-load').textContent = data.profiles
    .map(
      (p) =>
        `${p.name}: ${p.running}${p.maxConcurrent === null ? '' : ` of ${p.maxConcurrent}`} running here`,
    )
    .join(' · ');
  $('profile-holds').textContent = (data.holds ?? [])
    .map(
      (h) =>
        `${h.profile} held by a rate limit until ${new Date(h.until).toLocaleTimeString()}: ${h.reason}`,
    )
    .join(' · ');
  $('worker-rows').replaceChildren(
    ...(data.workers.length === 0
      ? [el('tr', {}, el('td', { colspan: '8' }, 'no worker is running'))]
      : data.workers.map((w) =>
          el(
            'tr',
            { 'data-run-id': w.runId },
            el('td', {}, taskLink(w.taskId, w.title || w.taskId)),
            el('td', {}, w.profile),
            el('td', {}, w.host ?? ''),
            el('td', {}, w.pid ?? ''),
            el('td', {}, new Date(w.startedAt).toLocaleTimeString()),
            el('td', {}, duration(now - w.startedAt)),
            el(
              'td',
              {},
              w.cpuPercent !== null
                ? `${Math.round(w.cpuPercent)}%`
                : w.cpuPercentMax !== null
                  ? `${Math.round(w.cpuPercentMax)}% peak`
                  : '',
            ),
            el(
              'td',
              {},
              w.rssBytes !== null
                ? mib(w.rssBytes)
                : w.rssBytesMax !== null
                  ? `${mib(w.rssBytesMax)} peak`
                  : '',
            ),
          ),
        )),
  );
}

function field(name, value) {
  return value === null || value === undefined || value === ''
    ? []
    : [el('dt', {}, name), el('dd', {}, value)];
}

function links(ids) {
  return ids.length === 0
    ? null
    : el('span', {}, ...ids.flatMap((id, i) => [i ? ', ' : '', taskLink(id)]));
}

/** A task's events after `after`, every page of them (the newest included). */
async function eventsAfter(id, after) {
  const out: Json[] = [];
  for (let cursor = after; ;) {
    const { events } = await call('GET', `/tasks/${id}/events?after=${cursor}&limit=1000`);
    out.push(...events);
    if (events.length < 1000) return out;
    cursor = events.at(-1).id;
  }
}

async function refreshDetail() {
  const id = state.route.taskId;
  if (!id) return;
  const known = state.detailEvents.taskId === id ? state.detailEvents.events : [];
  const { data, newest } = await fetchLatest('detail', async () => {
    const task = await call('GET', `/tasks/${id}`);
    const run = task.runs.at(-1);
    const worktree = task.workspace?.kind === 'worktree' && task.workspace.state === 'active';
    const [fresh, log, diff, attempts] = await Promise.all([
      eventsAfter(id, known.at(-1)?.id ?? 0),
      run ? call('GET', `/runs/${run.id}/log?tail=200`).catch((err) => `(${err.message})`) : null,
      worktree ? call('GET', `/tasks/${id}/diff`).catch((err) => `(${err.message})`) : null,
      // Best of N (docs/attempts.md): its attempts side by side.
      task.attempts ? call('GET', `/tasks/${id}/attempts`).then((a) => a.attempts) : null,
    ]);
    return { task, fresh, log, diff, attempts };
  });
  taken('detail');
  if (!newest || state.route.taskId !== id) return;
  const { task, fresh, log, diff, attempts } = data;
  if (state.detailEvents.taskId !== id) state.detailEvents = { taskId: id, events: [] };
  const last = state.detailEvents.events.at(-1)?.id ?? 0;
  state.detailEvents.events.push(...fresh.filter((e) => e.id > last));
  const events = state.detailEvents.events;
  const panel = $('detail');
  panel.dataset.taskId = task.id;
  panel.dataset.status = task.status;
  $('detail-title').textContent = task.title;
  $('detail-meta').textContent =
    `${task.id} · ${task.status}${task.worker ? ` · pid ${task.worker.pid}, cpu ${Math.round(task.worker.cpuPercent ?? 0)}%, ${mib(task.worker.rssBytes ?? 0)}` : ''}`;
  const buttons =
    task.status === 'archived' ? [] : [actionButton('Edit', task.title, () => openEdit(task))];
  if (task.status !== 'archived')
    buttons.push(actionButton('Archive', task.title, act(task.id, 'archive')));
  if (task.status === 'running')
    buttons.push(actionButton('Reclaim', task.title, act(task.id, 'reclaim', {})));
  if (task.status === 'blocked')
    buttons.push(actionButton('Unblock', task.title, act(task.id, 'unblock')));
  if (task.blockKind === 'question')
    buttons.push(actionButton('Answer', task.title, answerPrompt(task)));
  if (task.awaiting === 'approval') buttons.push(approveRevision(task));
  if (task.status === 'review' && !awaitsPick(task)) {
    if (task.pr?.state !== 'open')
      buttons.push(actionButton('Approve', task.title, act(task.id, 'approve', {})));
    buttons.push(
      actionButton('Request changes', task.title, () => {
        const text = prompt(`What should change in “${task.title}”?`);
        if (text && text.trim()) return act(task.id, 'request-changes', { text })();
      }),
    );
  }
  if (task.status === 'archived')
    buttons.push(
      actionButton('Delete', task.title, async () => {
        if (!confirm(`Delete “${task.title}” and its run folders? This cannot be undone.`)) return;
        try {
          await call('DELETE', `/tasks/${task.id}`);
          closeTask();
          markAll();
        } catch (err) {
          showError(err);
        }
      }),
    );
  $('detail-actions').replaceChildren(...buttons);
  const run = task.runs.at(-1);
  $('fields').replaceChildren(
    ...field('status', task.status),
    ...field('assignee', task.assignee ?? '(default profile)'),
    ...field('priority', String(task.priority)),
    ...field('created', new Date(task.createdAt).toLocaleString()),
    ...field('started', task.startedAt && new Date(task.startedAt).toLocaleString()),
    ...field('completed', task.completedAt && new Date(task.completedAt).toLocaleString()),
    ...field(
      'took',
      task.completedAt && task.startedAt && duration(task.completedAt - task.startedAt),
    ),
    ...field('max runtime', task.maxRuntimeSeconds && `${task.maxRuntimeSeconds} s`),
    ...field('max retries', task.maxRetries && String(task.maxRetries)),
    ...field('failures', task.consecutiveFailures ? String(task.consecutiveFailures) : null),
    ...field('last failure', task.lastFailureError),
    ...field('blocked because', task.blockReason),
    ...field('budget', budgetText(task.budgetInForce, task.spent)),
    ...field(
      'schedule',
      task.schedule &&
        `${task.schedule.name}, fired ${new Date(task.schedule.fireTime).toLocaleString()}`,
    ),
    ...field('question', task.question?.text),
    ...field('options', task.question?.options ? task.question.options.join(' · ') : null),
    ...field(
      'progress',
      task.progress &&
        `${task.progress.percent === null ? '' : `${Math.round(task.progress.percent)}% · `}${task.progress.note}`,
    ),
    ...field(
      'approval',
      task.approval &&
        (task.awaiting === 'approval'
          ? `waits for approval of revision ${task.approval.revision}`
          : `approved by ${task.approval.by} (revision ${task.approval.approvedRevision})`),
    ),
    ...field('not before', task.notBefore && new Date(task.notBefore).toLocaleString()),
    ...field('summary', task.summary),
    ...field(
      'from',
      task.origin.kind === 'platform'
        ? `${task.origin.platform} (${task.origin.channel})`
        : task.origin.kind,
    ),
    ...field('parents', links(task.parents)),
    ...field('children', links(task.children)),
    ...field('host', run?.host),
    ...field('workspace', workspaceText(task.workspace)),
    ...field('preserved on', task.workspace?.preservedRef),
    ...field('pull request', task.pr && el('span', {}, prLink(task.pr), ` ${prText(task.pr)}`)),
  );
  $('detail-body').replaceChildren(
    task.body ? el('pre', { class: 'text', 'aria-label': 'Body' }, task.body) : '',
    task.result !== null && task.result !== undefined
      ? el(
          'div',
          {},
          el('h3', {}, 'Result'),
          el(
            'pre',
            { class: 'json', id: 'result', 'aria-label': 'Result' },
            JSON.stringify(task.result, null, 2),
          ),
        )
      : '',
  );
  $('runs').replaceChildren(
    ...task.runs.map((r) =>
      el(
        'tr',
        {},
        el('td', {}, r.id),
        el('td', {}, r.host ?? ''),
        el('td', {}, r.outcome ?? 'running'),
        el('td', {}, r.signal ?? (r.exitCode === null ? '' : `exit ${r.exitCode}`)),
        el('td', {}, r.endedAt ? duration(r.endedAt - r.startedAt) : age(r.startedAt)),
        el('td', {}, r.cpuPercentMax === null ? '' : `${Math.round(r.cpuPercentMax)}%`),
        el('td', {}, mib(r.rssBytesMax)),
        el('td', {}, changesText(r.workspace)),
        el('td', {}, usageText(r.agent?.usage)),
      ),
    ),
  );
  drawDiff(diff);
  drawAttempts(task, attempts);
  $('comments').replaceChildren(
    ...events
      .filter((e) => e.kind === 'commented')
      .map((e) =>
        el(
          'li',
          {},
          el('strong', {}, e.payload.author),
          ` (${new Date(e.at).toLocaleTimeString()}): `,
          e.payload.text,
        ),
      ),
  );
  $('events').replaceChildren(
    ...events
      .slice(-200)
      .map((e) =>
        el(
          'li',
          {},
          `${new Date(e.at).toLocaleTimeString()} ${e.kind}${e.payload.reason ? `: ${e.payload.reason}` : e.payload.error ? `: ${e.payload.error}` : ''}`,
        ),
      ),
  );
  $('log').textContent = log ?? '(no run yet)';
  followTranscript(task.runs.at(-1)?.id ?? null);
}

/**
 * Follows the latest run's transcript over its socket: pushed as its agent prints, from
 * its start for a new run, from where it was after a lost connection. What came is added,
 * so an output opened stays open.
 */
function followTranscript(runId) {
  const t = state.transcript;
  if (t.runId === runId) return;
  stopTranscript();
  $('transcript').replaceChildren();
  $('transcript-section').classList.add('hidden');
  Object.assign(t, { runId, kind: null, next: 0, ended: false, retryMs: 1000 });
  if (runId) openTranscript();
}

function stopTranscript() {
  const t = state.transcript;
  clearTimeout(t.retry);
  t.retry = undefined;
  const ws = t.ws;
  t.ws = null;
  ws?.close();
  t.runId = null;
}

function openTranscript() {
  const t = state.transcript;
  const runId = t.runId;
  const params = new URLSearchParams({ after: String(t.next) });
  if (state.token) params.set('token', state.token);
  const ws = new WebSocket(
    `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/runs/${runId}/transcript/stream?${params}`,
  );
  t.ws = ws;
  ws.onmessage = (msg) => {
    if (t.ws !== ws) return;
    const answer = JSON.parse(msg.data);
    t.retryMs = 1000;
    // A command's run has no transcript: its lines are the Log below.
    if (answer.kind === null) {
      t.ended = true;
      t.ws = null;
      ws.close();
      return;
    }
    const box = $('transcript');
    const atEnd = box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
    // At most what the page keeps (one message can hold a MiB of short lines).
    box.append(...answer.entries.slice(-2000).map(transcriptEntry));
    // A long run's page keeps its last 2,000 entries.
    while (box.childElementCount > 2000) box.firstElementChild.remove();
    t.kind = answer.kind;
    t.next = answer.next;
    t.ended = answer.ended;
    $('transcript-section').classList.toggle('hidden', t.kind === null);
    // Following the end, it stays at the end as entries come.
    if (atEnd) box.scrollTop = box.scrollHeight;
  };
  ws.onclose = () => {
    if (t.ws !== ws) return;
    t.ws = null;
    // Lost before the end (a restart, a slow page): again from where it was, less often
    // each time it fails.
    if (t.ended) return;
    t.retry = setTimeout(() => t.runId === runId && openTranscript(), t.retryMs);
    t.retryMs = Math.min(t.retryMs * 2, 30_000);
  };
}

const cutNote = (cut) => (cut > 0 ? ` (${cut.toLocaleString('en')} characters cut)` : '');

/** One entry: a message, a tool call, its output (its first line, the rest on a click). */
function transcriptEntry(e) {
  switch (e.kind) {
    case 'text':
      return el('p', { class: 't-text' }, e.text, cutNote(e.cut));
    case 'tool_call':
      return el(
        'div',
        { class: 't-call' },
        el('b', {}, e.tool),
        ' ',
        el('code', {}, e.input),
        cutNote(e.cut),
      );
    case 'tool_result': {
      const lines = e.output.replace(/\n$/, '').split('\n');
      const first = lines[0] || '(no output)';
      const more = lines.length > 1 ? ` (${lines.length} lines)` : '';
      return el(
        'details',
        { class: e.error ? 't-result t-failed' : 't-result' },
        el('summary', {}, `${e.error ? 'failed: ' : '→ '}${first}${more}${cutNote(e.cut)}`),
        el('pre', {}, e.output),
      );
    }
    case 'question':
      return el(
        'div',
        { class: 't-question' },
        `asks: ${e.text}${e.options ? ` [${e.options.join(' · ')}]` : ''}`,
      );
    case 'progress':
      return el(
        'div',
        { class: 't-progress' },
        `progress: ${e.percent === null ? '' : `${Math.round(e.percent)}% · `}${e.note}`,
      );
    case 'error':
      return el('div', { class: 't-error' }, e.text, cutNote(e.cut));
    default:
      return el('div', { class: 't-log' }, e.text, cutNote(e.cut));
  }
}

function workspaceText(ws) {
  if (!ws) return null;
  const where = ws.branch ? ` on ${ws.branch} from ${ws.base}` : '';
  return `${ws.kind} ${ws.path}${where} (${ws.state}, ${ws.host})`;
}

/** An agent run's tokens in and out, and its cost where its kind prints one. */
/** Each figure of the budget in force beside what was spent of it (docs/budgets.md). */
function budgetText(budget, spent) {
  if (!budget || !spent) return null;
  const parts: string[] = [];
  if (budget.usd !== null) parts.push(`$${spent.usd.toFixed(2)} of $${budget.usd.toFixed(2)}`);
  const n = (v) => v.toLocaleString('en');
  if (budget.tokens !== null) parts.push(`${n(spent.tokens)} of ${n(budget.tokens)} tokens`);
  if (budget.runs !== null) parts.push(`${spent.runs} of ${budget.runs} runs`);
  return parts.length > 0 ? parts.join(' · ') : null;
}

function usageText(usage) {
  if (!usage) return '';
  const n = (v) => (v === null ? '?' : v.toLocaleString('en'));
  const cost = usage.costUsd === null ? '' : ` · $${usage.costUsd.toFixed(4)}`;
  return `${n(usage.inputTokens)} in, ${n(usage.outputTokens)} out${cost}`;
}

function changesText(evidence) {
  if (!evidence) return '';
  const { filesChanged, insertions, deletions, dirty } = evidence;
  return `${filesChanged} file${filesChanged === 1 ? '' : 's'} +${insertions} −${deletions}${dirty ? ', uncommitted' : ''}`;
}

/** The worktree's diff: its files, then each line coloured by what it is. */
function drawDiff(text) {
  $('changes').classList.toggle('hidden', text === null || text === undefined);
  if (text === null || text === undefined) return;
  const lines = String(text).split('\n');
  if (lines.at(-1) === '') lines.pop();
  const files = lines
    .filter((l) => l.startsWith('+++ '))
    .map((l) => l.slice(4).replace(/^b\//, ''));
  $('diff-files').replaceChildren(
    ...(files.length ? files.map((f) => el('li', {}, f)) : [el('li', {}, 'no changes yet')]),
  );
  const kind = (l) =>
    l.startsWith('diff --git')
      ? 'file'
      : l.startsWith('@@')
        ? 'hunk'
        : l.startsWith('+') && !l.startsWith('+++')
          ? 'add'
          : l.startsWith('-') && !l.startsWith('---')
            ? 'del'
            : '';
  $('diff').replaceChildren(...lines.map((l) => el('span', { class: kind(l) }, l)));
}

function openEdit(task) {
  state.editing = task;
  $('edit-title').value = task.title;
  $('edit-body').value = task.body;
  $('edit-assignee').value = task.assignee ?? '';
  $('edit-priority').value = String(task.priority);
  $('edit-max-runtime').value = task.maxRuntimeSeconds ?? '';
  $('edit-max-retries').value = task.maxRetries ?? '';
  $('edit-form').classList.remove('hidden');
  $('edit-title').focus();
}

function closeTask() {
  location.hash = `#/${state.route.view === 'workers' ? 'workers' : ''}${filterSuffix()}`;
}

/** Reads the URL: #/ (board), #/workers, #/tasks/<id>, each with ?q=&assignee= filters. */
function readRoute() {
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, search = ''] = hash.split('?');
  const params = new URLSearchParams(search);
  const parts = path.split('/').filter(Boolean);
  return {
    view: parts[0] === 'workers' || params.get('view') === 'workers' ? 'workers' : 'board',
    taskId: parts[0] === 'tasks' && /^t_[0-9a-f]{12}$/.test(parts[1] ?? '') ? parts[1] : null,
    q: params.get('q') ?? '',
    assignee: params.get('assignee') ?? '',
  };
}

function applyRoute() {
  const before = state.route;
  const route = readRoute();
  state.route = route;
  $('q').value = route.q;
  $('assignee-filter').value = route.assignee;
  if (route.q !== before.q || route.assignee !== before.assignee) {
    for (const status of COLUMNS) state.columns[status] = { tasks: [], next: null, shown: PAGE };
    markBoard();
  }
  $('board').classList.toggle('hidden', route.view !== 'board');
  $('workers-view').classList.toggle('hidden', route.view !== 'workers');
  $('nav-board').href = `#/${filterSuffix()}`;
  $('nav-workers').href = `#/workers${filterSuffix()}`;
  for (const view of ['board', 'workers']) {
    if (route.view === view) $(`nav-${view}`).setAttribute('aria-current', 'page');
    else $(`nav-${view}`).removeAttribute('aria-current');
  }
  // The board is not refreshed while hidden: back on it, it is read anew.
  if (route.view === 'board' && before.view !== 'board') markBoard();
  if (route.view === 'workers' && !state.needToken) refreshWorkers().catch(showError);
  const panel = $('detail');
  if (route.taskId) {
    const opening = before.taskId !== route.taskId || panel.classList.contains('hidden');
    panel.classList.remove('hidden');
    if (route.taskId !== before.taskId) {
      $('edit-form').classList.add('hidden');
      for (const id of ['detail-title', 'detail-meta', 'log']) $(id).textContent = '';
      for (const id of [
        'runs',
        'events',
        'comments',
        'fields',
        'detail-actions',
        'detail-body',
        'diff',
        'diff-files',
        'transcript',
      ])
        $(id).replaceChildren();
      $('changes').classList.add('hidden');
      stopTranscript();
      $('transcript-section').classList.add('hidden');
    }
    if (!state.needToken)
      refreshDetail()
        .then(() => opening && panel.focus())
        .catch(showError);
  } else if (!panel.classList.contains('hidden')) {
    panel.classList.add('hidden');
    stopTranscript();
    // Back to where the operator was: the card of the task just closed.
    const card = document.querySelector(`.card[data-task-id="${before.taskId}"] a`);
    (card ?? $(`nav-${route.view}`)).focus();
  }
}

/** Marks what an event changed; a burst of events becomes one refresh of just that. */
function noteEvent(event) {
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

function scheduleRefresh() {
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

function markBoard() {
  state.dirty.columns = new Set(COLUMNS);
  state.dirty.counts = true;
  scheduleRefresh();
}

function markAll() {
  state.dirty = {
    columns: new Set(COLUMNS),
    counts: true,
    platforms: true,
    detail: true,
    chart: true,
  };
  scheduleRefresh();
}

function connect() {
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
