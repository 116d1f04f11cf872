// GitLab (gitlab.com and self-managed) over its REST API v4: merge requests, the head pipeline's
// jobs and their traces, notes, reviewers, and members' access levels.
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

interface GlMr {
  iid: number;
  web_url: string;
  state: 'opened' | 'closed' | 'locked' | 'merged';
  draft?: boolean;
  work_in_progress?: boolean;
  source_branch: string;
  target_branch: string;
  sha: string;
  merge_commit_sha: string | null;
  squash_commit_sha?: string | null;
  updated_at: string;
  head_pipeline?: { id: number; sha: string } | null;
}

interface GlJob {
  id: number;
  name: string;
  status: string;
  allow_failure: boolean;
  web_url: string;
  started_at: string | null;
  finished_at: string | null;
  created_at: string;
}

interface GlUser {
  id: number;
  username: string;
}

interface GlNote {
  id: number;
  body: string;
  author: GlUser;
  system: boolean;
  created_at: string;
  position?: {
    new_path?: string | null;
    new_line?: number | null;
    old_path?: string | null;
    old_line?: number | null;
  } | null;
}

/** Developer: the least access that counts as a member or a collaborator. */
const DEVELOPER = 30;
const OWNER = 50;

export class GitLab implements Forge {
  readonly provider = 'gitlab' as const;
  private readonly http: ForgeHttp;
  private readonly project: string;
  private readonly roles = new Map<string, (Association | 'NONE')[]>();
  private login: string | null | undefined;

  constructor(
    private readonly config: PullRequestConfig,
    onRequest: (outcome: RequestOutcome) => void,
  ) {
    this.project = `/projects/${encodeURIComponent(config.project)}`;
    this.http = new ForgeHttp({
      provider: 'gitlab',
      base: config.api,
      headers: { 'private-token': config.token, 'user-agent': 'gatehouse' },
      onRequest,
    });
  }

  async prsOfBranch(branch: string): Promise<ForgePr[]> {
    const { body } = await this.http.get<GlMr[]>(
      `${this.project}/merge_requests?source_branch=${encodeURIComponent(branch)}&state=all&order_by=created_at&sort=desc&per_page=100`,
    );
    return body.filter((m) => m.source_branch === branch).map(toPr);
  }

  async create(request: {
    branch: string;
    base: string;
    title: string;
    body: string;
    draft: boolean;
  }): Promise<Created> {
    const answer = await this.http.request<GlMr & { message?: unknown }>(
      'POST',
      `${this.project}/merge_requests`,
      {
        source_branch: request.branch,
        target_branch: request.base,
        title: request.draft ? `Draft: ${request.title}` : request.title,
        description: request.body,
      },
      [409],
    );
    if (answer.status === 409) {
      // "Another open merge request already exists for this source branch: !N" (maybe translated).
      const said = JSON.stringify(answer.body?.message ?? '');
      const iid = /!(\d+)/.exec(said);
      return { exists: iid ? Number(iid[1]) : null };
    }
    return { pr: toPr(answer.body) };
  }

  async get(number: number): Promise<ForgePr | 'unchanged'> {
    const answer = await this.http.get<GlMr>(`${this.project}/merge_requests/${number}`, true);
    if (answer.unchanged) return 'unchanged';
    this.pipelines.set(number, answer.body.head_pipeline ?? null);
    return toPr(answer.body);
  }

  /** Each merge request's head pipeline as its last answer named it. */
  private readonly pipelines = new Map<number, { id: number; sha: string } | null>();

  numberOf(url: string): number | null {
    const match = /^https?:\/\/[^/]+\/(.+?)\/-\/merge_requests\/(\d+)\/?$/.exec(url);
    return match && match[1]!.toLowerCase() === this.config.project.toLowerCase()
      ? Number(match[2])
      : null;
  }

  async checks(pr: ForgePr): Promise<ForgeCheck[]> {
    let pipeline = this.pipelines.get(pr.number);
    if (pipeline === undefined) {
      pipeline =
        (await this.http.get<GlMr>(`${this.project}/merge_requests/${pr.number}`)).body
          .head_pipeline ?? null;
      this.pipelines.set(pr.number, pipeline);
    }
    if (!pipeline || pipeline.sha !== pr.headSha) return [];
    const { body } = await this.http.get<GlJob[]>(
      `${this.project}/pipelines/${pipeline.id}/jobs?per_page=100`,
    );
    return body.map((job) => {
      const conclusion = conclusionOf(job);
      return {
        name: job.name,
        status: conclusion === null ? 'pending' : 'completed',
        conclusion,
        url: job.web_url,
        logId: String(job.id),
        at: job.finished_at ?? job.started_at ?? job.created_at,
      };
    });
  }

  /** GitLab keeps no list of required jobs (without a paid tier): every job of the pipeline. */
  async requiredChecks(): Promise<string[] | null> {
    return null;
  }

  async log(check: ForgeCheck): Promise<string | null> {
    if (check.logId === null) return null;
    return this.http.text(`${this.project}/jobs/${check.logId}/trace`, 256 * 1024);
  }

  async feedback(pr: ForgePr): Promise<ForgeComment[]> {
    const [notes, reviewers] = await Promise.all([
      this.http.get<GlNote[]>(
        `${this.project}/merge_requests/${pr.number}/notes?sort=asc&order_by=created_at&per_page=100`,
      ),
      this.http
        .get<{ user: GlUser; state: string; created_at: string }[]>(
          `${this.project}/merge_requests/${pr.number}/reviewers`,
        )
        .catch((err: unknown) => {
          // An older GitLab without reviewers' states: notes alone.
          if (err instanceof ForgeError && err.kind === 'not_found') return { body: [] };
          throw err;
        }),
    ]);
    const items: ForgeComment[] = [];
    for (const r of reviewers.body)
      if (r.state === 'requested_changes')
        items.push({
          id: `review:${r.user.id}:${r.created_at}`,
          kind: 'review',
          author: r.user.username,
          authorId: String(r.user.id),
          association: null,
          body: '',
          path: null,
          line: null,
          hunk: null,
          reviewState: 'changes_requested',
          at: r.created_at,
        });
    for (const n of notes.body) {
      if (n.system) continue;
      const path = n.position?.new_path ?? n.position?.old_path ?? null;
      items.push({
        id: `note:${n.id}`,
        kind: path ? 'review_comment' : 'comment',
        author: n.author.username,
        authorId: String(n.author.id),
        association: null,
        body: n.body,
        path,
        line: n.position?.new_line ?? n.position?.old_line ?? null,
        hunk: null,
        reviewState: null,
        at: n.created_at,
      });
    }
    return items.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  }

  /** OWNER: the project's owner (access 50); MEMBER and COLLABORATOR: at least Developer (30). */
  async associations(item: ForgeComment): Promise<(Association | 'NONE')[]> {
    if (item.authorId === null) return ['NONE'];
    const cached = this.roles.get(item.authorId);
    if (cached) return cached;
    let level = 0;
    try {
      level = (
        await this.http.get<{ access_level: number }>(
          `${this.project}/members/all/${item.authorId}`,
        )
      ).body.access_level;
    } catch (err) {
      if (!(err instanceof ForgeError) || err.kind !== 'not_found') throw err;
    }
    const roles: (Association | 'NONE')[] =
      level >= OWNER
        ? ['OWNER', 'MEMBER', 'COLLABORATOR']
        : level >= DEVELOPER
          ? ['MEMBER', 'COLLABORATOR']
          : ['NONE'];
    this.roles.set(item.authorId, roles);
    return roles;
  }

  async self(): Promise<string | null> {
    if (this.login === undefined) this.login = (await this.http.get<GlUser>('/user')).body.username;
    return this.login;
  }
}

/** A job's outcome in the words checks use; null while it has not finished. */
function conclusionOf(job: GlJob): string | null {
  switch (job.status) {
    case 'success':
      return 'success';
    case 'failed':
      // A job allowed to fail decides nothing.
      return job.allow_failure ? 'neutral' : 'failure';
    case 'canceled':
      return 'cancelled';
    case 'skipped':
    case 'manual':
      return 'skipped';
    default:
      return null;
  }
}

function toPr(m: GlMr): ForgePr {
  return {
    number: m.iid,
    url: m.web_url,
    state: m.state === 'merged' ? 'merged' : m.state === 'opened' ? 'open' : 'closed',
    draft: m.draft ?? m.work_in_progress ?? false,
    headRef: m.source_branch,
    headSha: m.sha,
    baseRef: m.target_branch,
    mergeCommit: m.state === 'merged' ? (m.merge_commit_sha ?? m.squash_commit_sha ?? m.sha) : null,
    updatedAt: m.updated_at,
  };
}
