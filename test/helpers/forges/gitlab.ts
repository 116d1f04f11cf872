// A double of GitLab's REST API v4 as far as gatehouse uses it, following its documented
// requests, answers and errors (merge requests, pipelines and jobs, notes, reviewers, members),
// on a ForgeModel's real bare repository; and a webhook sender that signs as GitLab does.
import { randomUUID } from 'node:crypto';
import { ForgeModel, ForgeServer, type DoubleComment, type DoublePr } from './model.js';

const iso = (ms: number) => new Date(ms).toISOString();
const LEVEL = { OWNER: 50, MEMBER: 30, COLLABORATOR: 30, CONTRIBUTOR: 10, NONE: 0 } as const;

export interface GitlabDouble {
  model: ForgeModel;
  server: ForgeServer;
  url: string;
  token: string;
  close(): Promise<void>;
}

export async function gitlabDouble(
  model: ForgeModel,
  token = 'glpat-test-token-0123',
): Promise<GitlabDouble> {
  const project = `/api/v4/projects/${encodeURIComponent(model.project)}`;
  // One pipeline a head: its id is the head's position in the list of heads seen.
  const pipelines: string[] = [];
  const pipelineOf = (sha: string) => {
    if (!pipelines.includes(sha)) pipelines.push(sha);
    return 500 + pipelines.indexOf(sha);
  };
  const mr = (pr: DoublePr) => {
    const sha = model.headSha(pr.head) ?? '0'.repeat(40);
    const hasJobs = model.checks.some((c) => c.sha === sha);
    return {
      id: 7000 + pr.number,
      iid: pr.number,
      project_id: 42,
      title: pr.draft ? `Draft: ${pr.title}` : pr.title,
      description: pr.body,
      state: pr.merged ? 'merged' : pr.state === 'open' ? 'opened' : 'closed',
      draft: pr.draft,
      work_in_progress: pr.draft,
      source_branch: pr.head,
      target_branch: pr.base,
      sha,
      merge_commit_sha: pr.mergeCommit,
      squash_commit_sha: null,
      author: { id: 7, username: pr.author },
      web_url: `https://gitlab.example.com/${model.project}/-/merge_requests/${pr.number}`,
      created_at: iso(pr.createdAt),
      updated_at: iso(pr.updatedAt),
      merged_at: pr.merged ? iso(pr.updatedAt) : null,
      user_notes_count: model.comments.filter((c) => c.pr === pr.number).length,
      head_pipeline: hasJobs ? { id: pipelineOf(sha), sha, ref: pr.head, status: 'running' } : null,
    };
  };
  const note = (c: DoubleComment) => ({
    id: c.id,
    body: c.body,
    author: { id: c.user.id, username: c.user.login },
    system: false,
    noteable_type: 'MergeRequest',
    created_at: iso(c.at),
    ...(c.path
      ? {
          type: 'DiffNote',
          position: {
            new_path: c.path,
            new_line: c.line,
            old_path: c.path,
            old_line: null,
            position_type: 'text',
          },
        }
      : { type: null }),
  });
  const server = new ForgeServer(
    (req) =>
      req.headers['private-token'] === token || req.headers.authorization === `Bearer ${token}`,
    { status: 401, body: { message: '401 Unauthorized' } },
    (req, url, raw) => {
      const p = url.pathname;
      const json = (status: number, body: unknown) => ({ status, body });
      if (p === '/api/v4/user') return json(200, { id: 7, username: 'gatehouse-bot' });
      if (p === `${project}/merge_requests` && req.method === 'GET') {
        const branch = url.searchParams.get('source_branch');
        let list = [...model.prs].reverse();
        if (branch) list = list.filter((x) => x.head === branch);
        return json(200, list.map(mr));
      }
      if (p === `${project}/merge_requests` && req.method === 'POST') {
        const body = JSON.parse(raw) as {
          source_branch?: string;
          target_branch?: string;
          title?: string;
          description?: string;
        };
        if (!body.source_branch || !body.target_branch || !body.title)
          return json(400, { message: 'title is missing' });
        const open = model.prs.find((x) => x.head === body.source_branch && x.state === 'open');
        if (open)
          return json(409, {
            message: [
              `Another open merge request already exists for this source branch: !${open.number}`,
            ],
          });
        const draft = /^(Draft:|\[Draft\]|WIP:)/i.test(body.title);
        const pr = model.open(
          body.source_branch,
          body.target_branch,
          body.title.replace(/^Draft:\s*/i, ''),
          body.description ?? '',
          draft,
        );
        return json(201, mr(pr));
      }
      let m = new RegExp(
        `^${project.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/merge_requests/(\\d+)(/.*)?$`,
      ).exec(p);
      if (m) {
        const pr = model.prs.find((x) => x.number === Number(m![1]));
        if (!pr) return json(404, { message: '404 Not found' });
        const rest = m[2] ?? '';
        if (rest === '') return json(200, mr(pr));
        if (rest === '/notes')
          return json(
            200,
            model.comments
              .filter((c) => c.pr === pr.number && c.kind !== 'review')
              .map(note)
              .concat(
                // A system note (pushes, approvals) is GitLab's own, never feedback.
                [
                  {
                    id: 1,
                    body: 'added 1 commit',
                    author: { id: 7, username: 'gatehouse-bot' },
                    system: true,
                    noteable_type: 'MergeRequest',
                    created_at: iso(pr.createdAt),
                    type: null,
                  },
                ],
              ),
          );
        if (rest === '/reviewers') {
          const latest = new Map<string, DoubleComment>();
          for (const c of model.comments)
            if (c.pr === pr.number && c.kind === 'review') latest.set(c.user.login, c);
          return json(
            200,
            [...latest.values()].map((c) => ({
              user: { id: c.user.id, username: c.user.login },
              state:
                c.state === 'CHANGES_REQUESTED'
                  ? 'requested_changes'
                  : c.state === 'APPROVED'
                    ? 'approved'
                    : 'reviewed',
              created_at: iso(c.at),
            })),
          );
        }
        return null;
      }
      m = new RegExp(`/pipelines/(\\d+)/jobs$`).exec(p);
      if (m && p.startsWith(project)) {
        const sha = pipelines[Number(m[1]) - 500];
        return json(
          200,
          model.checks
            .filter((c) => c.sha === sha)
            .map((c) => ({
              id: c.id,
              name: c.name,
              stage: 'test',
              status:
                c.conclusion === null
                  ? 'running'
                  : c.conclusion === 'success'
                    ? 'success'
                    : c.conclusion === 'skipped'
                      ? 'skipped'
                      : 'failed',
              allow_failure: c.conclusion === 'neutral',
              web_url: `https://gitlab.example.com/${model.project}/-/jobs/${c.id}`,
              created_at: iso(c.at),
              started_at: iso(c.at),
              finished_at: c.conclusion === null ? null : iso(c.at),
            })),
        );
      }
      m = new RegExp(`/jobs/(\\d+)/trace$`).exec(p);
      if (m && p.startsWith(project)) {
        const check = model.checks.find((c) => c.id === Number(m![1]));
        return check
          ? { status: 200, text: check.log ?? '' }
          : json(404, { message: '404 Not found' });
      }
      m = new RegExp(`/members/all/(\\d+)$`).exec(p);
      if (m && p.startsWith(project)) {
        const user = [...model.users.values()].find((u) => u.id === Number(m[1]));
        const level = user ? LEVEL[user.association] : 0;
        if (!user || level === 0) return json(404, { message: '404 Not found' });
        return json(200, {
          id: user.id,
          username: user.login,
          access_level: level,
          state: 'active',
        });
      }
      return null;
    },
  );
  await server.start();
  return { model, server, url: `${server.url}/api/v4`, token, close: () => server.close() };
}

/** Sends a webhook delivery as GitLab does: the secret token in a header, the same Idempotency-Key on retries. */
export async function gitlabDeliver(
  url: string,
  secret: string,
  event: string,
  payload: unknown,
  id: string = randomUUID(),
): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'GitLab/17.6.0',
      'x-gitlab-event': event,
      'x-gitlab-token': secret,
      'idempotency-key': id,
      'x-gitlab-event-uuid': randomUUID(),
      'x-gitlab-webhook-uuid': randomUUID(),
    },
    body: JSON.stringify(payload),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
