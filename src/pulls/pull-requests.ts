// The pull-request service (docs/pull-requests.md): publishes completed runs' work as PRs and
// follows every open PR, on webhooks at once and by polling as the backstop, each repository's
// forge behind its own backoff. One host at a time follows a repository's PRs (its lease, as a
// platform's); the worktree's host publishes.
import type { Config, PullRequestConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import { openForge } from '../forges/forges.js';
import type { RequestOutcome } from '../forges/http.js';
import { ForgeError, type Forge } from '../forges/types.js';
import { readDelivery } from '../forges/webhooks.js';
import type { Board } from '../kanban/board.js';
import type { DispatcherLog } from '../kanban/dispatch/log.js';
import type { BoardEvent } from '../kanban/model/events.js';
import { newPrSync } from '../kanban/model/pull-request.js';
import type { Task } from '../kanban/model/types.js';
import { recordForgeDelivery, recordPr } from '../kanban/moves/pull-request.js';
import type { PrWork } from '../kanban/store/records/task.js';
import { PlatformHolds, type BoardHost } from '../platforms/platform-holds.js';
import { RepeatLimiter } from '../repeat-limit.js';
import type { Workspaces } from '../workspaces/workspaces.js';
import { ForgeHealth } from './forge-health.js';
import { prEvent, taskPr } from './pr-record.js';
import { publish } from './publish.js';
import { syncPr, type SyncDepth } from './sync.js';

export interface PullRequestsDeps {
  config: Config;
  board: Board;
  room: Workspaces;
  baseUrl: () => string | null;
  /** This host, once it has joined the board (for a shared board's per-repository lease). */
  host: () => BoardHost | null;
  log: DispatcherLog;
  onRequest?: (provider: string, outcome: RequestOutcome) => void;
  /** How often the service looks for work that is due (default 1 s). */
  tickMs?: number;
}

/** A forge as /ready shows it. */
export interface ForgeView {
  repo: string;
  provider: string;
  status: ForgeHealth['status'];
  detail: string | null;
}

/**
 * While nothing changes, a PR is asked for every pollSeconds (a conditional request), its checks
 * every half hour (a check re-run on the same head changes nothing of the PR itself), and
 * everything (its feedback too) every hour: at pollSeconds 60, 69 requests an hour with the base
 * branch's protection (docs/pull-requests.md).
 */
const CHECKS_SYNC_MS = 30 * 60_000;
const FULL_SYNC_MS = 60 * 60_000;
/** The base branch's required checks are asked again after this long. */
const REQUIRED_TTL_MS = 60 * 60_000;
/** The board is listed again after this long even when nothing here is due (other hosts' work). */
const LIST_EVERY_MS = 10_000;
/** PRs worked on at once. */
const CONCURRENCY = 8;

interface Followed {
  lastSync: number;
  lastChecks: number;
  lastFull: number;
  dueAt: number | null;
  dirty: boolean;
}

export class PullRequests {
  private readonly forges = new Map<string, Forge>();
  private readonly health = new Map<string, ForgeHealth>();
  private readonly followed = new Map<string, Followed>();
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private readonly required = new Map<string, { names: Promise<string[] | null>; at: number }>();
  private readonly holds: PlatformHolds;
  private readonly failures = new RepeatLimiter();
  private readonly repos: PullRequestConfig[];
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private passing: Promise<void> | null = null;
  private again = false;
  private listedAt = -Infinity;
  private stopped = false;

  constructor(private readonly deps: PullRequestsDeps) {
    this.repos = Object.values(deps.config.workspaces.repos).flatMap((r) => (r.pr ? [r.pr] : []));
    const names = Object.values(deps.config.workspaces.repos)
      .filter((r) => r.pr !== null)
      .map((r) => `forge:${r.name}`);
    this.holds = new PlatformHolds({
      board: deps.board,
      names,
      host: deps.host,
      everyMs: deps.config.cluster.renewSeconds * 1000,
      graceMs: deps.config.cluster.reclaimGraceSeconds * 1000,
      onGained: async () => {
        this.wake();
        return true;
      },
      onLost: () => undefined,
      onError: (err) =>
        this.report(err, 'pull requests: the repository lease could not be renewed'),
    });
  }

  /** Repositories with pull requests are configured. */
  get enabled(): boolean {
    return this.repos.length > 0;
  }

  async start(): Promise<void> {
    if (!this.enabled) return;
    this.stopped = false;
    this.unsubscribe = this.deps.board.bus.subscribe((event) => this.onEvent(event));
    await this.holds.start();
    this.timer = setInterval(() => this.tick(), this.deps.tickMs ?? 1000);
    this.timer.unref();
    this.wake();
  }

  /** Stops looking for work and waits for what is under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.holds.stop();
    await this.passing;
    await Promise.allSettled([...this.inFlight.values()]);
  }

  /** Each repository's forge, for /ready: failed (a refused token) until a request succeeds. */
  views(): ForgeView[] {
    return Object.values(this.deps.config.workspaces.repos).flatMap((r) => {
      if (!r.pr) return [];
      const h = this.healthOf(r.name);
      return [{ repo: r.name, provider: r.pr.provider, status: h.status, detail: h.lastError }];
    });
  }

  /** Followed PRs by state, as last listed (gatehouse_prs). */
  countByState(): Record<string, number> {
    const counts: Record<string, number> = { open: 0, closed: 0 };
    for (const w of this.listing)
      if (w.task.pr) counts[w.task.pr.state] = (counts[w.task.pr.state] ?? 0) + 1;
    return counts;
  }

  /** Looks for work now (after a completion, a delivery, the lease gained). */
  wake(): void {
    this.listedAt = -Infinity;
    void this.pass();
  }

  private tick(): void {
    const now = this.deps.board.clock.wall();
    let due = now - this.listedAt >= LIST_EVERY_MS;
    for (const f of this.followed.values())
      if (f.dirty || (f.dueAt !== null && now >= f.dueAt)) due = true;
    if (due) void this.pass();
    else void this.runDue(now, null);
  }

  private onEvent(event: BoardEvent): void {
    if (
      (event.kind === 'completed' || event.kind === 'attempt_picked') &&
      event.payload.pullRequest
    )
      this.wake();
    else if (event.kind === 'pr_delivery') {
      for (const id of event.payload.tasks) this.state(id).dirty = true;
      this.wake();
    }
  }

  private state(taskId: string): Followed {
    let f = this.followed.get(taskId);
    if (!f) {
      f = {
        lastSync: -Infinity,
        lastChecks: -Infinity,
        lastFull: -Infinity,
        dueAt: null,
        dirty: true,
      };
      this.followed.set(taskId, f);
    }
    return f;
  }

  private healthOf(repo: string): ForgeHealth {
    let h = this.health.get(repo);
    if (!h) {
      h = new ForgeHealth(repo, this.deps.config.workspaces.repos[repo]?.pr?.provider ?? 'unknown');
      this.health.set(repo, h);
    }
    return h;
  }

  private forgeOf(repo: string): { forge: Forge; config: PullRequestConfig } | null {
    const config = this.deps.config.workspaces.repos[repo]?.pr ?? null;
    if (!config) return null;
    let forge = this.forges.get(repo);
    if (!forge) {
      forge = openForge(config, (outcome) => this.deps.onRequest?.(config.provider, outcome));
      this.forges.set(repo, forge);
    }
    return { forge, config };
  }

  private listing: PrWork[] = [];

  /** Lists the board's followed PRs and starts what is due. */
  private pass(): Promise<void> {
    if (this.passing) {
      this.again = true;
      return this.passing;
    }
    this.passing = (async () => {
      do {
        this.again = false;
        if (this.stopped) return;
        try {
          this.listing = await this.deps.board.tasks.pullRequests(10_000);
          this.listedAt = this.deps.board.clock.wall();
          const live = new Set(this.listing.map((w) => w.task.id));
          for (const id of this.followed.keys()) if (!live.has(id)) this.followed.delete(id);
          await this.runDue(this.deps.board.clock.wall(), this.listing);
        } catch (err) {
          this.report(err, 'pull requests: the board could not be read');
        }
      } while (this.again && !this.stopped);
    })().finally(() => (this.passing = null));
    return this.passing;
  }

  /** Starts every due piece of work, up to CONCURRENCY at once. */
  private async runDue(now: number, listing: PrWork[] | null): Promise<void> {
    for (const work of listing ?? this.listing) {
      if (this.inFlight.size >= CONCURRENCY || this.stopped) return;
      if (this.inFlight.has(work.task.id)) continue;
      const kind = this.dueWork(work, now);
      if (kind === null) continue;
      const job = this.run(work, kind)
        .then(() => undefined)
        .finally(() => {
          this.inFlight.delete(work.task.id);
          if (!this.stopped)
            setImmediate(() => void this.runDue(this.deps.board.clock.wall(), null));
        });
      this.inFlight.set(work.task.id, job);
    }
  }

  /** What is due for this task now: its publication (this host's worktree), a sync, or nothing. */
  private dueWork(work: PrWork, now: number): 'publish' | SyncDepth | null {
    const { task, sync } = work;
    const pr = this.deps.config.workspaces.repos[sync.repo]?.pr;
    if (!pr || !this.healthOf(sync.repo).ready(now)) return null;
    if (sync.publish !== null && (task.status === 'review' || task.status === 'done'))
      return task.workspace?.host === this.deps.config.cluster.hostName ? 'publish' : null;
    if (!task.pr || task.status === 'running' || !this.holds.holds(`forge:${sync.repo}`))
      return null;
    if (task.pr.state === 'merged') return null;
    const f = this.state(task.id);
    if (f.dirty || now - f.lastFull >= FULL_SYNC_MS) return 'full';
    if (f.dueAt !== null && now >= f.dueAt) return 'checks';
    if (now - f.lastSync < pr.pollSeconds * 1000) return null;
    return now - f.lastChecks >= CHECKS_SYNC_MS ? 'checks' : 'pr';
  }

  /** Does one piece of work; its failure (recorded, backed off) is returned, not thrown. */
  private async run(work: PrWork, kind: 'publish' | SyncDepth): Promise<unknown> {
    const repo = work.sync.repo;
    const found = this.forgeOf(repo);
    if (!found) return null;
    const health = this.healthOf(repo);
    const f = this.state(work.task.id);
    const now = this.deps.board.clock.wall();
    try {
      // Read again: what was listed may have moved since (a person acted, another host synced).
      const fresh = await this.workOf(work.task.id);
      if (!fresh) return null;
      if (kind === 'publish') {
        const result = await publish(
          {
            board: this.deps.board,
            room: this.deps.room,
            hostName: this.deps.config.cluster.hostName,
            baseUrl: this.deps.baseUrl,
          },
          found.forge,
          found.config,
          fresh,
        );
        if (result === 'done') this.listedAt = -Infinity;
      } else if (fresh.task.pr) {
        f.dirty = false;
        const synced = await syncPr(
          { board: this.deps.board, required: (base) => this.requiredOf(repo, found.forge, base) },
          found.forge,
          found.config,
          fresh,
          kind,
        );
        f.lastSync = now;
        if (kind !== 'pr') f.lastChecks = now;
        if (kind === 'full') f.lastFull = now;
        f.dueAt = synced.dueAt;
      }
      health.succeeded();
      return null;
    } catch (err) {
      health.failed(err, this.deps.board.clock.wall());
      f.dirty = kind === 'full' ? true : f.dirty;
      this.report(err, `pull requests: ${kind} of task ${work.task.id} failed`);
      await this.recordFailure(work.task.id, err).catch(() => undefined);
      return err;
    }
  }

  private async workOf(taskId: string): Promise<PrWork | null> {
    const [task, sync] = await Promise.all([
      this.deps.board.tasks.get(taskId),
      this.deps.board.tasks.prSync(taskId),
    ]);
    return task && sync && task.status !== 'archived' ? { task, sync } : null;
  }

  private requiredOf(repo: string, forge: Forge, base: string): Promise<string[] | null> {
    const key = `${repo}\u0000${base}`;
    const now = this.deps.board.clock.wall();
    const cached = this.required.get(key);
    if (cached && now - cached.at < REQUIRED_TTL_MS) return cached.names;
    const names = forge.requiredChecks(base);
    this.required.set(key, { names, at: now });
    names.catch(() => this.required.delete(key));
    return names;
  }

  /** A forge's failure is an event on the task, never a move (docs/pull-requests.md). */
  private async recordFailure(taskId: string, err: unknown): Promise<void> {
    const reason =
      err instanceof ForgeError ? err.kind : (err as Error).name === 'GitError' ? 'git' : 'error';
    const status = err instanceof ForgeError ? err.status : null;
    await this.deps.board.transact((tx) =>
      recordPr(tx, taskId, null, {}, [
        prEvent(taskId, 'pr_sync_failed', {
          reason,
          status,
          message: ((err as Error).message ?? String(err)).slice(0, 1000),
        }),
      ]),
    );
  }

  private report(err: unknown, msg: string): void {
    this.failures.report((obj, m) => this.deps.log.warn(obj, m), err, msg);
  }

  // ---- what the API asks ----

  /** The repository configuration of the task's pull requests, or a 409 saying why there is none. */
  private repoOf(task: Task): { repo: string; config: PullRequestConfig; forge: Forge } {
    const repo = task.workspace?.kind === 'worktree' ? task.workspace.repo : null;
    const found = repo ? this.forgeOf(repo) : null;
    if (!repo || !found)
      throw new AppError(
        'NO_PULL_REQUESTS',
        `task ${task.id} has no worktree in a repository with "pr" configured`,
      );
    return { repo, ...found };
  }

  private async taskOf(id: string): Promise<Task> {
    const task = await this.deps.board.tasks.get(id);
    if (!task) throw new AppError('TASK_NOT_FOUND', `no task ${id}`);
    return task;
  }

  /** POST /tasks/:id/pr {}: its work published and its PR opened (or adopted) now. */
  async openNow(id: string): Promise<Task> {
    const task = await this.taskOf(id);
    const { repo } = this.repoOf(task);
    if (task.pr) return task;
    if (task.status !== 'review' && task.status !== 'done')
      throw new AppError(
        'INVALID_TRANSITION',
        `task ${id} is ${task.status}: a pull request is opened for a task in review or done`,
      );
    if (task.workspace?.host !== this.deps.config.cluster.hostName)
      throw new AppError(
        'INVALID_TRANSITION',
        `task ${id}'s worktree is on host ${task.workspace?.host}: ask that host`,
      );
    await this.inFlight.get(id);
    const runs = await this.deps.board.runs.forTask(id);
    const last = runs.at(-1)?.id ?? 'manual';
    const sync = (await this.deps.board.tasks.prSync(id)) ?? newPrSync(repo, null);
    await this.deps.board.transact((tx) =>
      recordPr(tx, id, task.status, { sync: { ...sync, publish: sync.publish ?? last } }),
    );
    const work = await this.workOf(id);
    if (work) await this.runNow(work, 'publish');
    const after = await this.taskOf(id);
    if (!after.pr && (await this.deps.board.tasks.prSync(id)) === null)
      throw new AppError(
        'INVALID_TRANSITION',
        `task ${id}'s branch has no changes: no pull request`,
      );
    return after;
  }

  /** POST /tasks/:id/pr {url}: an existing PR of the task's branch bound to it. */
  async bind(id: string, url: string): Promise<Task> {
    const task = await this.taskOf(id);
    const { repo, config, forge } = this.repoOf(task);
    const number = forge.numberOf(url);
    if (number === null)
      throw new AppError('PR_NOT_OF_TASK', `${url} is not a pull request of ${config.project}`);
    if (task.pr && task.pr.number !== number)
      throw new AppError(
        'PR_NOT_OF_TASK',
        `task ${id} already has pull request #${task.pr.number}`,
      );
    const pr = await this.forgeCall(() => forge.get(number));
    if (pr === 'unchanged' || pr.headRef !== task.workspace?.branch)
      throw new AppError(
        'PR_NOT_OF_TASK',
        `${url} is not of task ${id}'s branch ${task.workspace?.branch}`,
      );
    const sync = (await this.deps.board.tasks.prSync(id)) ?? newPrSync(repo, null);
    const shown = taskPr(config.provider, pr, task.pr, this.deps.board.clock.wall());
    const bound = await this.deps.board.transact((tx) =>
      recordPr(tx, id, null, { pr: shown, sync }, [
        prEvent(id, 'pr_adopted', { number: pr.number, url: pr.url, provider: config.provider }),
      ]),
    );
    if (!bound) throw new AppError('INVALID_TRANSITION', `task ${id} is archived`);
    this.state(id).dirty = true;
    this.wake();
    return bound;
  }

  /** POST /tasks/:id/pr/sync: its PR read and followed now. */
  async syncNow(id: string): Promise<Task> {
    const task = await this.taskOf(id);
    this.repoOf(task);
    if (!task.pr) throw new AppError('INVALID_TRANSITION', `task ${id} has no pull request`);
    const work = await this.workOf(id);
    if (work && task.status !== 'running') await this.runNow(work, 'full');
    return this.taskOf(id);
  }

  /** Runs one piece of work now, after any under way for the task; a forge failure is a 503. */
  private async runNow(work: PrWork, kind: 'publish' | 'full'): Promise<void> {
    await this.inFlight.get(work.task.id);
    const job = this.run(work, kind);
    this.inFlight.set(work.task.id, job);
    let failure: unknown;
    try {
      failure = await job;
    } finally {
      this.inFlight.delete(work.task.id);
    }
    if (failure === null) return;
    if (!(failure instanceof ForgeError))
      throw failure instanceof Error ? failure : new Error('the pull request could not be handled');
    const wait = this.healthOf(work.sync.repo).waitUntil - this.deps.board.clock.wall();
    throw new AppError('FORGE_UNAVAILABLE', `the forge could not be asked: ${failure.message}`, {
      headers: { 'retry-after': String(Math.max(1, Math.ceil(wait / 1000))) },
    });
  }

  private async forgeCall<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof ForgeError && err.kind === 'not_found')
        throw new AppError('PR_NOT_OF_TASK', 'the forge has no such pull request');
      if (err instanceof ForgeError)
        throw new AppError('FORGE_UNAVAILABLE', `the forge could not be asked: ${err.message}`);
      throw err;
    }
  }

  /**
   * POST /forges/:repo/webhook: a delivery verified by its forge's signature, recorded once, and
   * the PRs it may concern synced by the host that follows them. What gatehouse does not use is
   * still answered 2xx (GitLab turns a hook off after 4xx answers).
   */
  async webhook(
    repo: string,
    headers: Record<string, string | string[] | undefined>,
    raw: Buffer,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const config = this.deps.config.workspaces.repos[repo]?.pr;
    if (!config)
      throw new AppError('FORGE_NOT_FOUND', `no repository "${repo}" with "pr" configured`);
    if (config.webhookSecret === null)
      throw new AppError(
        'UNAUTHORIZED',
        `repository ${repo} has no pr.webhookSecretEnv: its deliveries are not accepted`,
      );
    const delivery = readDelivery(config.provider, headers, raw, config.webhookSecret);
    if ('refused' in delivery) throw new AppError('UNAUTHORIZED', delivery.refused);
    const work = (await this.deps.board.tasks.pullRequests(10_000)).filter(
      (w) => w.sync.repo === repo && w.task.pr !== null,
    );
    const named = delivery.numbers.length + delivery.shas.length + delivery.branches.length > 0;
    const tasks = work
      .filter(
        (w) =>
          !named ||
          delivery.numbers.includes(w.task.pr!.number) ||
          (w.task.pr!.headSha !== null && delivery.shas.includes(w.task.pr!.headSha)) ||
          (w.task.workspace?.branch != null && delivery.branches.includes(w.task.workspace.branch)),
      )
      .map((w) => w.task.id);
    const fresh = await this.deps.board.transact((tx) =>
      recordForgeDelivery(tx, repo, delivery, tasks),
    );
    if (!fresh) return { status: 200, body: { ok: true, duplicate: true, tasks: [] } };
    return { status: 202, body: { ok: true, duplicate: false, tasks } };
  }
}
