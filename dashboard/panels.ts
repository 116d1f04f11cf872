// The panels beside the board: hosts, platforms, the runs chart and the live workers.
import { call, fetchLatest, showError, taken } from './api';
import { refreshProfiles } from './board';
import { $, duration, el, mib, taskLink } from './dom';
import { FAILED, state } from './state';

/** The board's hosts: live ones first, each with its lease; dead ones in a count. */
export async function refreshHosts() {
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

export async function refreshPlatforms() {
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
export async function refreshChart() {
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

export async function refreshWorkers() {
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
