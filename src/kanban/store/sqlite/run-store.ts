// SQL for runs: one row per attempt, with the worker's process identity and how it ended.
import type { AgentUsage, RunAgent } from '../../../agents/types.js';
import type { RunTable } from '../contract.js';
import {
  toRecord,
  type EndedBucket,
  type NewRun,
  type OpenRun,
  type RunEnd,
  type RunRecord,
  type RunRow,
} from '../records/run.js';
import type { Db } from './db.js';

/** Every run not ended yet with its task's title, oldest first. */
const OPEN_RUNS = `SELECT runs.*, tasks.title AS task_title FROM runs
  JOIN tasks ON tasks.id = runs.task_id WHERE runs.ended_at IS NULL ORDER BY runs.seq`;

/** A task's runs, oldest first (read by the run table). */
export const RUNS_OF_TASK = 'SELECT * FROM runs WHERE task_id = ? ORDER BY seq';

/**
 * An expression giving the runs of the task a query reads from `tasks`, oldest first, as a JSON
 * array of RunRow objects: every column SELECT * reads (their names read from the table itself,
 * generated ones too). Every run column is an integer, real, text or null, which JSON keeps.
 */
export function runsOfTaskAsJson(db: Db): string {
  const columns = db
    .prepare<[], string>("SELECT name FROM pragma_table_xinfo('runs') WHERE hidden <> 1")
    .pluck()
    .all();
  const fields = columns.map((c) => `'${c.replaceAll("'", "''")}', "${c.replaceAll('"', '""')}"`);
  return `(SELECT json_group_array(json_object(${fields.join(', ')}) ORDER BY seq)
    FROM runs WHERE task_id = tasks.id)`;
}

export class RunStore implements RunTable {
  private readonly insert;
  private readonly byId;
  private readonly byToken;
  private readonly ofTask;
  private readonly agentsSince;
  private readonly setProc;
  private readonly end;
  private readonly gone;
  private readonly sample;
  private readonly unreapedRuns;
  private readonly outcomes;
  private readonly lingering;
  private readonly prunable;
  private readonly pruned;
  private readonly exitStatus;
  private readonly known;
  private readonly openByHost;
  private readonly reassign;
  private readonly openRuns;
  private readonly endedBuckets;

  constructor(db: Db) {
    this.insert = db.prepare(`INSERT INTO runs (id, task_id, profile, host, host_id, token_hash,
      started_at, log_path, keep_descendants) VALUES (@id, @taskId, @profile, @host, @hostId,
      @tokenHash, @startedAt, @logPath, @keepDescendants) RETURNING *`);
    this.byId = db.prepare<[string], RunRow>('SELECT * FROM runs WHERE id = ?');
    this.byToken = db.prepare<[string], RunRow>('SELECT * FROM runs WHERE token_hash = ?');
    this.ofTask = db.prepare<[string], RunRow>(RUNS_OF_TASK);
    this.agentsSince = db
      .prepare<[number, string], string | null>(
        'SELECT agent FROM runs WHERE ended_at >= ? AND profile = ?',
      )
      .pluck();
    this.setProc = db.prepare(`UPDATE runs SET pid = @pid, pgid = @pgid, start_time = @startTime,
      boot_id = @bootId WHERE id = @id`);
    this.end =
      db.prepare(`UPDATE runs SET ended_at = @at, outcome = @outcome, exit_code = @exitCode,
      signal = @signal, error = @error, summary = @summary,
      proc_gone_at = CASE WHEN @procGone THEN @at ELSE proc_gone_at END,
      group_held_until = coalesce(@groupHeldUntil, group_held_until),
      workspace = coalesce(@workspace, workspace), agent = coalesce(@agent, agent)
      WHERE id = @id AND ended_at IS NULL`);
    this.gone = db.prepare(
      'UPDATE runs SET proc_gone_at = ? WHERE id = ? AND proc_gone_at IS NULL',
    );
    this.sample =
      db.prepare(`UPDATE runs SET cpu_percent_max = max(coalesce(cpu_percent_max, 0), @cpu),
      rss_bytes_max = max(coalesce(rss_bytes_max, 0), @rss) WHERE id = @id`);
    this.outcomes = db.prepare<[], { outcome: string; n: number }>(
      'SELECT outcome, count(*) AS n FROM runs WHERE outcome IS NOT NULL GROUP BY outcome',
    );
    this.lingering = db.prepare<[string], { id: string }>(
      'SELECT id FROM runs WHERE task_id = ? AND proc_gone_at IS NULL AND ended_at IS NOT NULL LIMIT 1',
    );
    this.prunable = db.prepare<[number, number | null, number | null, number], { id: string }>(
      `SELECT id FROM runs WHERE files_pruned_at IS NULL AND ended_at IS NOT NULL AND ended_at < ?
        AND proc_gone_at IS NOT NULL AND (? IS NULL OR host_id IS NULL OR host_id = ?)
        ORDER BY ended_at LIMIT ?`,
    );
    this.pruned = db.prepare('UPDATE runs SET files_pruned_at = ? WHERE id = ?');
    this.known = db.prepare<[string], { id: string }>(
      'SELECT id FROM runs WHERE id IN (SELECT value FROM json_each(?))',
    );
    this.exitStatus = db.prepare(`UPDATE runs SET exit_code = @exitCode, signal = @signal
      WHERE id = @id AND ended_at IS NOT NULL AND exit_code IS NULL AND signal IS NULL`);
    this.reassign = db.prepare(
      'UPDATE runs SET host_id = ?, host = ? WHERE id = ? AND host_id IS NOT ?',
    );
    this.openByHost = db.prepare<[number], RunRow>(
      'SELECT * FROM runs WHERE host_id = ? AND ended_at IS NULL ORDER BY seq',
    );
    this.openRuns = db.prepare<[], RunRow & { task_title: string }>(OPEN_RUNS);
    this.endedBuckets = db.prepare<{ from: number; bucket: number }, EndedBucket>(
      // % works on integers (better-sqlite3 binds a number as a real, so / would not).
      `SELECT ended_at - ended_at % @bucket AS at, outcome, count(*) AS n FROM runs
        WHERE ended_at >= @from GROUP BY 1, 2 ORDER BY 1`,
    );
    this.unreapedRuns = db.prepare<[], RunRow>(
      'SELECT * FROM runs WHERE proc_gone_at IS NULL AND ended_at IS NOT NULL ORDER BY seq',
    );
  }

  /** Inserts the run; the run as it was written. */
  async create(run: NewRun): Promise<RunRecord> {
    return toRecord(
      this.insert.get({ ...run, keepDescendants: run.keepDescendants ? 1 : 0 }) as RunRow,
    );
  }

  async get(id: string): Promise<RunRecord | null> {
    const row = this.byId.get(id);
    return row ? toRecord(row) : null;
  }

  /** The run a worker token belongs to, found by the token's hash. */
  async byTokenHash(hash: string): Promise<RunRecord | null> {
    const row = this.byToken.get(hash);
    return row ? toRecord(row) : null;
  }

  async usageSince(profile: string, since: number): Promise<(AgentUsage | null)[]> {
    return this.agentsSince
      .all(since, profile)
      .map((a) => (a === null ? null : ((JSON.parse(a) as RunAgent).usage ?? null)));
  }

  async forTask(taskId: string): Promise<RunRecord[]> {
    return this.ofTask.all(taskId).map(toRecord);
  }

  async recordProcess(
    id: string,
    proc: { pid: number; pgid: number; startTime: number; bootId: string },
  ): Promise<void> {
    this.setProc.run({ id, ...proc });
  }

  /** Closes an open run; false if it was already closed. */
  async close(id: string, at: number, end: RunEnd): Promise<boolean> {
    return (
      this.end.run({
        id,
        at,
        outcome: end.outcome,
        exitCode: end.exitCode ?? null,
        signal: end.signal ?? null,
        error: end.error ?? null,
        summary: end.summary ?? null,
        procGone: end.procGone ? 1 : 0,
        groupHeldUntil: end.groupHeldUntil ?? null,
        workspace: end.workspace ? JSON.stringify(end.workspace) : null,
        agent: end.agent ? JSON.stringify(end.agent) : null,
      }).changes === 1
    );
  }

  /** Which of `ids` the board has runs for. */
  async existing(ids: readonly string[]): Promise<Set<string>> {
    return new Set(this.known.all(JSON.stringify(ids)).map((r) => r.id));
  }

  /** How a closed run's process ended, learnt after its verdict; a recorded status stays. */
  async recordExit(
    id: string,
    exit: { exitCode: number | null; signal: string | null },
  ): Promise<void> {
    this.exitStatus.run({ id, exitCode: exit.exitCode, signal: exit.signal });
  }

  async markGone(id: string, at: number): Promise<void> {
    this.gone.run(at, id);
  }

  async recordSample(id: string, cpu: number, rss: number): Promise<void> {
    this.sample.run({ id, cpu, rss });
  }

  /** Finished runs by outcome. */
  async countByOutcome(): Promise<Record<string, number>> {
    return Object.fromEntries(this.outcomes.all().map((r) => [r.outcome, r.n]));
  }

  /** Whether a closed run of the task may still have processes alive. */
  async hasLingering(taskId: string): Promise<boolean> {
    return this.lingering.get(taskId) !== undefined;
  }

  /**
   * Ended runs (nothing of them alive) that ended before `before` and still have their folder;
   * with `hostId`, only that host's (and those of no host): a folder is on its host's disk.
   */
  async prunableBefore(before: number, limit: number, hostId: number | null): Promise<string[]> {
    return this.prunable.all(before, hostId, hostId, limit).map((r) => r.id);
  }

  async markPruned(id: string, at: number): Promise<void> {
    this.pruned.run(at, id);
  }

  /** Closed runs whose process group has not been confirmed gone. */
  async unreaped(): Promise<RunRecord[]> {
    return this.unreapedRuns.all().map(toRecord);
  }

  /** The run is supervised by this host from now on (it adopted the run's worker). */
  async assignHost(id: string, hostId: number, host: string): Promise<void> {
    this.reassign.run(hostId, host, id, hostId);
  }

  /** The runs a host has not ended, oldest first. */
  async openOnHost(hostId: number): Promise<RunRecord[]> {
    return this.openByHost.all(hostId).map(toRecord);
  }

  /** Every run not ended yet, on any host, oldest first. */
  async open(): Promise<OpenRun[]> {
    return this.openRuns.all().map((row) => ({ ...toRecord(row), title: row.task_title }));
  }

  /** Runs ended since `from`, counted by outcome in buckets of `bucketMs` (each at its start). */
  async endedByBucket(from: number, bucketMs: number): Promise<EndedBucket[]> {
    return this.endedBuckets.all({ from, bucket: bucketMs });
  }
}
