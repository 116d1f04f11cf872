// One sync of a task's pull request: the forge read (the truth, whatever a webhook said), the task
// moved by what it says (merged, closed, reopened, checks passed), and failing checks or review
// feedback sent back to the agent as one follow-up (docs/pull-requests.md).
import type { PullRequestConfig } from '../config/schema.js';
import {
  PASSING_HOLD_MS,
  FAILURE_WAIT_MS,
  checkKey,
  checksInstructions,
  checksToSend,
  debounce,
  judgeChecks,
  pickFeedback,
  reviewInstructions,
  type ChecksVerdict,
  type JudgedComment,
} from '../forges/rules.js';
import type { Forge, ForgeComment, ForgePr } from '../forges/types.js';
import type { Board } from '../kanban/board.js';
import type { NewEvent } from '../kanban/model/events.js';
import type { PrReview, PrSync, TaskPr } from '../kanban/model/pull-request.js';
import type { TaskMove } from '../kanban/model/transitions.js';
import type { Task } from '../kanban/model/types.js';
import { movePr, recordPr } from '../kanban/moves/pull-request.js';
import type { PrWork } from '../kanban/store/records/task.js';
import { prEvent, taskPr } from './pr-record.js';

export interface SyncDeps {
  board: Board;
  /** The base branch's required checks, asked of the forge at most every few minutes. */
  required: (base: string) => Promise<string[] | null>;
}

export interface Synced {
  /** Something was written (the PR's state, a move, an event). */
  wrote: boolean;
  /** When a rule's time runs out (a debounce, a wait for checks), or null. */
  dueAt: number | null;
}

/** Whether nothing would change by reading more than the PR itself. */
export function settled(pr: TaskPr, sync: PrSync, config: PullRequestConfig): boolean {
  return (
    pr.state !== 'open' ||
    (sync.waiting === null &&
      // Passing only decides anything with doneWhen checks_passed (its 30 s hold).
      (config.doneWhen !== 'checks_passed' || sync.passingSince === null) &&
      (pr.checks === 'passing' || pr.checks === 'none' || pr.checks === 'failing'))
  );
}

/** The PR as last recorded, when the forge says nothing changed since. */
function asRecorded(prev: TaskPr, task: Task): ForgePr {
  return {
    number: prev.number,
    url: prev.url,
    state: prev.state,
    draft: prev.draft,
    headRef: task.workspace?.branch ?? '',
    headSha: prev.headSha ?? '',
    baseRef: task.workspace?.base ?? '',
    mergeCommit: null,
    updatedAt: '',
  };
}

interface Outcome {
  move: TaskMove | null;
  reason?: string;
  instructions?: string;
  events: NewEvent[];
}

/**
 * How much of the PR a sync reads: the PR alone (its checks and feedback too if it changed or
 * its checks are not settled), its checks too, or everything (checks and feedback).
 */
export type SyncDepth = 'pr' | 'checks' | 'full';

export async function syncPr(
  deps: SyncDeps,
  forge: Forge,
  config: PullRequestConfig,
  work: PrWork,
  depth: SyncDepth,
): Promise<Synced> {
  const { task, sync } = work;
  const prev = task.pr!;
  const fresh = await forge.get(prev.number);
  const unchanged = fresh === 'unchanged';
  if (unchanged && depth === 'pr' && settled(prev, sync, config))
    return { wrote: false, dueAt: null };
  const now = deps.board.clock.wall();
  const pr = fresh === 'unchanged' ? asRecorded(prev, task) : fresh;
  const next: PrSync = { ...sync, sent: [...sync.sent] };
  const out: Outcome = { move: null, events: [] };
  const ref = { number: pr.number, url: pr.url };
  let shown = taskPr(config.provider, pr, prev, now);

  if (pr.state === 'merged' && prev.state !== 'merged') {
    out.events.push(prEvent(task.id, 'pr_merged', { ...ref, mergeCommit: pr.mergeCommit }));
    if (['review', 'blocked', 'ready', 'todo'].includes(task.status)) out.move = 'pr_done';
  } else if (pr.state === 'closed' && prev.state === 'open') {
    out.events.push(prEvent(task.id, 'pr_closed', ref));
    if (['review', 'ready', 'todo'].includes(task.status)) {
      out.move = 'pr_block';
      out.reason = `PR #${pr.number} closed without merging`;
      next.blockedByClose = true;
    }
  } else if (pr.state === 'open' && prev.state === 'closed') {
    out.events.push(prEvent(task.id, 'pr_reopened', ref));
    if (task.status === 'blocked' && sync.blockedByClose) out.move = 'pr_reopen';
    next.blockedByClose = false;
  }

  let dueAt: number | null = null;
  if (pr.state === 'open') {
    if (pr.headSha !== prev.headSha) {
      // A push by gatehouse was recorded then; anyone else's is seen now.
      if (
        sync.headPushedAt === null ||
        (prev.syncedAt !== null && sync.headPushedAt < prev.syncedAt)
      )
        next.headPushedAt = now;
      next.firstFailureAt = null;
      next.passingSince = null;
    }
    const required =
      config.requiredChecks === 'protection'
        ? await deps.required(pr.baseRef)
        : config.requiredChecks;
    const verdict = judgeChecks(await forge.checks(pr), required, {
      headPushedAt: next.headPushedAt,
      now,
      noChecksMs: config.noChecksSeconds * 1000,
    });
    shown = { ...shown, checks: verdict.state };
    if (verdict.state === 'failing') next.firstFailureAt ??= now;
    next.passingSince = verdict.state === 'passing' ? (next.passingSince ?? now) : null;
    dueAt = checksDue(verdict, next, config, now);
    const inReview = task.status === 'review' && out.move === null;
    if (inReview)
      await judgeChecksFeedback(forge, config, task, pr, verdict, shown, next, out, now);
    // Feedback changes the PR itself (its time, its counts): read when it changed, while some
    // waits to be sent, and at a full sync. The review's state is shown, strangers said ignored.
    if (!unchanged || depth === 'full' || sync.waiting !== null) {
      const items = await forge.feedback(pr);
      shown = { ...shown, review: reviewState(items) };
      const waitUntil = await judgeReviewFeedback(
        forge,
        config,
        task,
        pr,
        items,
        shown,
        next,
        out,
        now,
      );
      if (waitUntil !== null) dueAt = Math.min(dueAt ?? waitUntil, waitUntil);
    }
  }
  if (out.move === 'follow_up') shown = { ...shown, rounds: prev.rounds + 1 };
  // A merged PR is over; a closed one is watched only while its close keeps the task blocked.
  const stopFollowing =
    task.status !== 'running' &&
    (pr.state === 'merged' || (pr.state === 'closed' && !next.blockedByClose));
  const change = { pr: shown, sync: stopFollowing ? null : next };
  const wrote = await deps.board.transact(async (tx) => {
    if (out.move !== null) {
      const moved = await movePr(tx, task.id, out.move, change, out.events, {
        ...(out.reason !== undefined ? { reason: out.reason } : {}),
        ...(out.instructions !== undefined ? { instructions: out.instructions } : {}),
      });
      if (moved) return true;
      // The task changed meanwhile (a person acted): the PR is recorded, nothing is sent.
      return (
        (await recordPr(tx, task.id, null, { pr: { ...shown, rounds: prev.rounds } })) !== null
      );
    }
    return (await recordPr(tx, task.id, task.status, change, out.events)) !== null;
  });
  return { wrote, dueAt };
}

/** When the checks' own time runs out: the wait after a failure, checks_passed's hold, `none`. */
function checksDue(
  verdict: ChecksVerdict,
  sync: PrSync,
  config: PullRequestConfig,
  now: number,
): number | null {
  if (verdict.state === 'failing' && verdict.pending.length > 0 && sync.firstFailureAt !== null)
    return sync.firstFailureAt + FAILURE_WAIT_MS;
  if (
    verdict.state === 'passing' &&
    config.doneWhen === 'checks_passed' &&
    sync.passingSince !== null
  )
    return sync.passingSince + PASSING_HOLD_MS;
  if (verdict.state === 'pending' && sync.headPushedAt !== null && verdict.pending.length === 0)
    return Math.max(now, sync.headPushedAt + config.noChecksSeconds * 1000);
  return null;
}

async function judgeChecksFeedback(
  forge: Forge,
  config: PullRequestConfig,
  task: Task,
  pr: ForgePr,
  verdict: ChecksVerdict,
  shown: TaskPr,
  next: PrSync,
  out: Outcome,
  now: number,
): Promise<void> {
  const ref = { number: pr.number, url: pr.url };
  if (
    config.doneWhen === 'checks_passed' &&
    verdict.state === 'passing' &&
    next.passingSince !== null &&
    now - next.passingSince >= PASSING_HOLD_MS
  ) {
    out.move = 'pr_done';
    out.events.push(prEvent(task.id, 'pr_checks_passed', { ...ref, headSha: pr.headSha }));
    return;
  }
  if (!config.feedback.checks) return;
  const sent = new Set(next.sent);
  const toSend = checksToSend(verdict, pr.headSha, sent, next.firstFailureAt, now);
  if (toSend.length === 0) return;
  for (const check of verdict.failed) next.sent.push(checkKey(pr.headSha, check.name));
  if (exhausted(config, shown, task, out)) return;
  const logs = await Promise.all(toSend.map((c) => forge.log(c).catch(() => null)));
  out.move = 'follow_up';
  out.instructions = checksInstructions(
    pr,
    toSend.map((c, i) => ({ ...c, log: logs[i] ?? null })),
  );
  out.events.push(
    prEvent(task.id, 'pr_feedback', {
      ...ref,
      round: shown.rounds + 1,
      source: 'checks',
      checks: toSend.map((c) => c.name),
    }),
  );
}

/** Review feedback: strangers said ignored, the rest debounced and sent once. When to look again. */
async function judgeReviewFeedback(
  forge: Forge,
  config: PullRequestConfig,
  task: Task,
  pr: ForgePr,
  items: readonly ForgeComment[],
  shown: TaskPr,
  next: PrSync,
  out: Outcome,
  now: number,
): Promise<number | null> {
  const ref = { number: pr.number, url: pr.url };
  const sent = new Set(next.sent);
  const unseen = items.filter((i) => !sent.has(i.id));
  if (unseen.length === 0) {
    next.waiting = null;
    return null;
  }
  const judged: JudgedComment[] = await Promise.all(
    unseen.map(async (item) => ({
      ...item,
      roles: item.association !== null ? [item.association] : await forge.associations(item),
    })),
  );
  const pick = pickFeedback(judged, {
    sent,
    from: config.feedback.from,
    self: await forge.self(),
  });
  for (const item of pick.quiet) next.sent.push(item.id);
  for (const item of pick.ignored) {
    next.sent.push(item.id);
    out.events.push(
      prEvent(task.id, 'pr_comment_ignored', {
        ...ref,
        id: item.id,
        by: item.author,
        association: item.roles.join(','),
      }),
    );
  }
  if (!config.feedback.reviews) {
    for (const item of pick.candidates) next.sent.push(item.id);
    next.waiting = null;
    return null;
  }
  const ids = pick.candidates.map((c) => c.id);
  const wait = debounce(ids, next.waiting, now, config.feedback.debounceSeconds * 1000);
  next.waiting = wait.waiting;
  // Only a task waiting in review takes feedback; until then it is kept for later.
  if (!wait.send || task.status !== 'review' || out.move !== null)
    return wait.waiting ? wait.waiting.since + config.feedback.debounceSeconds * 1000 : null;
  next.waiting = null;
  for (const id of ids) next.sent.push(id);
  if (exhausted(config, shown, task, out)) return null;
  out.move = 'follow_up';
  out.instructions = reviewInstructions(pr, pick.candidates);
  out.events.push(
    prEvent(task.id, 'pr_feedback', {
      ...ref,
      round: shown.rounds + 1,
      source: 'review',
      comments: ids,
    }),
  );
  return null;
}

/** A round past maxRounds blocks the task instead of sending it back. */
function exhausted(config: PullRequestConfig, shown: TaskPr, task: Task, out: Outcome): boolean {
  if (shown.rounds + 1 <= config.feedback.maxRounds) return false;
  out.move = 'pr_block';
  out.reason = `PR feedback rounds exhausted (${config.feedback.maxRounds})`;
  out.events.push(prEvent(task.id, 'pr_blocked', { reason: out.reason }));
  return true;
}

/** The PR's review as its reviewers last said: any change asked for, else any approval. */
function reviewState(items: readonly ForgeComment[]): PrReview {
  const latest = new Map<string, ForgeComment['reviewState']>();
  for (const item of items)
    if (item.kind === 'review' && item.reviewState !== 'commented')
      latest.set(item.author, item.reviewState);
  const states = [...latest.values()];
  return states.includes('changes_requested')
    ? 'changes_requested'
    : states.includes('approved')
      ? 'approved'
      : 'none';
}
