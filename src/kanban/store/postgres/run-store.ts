// Runs on PostgreSQL: the contract's reads and writes.
import type { AgentUsage, RunAgent } from '../../../agents/types.js';
import type { RunTable } from '../contract.js';
import {
  toRecord,
  type EndedBucket,
  type OpenRun,
  type NewRun,
  type RunEnd,
  type RunRecord,
  type RunRow,
} from '../records/run.js';
import { rows, run, type Queryable } from './query.js';

/** Every run not ended yet with its task's title, oldest first. */
const OPEN_RUNS = `SELECT runs.*, tasks.title AS task_title FROM runs
  JOIN tasks ON tasks.id = runs.task_id WHERE runs.ended_at IS NULL ORDER BY runs.seq`;

export class PgRunStore implements RunTable {
  constructor(private readonly db: Queryable) {}

  /** Inserts the run; the run as it was written. */
  async create(r: NewRun): Promise<RunRecord> {
    const [row] = await rows<RunRow>(
      this.db,
      `INSERT INTO runs (id, task_id, profile, host, host_id, token_hash, started_at, log_path,
        keep_descendants) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
      [
        r.id,
        r.taskId,
        r.profile,
        r.host,
        r.hostId,
        r.tokenHash,
        r.startedAt,
        r.logPath,
        r.keepDescendants,
      ],
    );
    return toRecord(row!);
  }

  async get(id: string): Promise<RunRecord | null> {
    const [row] = await rows<RunRow>(this.db, 'SELECT * FROM runs WHERE id = $1', [id]);
    return row ? toRecord(row) : null;
  }

  async byTokenHash(hash: string): Promise<RunRecord | null> {
    const [row] = await rows<RunRow>(this.db, 'SELECT * FROM runs WHERE token_hash = $1', [hash]);
    return row ? toRecord(row) : null;
  }

  async usageSince(profile: string, since: number): Promise<(AgentUsage | null)[]> {
    const found = await rows<{ agent: string | null }>(
      this.db,
      'SELECT agent FROM runs WHERE ended_at >= $1 AND profile = $2',
      [since, profile],
    );
    return found.map((r) =>
      r.agent === null ? null : ((JSON.parse(r.agent) as RunAgent).usage ?? null),
    );
  }

  async forTask(taskId: string): Promise<RunRecord[]> {
    const found = await rows<RunRow>(
      this.db,
      'SELECT * FROM runs WHERE task_id = $1 ORDER BY seq',
      [taskId],
    );
    return found.map(toRecord);
  }

  async recordProcess(
    id: string,
    proc: { pid: number; pgid: number; startTime: number; bootId: string },
  ): Promise<void> {
    await run(
      this.db,
      'UPDATE runs SET pid = $2, pgid = $3, start_time = $4, boot_id = $5 WHERE id = $1',
      [id, proc.pid, proc.pgid, Math.floor(proc.startTime), proc.bootId],
    );
  }

  async close(id: string, at: number, end: RunEnd): Promise<boolean> {
    const changed = await run(
      this.db,
      `UPDATE runs SET ended_at = $2, outcome = $3, exit_code = $4, signal = $5, error = $6,
        summary = $7, proc_gone_at = CASE WHEN $8 THEN $2 ELSE proc_gone_at END,
        group_held_until = coalesce($9, group_held_until), workspace = coalesce($10, workspace),
        agent = coalesce($11, agent)
      WHERE id = $1 AND ended_at IS NULL`,
      [
        id,
        at,
        end.outcome,
        end.exitCode ?? null,
        end.signal ?? null,
        end.error ?? null,
        end.summary ?? null,
        end.procGone ?? false,
        // A start time is whole clock ticks on Linux; elsewhere a fraction of a second.
        end.groupHeldUntil == null ? null : Math.floor(end.groupHeldUntil),
        end.workspace ? JSON.stringify(end.workspace) : null,
        end.agent ? JSON.stringify(end.agent) : null,
      ],
    );
    return changed === 1;
  }

  async existing(ids: readonly string[]): Promise<Set<string>> {
    const found = await rows<{ id: string }>(
      this.db,
      'SELECT id FROM runs WHERE id = ANY($1::text[])',
      [ids],
    );
    return new Set(found.map((r) => r.id));
  }

  async recordExit(
    id: string,
    exit: { exitCode: number | null; signal: string | null },
  ): Promise<void> {
    await run(
      this.db,
      `UPDATE runs SET exit_code = $2, signal = $3
        WHERE id = $1 AND ended_at IS NOT NULL AND exit_code IS NULL AND signal IS NULL`,
      [id, exit.exitCode, exit.signal],
    );
  }

  async markGone(id: string, at: number): Promise<void> {
    await run(this.db, 'UPDATE runs SET proc_gone_at = $2 WHERE id = $1 AND proc_gone_at IS NULL', [
      id,
      at,
    ]);
  }

  async recordSample(id: string, cpu: number, rss: number): Promise<void> {
    await run(
      this.db,
      `UPDATE runs SET cpu_percent_max = greatest(coalesce(cpu_percent_max, 0), $2),
        rss_bytes_max = greatest(coalesce(rss_bytes_max, 0), $3) WHERE id = $1`,
      [id, cpu, Math.round(rss)],
    );
  }

  async countByOutcome(): Promise<Record<string, number>> {
    const found = await rows<{ outcome: string; n: number }>(
      this.db,
      'SELECT outcome, count(*)::integer AS n FROM runs WHERE outcome IS NOT NULL GROUP BY outcome',
    );
    return Object.fromEntries(found.map((r) => [r.outcome, r.n]));
  }

  async hasLingering(taskId: string): Promise<boolean> {
    const found = await rows(
      this.db,
      'SELECT 1 FROM runs WHERE task_id = $1 AND proc_gone_at IS NULL AND ended_at IS NOT NULL LIMIT 1',
      [taskId],
    );
    return found.length > 0;
  }

  async prunableBefore(before: number, limit: number, hostId: number | null): Promise<string[]> {
    const found = await rows<{ id: string }>(
      this.db,
      `SELECT id FROM runs WHERE files_pruned_at IS NULL AND ended_at IS NOT NULL AND ended_at < $1
        AND proc_gone_at IS NOT NULL AND ($3::bigint IS NULL OR host_id IS NULL OR host_id = $3)
        ORDER BY ended_at LIMIT $2`,
      [before, limit, hostId],
    );
    return found.map((r) => r.id);
  }

  async markPruned(id: string, at: number): Promise<void> {
    await run(this.db, 'UPDATE runs SET files_pruned_at = $2 WHERE id = $1', [id, at]);
  }

  async unreaped(): Promise<RunRecord[]> {
    const found = await rows<RunRow>(
      this.db,
      'SELECT * FROM runs WHERE proc_gone_at IS NULL AND ended_at IS NOT NULL ORDER BY seq',
    );
    return found.map(toRecord);
  }

  async assignHost(id: string, hostId: number, host: string): Promise<void> {
    await run(
      this.db,
      'UPDATE runs SET host_id = $2, host = $3 WHERE id = $1 AND host_id IS DISTINCT FROM $2',
      [id, hostId, host],
    );
  }

  async open(): Promise<OpenRun[]> {
    const found = await rows<RunRow & { task_title: string }>(this.db, OPEN_RUNS);
    return found.map((row) => ({ ...toRecord(row), title: row.task_title }));
  }

  async endedByBucket(from: number, bucketMs: number): Promise<EndedBucket[]> {
    return rows<EndedBucket>(
      this.db,
      `SELECT ((ended_at / $2) * $2)::double precision AS at, outcome, count(*)::integer AS n
        FROM runs WHERE ended_at >= $1 GROUP BY 1, 2 ORDER BY 1`,
      [from, bucketMs],
    );
  }

  async openOnHost(hostId: number): Promise<RunRecord[]> {
    const found = await rows<RunRow>(
      this.db,
      'SELECT * FROM runs WHERE host_id = $1 AND ended_at IS NULL ORDER BY seq',
      [hostId],
    );
    return found.map(toRecord);
  }
}
