// A double of Gitea's (and Forgejo's) REST API v1 where it differs from GitHub's: a PR found by
// base and head, commit statuses with `status`, protection's contexts on the branch, reviews'
// comments by review, collaborators' permissions; and a webhook sender that signs as Gitea does.
import { createHmac, randomUUID } from 'node:crypto';
import { ForgeModel, ForgeServer, etagOf, type DoubleComment, type DoublePr } from './model.js';

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const PERMISSION = {
  OWNER: 'owner',
  MEMBER: 'write',
  COLLABORATOR: 'write',
  CONTRIBUTOR: 'read',
  NONE: 'none',
} as const;

export interface GiteaDouble {
  model: ForgeModel;
  server: ForgeServer;
  url: string;
  token: string;
  close(): Promise<void>;
}

export async function giteaDouble(
  model: ForgeModel,
  token = 'gitea-token-0123456789',
): Promise<GiteaDouble> {
  const repo = `/api/v1/repos/${model.project}`;
  const pull = (pr: DoublePr) => ({
    id: 3000 + pr.number,
    number: pr.number,
    html_url: `https://gitea.example.com/${model.project}/pulls/${pr.number}`,
    state: pr.state,
    title: pr.draft ? `WIP: ${pr.title}` : pr.title,
    body: pr.body,
    draft: pr.draft,
    merged: pr.merged,
    merge_commit_sha: pr.mergeCommit,
    user: { id: 7, login: pr.author },
    updated_at: iso(pr.updatedAt),
    created_at: iso(pr.createdAt),
    head: { ref: pr.head, sha: model.headSha(pr.head) ?? '', label: pr.head },
    base: { ref: pr.base, sha: model.headSha(pr.base) ?? '', label: pr.base },
    comments: model.comments.filter((c) => c.pr === pr.number).length,
  });
  const user = (c: DoubleComment) => ({ id: c.user.id, login: c.user.login });
  const server = new ForgeServer(
    (req) =>
      req.headers.authorization === `token ${token}` ||
      req.headers.authorization === `Bearer ${token}`,
    {
      status: 401,
      body: { message: 'token is required', url: 'https://gitea.example.com/api/swagger' },
    },
    (req, url, raw) => {
      const p = url.pathname;
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
        status,
        body,
        headers,
      });
      if (p === '/api/v1/user') return json(200, { id: 7, login: 'gatehouse-bot' });
      if (p === `${repo}/pulls` && req.method === 'POST') {
        const body = JSON.parse(raw) as {
          head?: string;
          base?: string;
          title?: string;
          body?: string;
        };
        if (!body.head || !body.base || !body.title)
          return json(422, { message: 'head, base and title are required' });
        const open = model.prs.find(
          (x) => x.head === body.head && x.base === body.base && x.state === 'open' && !x.merged,
        );
        if (open)
          return json(409, {
            message: `pull request already exists for these targets [id: ${3000 + open.number}, issue_id: ${open.number}, head_repo_id: 1, base_repo_id: 1, head_branch: ${open.head}, base_branch: ${open.base}]`,
            url: 'https://gitea.example.com/api/swagger',
          });
        const draft = /^(WIP:|\[WIP\])/i.test(body.title);
        const pr = model.open(
          body.head,
          body.base,
          body.title.replace(/^WIP:\s*/i, ''),
          body.body ?? '',
          draft,
        );
        return json(201, pull(pr));
      }
      let m = new RegExp(`^${repo}/pulls/([^/]+)/([^/]+)$`).exec(p);
      if (m && !/^\d+$/.test(m[1]!)) {
        const found = [...model.prs]
          .reverse()
          .find(
            (x) => x.base === decodeURIComponent(m![1]!) && x.head === decodeURIComponent(m![2]!),
          );
        return found
          ? json(200, pull(found))
          : json(404, { message: 'pull request does not exist', url: '' });
      }
      m = new RegExp(`^${repo}/pulls/(\\d+)(/.*)?$`).exec(p);
      if (m) {
        const pr = model.prs.find((x) => x.number === Number(m![1]));
        if (!pr) return json(404, { message: 'pull request does not exist' });
        const rest = m[2] ?? '';
        if (rest === '') {
          const body = pull(pr);
          const etag = etagOf(body);
          if (req.headers['if-none-match'] === etag) return { status: 304, headers: { etag } };
          return json(200, body, { etag });
        }
        if (rest === '/reviews')
          return json(
            200,
            model.comments
              .filter((c) => c.pr === pr.number && c.kind === 'review')
              .map((c) => ({
                id: c.id,
                user: user(c),
                body: c.body,
                state:
                  c.state === 'CHANGES_REQUESTED'
                    ? 'REQUEST_CHANGES'
                    : c.state === 'APPROVED'
                      ? 'APPROVED'
                      : 'COMMENT',
                submitted_at: iso(c.at),
              })),
          );
        const review = /^\/reviews\/(\d+)\/comments$/.exec(rest);
        if (review) {
          // Line comments belong to a review on Gitea: here, to the review they follow.
          const id = Number(review[1]);
          const reviews = model.comments.filter((c) => c.pr === pr.number && c.kind === 'review');
          const next = reviews.find((r) => r.id > id)?.id ?? Infinity;
          return json(
            200,
            model.comments
              .filter(
                (c) =>
                  c.pr === pr.number && c.kind === 'review_comment' && c.id > id && c.id < next,
              )
              .map((c) => ({
                id: c.id,
                user: user(c),
                body: c.body,
                path: c.path,
                position: c.line,
                original_position: 0,
                diff_hunk: c.hunk,
                created_at: iso(c.at),
              })),
          );
        }
        return null;
      }
      m = new RegExp(`^${repo}/issues/(\\d+)/comments$`).exec(p);
      if (m)
        return json(
          200,
          model.comments
            .filter((c) => c.pr === Number(m![1]) && c.kind === 'comment')
            .map((c) => ({ id: c.id, user: user(c), body: c.body, created_at: iso(c.at) })),
        );
      m = new RegExp(`^${repo}/commits/([^/]+)/statuses$`).exec(p);
      if (m)
        return json(
          200,
          model.checks
            .filter((c) => c.sha === m![1])
            .reverse()
            .map((c) => ({
              id: c.id,
              context: c.name,
              status:
                c.conclusion === null
                  ? 'pending'
                  : c.conclusion === 'success'
                    ? 'success'
                    : c.conclusion === 'neutral'
                      ? 'warning'
                      : 'failure',
              target_url: `https://ci.example.com/${c.id}`,
              created_at: iso(c.at),
              updated_at: iso(c.at),
            })),
        );
      m = new RegExp(`^${repo}/branches/([^/]+)$`).exec(p);
      if (m)
        return json(200, {
          name: decodeURIComponent(m[1]!),
          protected: model.protection !== null,
          enable_status_check: model.protection !== null,
          status_check_contexts: model.protection ?? [],
        });
      m = new RegExp(`^${repo}/collaborators/([^/]+)/permission$`).exec(p);
      if (m) {
        const u = model.users.get(decodeURIComponent(m[1]!));
        if (!u) return json(404, { message: 'user does not exist' });
        return json(200, {
          permission: PERMISSION[u.association],
          role_name: PERMISSION[u.association],
          user: { id: u.id, login: u.login },
        });
      }
      return null;
    },
  );
  await server.start();
  return { model, server, url: `${server.url}/api/v1`, token, close: () => server.close() };
}

/** Sends a webhook delivery as Gitea does: X-Gitea-Signature is the hex HMAC of the body. */
export async function giteaDeliver(
  url: string,
  secret: string,
  event: string,
  payload: unknown,
  id: string = randomUUID(),
): Promise<{ status: number; body: any }> {
  const raw = JSON.stringify(payload);
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gitea-event': event,
      'x-gitea-delivery': id,
      'x-gitea-signature': createHmac('sha256', secret).update(raw).digest('hex'),
    },
    body: raw,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
