// The rules that judge a pull request's checks and feedback (src/forges/rules.ts), pure.
import { describe, expect, it } from 'vitest';
import {
  FAILURE_WAIT_MS,
  LOG_BYTES,
  checkKey,
  checksInstructions,
  checksToSend,
  debounce,
  judgeChecks,
  logTail,
  pickFeedback,
  reviewInstructions,
  type JudgedComment,
} from '../../src/forges/rules.js';
import type { ForgeCheck } from '../../src/forges/types.js';

const check = (
  name: string,
  conclusion: string | null,
  at = '2026-01-01T00:00:00Z',
): ForgeCheck => ({
  name,
  status: conclusion === null ? 'pending' : 'completed',
  conclusion,
  url: `https://ci/${name}`,
  logId: null,
  at,
});
const since = { headPushedAt: 0, now: 1000, noChecksMs: 600_000 };

describe('judging checks', () => {
  it('counts only the latest run of each name: a re-run that passed replaces a failure', () => {
    const verdict = judgeChecks(
      [
        check('test', 'failure', '2026-01-01T00:00:00Z'),
        check('test', 'success', '2026-01-01T00:05:00Z'),
      ],
      null,
      since,
    );
    expect(verdict).toEqual({ state: 'passing', failed: [], pending: [] });
  });

  it('passes success, skipped and neutral; fails the six failing conclusions; anything else is pending', () => {
    for (const c of ['success', 'skipped', 'neutral'])
      expect(judgeChecks([check('a', c)], null, since).state).toBe('passing');
    for (const c of [
      'failure',
      'cancelled',
      'timed_out',
      'action_required',
      'startup_failure',
      'stale',
    ])
      expect(judgeChecks([check('a', c)], null, since).state).toBe('failing');
    expect(judgeChecks([check('a', 'mystery')], null, since).state).toBe('pending');
    expect(judgeChecks([check('a', null)], null, since).state).toBe('pending');
  });

  it('lets only the required checks decide, a required one never reported being pending', () => {
    const checks = [check('docs', 'failure'), check('build', 'success')];
    expect(judgeChecks(checks, ['build'], since).state).toBe('passing');
    expect(judgeChecks(checks, ['build', 'deploy'], since)).toMatchObject({
      state: 'pending',
      pending: ['deploy'],
    });
    expect(judgeChecks(checks, [], since).state).toBe('passing');
  });

  it('says none only once noChecksSeconds have passed since the head was pushed, and none never passes', () => {
    expect(
      judgeChecks([], null, { headPushedAt: 0, now: 599_999, noChecksMs: 600_000 }).state,
    ).toBe('pending');
    expect(
      judgeChecks([], null, { headPushedAt: 0, now: 600_000, noChecksMs: 600_000 }).state,
    ).toBe('none');
    expect(judgeChecks([], null, { headPushedAt: null, now: 10 ** 9, noChecksMs: 1 }).state).toBe(
      'pending',
    );
  });

  it('sends failures once every check has finished, or ten minutes after the first failure, never twice on a head', () => {
    const running = judgeChecks([check('lint', 'failure'), check('test', null)], null, since);
    expect(checksToSend(running, 'abc', new Set(), 0, FAILURE_WAIT_MS - 1)).toEqual([]);
    expect(checksToSend(running, 'abc', new Set(), 0, FAILURE_WAIT_MS).map((c) => c.name)).toEqual([
      'lint',
    ]);
    const finished = judgeChecks([check('lint', 'failure'), check('test', 'success')], null, since);
    expect(checksToSend(finished, 'abc', new Set(), 0, 1).map((c) => c.name)).toEqual(['lint']);
    expect(checksToSend(finished, 'abc', new Set([checkKey('abc', 'lint')]), 0, 1)).toEqual([]);
    expect(checksToSend(finished, 'def', new Set([checkKey('abc', 'lint')]), 0, 1)).toHaveLength(1);
  });
});

const item = (over: Partial<JudgedComment>): JudgedComment => ({
  id: 'comment:1',
  kind: 'comment',
  author: 'maintainer',
  authorId: '1',
  association: 'MEMBER',
  body: 'please fix',
  path: null,
  line: null,
  hunk: null,
  reviewState: null,
  at: '2026-01-01T00:00:00Z',
  roles: ['MEMBER'],
  ...over,
});

describe('picking feedback', () => {
  const from = ['OWNER', 'MEMBER', 'COLLABORATOR'] as const;

  it("takes members' comments and reviews asking for changes, ignores strangers, and keeps approvals and gatehouse's own quiet", () => {
    const pick = pickFeedback(
      [
        item({ id: 'a' }),
        item({ id: 'b', author: 'drive-by', roles: ['NONE'] }),
        item({ id: 'c', kind: 'review', reviewState: 'approved', body: 'lgtm' }),
        item({ id: 'd', kind: 'review', reviewState: 'changes_requested', body: '' }),
        item({ id: 'e', kind: 'review', reviewState: 'commented', body: '' }),
        item({ id: 'f', author: 'gatehouse-bot' }),
        item({ id: 'g' }),
      ],
      { sent: new Set(['g']), from: [...from], self: 'gatehouse-bot' },
    );
    expect(pick.candidates.map((c) => c.id)).toEqual(['a', 'd']);
    expect(pick.ignored.map((c) => c.id)).toEqual(['b']);
    expect(pick.quiet.map((c) => c.id)).toEqual(['c', 'e', 'f']);
  });

  it('waits debounceSeconds after the set last grew before sending it', () => {
    let state = debounce(['a'], null, 0, 60_000);
    expect(state.send).toBe(false);
    state = debounce(['a', 'b'], state.waiting, 30_000, 60_000);
    expect(state).toEqual({ waiting: { ids: ['a', 'b'], since: 30_000 }, send: false });
    expect(debounce(['a', 'b'], state.waiting, 89_999, 60_000).send).toBe(false);
    expect(debounce(['a', 'b'], state.waiting, 90_000, 60_000)).toEqual({
      waiting: null,
      send: true,
    });
    expect(debounce([], state.waiting, 90_000, 60_000)).toEqual({ waiting: null, send: false });
  });
});

describe('what goes back to the agent', () => {
  it('keeps the last 100 lines of a log within 16 KiB', () => {
    const log = Array.from({ length: 500 }, (_, i) => `line ${i}`).join('\n');
    const tail = logTail(log);
    expect(tail.split('\n')).toHaveLength(100);
    expect(tail.endsWith('line 499')).toBe(true);
    const wide = Array.from({ length: 100 }, () => 'x'.repeat(1000)).join('\n');
    expect(Buffer.byteLength(logTail(wide))).toBeLessThanOrEqual(LOG_BYTES);
  });

  it('names each failed check with its conclusion, URL and log, fenced so the log cannot close it', () => {
    const text = checksInstructions(
      { number: 3, url: 'https://f/pull/3', headSha: '0123456789abcdef' },
      [{ ...check('lint', 'failure'), log: 'bad\n```\nstill inside' }],
    );
    expect(text).toContain('pull request #3 (https://f/pull/3) failed on 0123456789ab');
    expect(text).toContain('## lint: failure\nhttps://ci/lint');
    expect(text).toMatch(/````\nbad\n```\nstill inside\n````/);
  });

  it('gives each comment its author and place, with its hunk', () => {
    const text = reviewInstructions({ number: 3, url: 'u' }, [
      item({ kind: 'review', reviewState: 'changes_requested', body: 'Rename it.' }),
      item({
        kind: 'review_comment',
        path: 'src/a.ts',
        line: 12,
        hunk: '@@ -1 +1 @@',
        body: 'Here.',
      }),
    ]);
    expect(text).toContain('## Review by maintainer (changes requested)\n\nRename it.');
    expect(text).toContain('## maintainer on src/a.ts:12\n```diff\n@@ -1 +1 @@\n```\n\nHere.');
  });
});
