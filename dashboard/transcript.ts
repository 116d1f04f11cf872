// The open task's latest run as it prints it, pushed over its own socket.
import { $, el } from './dom';
import { state } from './state';

/**
 * Follows the latest run's transcript over its socket: pushed as its agent prints, from
 * its start for a new run, from where it was after a lost connection. What came is added,
 * so an output opened stays open.
 */
export function followTranscript(runId) {
  const t = state.transcript;
  if (t.runId === runId) return;
  stopTranscript();
  $('transcript').replaceChildren();
  $('transcript-section').classList.add('hidden');
  Object.assign(t, { runId, kind: null, next: 0, ended: false, retryMs: 1000 });
  if (runId) openTranscript();
}

export function stopTranscript() {
  const t = state.transcript;
  clearTimeout(t.retry);
  t.retry = undefined;
  const ws = t.ws;
  t.ws = null;
  ws?.close();
  t.runId = null;
}

export function openTranscript() {
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

export const cutNote = (cut) => (cut > 0 ? ` (${cut.toLocaleString('en')} characters cut)` : '');

/** One entry: a message, a tool call, its output (its first line, the rest on a click). */
export function transcriptEntry(e) {
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
