// A double of GitHub's REST API (version 2022-11-28) as far as gatehouse uses it, following its
// documented requests, answers and errors, on a ForgeModel's real bare repository; and a webhook
// sender that signs as GitHub does.
import { createHmac, randomUUID } from 'node:crypto';
import { etagOf, ForgeModel, ForgeServer, type DoubleComment, type DoublePr } from './model.js';

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export function githubPull(model: ForgeModel, base: string, pr: DoublePr) {
  const sha = model.headSha(pr.head) ?? '0'.repeat(40);
  return {
    url: `${base}/repos/${model.project}/pulls/${pr.number}`,
    id: 9000 + pr.number,
    number: pr.number,
    html_url: `https://github.com/${model.project}/pull/${pr.number}`,
    state: pr.state,
    locked: false,
    title: pr.title,
    body: pr.body,
    user: { login: pr.author, id: 7, type: 'User' },
    draft: pr.draft,
    created_at: iso(pr.createdAt),
    updated_at: iso(pr.updatedAt),
    closed_at: pr.state === 'closed' ? iso(pr.updatedAt) : null,
    merged_at: pr.merged ? iso(pr.updatedAt) : null,
    merge_commit_sha: pr.mergeCommit ?? 'f'.repeat(40),
    head: { label: `${model.project.split('/')[0]}:${pr.head}`, ref: pr.head, sha },
    base: {
      label: `${model.project.split('/')[0]}:${pr.base}`,
      ref: pr.base,
      sha: model.headSha(pr.base),
    },
    author_association: 'MEMBER',
    comments: model.comments.filter((c) => c.pr === pr.number && c.kind === 'comment').length,
    review_comments: model.comments.filter((c) => c.pr === pr.number && c.kind === 'review_comment')
      .length,
  };
}

function userOf(c: DoubleComment) {
  return { login: c.user.login, id: c.user.id, type: 'User' };
}

export interface GithubDouble {
  model: ForgeModel;
  server: ForgeServer;
  url: string;
  token: string;
  close(): Promise<void>;
}

export async function githubDouble(
  model: ForgeModel,
  token = 'ghp_test_token_0123456789',
): Promise<GithubDouble> {
  const repo = `/repos/${model.project}`;
  let base = '';
  const server = new ForgeServer(
    (req) =>
      req.headers.authorization === `Bearer ${token}` ||
      req.headers.authorization === `token ${token}`,
    {
      status: 401,
      body: { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' },
    },
    (req, url, raw) => {
      const p = url.pathname;
      const rate = {
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '4999',
        'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
      };
      const json = (status: number, body: unknown) => ({ status, body, headers: rate });
      const conditional = (body: unknown) => {
        const etag = etagOf(body);
        if (req.headers['if-none-match'] === etag)
          return { status: 304, headers: { ...rate, etag } };
        return { status: 200, body, headers: { ...rate, etag } };
      };
      if (p === '/user') return json(200, { login: 'gatehouse-bot', id: 7, type: 'User' });
      if (p === `${repo}/pulls` && req.method === 'GET') {
        const head = url.searchParams.get('head');
        const state = url.searchParams.get('state') ?? 'open';
        const owner = model.project.split('/')[0];
        let prs = [...model.prs].reverse();
        // A head without its owner is ignored by GitHub: every PR comes back.
        if (head?.startsWith(`${owner}:`))
          prs = prs.filter((x) => x.head === head.slice(owner!.length + 1));
        if (state !== 'all') prs = prs.filter((x) => x.state === state);
        return json(
          200,
          prs.map((x) => {
            const full = githubPull(model, base, x);
            // Only the single-PR GET says `merged`.
            const { comments: _c, review_comments: _r, ...simple } = full;
            return simple;
          }),
        );
      }
      if (p === `${repo}/pulls` && req.method === 'POST') {
        const body = JSON.parse(raw) as {
          title?: string;
          head?: string;
          base?: string;
          body?: string;
          draft?: boolean;
        };
        if (!body.title || !body.head || !body.base)
          return json(422, {
            message: 'Validation Failed',
            errors: [{ resource: 'PullRequest', code: 'missing_field' }],
          });
        if (model.headSha(body.head) === null)
          return json(422, {
            message: 'Validation Failed',
            errors: [{ resource: 'PullRequest', field: 'head', code: 'invalid' }],
          });
        if (model.prs.some((x) => x.head === body.head && x.state === 'open'))
          return json(422, {
            message: 'Validation Failed',
            errors: [
              {
                resource: 'PullRequest',
                code: 'custom',
                message: `A pull request already exists for ${model.project.split('/')[0]}:${body.head}.`,
              },
            ],
            documentation_url: 'https://docs.github.com/rest/pulls/pulls#create-a-pull-request',
          });
        if (model.ahead(body.head, body.base) === 0)
          return json(422, {
            message: 'Validation Failed',
            errors: [
              {
                resource: 'PullRequest',
                code: 'custom',
                message: `No commits between ${body.base} and ${body.head}`,
              },
            ],
          });
        const pr = model.open(
          body.head,
          body.base,
          body.title,
          body.body ?? '',
          body.draft === true,
        );
        return json(201, { ...githubPull(model, base, pr), merged: false });
      }
      let m = new RegExp(`^${repo}/pulls/(\\d+)$`).exec(p);
      if (m) {
        const pr = model.prs.find((x) => x.number === Number(m![1]));
        if (!pr) return json(404, { message: 'Not Found' });
        return conditional({ ...githubPull(model, base, pr), merged: pr.merged });
      }
      m = new RegExp(`^${repo}/commits/([^/]+)/check-runs$`).exec(p);
      if (m) {
        const runs = model.checks.filter((c) => c.sha === m![1] && !c.name.startsWith('status:'));
        return json(200, {
          total_count: runs.length,
          check_runs: runs.map((c) => ({
            id: c.id,
            name: c.name,
            head_sha: c.sha,
            status: c.status,
            conclusion: c.conclusion,
            html_url: `https://github.com/${model.project}/actions/runs/1/job/${c.id}`,
            details_url: `https://github.com/${model.project}/actions/runs/1/job/${c.id}`,
            started_at: iso(c.at),
            completed_at: c.status === 'completed' ? iso(c.at) : null,
            app: { slug: 'github-actions' },
          })),
        });
      }
      m = new RegExp(`^${repo}/commits/([^/]+)/status$`).exec(p);
      if (m) {
        const statuses = model.checks.filter(
          (c) => c.sha === m![1] && c.name.startsWith('status:'),
        );
        return json(200, {
          state: statuses.length === 0 ? 'pending' : 'success',
          sha: m[1],
          total_count: statuses.length,
          statuses: statuses.map((c) => ({
            id: c.id,
            context: c.name.slice('status:'.length),
            state:
              c.conclusion === null
                ? 'pending'
                : c.conclusion === 'success'
                  ? 'success'
                  : 'failure',
            target_url: 'https://ci.example.com/build/1',
            updated_at: iso(c.at),
          })),
        });
      }
      m = new RegExp(`^${repo}/branches/([^/]+)/protection/required_status_checks$`).exec(p);
      if (m) {
        if (model.protection === null) return json(404, { message: 'Branch not protected' });
        return json(200, {
          strict: false,
          contexts: model.protection,
          checks: model.protection.map((c) => ({ context: c, app_id: null })),
        });
      }
      if (new RegExp(`^${repo}/rules/branches/[^/]+$`).test(p)) return json(200, []);
      m = new RegExp(`^${repo}/actions/jobs/(\\d+)/logs$`).exec(p);
      if (m) {
        const check = model.checks.find((c) => c.id === Number(m![1]));
        if (!check) return json(404, { message: 'Not Found' });
        // The log is at a short-lived address of another host, reached without the token.
        return { status: 302, headers: { ...rate, location: `${base}/_blobs/logs/${check.id}` } };
      }
      m = /^\/_blobs\/logs\/(\d+)$/.exec(p);
      if (m) {
        if (req.headers.authorization)
          return { status: 400, text: 'the token was sent to the log store' };
        const check = model.checks.find((c) => c.id === Number(m![1]));
        return check ? { status: 200, text: check.log ?? '' } : null;
      }
      m = new RegExp(`^${repo}/pulls/(\\d+)/reviews$`).exec(p);
      if (m)
        return json(
          200,
          model.comments
            .filter((c) => c.pr === Number(m![1]) && c.kind === 'review')
            .map((c) => ({
              id: c.id,
              user: userOf(c),
              body: c.body,
              state: c.state,
              author_association: c.user.association,
              submitted_at: iso(c.at),
              commit_id: 'x',
            })),
        );
      m = new RegExp(`^${repo}/pulls/(\\d+)/comments$`).exec(p);
      if (m)
        return json(
          200,
          model.comments
            .filter((c) => c.pr === Number(m![1]) && c.kind === 'review_comment')
            .map((c) => ({
              id: c.id,
              user: userOf(c),
              body: c.body,
              path: c.path,
              line: c.line,
              original_line: c.line,
              diff_hunk: c.hunk,
              author_association: c.user.association,
              created_at: iso(c.at),
              pull_request_review_id: null,
            })),
        );
      m = new RegExp(`^${repo}/issues/(\\d+)/comments$`).exec(p);
      if (m)
        return json(
          200,
          model.comments
            .filter((c) => c.pr === Number(m[1]) && c.kind === 'comment')
            .map((c) => ({
              id: c.id,
              user: userOf(c),
              body: c.body,
              author_association: c.user.association,
              created_at: iso(c.at),
            })),
        );
      return null;
    },
  );
  await server.start();
  base = server.url;
  return { model, server, url: server.url, token, close: () => server.close() };
}

/** Sends a webhook delivery to `url` as GitHub does; a wrong secret signs it wrongly. */
export async function githubDeliver(
  url: string,
  secret: string,
  event: string,
  payload: unknown,
  id: string = randomUUID(),
): Promise<{ status: number; body: any }> {
  const raw = JSON.stringify(payload);
  const signature = `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/test',
      'x-github-event': event,
      'x-github-delivery': id,
      'x-hub-signature-256': signature,
    },
    body: raw,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
