// Gitea and Forgejo over their REST API v1: pull requests, commit statuses, branch protection's
// status contexts, reviews and comments, and collaborators' permissions.
import type { Association, PullRequestConfig } from '../config/schema.js';
import { ForgeHttp, type RequestOutcome } from './http.js';
import {
  ForgeError,
  type Created,
  type Forge,
  type ForgeCheck,
  type ForgeComment,
  type ForgePr,
} from './types.js';

interface GtPull {
  number: number;
  html_url: string;
  state: 'open' | 'closed';
  draft?: boolean;
  title: string;
  merged: boolean;
  merge_commit_sha: string | null;
  updated_at: string;
  head: { ref: string; sha: string };
  base: { ref: string };
}

interface GtUser {
  id: number;
  login: string;
}

interface GtStatus {
  id: number;
  context: string;
  status: 'pending' | 'success' | 'error' | 'failure' | 'warning';
  target_url: string | null;
  updated_at: string;
}

interface GtReview {
  id: number;
  user: GtUser | null;
  body: string;
  state: string;
  submitted_at: string;
}

interface GtComment {
  id: number;
  user: GtUser | null;
  body: string;
  created_at: string;
  path?: string;
  position?: number;
  original_position?: number;
  diff_hunk?: string;
}

export class Gitea implements Forge {
  readonly provider = 'gitea' as const;
  private readonly http: ForgeHttp;
  private readonly repo: string;
  private readonly roles = new Map<string, (Association | 'NONE')[]>();
  private login: string | null | undefined;

  constructor(
    private readonly config: PullRequestConfig,
    onRequest: (outcome: RequestOutcome) => void,
  ) {
    this.repo = `/repos/${config.project}`;
    this.http = new ForgeHttp({
      provider: 'gitea',
      base: config.api,
      headers: { authorization: `token ${config.token}`, 'user-agent': 'gatehouse' },
      onRequest,
    });
  }

  /** Gitea cannot list by head branch: it is asked for the one PR of this base and head. */
  async prsOfBranch(branch: string, base: string): Promise<ForgePr[]> {
    try {
      const { body } = await this.http.get<GtPull>(
        `${this.repo}/pulls/${encodeURIComponent(base)}/${encodeURIComponent(branch)}`,
      );
      return body.head.ref === branch ? [toPr(body)] : [];
    } catch (err) {
      if (err instanceof ForgeError && err.kind === 'not_found') return [];
      throw err;
    }
  }

  async create(request: {
    branch: string;
    base: string;
    title: string;
    body: string;
    draft: boolean;
  }): Promise<Created> {
    const answer = await this.http.request<GtPull & { message?: string }>(
      'POST',
      `${this.repo}/pulls`,
      {
        head: request.branch,
        base: request.base,
        // Gitea marks a draft by its title's prefix.
        title: request.draft ? `WIP: ${request.title}` : request.title,
        body: request.body,
      },
      [409],
    );
    if (answer.status === 409) {
      // "pull request already exists for these targets [id: 7, issue_id: 3, …]": 3 is its number.
      const number = /issue_id: (\d+)/.exec(answer.body?.message ?? '');
      return { exists: number ? Number(number[1]) : null };
    }
    return { pr: toPr(answer.body) };
  }

  async get(number: number): Promise<ForgePr | 'unchanged'> {
    const answer = await this.http.get<GtPull>(`${this.repo}/pulls/${number}`, true);
    return answer.unchanged ? 'unchanged' : toPr(answer.body);
  }

  numberOf(url: string): number | null {
    const match = /^https?:\/\/[^/]+\/([^/]+\/[^/]+)\/pulls\/(\d+)\/?$/.exec(url);
    return match && match[1]!.toLowerCase() === this.config.project.toLowerCase()
      ? Number(match[2])
      : null;
  }

  async checks(pr: ForgePr): Promise<ForgeCheck[]> {
    const { body } = await this.http.get<GtStatus[]>(
      `${this.repo}/commits/${pr.headSha}/statuses?limit=50`,
    );
    return body.map((s) => ({
      name: s.context,
      status: s.status === 'pending' ? 'pending' : 'completed',
      conclusion:
        s.status === 'pending'
          ? null
          : s.status === 'success'
            ? 'success'
            : s.status === 'warning'
              ? 'neutral'
              : 'failure',
      url: s.target_url,
      logId: null,
      at: s.updated_at,
    }));
  }

  /** The branch's protection says its status contexts to any reader (its own route needs admin). */
  async requiredChecks(base: string): Promise<string[] | null> {
    const { body } = await this.http.get<{
      enable_status_check?: boolean;
      status_check_contexts?: string[] | null;
    }>(`${this.repo}/branches/${encodeURIComponent(base)}`);
    return body.enable_status_check ? (body.status_check_contexts ?? []) : null;
  }

  async log(): Promise<string | null> {
    return null;
  }

  async feedback(pr: ForgePr): Promise<ForgeComment[]> {
    const [reviews, comments] = await Promise.all([
      this.http.get<GtReview[]>(`${this.repo}/pulls/${pr.number}/reviews?limit=50`),
      this.http.get<GtComment[]>(`${this.repo}/issues/${pr.number}/comments?limit=50`),
    ]);
    const items: ForgeComment[] = [];
    const withComments = reviews.body.filter(
      (r) => r.state !== 'PENDING' && r.state !== 'REQUEST_REVIEW',
    );
    const lineComments = await Promise.all(
      withComments.map((r) =>
        this.http.get<GtComment[]>(`${this.repo}/pulls/${pr.number}/reviews/${r.id}/comments`),
      ),
    );
    withComments.forEach((r, i) => {
      items.push({
        id: `review:${r.id}`,
        kind: 'review',
        author: r.user?.login ?? 'ghost',
        authorId: r.user ? String(r.user.id) : null,
        association: null,
        body: r.body,
        path: null,
        line: null,
        hunk: null,
        reviewState:
          r.state === 'REQUEST_CHANGES'
            ? 'changes_requested'
            : r.state === 'APPROVED'
              ? 'approved'
              : 'commented',
        at: r.submitted_at,
      });
      for (const c of lineComments[i]!.body)
        items.push({
          ...comment(c, `review_comment:${c.id}`, 'review_comment'),
          path: c.path ?? null,
          // Gitea's position is the line in the new file (not a place in the diff).
          line: c.position || c.original_position || null,
          hunk: c.diff_hunk ?? null,
        });
    });
    for (const c of comments.body) items.push(comment(c, `comment:${c.id}`, 'comment'));
    return items.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  }

  /** OWNER: the repository's owner; MEMBER and COLLABORATOR: write access or more. */
  async associations(item: ForgeComment): Promise<(Association | 'NONE')[]> {
    const cached = this.roles.get(item.author);
    if (cached) return cached;
    let permission = 'none';
    try {
      permission = (
        await this.http.get<{ permission: string }>(
          `${this.repo}/collaborators/${encodeURIComponent(item.author)}/permission`,
        )
      ).body.permission;
    } catch (err) {
      if (!(err instanceof ForgeError) || (err.kind !== 'not_found' && err.kind !== 'refused'))
        throw err;
    }
    const owner = item.author.toLowerCase() === this.config.project.split('/')[0]!.toLowerCase();
    const roles: (Association | 'NONE')[] =
      owner || permission === 'owner'
        ? ['OWNER', 'MEMBER', 'COLLABORATOR']
        : permission === 'admin' || permission === 'write'
          ? ['MEMBER', 'COLLABORATOR']
          : ['NONE'];
    this.roles.set(item.author, roles);
    return roles;
  }

  async self(): Promise<string | null> {
    if (this.login === undefined) this.login = (await this.http.get<GtUser>('/user')).body.login;
    return this.login;
  }
}

function comment(c: GtComment, id: string, kind: ForgeComment['kind']): ForgeComment {
  return {
    id,
    kind,
    author: c.user?.login ?? 'ghost',
    authorId: c.user ? String(c.user.id) : null,
    association: null,
    body: c.body,
    path: null,
    line: null,
    hunk: null,
    reviewState: null,
    at: c.created_at,
  };
}

function toPr(p: GtPull): ForgePr {
  return {
    number: p.number,
    url: p.html_url,
    state: p.merged ? 'merged' : p.state === 'open' ? 'open' : 'closed',
    draft: p.draft ?? /^(WIP:|\[WIP\])/i.test(p.title),
    headRef: p.head.ref,
    headSha: p.head.sha,
    baseRef: p.base.ref,
    mergeCommit: p.merged ? p.merge_commit_sha : null,
    updatedAt: p.updated_at,
  };
}
