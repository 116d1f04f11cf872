// After a completed run in a repository with pull requests: the run's leftovers committed, the
// branch pushed (never forced), and its pull request adopted or opened, once per task however
// often this is retried (docs/pull-requests.md). Runs on the host that has the worktree.
import type { PullRequestConfig } from '../config/schema.js';
import { gitAuthFor } from '../forges/git-auth.js';
import { ForgeError, type Forge, type ForgePr } from '../forges/types.js';
import type { Board } from '../kanban/board.js';
import type { PrSync } from '../kanban/model/pull-request.js';
import type { Task } from '../kanban/model/types.js';
import { movePr, recordPr } from '../kanban/moves/pull-request.js';
import type { PrWork } from '../kanban/store/records/task.js';
import { WorkspaceError, type Workspaces } from '../workspaces/workspaces.js';
import { prEvent, taskPr } from './pr-record.js';

export interface PublishDeps {
  board: Board;
  room: Workspaces;
  hostName: string;
  /** Where the dashboard is, for the PR's body (null: not known yet). */
  baseUrl: () => string | null;
}

/** What a publication did: nothing yet (its run is still ending), or the task's next state. */
export type Published = 'waiting' | 'not_ours' | 'done';

/**
 * Publishes the run's work. Forge and git failures are thrown for the caller's backoff: the
 * publication stays pending and is tried again, and nothing is created twice meanwhile.
 */
export async function publish(
  deps: PublishDeps,
  forge: Forge,
  config: PullRequestConfig,
  work: PrWork,
): Promise<Published> {
  const { task, sync } = work;
  const record = task.workspace;
  if (sync.publish === null || (task.status !== 'review' && task.status !== 'done'))
    return 'not_ours';
  if (!record || record.host !== deps.hostName || record.state !== 'active') return 'not_ours';
  const run = await deps.board.runs.get(sync.publish);
  // Its processes may still write in the worktree: committed once they are gone.
  if (run && run.procGoneAt === null) return 'waiting';
  const now = deps.board.clock.wall();
  const published = { ...sync, publish: null };
  if (task.pr?.state === 'merged') {
    await finish(deps, task, { sync: null }, []);
    return 'done';
  }
  let result;
  try {
    result = await deps.room.publish(
      record,
      task.title,
      { 'Gatehouse-Task': task.id, 'Gatehouse-Run': sync.publish },
      gitAuthFor(config),
    );
  } catch (err) {
    if (!(err instanceof WorkspaceError)) throw err;
    // The worktree is gone: nothing to publish; a person decides.
    const reason = `its work cannot be published: ${err.message}`;
    await deps.board.transact((tx) =>
      movePr(
        tx,
        task.id,
        'pr_block',
        { sync: published },
        [prEvent(task.id, 'pr_blocked', { reason })],
        {
          reason,
        },
      ),
    );
    return 'done';
  }
  if (result.push === 'rejected') {
    const reason = "push_rejected: origin's branch has commits this one lacks; nothing was forced";
    await deps.board.transact((tx) =>
      movePr(
        tx,
        task.id,
        'pr_block',
        { sync: published },
        [
          prEvent(task.id, 'pr_sync_failed', {
            reason: 'push_rejected',
            status: null,
            message: reason,
          }),
          prEvent(task.id, 'pr_blocked', { reason }),
        ],
        { reason },
      ),
    );
    return 'done';
  }
  if (result.push === 'nothing') {
    if (task.pr !== null) {
      await deps.board.transact((tx) => recordPr(tx, task.id, null, { sync: published }));
      return 'done';
    }
    await finish(deps, task, { sync: null }, [
      prEvent(task.id, 'pr_skipped', { reason: 'no changes' }),
    ]);
    return 'done';
  }
  const pushed: PrSync = {
    ...published,
    headPushedAt: now,
    firstFailureAt: null,
    passingSince: null,
  };
  if (task.pr !== null) {
    // A later run's push updates the same pull request; the next sync reads its new head.
    await deps.board.transact((tx) => recordPr(tx, task.id, null, { sync: pushed }));
    return 'done';
  }
  const found = await findOrOpen(deps, forge, config, task);
  const pr = taskPr(config.provider, found.pr, null, now);
  if (found.pr.state === 'merged') {
    await finish(deps, task, { pr, sync: null }, [
      prEvent(task.id, 'pr_merged', {
        number: pr.number,
        url: pr.url,
        mergeCommit: found.pr.mergeCommit,
      }),
    ]);
    return 'done';
  }
  const event =
    found.how === 'opened'
      ? prEvent(task.id, 'pr_opened', {
          number: pr.number,
          url: pr.url,
          provider: config.provider,
          draft: pr.draft,
        })
      : prEvent(task.id, 'pr_adopted', {
          number: pr.number,
          url: pr.url,
          provider: config.provider,
        });
  await deps.board.transact((tx) => recordPr(tx, task.id, null, { pr, sync: pushed }, [event]));
  return 'done';
}

/** Done by its PR: moved from review, or only recorded when a person already approved it. */
async function finish(
  deps: PublishDeps,
  task: Task,
  change: Parameters<typeof recordPr>[3],
  events: Parameters<typeof recordPr>[4],
): Promise<void> {
  await deps.board.transact(async (tx) =>
    task.status === 'review'
      ? movePr(tx, task.id, 'pr_done', change, events ?? [])
      : recordPr(tx, task.id, null, change, events),
  );
}

/**
 * The branch's pull request: an open one adopted, a merged one taken as the task's end, else a
 * new one; a forge that says one already exists has it found and adopted, never made twice.
 */
export async function findOrOpen(
  deps: Pick<PublishDeps, 'baseUrl'>,
  forge: Forge,
  config: PullRequestConfig,
  task: Task,
): Promise<{ pr: ForgePr; how: 'opened' | 'adopted' }> {
  const branch = task.workspace!.branch!;
  const base = task.workspace!.base!;
  const existing = await forge.prsOfBranch(branch, base);
  const open = existing.find((p) => p.state === 'open');
  if (open) return { pr: open, how: 'adopted' };
  const merged = existing.find((p) => p.state === 'merged');
  if (merged) return { pr: merged, how: 'adopted' };
  const link = deps.baseUrl();
  const body = [
    task.summary ?? '',
    `---\ngatehouse task ${task.id}${link ? `: ${link}/#/tasks/${task.id}` : ''}`,
  ]
    .filter(Boolean)
    .join('\n\n');
  const created = await forge.create({
    branch,
    base,
    title: task.title,
    body,
    draft: config.draft,
  });
  if ('pr' in created) return { pr: created.pr, how: 'opened' };
  const number =
    created.exists ??
    (await forge.prsOfBranch(branch, base)).find((p) => p.state === 'open')?.number;
  if (number === undefined)
    throw new ForgeError(
      'refused',
      409,
      `${config.provider} says the branch ${branch} has a pull request, and lists none`,
    );
  const got = await forge.get(number);
  if (got === 'unchanged')
    throw new ForgeError('unavailable', 304, 'the forge answered 304 to a first read');
  return { pr: got, how: 'adopted' };
}
