// The rules that judge a pull request's checks and feedback, with no I/O: which checks count,
// whether they pass, what is sent back to the agent and when (docs/pull-requests.md).
import type { Association } from '../config/schema.js';
import type { ForgeCheck, ForgeComment } from './types.js';

export type ChecksState = 'pending' | 'passing' | 'failing' | 'none';

const PASS = new Set(['success', 'skipped', 'neutral']);
const FAIL = new Set([
  'failure',
  'cancelled',
  'timed_out',
  'action_required',
  'startup_failure',
  'stale',
]);

/** A failing check is sent back this long after the first failure even if others still run. */
export const FAILURE_WAIT_MS = 10 * 60_000;
/** checks_passed: passing for this long on one head before the task is done. */
export const PASSING_HOLD_MS = 30_000;
/** A check's log is sent back as its last lines, this many at most, and at most this many bytes. */
export const LOG_LINES = 100;
export const LOG_BYTES = 16 * 1024;

export interface ChecksVerdict {
  state: ChecksState;
  /** The deciding checks that failed, latest run of each name. */
  failed: ForgeCheck[];
  /** The deciding names not finished (or never reported). */
  pending: string[];
}

/** Per name, only the latest run counts. */
export function latestByName(checks: readonly ForgeCheck[]): Map<string, ForgeCheck> {
  const latest = new Map<string, ForgeCheck>();
  for (const check of checks) {
    const seen = latest.get(check.name);
    if (!seen || check.at >= seen.at) latest.set(check.name, check);
  }
  return latest;
}

/**
 * The checks of the PR's current head as they decide: the required ones (null: every one
 * reported), each by its latest run. With nothing to decide, `none` once `noChecksMs` have passed
 * since the head was pushed (never passing), else pending; an empty required list passes.
 */
export function judgeChecks(
  checks: readonly ForgeCheck[],
  required: readonly string[] | null,
  since: { headPushedAt: number | null; now: number; noChecksMs: number },
): ChecksVerdict {
  const latest = latestByName(checks);
  if (required !== null && required.length === 0)
    return { state: 'passing', failed: [], pending: [] };
  const names = required ?? [...latest.keys()];
  if (names.length === 0) {
    const waited =
      since.headPushedAt !== null && since.now - since.headPushedAt >= since.noChecksMs;
    return { state: waited ? 'none' : 'pending', failed: [], pending: [] };
  }
  const failed: ForgeCheck[] = [];
  const pending: string[] = [];
  for (const name of names) {
    const check = latest.get(name);
    if (!check || check.status !== 'completed' || check.conclusion === null) pending.push(name);
    else if (FAIL.has(check.conclusion)) failed.push(check);
    else if (!PASS.has(check.conclusion)) pending.push(name);
  }
  const state = failed.length > 0 ? 'failing' : pending.length > 0 ? 'pending' : 'passing';
  return { state, failed, pending };
}

/**
 * Failing checks go back once every deciding check has finished, or `FAILURE_WAIT_MS` after the
 * first failure on this head, whichever comes first; a check already sent for this head is not.
 */
export function checksToSend(
  verdict: ChecksVerdict,
  headSha: string,
  sent: ReadonlySet<string>,
  firstFailureAt: number | null,
  now: number,
): ForgeCheck[] {
  if (verdict.failed.length === 0) return [];
  const due =
    verdict.pending.length === 0 ||
    (firstFailureAt !== null && now - firstFailureAt >= FAILURE_WAIT_MS);
  if (!due) return [];
  return verdict.failed.filter((c) => !sent.has(checkKey(headSha, c.name)));
}

export const checkKey = (headSha: string, name: string) => `check:${headSha}:${name}`;

/** A review or comment with what its author is to the repository. */
export type JudgedComment = ForgeComment & { roles: readonly (Association | 'NONE')[] };

export interface FeedbackPick {
  /** From allowed authors, not sent before: what the next round is made of. */
  candidates: ForgeComment[];
  /** From anyone else: never sent, each said once (pr_comment_ignored). */
  ignored: JudgedComment[];
  /** Neither: approvals, empty reviews, gatehouse's own (marked seen, said nothing of). */
  quiet: ForgeComment[];
}

/**
 * Sorts what the forge holds into what may go back to the agent: a review that requests
 * changes, a review with words, a line comment or a comment, by an author whose association is
 * in `from` and who is not gatehouse itself; nothing sent (or ignored) before.
 */
export function pickFeedback(
  items: readonly JudgedComment[],
  opts: { sent: ReadonlySet<string>; from: readonly Association[]; self: string | null },
): FeedbackPick {
  const pick: FeedbackPick = { candidates: [], ignored: [], quiet: [] };
  for (const item of items) {
    if (opts.sent.has(item.id)) continue;
    const wanted =
      item.kind !== 'review' ||
      item.reviewState === 'changes_requested' ||
      (item.reviewState === 'commented' && item.body.trim() !== '');
    if (!wanted || (opts.self !== null && item.author === opts.self)) pick.quiet.push(item);
    else if (!item.roles.some((r) => r !== 'NONE' && opts.from.includes(r)))
      pick.ignored.push(item);
    else pick.candidates.push(item);
  }
  return pick;
}

/**
 * Debounce: candidates are sent once `debounceMs` have passed since the set last grew. Returns
 * the new waiting state and whether to send now.
 */
export function debounce(
  candidates: readonly string[],
  waiting: { ids: string[]; since: number } | null,
  now: number,
  debounceMs: number,
): { waiting: { ids: string[]; since: number } | null; send: boolean } {
  if (candidates.length === 0) return { waiting: null, send: false };
  const known = new Set(waiting?.ids ?? []);
  const grew = candidates.some((id) => !known.has(id));
  const since = grew || !waiting ? now : waiting.since;
  const next = { ids: [...candidates], since };
  return now - since >= debounceMs ? { waiting: null, send: true } : { waiting: next, send: false };
}

/** The last lines of a log, within LOG_LINES and LOG_BYTES. */
export function logTail(text: string): string {
  let lines = text.replace(/\r\n/g, '\n').replace(/\n+$/, '').split('\n').slice(-LOG_LINES);
  let out = lines.join('\n');
  while (Buffer.byteLength(out, 'utf8') > LOG_BYTES && lines.length > 1) {
    lines = lines.slice(1);
    out = lines.join('\n');
  }
  if (Buffer.byteLength(out, 'utf8') > LOG_BYTES)
    out = Buffer.from(out, 'utf8').subarray(-LOG_BYTES).toString('utf8');
  return out;
}

/** A fenced block that the text inside cannot close. */
function fenced(text: string, lang = ''): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${lang}\n${text}\n${fence}`;
}

/** The follow-up for failed checks: each one's name, conclusion, URL and log tail. */
export function checksInstructions(
  pr: { number: number; url: string; headSha: string },
  failed: readonly (ForgeCheck & { log: string | null })[],
): string {
  const parts = [
    `The checks of pull request #${pr.number} (${pr.url}) failed on ${pr.headSha.slice(0, 12)}. Fix what they report; what you leave is committed and pushed to the same pull request.`,
  ];
  for (const check of failed) {
    parts.push(
      `## ${check.name}: ${check.conclusion}${check.url ? `\n${check.url}` : ''}${check.log ? `\n\nThe end of its log:\n${fenced(logTail(check.log))}` : ''}`,
    );
  }
  return parts.join('\n\n');
}

/** The follow-up for review feedback: each review's and comment's text, with its place. */
export function reviewInstructions(
  pr: { number: number; url: string },
  items: readonly ForgeComment[],
): string {
  const parts = [
    `Review feedback on pull request #${pr.number} (${pr.url}). Address it; what you leave is committed and pushed to the same pull request.`,
  ];
  for (const item of items) {
    const who =
      item.kind === 'review'
        ? `Review by ${item.author}${item.reviewState === 'changes_requested' ? ' (changes requested)' : ''}`
        : item.path
          ? `${item.author} on ${item.path}${item.line !== null ? `:${item.line}` : ''}`
          : `Comment by ${item.author}`;
    const hunk = item.hunk ? `\n${fenced(item.hunk, 'diff')}` : '';
    parts.push(`## ${who}${hunk}\n\n${item.body.trim() || '(no text)'}`);
  }
  return parts.join('\n\n');
}
