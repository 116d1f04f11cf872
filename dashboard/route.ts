// The URL: which view, which task and which filters it asks for, and drawing that.
import { showError } from './api';
import { refreshDetail } from './detail';
import { $, filterSuffix } from './dom';
import { refreshWorkers } from './panels';
import { markBoard } from './refresh';
import { COLUMNS, PAGE, state } from './state';
import { stopTranscript } from './transcript';

/** Reads the URL: #/ (board), #/workers, #/tasks/<id>, each with ?q=&assignee= filters. */
export function readRoute() {
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

export function applyRoute() {
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
