import { describe, expect, it } from 'vitest';
import {
  MOVES,
  canDelete,
  initialStatus,
  transition,
  type TaskMove,
} from '../../src/kanban/model/transitions.js';
import { TASK_STATUSES, type TaskStatus } from '../../src/kanban/model/types.js';

// The contract of docs/api.md, written out independently of the table under test.
const ALLOWED: Record<
  TaskMove,
  Partial<Record<TaskStatus, TaskStatus | ((done: boolean) => TaskStatus)>>
> = {
  promote: { todo: 'ready' },
  claim: { ready: 'running' },
  complete: { running: 'done' },
  block: { running: 'blocked' },
  release: { running: 'ready' },
  give_up: { running: 'blocked', ready: 'blocked' },
  unblock: { blocked: (done) => (done ? 'ready' : 'todo') },
  orphan: { todo: 'blocked' },
  follow_up: {
    done: (done) => (done ? 'ready' : 'todo'),
    blocked: (done) => (done ? 'ready' : 'todo'),
    review: (done) => (done ? 'ready' : 'todo'),
  },
  submit: { running: 'review' },
  approve: { review: 'done' },
  request_changes: { review: (done) => (done ? 'ready' : 'todo') },
  pr_done: { review: 'done', blocked: 'done', ready: 'done', todo: 'done' },
  pr_block: { review: 'blocked', ready: 'blocked', todo: 'blocked' },
  pr_reopen: { blocked: 'review' },
  await_approval: { ready: 'todo' },
  budget_block: { ready: 'blocked' },
  await_attempts: { todo: 'todo', ready: 'todo' },
  attempts_review: { todo: 'review' },
  archive: {
    todo: 'archived',
    ready: 'archived',
    running: 'archived',
    review: 'archived',
    blocked: 'archived',
    done: 'archived',
  },
};

describe('the transition table', () => {
  const moves = Object.keys(MOVES) as TaskMove[];
  const cases = moves.flatMap((move) =>
    TASK_STATUSES.flatMap((from) =>
      [true, false].map((parentsDone) => ({ move, from, parentsDone })),
    ),
  );

  it.each(cases)('$move from $from (parents done: $parentsDone)', ({ move, from, parentsDone }) => {
    const rule = ALLOWED[move][from];
    const expected =
      rule === undefined ? null : typeof rule === 'function' ? rule(parentsDone) : rule;
    expect(transition(from, move, { parentsDone })).toBe(expected);
  });

  it('covers every move of the contract and no other', () => {
    expect(moves.sort()).toEqual(Object.keys(ALLOWED).sort());
  });

  it('never leaves archived except by deletion', () => {
    for (const move of moves)
      expect(transition('archived', move, { parentsDone: true })).toBeNull();
    expect(TASK_STATUSES.filter(canDelete)).toEqual(['archived']);
  });

  it('starts a new task in todo while a parent is not done', () => {
    expect(initialStatus({ parentsDone: false })).toBe('todo');
    expect(initialStatus({ parentsDone: true })).toBe('ready');
  });
});
