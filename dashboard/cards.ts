// A task's card and its buttons: why it waits, its PR, its attempts, its question.
import { call, showError } from './api';
import { $, age, duration, el, taskLink } from './dom';
import { markAll } from './refresh';
import { state } from './state';

export function act(id: string, action: string, body?: unknown) {
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

export function actionButton(label, title, onclick) {
  return el(
    'button',
    { class: 'secondary', type: 'button', onclick, 'aria-label': `${label} ${title}` },
    label,
  );
}

/** Why a todo or ready task is not running yet, when the page can tell. */
export function reason(task) {
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
export function prLink(pr) {
  const safe = /^https?:\/\//.test(pr.url);
  return el(
    'a',
    safe ? { href: pr.url, rel: 'noopener noreferrer', target: '_blank' } : {},
    `PR #${pr.number}`,
  );
}

export function prText(pr) {
  const parts = [pr.state];
  if (pr.state === 'open') parts.push(`checks ${pr.checks}`);
  if (pr.review !== 'none') parts.push(pr.review.replace('_', ' '));
  if (pr.rounds > 0) parts.push(`${pr.rounds} round${pr.rounds === 1 ? '' : 's'}`);
  return parts.join(' · ');
}

/** The moves a task's status allows, as buttons: on its card and in its detail. */
export function moveButtons(task): HTMLElement[] {
  const buttons: HTMLElement[] = [];
  if (task.status !== 'archived')
    buttons.push(actionButton('Archive', task.title, act(task.id, 'archive')));
  if (task.status === 'running')
    buttons.push(actionButton('Reclaim', task.title, act(task.id, 'reclaim', {})));
  if (task.status === 'blocked')
    buttons.push(actionButton('Unblock', task.title, act(task.id, 'unblock')));
  return buttons;
}

export function card(task) {
  const actions = el('div', { class: 'actions' }, ...moveButtons(task));
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
export function drawAttempts(task, attempts) {
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
export function awaitsPick(task) {
  return Boolean(task.attempts) && task.attempts.picked === null;
}

/** Approves a task's first run: the revision shown is the one approved. */
export function approveRevision(task) {
  return actionButton(
    'Approve',
    task.title,
    act(task.id, 'approve', { revision: task.approval.revision }),
  );
}

/** The progress its agent last reported. */
export function progressLine(progress) {
  const percent = progress.percent === null ? '' : `${Math.round(progress.percent)}% · `;
  return el('div', { class: 'meta progress' }, `${percent}${progress.note}`);
}

/** Asks for the answer to the task's question, and sends it. */
export function answerPrompt(task) {
  return () => {
    const text = prompt(`${task.question?.text ?? 'Its agent asks'}\n\nYour answer:`);
    if (text && text.trim()) return act(task.id, 'answer', { text })();
  };
}
