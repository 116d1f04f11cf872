// The board: its columns, their pages and counts, and what is done to many cards at once.
import { call, fetchLatest, showError, taken } from './api';
import { card } from './cards';
import { $, el, query } from './dom';
import { markAll } from './refresh';
import { ANSWER, COLUMNS, type Json, PAGE, state } from './state';

export const BULK = {
  blocked: { label: 'Unblock all', action: 'unblock', done: 'Unblocked' },
  done: { label: 'Archive all', action: 'archive', done: 'Archived' },
};

export function drawColumn(status) {
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

export function listPath(status, limit, cursor) {
  return `/tasks?${query({ limit, order: 'desc', status, q: state.route.q, assignee: state.route.assignee, cursor })}`;
}

/**
 * One column's first cards again (as many as it shows, read at most ANSWER at a time by
 * their cursors), drawn only if still the newest.
 */
export async function refreshColumn(status) {
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
export async function showMore(status) {
  state.columns[status].shown += PAGE;
  try {
    await refreshColumn(status);
    showError(null);
  } catch (err) {
    showError(err);
  }
}

/** The counts the filters pick; drawn by the caller once its cards are in. */
export async function fetchCounts() {
  const { data, newest, mine } = await fetchLatest('counts', () =>
    call('GET', `/tasks/counts?${query({ q: state.route.q, assignee: state.route.assignee })}`),
  );
  return newest ? { counts: data.counts, mine } : null;
}

export function drawCounts(counts) {
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
export async function refreshBoard(columns) {
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
export async function refreshProfiles() {
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
export async function runBulk(status) {
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
