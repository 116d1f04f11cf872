// Building the page: elements, query strings, and how times, sizes and task links are written.
import { state } from './state';

/** An element of the page by id (the page's own: it is there). */
export const $ = (id: string): any => document.getElementById(id);

export function el(tag: string, attrs: Record<string, any> = {}, ...children: any[]): HTMLElement {
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

export function query(params: Record<string, string | number | null | undefined>) {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null && v !== '') out.set(k, String(v));
  return out.toString();
}

export function age(ms) {
  const s = Math.max(0, Math.floor((Date.now() - ms) / 1000));
  return s < 60
    ? `${s}s`
    : s < 3600
      ? `${Math.floor(s / 60)}m`
      : s < 86400
        ? `${Math.floor(s / 3600)}h`
        : `${Math.floor(s / 86400)}d`;
}

export function duration(ms) {
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)}s` : age(Date.now() - ms);
}

export function mib(bytes) {
  return bytes === null || bytes === undefined ? '' : `${Math.round(bytes / 1048576)} MiB`;
}

export function taskLink(id, text = id) {
  return el('a', { href: `#/tasks/${id}${filterSuffix(state.route.view)}` }, text);
}

/** The filters (and, over the workers view, that view) as the URL keeps them. */
export function filterSuffix(view = 'board') {
  const q = query({
    view: view === 'workers' ? 'workers' : '',
    q: state.route.q,
    assignee: state.route.assignee,
  });
  return q ? `?${q}` : '';
}

export function field(name, value) {
  return value === null || value === undefined || value === ''
    ? []
    : [el('dt', {}, name), el('dd', {}, value)];
}

export function links(ids) {
  return ids.length === 0
    ? null
    : el('span', {}, ...ids.flatMap((id, i) => [i ? ', ' : '', taskLink(id)]));
}
