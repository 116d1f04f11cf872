// Talking to the API: one call, the token it needs, and which answer is the newest to draw.
import { $ } from './dom';
import { state } from './state';

/**
 * Fetches for one part of the page, and says whether its answer is to be drawn: two
 * refreshes' answers can cross on a loaded machine, and an older one must never be drawn
 * over a newer one (nor anything asked for before the token was forgotten).
 */
export async function fetchLatest(part, fetcher) {
  const mine = (state.started[part] = (state.started[part] ?? 0) + 1);
  const epoch = state.epoch;
  const data = await fetcher();
  const newest = epoch === state.epoch && mine > (state.drawn[part] ?? 0);
  if (newest) state.drawn[part] = mine;
  return { data, newest, mine };
}

/** Counted on the page, drawn or not, so a test can tell an answer was taken in. */
export function taken(part) {
  const answers = document.documentElement.dataset;
  answers[part] = String(Number(answers[part] ?? 0) + 1);
}

export async function call(method: string, path: string, body?: unknown): Promise<any> {
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

export function showError(err) {
  // Asking for the token is not an error: the form says what is going on.
  $('error').textContent = err && !state.needToken ? String(err.message ?? err) : '';
}

export function setConn(text, kind) {
  $('conn').textContent = text;
  $('conn').className = kind;
}

/**
 * Shows the token form, saying why. Every request refused while no token works lands
 * here, some long after the form has shown: only the first showing takes the focus, and
 * only from nothing (never from a field the operator is typing in).
 */
export function askToken(why) {
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
