// What the board keeps of a task's pull request (docs/pull-requests.md): what the API shows, and
// what the daemon needs to follow it (which feedback was sent, since when checks pass).
import type { ForgeProvider } from '../../config/schema.js';

export type PrState = 'open' | 'merged' | 'closed';
export type PrChecks = 'pending' | 'passing' | 'failing' | 'none';
export type PrReview = 'none' | 'approved' | 'changes_requested';

/** A task's pull request, as GET /tasks/:id shows it. */
export interface TaskPr {
  provider: ForgeProvider;
  number: number;
  url: string;
  state: PrState;
  draft: boolean;
  headSha: string | null;
  checks: PrChecks;
  review: PrReview;
  /** Feedback rounds sent back to the agent. */
  rounds: number;
  /** The last time the forge was read for it (epoch ms), or null. */
  syncedAt: number | null;
}

/** What following the pull request needs, kept beside it and never shown. */
export interface PrSync {
  /** The repository (a name in workspaces.repos). */
  repo: string;
  /** A completed run whose work is yet to be committed, pushed and put on a PR; or null. */
  publish: string | null;
  /** Feedback items sent back (or said to be ignored), and failed checks sent, by key. */
  sent: string[];
  /** When the current head was pushed (or first seen), for `none` checks. */
  headPushedAt: number | null;
  /** The current head's first failing check was seen then. */
  firstFailureAt: number | null;
  /** Checks have been passing on the current head since then (doneWhen: checks_passed). */
  passingSince: number | null;
  /** Review feedback collected and not sent yet: its items and when the set last grew. */
  waiting: { ids: string[]; since: number } | null;
  /** The task was blocked because its PR was closed: a reopen brings it back to review. */
  blockedByClose: boolean;
}

export function newPrSync(repo: string, publish: string | null): PrSync {
  return {
    repo,
    publish,
    sent: [],
    headPushedAt: null,
    firstFailureAt: null,
    passingSince: null,
    waiting: null,
    blockedByClose: false,
  };
}
