// GitHub (and GitHub Enterprise Server) over its REST API, version 2022-11-28: pull requests,
// check runs and commit statuses, Actions job logs, reviews and comments.
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

interface GhPull {
  number: number;
  html_url: string;
  state: 'open' | 'closed';
  draft?: boolean;
  merged?: boolean;
  merged_at: string | null;
  merge_commit_sha: string | null;
  updated_at: string;
  head: { ref: string; sha: string };
  base: { ref: string };
}

interface GhCheckRun {
  id: number;
  name: string;
  status: string;
  conclusion: string | null;
  html_url: string | null;
  details_url: string | null;
  started_at: string | null;
  completed_at: string | null;
  app?: { slug?: string } | null;
}

interface GhStatus {
  id: number;
  context: string;
  state: 'pending' | 'success' | 'failure' | 'error';
  target_url: string | null;
  updated_at: string;
}

interface GhUser {
  login: string;
  id: number;
}

interface GhReview {
  id: number;
  user: GhUser | null;
  body: string | null;
  state: string;
  author_association: string;
  submitted_at: string | null;
}

interface GhComment {
  id: number;
  user: GhUser | null;
  body: string;
  author_association: string;
  created_at: string;
  path?: string;
  line?: number | null;
  original_line?: number | null;
  diff_hunk?: string;
}

const ASSOCIATIONS = new Set(['OWNER', 'MEMBER', 'COLLABORATOR', 'CONTRIBUTOR']);
const association = (a: string): Association | 'NONE' =>
  ASSOCIATIONS.has(a) ? (a as Association) : 'NONE';

export class GitHub implements Forge {
  readonly provider = 'github' as const;
  private readonly http: ForgeHttp;
  private readonly repo: string;
  private login: string | null | undefined;

  constructor(
    private readonly config: PullRequestConfig,
    onRequest: (outcome: RequestOutcome) => void,
  ) {
    this.repo = `/repos/${config.project}`;
    this.http = new ForgeHttp({
      provider: 'github',
      base: config.api,
      headers: {
        authorization: `Bearer ${config.token}`,
        accept: 'application/vnd.github+json',
        'x-github-api-version': '2022-11-28',
        'user-agent': 'gatehouse',
      },
      onRequest,
    });
  }

  async prsOfBranch(branch: string): Promise<ForgePr[]> {
    const owner = this.config.project.split('/')[0]!;
    const head = encodeURIComponent(`${owner}:${branch}`);
    const { body } = await this.http.get<GhPull[]>(
      `${this.repo}/pulls?head=${head}&state=all&sort=created&direction=desc&per_page=100`,
    );
    // A head GitHub does not recognise is ignored there (every PR comes back): filtered here too.
    return body.filter((p) => p.head.ref === branch).map(toPr);
  }

  async create(request: {
    branch: string;
    base: string;
    title: string;
    body: string;
    draft: boolean;
  }): Promise<Created> {
    const answer = await this.http.request<GhPull & { errors?: { message?: string }[] }>(
      'POST',
      `${this.repo}/pulls`,
      {
        title: request.title,
        head: request.branch,
        base: request.base,
        body: request.body,
        draft: request.draft,
      },
      [422],
    );
    if (answer.status === 422) {
      const said = JSON.stringify(answer.body ?? {});
      // The "already exists" answer names no number: the caller finds it by its branch.
      if (/already exists/i.test(said)) return { exists: null };
      throw new ForgeError(
        'refused',
        422,
        `github refused the pull request: ${said.slice(0, 300)}`,
      );
    }
    return { pr: toPr(answer.body) };
  }

  async get(number: number): Promise<ForgePr | 'unchanged'> {
    const answer = await this.http.get<GhPull>(`${this.repo}/pulls/${number}`, true);
    return answer.unchanged ? 'unchanged' : toPr(answer.body);
  }

  numberOf(url: string): number | null {
    const match = /^https?:\/\/[^/]+\/([^/]+\/[^/]+)\/pull\/(\d+)\/?$/.exec(url);
    return match && match[1]!.toLowerCase() === this.config.project.toLowerCase()
      ? Number(match[2])
      : null;
  }

  async checks(pr: ForgePr): Promise<ForgeCheck[]> {
    const [runs, status] = await Promise.all([
      this.http.get<{ check_runs: GhCheckRun[] }>(
        `${this.repo}/commits/${pr.headSha}/check-runs?per_page=100`,
      ),
      this.http.get<{ statuses: GhStatus[] }>(
        `${this.repo}/commits/${pr.headSha}/status?per_page=100`,
      ),
    ]);
    const checks: ForgeCheck[] = runs.body.check_runs.map((run) => ({
      name: run.name,
      status: run.status === 'completed' ? 'completed' : 'pending',
      conclusion: run.status === 'completed' ? (run.conclusion ?? 'neutral') : null,
      url: run.html_url ?? run.details_url,
      // An Actions check run's id is its job's: its log is the job's.
      logId: run.app?.slug === 'github-actions' ? String(run.id) : null,
      at: run.completed_at ?? run.started_at ?? '',
    }));
    for (const s of status.body.statuses)
      checks.push({
        name: s.context,
        status: s.state === 'pending' ? 'pending' : 'completed',
        conclusion: s.state === 'pending' ? null : s.state === 'success' ? 'success' : 'failure',
        url: s.target_url,
        logId: null,
        at: s.updated_at,
      });
    return checks;
  }

  async requiredChecks(base: string): Promise<string[] | null> {
    const branch = encodeURIComponent(base);
    const names = new Set<string>();
    let told = false;
    try {
      const { body } = await this.http.get<{ contexts?: string[]; checks?: { context: string }[] }>(
        `${this.repo}/branches/${branch}/protection/required_status_checks`,
      );
      told = true;
      for (const c of body.contexts ?? []) names.add(c);
      for (const c of body.checks ?? []) names.add(c.context);
    } catch (err) {
      // Not protected (404), or a token that may not read protection (403): the rulesets may say.
      if (!(err instanceof ForgeError) || (err.kind !== 'not_found' && err.kind !== 'auth'))
        throw err;
    }
    try {
      const { body } = await this.http.get<
        { type: string; parameters?: { required_status_checks?: { context: string }[] } }[]
      >(`${this.repo}/rules/branches/${branch}`);
      for (const rule of body)
        if (rule.type === 'required_status_checks') {
          told = true;
          for (const c of rule.parameters?.required_status_checks ?? []) names.add(c.context);
        }
    } catch (err) {
      if (!(err instanceof ForgeError) || err.kind !== 'not_found') throw err;
    }
    return told ? [...names] : null;
  }

  async log(check: ForgeCheck): Promise<string | null> {
    if (check.logId === null) return null;
    return this.http.text(`${this.repo}/actions/jobs/${check.logId}/logs`, 256 * 1024);
  }

  async feedback(pr: ForgePr): Promise<ForgeComment[]> {
    const [reviews, lineComments, comments] = await Promise.all([
      this.http.get<GhReview[]>(`${this.repo}/pulls/${pr.number}/reviews?per_page=100`),
      this.http.get<GhComment[]>(`${this.repo}/pulls/${pr.number}/comments?per_page=100`),
      this.http.get<GhComment[]>(`${this.repo}/issues/${pr.number}/comments?per_page=100`),
    ]);
    const items: ForgeComment[] = [];
    for (const r of reviews.body) {
      if (r.state === 'PENDING') continue;
      items.push({
        id: `review:${r.id}`,
        kind: 'review',
        author: r.user?.login ?? 'ghost',
        authorId: r.user ? String(r.user.id) : null,
        association: association(r.author_association),
        body: r.body ?? '',
        path: null,
        line: null,
        hunk: null,
        reviewState:
          r.state === 'CHANGES_REQUESTED'
            ? 'changes_requested'
            : r.state === 'APPROVED'
              ? 'approved'
              : 'commented',
        at: r.submitted_at ?? '',
      });
    }
    for (const c of lineComments.body)
      items.push({
        ...comment(c, `review_comment:${c.id}`, 'review_comment'),
        path: c.path ?? null,
        line: c.line ?? c.original_line ?? null,
        hunk: c.diff_hunk ?? null,
      });
    for (const c of comments.body) items.push(comment(c, `comment:${c.id}`, 'comment'));
    return items.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  }

  /** GitHub says each author's association in the answer itself. */
  async associations(item: ForgeComment): Promise<(Association | 'NONE')[]> {
    return [item.association ?? 'NONE'];
  }

  async self(): Promise<string | null> {
    if (this.login === undefined) {
      try {
        this.login = (await this.http.get<GhUser>('/user')).body.login;
      } catch (err) {
        // An App's installation token has no user: its comments are a bot's, not a member's.
        if (!(err instanceof ForgeError) || (err.kind !== 'auth' && err.kind !== 'not_found'))
          throw err;
        this.login = null;
      }
    }
    return this.login;
  }
}

function comment(c: GhComment, id: string, kind: ForgeComment['kind']): ForgeComment {
  return {
    id,
    kind,
    author: c.user?.login ?? 'ghost',
    authorId: c.user ? String(c.user.id) : null,
    association: association(c.author_association),
    body: c.body,
    path: null,
    line: null,
    hunk: null,
    reviewState: null,
    at: c.created_at,
  };
}

function toPr(p: GhPull): ForgePr {
  const merged = p.merged === true || p.merged_at !== null;
  return {
    number: p.number,
    url: p.html_url,
    state: merged ? 'merged' : p.state === 'open' ? 'open' : 'closed',
    draft: p.draft === true,
    headRef: p.head.ref,
    headSha: p.head.sha,
    baseRef: p.base.ref,
    mergeCommit: merged ? p.merge_commit_sha : null,
    updatedAt: p.updated_at,
  };
}
