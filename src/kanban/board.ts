// The board service: tasks created, read, edited and deleted; every change an event in the same transaction.
import { AppError } from '../errors.js';
import type { Db } from './db.js';
import { EventBus } from './event-bus.js';
import { EventStore } from './event-store.js';
import { newTaskId } from './ids.js';
import { RunStore } from './run-store.js';
import { TaskStore, type TaskFilter } from './task-store.js';
import { canDelete, initialStatus } from './transitions.js';
import type { BoardEvent, Comment, NewEvent, Origin, Task, TaskStatus } from './types.js';

export type Clock = () => number;

export interface TaskInput {
  title: string;
  body?: string | undefined;
  assignee?: string | null | undefined;
  priority?: number | undefined;
  parents?: string[] | undefined;
  maxRuntimeSeconds?: number | null | undefined;
  maxRetries?: number | null | undefined;
}

export type TaskPatch = Partial<Omit<TaskInput, 'parents'>>;

export type Emit = (event: NewEvent) => BoardEvent;

export class Board {
  readonly tasks: TaskStore;
  readonly runs: RunStore;
  readonly events: EventStore;
  readonly bus: EventBus;
  private readonly inTransaction;

  constructor(
    db: Db,
    readonly clock: Clock,
    onListenerError: (err: unknown) => void,
  ) {
    this.tasks = new TaskStore(db);
    this.runs = new RunStore(db);
    this.events = new EventStore(db);
    this.bus = new EventBus(onListenerError);
    this.inTransaction = db.transaction((body: () => unknown) => body());
  }

  /**
   * Runs `fn` in one immediate transaction; events it emits are written inside it and
   * published to listeners only after the commit. `fn` must not await.
   */
  transact<T>(fn: (emit: Emit, now: number) => T): T {
    const written: BoardEvent[] = [];
    const now = this.clock();
    let result: T;
    try {
      result = this.inTransaction.immediate(() =>
        fn((event) => {
          const stored = this.events.append(event, now);
          written.push(stored);
          return stored;
        }, now),
      ) as T;
    } catch (err) {
      throw storageError(err);
    }
    this.bus.publish(written);
    return result;
  }

  get(id: string): Task {
    const task = this.tasks.get(id);
    if (!task) throw new AppError('TASK_NOT_FOUND', `no task ${id}`);
    return task;
  }

  list(
    filter: Omit<TaskFilter, 'afterSeq' | 'order'> & {
      cursor?: string | undefined;
      order?: 'asc' | 'desc' | undefined;
    },
  ): {
    tasks: Task[];
    nextCursor: string | null;
  } {
    const afterSeq = filter.cursor === undefined ? null : decodeCursor(filter.cursor);
    const page = this.tasks.list({ ...filter, order: filter.order ?? 'asc', afterSeq });
    return {
      tasks: page.tasks,
      nextCursor: page.more && page.lastSeq !== null ? encodeCursor(page.lastSeq) : null,
    };
  }

  /** `within` runs inside the creating transaction (e.g. to subscribe a chat atomically). */
  create(
    input: TaskInput,
    origin: Origin,
    within?: (task: Task, createdEventId: number) => void,
  ): Task {
    const parents = [...new Set(input.parents ?? [])];
    return this.transact((emit, now) => {
      let parentsDone = true;
      for (const parentId of parents) {
        const parent = this.tasks.get(parentId);
        if (!parent) throw new AppError('VALIDATION_FAILED', `parent ${parentId} does not exist`);
        if (parent.status === 'archived')
          throw new AppError('VALIDATION_FAILED', `parent ${parentId} is archived`);
        if (parent.status !== 'done') parentsDone = false;
      }
      const id = newTaskId();
      this.tasks.create(
        {
          id,
          title: input.title,
          body: input.body ?? '',
          assignee: input.assignee ?? null,
          status: initialStatus({ parentsDone }),
          priority: input.priority ?? 0,
          maxRuntimeSeconds: input.maxRuntimeSeconds ?? null,
          maxRetries: input.maxRetries ?? null,
          origin,
          at: now,
        },
        parents,
      );
      const task = this.tasks.get(id)!;
      const created = emit({
        taskId: id,
        runId: null,
        kind: 'created',
        payload: { title: task.title, status: task.status, origin },
      });
      within?.(task, created.id);
      return task;
    });
  }

  edit(id: string, patch: TaskPatch): Task {
    return this.transact((emit, now) => {
      const task = this.get(id);
      if (task.status === 'archived')
        throw new AppError('INVALID_TRANSITION', `task ${id} is archived`);
      const set = {
        title: patch.title,
        body: patch.body,
        assignee: patch.assignee,
        priority: patch.priority,
        max_runtime_seconds: patch.maxRuntimeSeconds,
        max_retries: patch.maxRetries,
      };
      const changed = Object.fromEntries(Object.entries(set).filter(([, v]) => v !== undefined));
      if (!this.tasks.cas(id, { status: task.status }, { ...changed, updated_at: now })) {
        throw new AppError(
          'INVALID_TRANSITION',
          `task ${id} changed while being edited; try again`,
        );
      }
      emit({
        taskId: id,
        runId: null,
        kind: 'edited',
        payload: {
          fields: Object.keys(patch).filter((k) => patch[k as keyof TaskPatch] !== undefined),
        },
      });
      return this.get(id);
    });
  }

  delete(id: string): void {
    this.transact((emit) => {
      const task = this.get(id);
      if (!canDelete(task.status)) {
        throw new AppError(
          'TASK_NOT_ARCHIVED',
          `task ${id} is ${task.status}; archive it before deleting`,
        );
      }
      this.tasks.delete(id);
      emit({ taskId: id, runId: null, kind: 'deleted', payload: {} });
    });
  }

  comment(id: string, text: string, author: string): Comment {
    return this.transact((emit, now) => {
      this.get(id);
      const comment = this.tasks.addComment(id, author, text, now);
      emit({
        taskId: id,
        runId: null,
        kind: 'commented',
        payload: { commentId: comment.id, author, text },
      });
      return comment;
    });
  }

  counts(): Record<TaskStatus, number> {
    return this.tasks.counts();
  }

  /** Moves every todo child of `parentId` whose parents are now all done to ready. */
  promoteChildren(parentId: string, emit: Emit, now: number): void {
    for (const childId of this.tasks.children(parentId)) {
      const child = this.tasks.get(childId);
      if (child?.status !== 'todo') continue;
      const allDone = child.parents.every((p) => this.tasks.get(p)?.status === 'done');
      if (
        allDone &&
        this.tasks.cas(childId, { status: 'todo' }, { status: 'ready', updated_at: now })
      ) {
        emit({ taskId: childId, runId: null, kind: 'promoted', payload: { after: parentId } });
      }
    }
  }
}

/** A full or failing disk is the operator's to fix: 503 with a clear message, the cause kept. */
function storageError(err: unknown): unknown {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR'))) {
    return new AppError('STORAGE_UNAVAILABLE', `the data dir cannot be written (${code})`, {
      cause: err,
    });
  }
  return err;
}

function encodeCursor(seq: number): string {
  return Buffer.from(`seq:${seq}`).toString('base64url');
}

function decodeCursor(cursor: string): number {
  const match = /^seq:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!match) throw new AppError('VALIDATION_FAILED', 'cursor is not one this server issued');
  return Number(match[1]);
}
