// What a forge double holds, shared by the GitHub, GitLab and Gitea doubles: pull requests on a
// real bare repository (heads read from it, merges made in it), checks, reviews and comments, and
// the HTTP shell that serves them with the faults a test asks for.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { tempDir } from '../daemon.js';

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'someone',
  GIT_AUTHOR_EMAIL: 'someone@example.com',
  GIT_COMMITTER_NAME: 'someone',
  GIT_COMMITTER_EMAIL: 'someone@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
  LC_ALL: 'C',
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, ...args], { env: GIT_ENV, encoding: 'utf8' }).trim();
}

export interface DoublePr {
  number: number;
  title: string;
  body: string;
  head: string;
  base: string;
  state: 'open' | 'closed';
  merged: boolean;
  mergeCommit: string | null;
  draft: boolean;
  createdAt: number;
  updatedAt: number;
  author: string;
}

export interface DoubleCheck {
  id: number;
  sha: string;
  name: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: string | null;
  at: number;
  log: string | null;
}

export interface DoubleUser {
  login: string;
  id: number;
  /** GitHub's author_association; GitLab's access level and Gitea's permission follow from it. */
  association: 'OWNER' | 'MEMBER' | 'COLLABORATOR' | 'CONTRIBUTOR' | 'NONE';
}

export interface DoubleComment {
  id: number;
  pr: number;
  kind: 'review' | 'review_comment' | 'comment';
  user: DoubleUser;
  body: string;
  path?: string;
  line?: number;
  hunk?: string;
  /** For a review: APPROVED, CHANGES_REQUESTED or COMMENTED. */
  state?: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED';
  at: number;
}

export const MEMBER: DoubleUser = { login: 'maintainer', id: 101, association: 'MEMBER' };
export const OWNER: DoubleUser = { login: 'acme', id: 100, association: 'OWNER' };
export const STRANGER: DoubleUser = { login: 'drive-by', id: 666, association: 'NONE' };
export const BOT: DoubleUser = { login: 'gatehouse-bot', id: 7, association: 'MEMBER' };

/** A fault the next matching requests get instead of their answer. */
export interface Fault {
  method?: string;
  path: RegExp;
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  times: number;
}

export interface SeenRequest {
  method: string;
  path: string;
  status: number;
  authorization: string | null;
  ifNoneMatch: string | null;
}

export class ForgeModel {
  readonly prs: DoublePr[] = [];
  readonly checks: DoubleCheck[] = [];
  readonly comments: DoubleComment[] = [];
  readonly users = new Map<string, DoubleUser>(
    [OWNER, MEMBER, STRANGER, BOT].map((u) => [u.login, u]),
  );
  /** Required check names of the base branch's protection; null: the branch is not protected. */
  protection: string[] | null = null;
  private ids = 1000;
  private clock = Date.now() - 60_000;

  /** `bare`: the repository the daemon pushes to (its origin). */
  constructor(
    readonly bare: string,
    readonly project: string,
  ) {}

  /** A bare repository with `main` holding `files`, and a checkout of it whose origin it is. */
  static withRepository(
    project = 'acme/app',
    files: Record<string, string> = { 'README.md': '# app\n', 'src/app.js': 'export {};\n' },
  ): { model: ForgeModel; checkout: string } {
    const dir = tempDir('gatehouse-forge-');
    const bare = join(dir, 'origin.git');
    git(dir, 'init', '--quiet', '--bare', '--initial-branch=main', bare);
    const checkout = join(dir, 'app');
    mkdirSync(checkout);
    git(checkout, 'init', '--quiet', '--initial-branch=main');
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(join(checkout, name, '..'), { recursive: true });
      writeFileSync(join(checkout, name), text);
    }
    git(checkout, 'add', '--all');
    git(checkout, 'commit', '--quiet', '-m', 'first');
    git(checkout, 'remote', 'add', 'origin', bare);
    git(checkout, 'push', '--quiet', 'origin', 'main');
    return { model: new ForgeModel(bare, project), checkout };
  }

  nextId(): number {
    return ++this.ids;
  }

  /** A strictly later time than any before (forges' times order what happened). */
  now(): number {
    this.clock = Math.max(this.clock + 1000, Date.now());
    return this.clock;
  }

  /** The branch's head on the bare repository, or null when it has none. */
  headSha(branch: string): string | null {
    try {
      return git(this.bare, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}`);
    } catch {
      return null;
    }
  }

  /** Commits the branch has that the base lacks. */
  ahead(head: string, base: string): number {
    return Number(git(this.bare, 'rev-list', '--count', `refs/heads/${base}..refs/heads/${head}`));
  }

  pr(number: number): DoublePr {
    const pr = this.prs.find((p) => p.number === number);
    if (!pr) throw new Error(`the double has no PR #${number}`);
    return pr;
  }

  prOf(head: string): DoublePr | undefined {
    return [...this.prs].reverse().find((p) => p.head === head);
  }

  open(
    head: string,
    base: string,
    title: string,
    body: string,
    draft: boolean,
    author = BOT.login,
  ): DoublePr {
    const at = this.now();
    const pr: DoublePr = {
      number: this.prs.length + 1,
      title,
      body,
      head,
      base,
      state: 'open',
      merged: false,
      mergeCommit: null,
      draft,
      createdAt: at,
      updatedAt: at,
      author,
    };
    this.prs.push(pr);
    return pr;
  }

  /** Merges the PR on the bare repository as the forge's button does (a merge commit). */
  merge(number: number): string {
    const pr = this.pr(number);
    const work = join(tempDir('gatehouse-merge-'), 'w');
    git(this.bare, 'worktree', 'add', '--quiet', work, pr.base);
    try {
      git(
        work,
        'merge',
        '--quiet',
        '--no-ff',
        '-m',
        `Merge pull request #${number}`,
        `refs/heads/${pr.head}`,
      );
      pr.mergeCommit = git(work, 'rev-parse', 'HEAD');
    } finally {
      git(this.bare, 'worktree', 'remove', '--force', work);
    }
    pr.state = 'closed';
    pr.merged = true;
    pr.updatedAt = this.now();
    return pr.mergeCommit;
  }

  close(number: number): void {
    const pr = this.pr(number);
    pr.state = 'closed';
    pr.updatedAt = this.now();
  }

  reopen(number: number): void {
    const pr = this.pr(number);
    pr.state = 'open';
    pr.updatedAt = this.now();
  }

  /** Someone else pushes a commit writing `files` on top of the branch. */
  pushAs(branch: string, files: Record<string, string>, message = 'a human commit'): string {
    const work = join(tempDir('gatehouse-push-'), 'w');
    git(this.bare, 'worktree', 'add', '--quiet', work, branch);
    try {
      for (const [name, text] of Object.entries(files)) {
        mkdirSync(join(work, name, '..'), { recursive: true });
        writeFileSync(join(work, name), text);
      }
      git(work, 'add', '--all');
      git(work, 'commit', '--quiet', '-m', message);
      return git(work, 'rev-parse', 'HEAD');
    } finally {
      git(this.bare, 'worktree', 'remove', '--force', work);
      for (const pr of this.prs) if (pr.head === branch) pr.updatedAt = this.now();
    }
  }

  /** A check run (or status) on a commit, a later one of the same name replacing it. */
  check(
    sha: string,
    name: string,
    conclusion: string | null,
    log: string | null = null,
  ): DoubleCheck {
    const check: DoubleCheck = {
      id: this.nextId(),
      sha,
      name,
      status: conclusion === null ? 'in_progress' : 'completed',
      conclusion,
      at: this.now(),
      log,
    };
    this.checks.push(check);
    return check;
  }

  comment(
    pr: number,
    user: DoubleUser,
    body: string,
    at?: { path: string; line: number; hunk: string },
  ): DoubleComment {
    const item: DoubleComment = {
      id: this.nextId(),
      pr,
      kind: at ? 'review_comment' : 'comment',
      user,
      body,
      ...(at ?? {}),
      at: this.now(),
    };
    this.comments.push(item);
    this.pr(pr).updatedAt = item.at;
    return item;
  }

  review(
    pr: number,
    user: DoubleUser,
    state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED',
    body: string,
  ): DoubleComment {
    const item: DoubleComment = {
      id: this.nextId(),
      pr,
      kind: 'review',
      user,
      body,
      state,
      at: this.now(),
    };
    this.comments.push(item);
    this.pr(pr).updatedAt = item.at;
    return item;
  }
}

export type Route = (
  req: IncomingMessage,
  url: URL,
  body: string,
) => { status: number; body?: unknown; text?: string; headers?: Record<string, string> } | null;

/** An HTTP server for a double: the token checked, faults injected, every request recorded. */
export class ForgeServer {
  readonly requests: SeenRequest[] = [];
  private readonly faults: Fault[] = [];
  private server!: Server;
  url = '';

  constructor(
    private readonly authorized: (req: IncomingMessage) => boolean,
    private readonly unauthorized: { status: number; body: unknown },
    private readonly route: Route,
  ) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  fail(fault: Omit<Fault, 'times'> & { times?: number }): void {
    this.faults.push({ times: 1, ...fault });
  }

  private holding: { method: string; path: RegExp; seen: () => void } | null = null;

  /**
   * The next matching request is carried out (what it makes is made) but never answered: the
   * promise settles once it has been, as a caller killed before the answer would leave it.
   */
  holdAnswer(method: string, path: RegExp): Promise<void> {
    return new Promise((seen) => (this.holding = { method, path, seen }));
  }

  /** Requests made so far whose path matches. */
  seen(path: RegExp, method = 'GET'): SeenRequest[] {
    return this.requests.filter((r) => r.method === method && path.test(r.path));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://double');
      const path = url.pathname + url.search;
      const send = (
        status: number,
        payload: { body?: unknown; text?: string; headers?: Record<string, string> },
      ) => {
        this.requests.push({
          method: req.method ?? 'GET',
          path,
          status,
          authorization:
            req.headers.authorization ??
            (req.headers['private-token'] as string | undefined) ??
            null,
          ifNoneMatch: req.headers['if-none-match'] ?? null,
        });
        const text =
          payload.text ?? (payload.body === undefined ? '' : JSON.stringify(payload.body));
        res.writeHead(status, {
          'content-type': payload.text !== undefined ? 'text/plain' : 'application/json',
          ...payload.headers,
        });
        res.end(status === 304 ? undefined : text);
      };
      const fault = this.faults.find(
        (f) => f.times > 0 && (f.method ?? req.method) === req.method && f.path.test(path),
      );
      if (fault) {
        fault.times--;
        return send(fault.status, {
          body: fault.body ?? { message: 'injected' },
          headers: fault.headers ?? {},
        });
      }
      if (!url.pathname.startsWith('/_blobs/') && !this.authorized(req))
        return send(this.unauthorized.status, { body: this.unauthorized.body });
      let answer;
      try {
        answer = this.route(req, url, Buffer.concat(chunks).toString('utf8'));
      } catch (err) {
        answer = { status: 500, body: { message: (err as Error).message } };
      }
      if (!answer) return send(404, { body: { message: 'Not Found' } });
      const hold = this.holding;
      if (hold && hold.method === req.method && hold.path.test(path)) {
        this.holding = null;
        this.requests.push({
          method: req.method,
          path,
          status: 0,
          authorization: null,
          ifNoneMatch: null,
        });
        return hold.seen();
      }
      send(answer.status, answer);
    });
  }
}

/** A weak ETag of a JSON answer, as forges send, and whether a request already has it. */
export function etagOf(body: unknown): string {
  let hash = 0;
  for (const c of JSON.stringify(body)) hash = (Math.imul(31, hash) + c.charCodeAt(0)) | 0;
  return `W/"${(hash >>> 0).toString(16)}"`;
}
