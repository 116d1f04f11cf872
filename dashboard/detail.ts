// One task opened: its fields, runs, events, workspace, budget and diff, and its edit form.
import { call, fetchLatest, showError, taken } from './api';
import {
  act,
  actionButton,
  answerPrompt,
  approveRevision,
  awaitsPick,
  drawAttempts,
  moveButtons,
  prLink,
  prText,
} from './cards';
import { $, age, duration, el, field, filterSuffix, links, mib } from './dom';
import { markAll } from './refresh';
import { type Json, state } from './state';
import { followTranscript } from './transcript';

/** A task's events after `after`, every page of them (the newest included). */
export async function eventsAfter(id, after) {
  const out: Json[] = [];
  for (let cursor = after; ;) {
    const { events } = await call('GET', `/tasks/${id}/events?after=${cursor}&limit=1000`);
    out.push(...events);
    if (events.length < 1000) return out;
    cursor = events.at(-1).id;
  }
}

export async function refreshDetail() {
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
  const buttons = [
    ...(task.status === 'archived' ? [] : [actionButton('Edit', task.title, () => openEdit(task))]),
    ...moveButtons(task),
  ];
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

export function workspaceText(ws) {
  if (!ws) return null;
  const where = ws.branch ? ` on ${ws.branch} from ${ws.base}` : '';
  return `${ws.kind} ${ws.path}${where} (${ws.state}, ${ws.host})`;
}

/** An agent run's tokens in and out, and its cost where its kind prints one. */
/** Each figure of the budget in force beside what was spent of it (docs/budgets.md). */
export function budgetText(budget, spent) {
  if (!budget || !spent) return null;
  const parts: string[] = [];
  if (budget.usd !== null) parts.push(`$${spent.usd.toFixed(2)} of $${budget.usd.toFixed(2)}`);
  const n = (v) => v.toLocaleString('en');
  if (budget.tokens !== null) parts.push(`${n(spent.tokens)} of ${n(budget.tokens)} tokens`);
  if (budget.runs !== null) parts.push(`${spent.runs} of ${budget.runs} runs`);
  return parts.length > 0 ? parts.join(' · ') : null;
}

export function usageText(usage) {
  if (!usage) return '';
  const n = (v) => (v === null ? '?' : v.toLocaleString('en'));
  const cost = usage.costUsd === null ? '' : ` · $${usage.costUsd.toFixed(4)}`;
  return `${n(usage.inputTokens)} in, ${n(usage.outputTokens)} out${cost}`;
}

export function changesText(evidence) {
  if (!evidence) return '';
  const { filesChanged, insertions, deletions, dirty } = evidence;
  return `${filesChanged} file${filesChanged === 1 ? '' : 's'} +${insertions} −${deletions}${dirty ? ', uncommitted' : ''}`;
}

/** The worktree's diff: its files, then each line coloured by what it is. */
export function drawDiff(text) {
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

export function openEdit(task) {
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

export function closeTask() {
  location.hash = `#/${state.route.view === 'workers' ? 'workers' : ''}${filterSuffix()}`;
}
