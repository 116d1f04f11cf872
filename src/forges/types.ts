// What gatehouse needs of a forge, whichever it is: one interface each forge's file implements
// with plain fetch, the answers read into one shape (docs/pull-requests.md).
import type { Association, ForgeProvider } from '../config/schema.js';

export type PrState = 'open' | 'merged' | 'closed';

/** A pull request (GitLab: merge request) as the forge answers it. */
export interface ForgePr {
  number: number;
  /** Where a person sees it. */
  url: string;
  state: PrState;
  draft: boolean;
  headRef: string;
  headSha: string;
  baseRef: string;
  mergeCommit: string | null;
  /** Changes whenever anything on it changes (a comment, a review, a push): the forge's time. */
  updatedAt: string;
}

/** One check on a commit: a GitHub check run or status, a GitLab job, a Gitea status. */
export interface ForgeCheck {
  name: string;
  /** completed, or still to report. */
  status: 'pending' | 'completed';
  /** The forge's word once completed (success, failure, cancelled, skipped, …), else null. */
  conclusion: string | null;
  url: string | null;
  /** What to ask for its log (a job's id), or null where the forge keeps none. */
  logId: string | null;
  /** When it last changed: of two runs of one name, the later counts. */
  at: string;
}

/** A review, a comment on a line, or a comment on the pull request as a whole. */
export interface ForgeComment {
  /** Unique among the PR's items, stable across syncs (e.g. `review:12`, `comment:7`). */
  id: string;
  kind: 'review' | 'review_comment' | 'comment';
  author: string;
  /** The author's id where the forge's membership look-up needs it. */
  authorId: string | null;
  /**
   * What the author is to the repository, as the forge says in the answer (GitHub's
   * author_association), or null: asked with `associations`.
   */
  association: Association | 'NONE' | null;
  body: string;
  path: string | null;
  line: number | null;
  hunk: string | null;
  /** A review's verdict; null for a comment. */
  reviewState: 'approved' | 'changes_requested' | 'commented' | null;
  at: string;
}

/** A new pull request, or the number of the one the forge says already exists (null: unknown). */
export type Created = { pr: ForgePr } | { exists: number | null };

export interface Forge {
  readonly provider: ForgeProvider;
  /** The branch's pull requests in every state, newest first. */
  prsOfBranch(branch: string, base: string): Promise<ForgePr[]>;
  create(request: {
    branch: string;
    base: string;
    title: string;
    body: string;
    draft: boolean;
  }): Promise<Created>;
  /** One pull request; 'unchanged' when the forge says nothing changed since the last answer. */
  get(number: number): Promise<ForgePr | 'unchanged'>;
  /** The number of the pull request a web URL names in this project, or null. */
  numberOf(url: string): number | null;
  /** Every check reported on the commit. */
  checks(pr: ForgePr): Promise<ForgeCheck[]>;
  /** The checks the base branch's protection requires, or null when the forge will not tell. */
  requiredChecks(base: string): Promise<string[] | null>;
  /** The check's log, or null where the forge keeps none. */
  log(check: ForgeCheck): Promise<string | null>;
  /** Its reviews, line comments and comments, oldest first. */
  feedback(pr: ForgePr): Promise<ForgeComment[]>;
  /** What an author is to the repository (a look-up, cached), for forges that do not say. */
  associations(comment: ForgeComment): Promise<(Association | 'NONE')[]>;
  /** The login the token acts as (its own comments are never feedback), or null. */
  self(): Promise<string | null>;
}

export type ForgeErrorKind =
  /** 401/403: the token is refused or lacks a permission. */
  | 'auth'
  /** A rate limit: wait until retryAt. */
  | 'rate_limited'
  /** 5xx, a timeout, a connection that failed: back off and retry. */
  | 'unavailable'
  | 'not_found'
  /** Any other 4xx: the request itself was refused (say it, do not repeat it at once). */
  | 'refused';

/** A forge's failure, said once here and acted on by kind. */
export class ForgeError extends Error {
  constructor(
    readonly kind: ForgeErrorKind,
    readonly status: number | null,
    message: string,
    /** When to ask again (epoch ms), for a rate limit; null: by the backoff. */
    readonly retryAt: number | null = null,
  ) {
    super(message);
    this.name = 'ForgeError';
  }
}
