// A worker's process ended: in this order, empty what is left of the run, settle it from what
// was recorded (exit.json, result.json), then release the slot. A step that fails is retried
// on the next tick with the same facts, so an outcome is never lost to a full disk.
import { boundOutput } from '../../agents/output.js';
import type { Board } from '../board.js';
import { classifyExit, type Classification } from '../model/exit-classifier.js';
import { recordExitStatus, recordLeftovers } from '../moves/records.js';
import { settleRun, type SettlementPolicy } from '../moves/settle.js';
import { deferTermination } from '../moves/termination.js';
import { together } from '../moves/together.js';
import type { LiveWorker, LiveWorkers } from './live-workers.js';
import { readExitRecord, readVerdict, runDir, runFile } from './run-files.js';
import { readLogTail } from './run-log.js';
import type { RunReaper } from './run-reaper.js';
import type { RunTerminator } from './run-terminator.js';
import type { RunJudgement } from './task-workspaces.js';
import type { RunRecord } from '../store/records/run.js';
import { judgeAgentRun, readAgentStart } from './agent-runs.js';
import type { AgentReading } from '../../agents/types.js';
import type { AgentConfig } from '../../config/schema.js';

export interface RunEndingsDeps {
  board: Board;
  policy: SettlementPolicy;
  terminator: RunTerminator;
  reaper: RunReaper;
  live: LiveWorkers;
  dataDir: string;
  reclaimDeferMs: number;
  /** What the run did to its workspace, before it is settled. */
  judge: (run: RunRecord) => Promise<RunJudgement>;
  /** A slot was freed or a task released. */
  wake: () => void;
  /** What a live agent run was read to have printed, if it was watched (agent-watch.ts). */
  agentReading: (runId: string) => AgentReading | undefined;
  /** The agent a profile runs (docs/agents.md), or null: a command, judged by result.json. */
  agentOf: (profile: string) => AgentConfig | null;
}

const NOTHING_LEFT = {
  terminated: true,
  sigkill: false,
  survived: false,
  ended: [],
  survivors: [],
};

export class RunEndings {
  private readonly busy = new Set<string>();
  /** Runs whose surviving leftovers were already announced with reclaim_deferred. */
  private readonly announced = new Set<string>();

  constructor(private readonly deps: RunEndingsDeps) {}

  /** Ends the run of a worker whose leader is known to have exited (worker.exit is set). */
  async end(worker: LiveWorker): Promise<void> {
    if (this.busy.has(worker.runId)) return;
    this.busy.add(worker.runId);
    try {
      await worker.recorded;
      await this.endOnce(worker);
    } finally {
      this.busy.delete(worker.runId);
    }
  }

  /**
   * An agent printed its final event and may still be running: its run is settled now, as a
   * worker's API verdict is; what is left of it is ended after killGraceSeconds (the reaper).
   */
  async settlePrinted(worker: LiveWorker, verdict: Classification): Promise<void> {
    if (this.busy.has(worker.runId)) return;
    this.busy.add(worker.runId);
    try {
      await worker.recorded;
      const { board } = this.deps;
      const run = await board.runs.get(worker.runId);
      if (!run || run.endedAt !== null || worker.exit !== undefined) return;
      if ((await board.tasks.terminatingOf(run.taskId)) !== null) return;
      const judged = await this.deps.judge(run);
      const task = await board.transact((tx) =>
        settleRun(tx, this.deps.policy, {
          taskId: run.taskId,
          runId: run.id,
          terminating: null,
          ...verdict,
          ...judged,
          procGone: false,
          run,
        }),
      );
      if (task) worker.log.info({ outcome: verdict.outcome, status: task.status }, 'agent verdict');
      this.deps.wake();
    } finally {
      this.busy.delete(worker.runId);
    }
  }

  private async endOnce(worker: LiveWorker): Promise<void> {
    const { board, live } = this.deps;
    // The run and its task's pending termination read together (one round trip on PostgreSQL).
    const [run, terminating] = await Promise.all([
      board.runs.get(worker.runId),
      board.tasks.terminatingOf(worker.taskId),
    ]);
    if (!run) {
      live.remove(worker);
      return;
    }
    const dir = runDir(this.deps.dataDir, run.id);
    if (run.endedAt !== null) {
      // The worker reported its verdict before it exited: its exit status is recorded beside
      // the verdict, and only its leftovers remain. exit.json was read when its exit was seen;
      // an adopted leader's is read now.
      const exit = worker.exit ?? readExitRecord(dir);
      // A wrapper that started nothing (its host's lease ran out) has no exit of a worker to add.
      if (!exit?.notStarted) await board.transact((tx) => recordExitStatus(tx, run.id, exit));
      await this.deps.reaper.reap(run, worker.groupHeldUntil);
      live.remove(worker);
      this.deps.wake();
      return;
    }
    // A termination (archive, reclaim, timeout…) is pending: it settles the run its own way.
    if (terminating !== null) return;
    const left = run.keepDescendants
      ? NOTHING_LEFT
      : await this.deps.terminator(run, worker.groupHeldUntil);
    if (left.survived) {
      const announce = !this.announced.has(run.id);
      await board.transact((tx) =>
        deferTermination(
          tx,
          run,
          null,
          { prevPid: run.pid, ...left, pids: left.survivors },
          this.deps.reclaimDeferMs,
          announce,
        ),
      );
      this.announced.add(run.id);
      worker.log.warn({ survivors: left.survivors }, 'run leftovers survived SIGKILL; claim kept');
      return;
    }
    const exit = worker.exit ?? readExitRecord(dir);
    const agent = this.deps.agentOf(run.profile);
    const start = agent ? readAgentStart(dir, agent) : null;
    const tail =
      (exit && exit.exitCode !== 0) || start
        ? await readLogTail(run.logPath, { lines: 20, maxLineChars: 500 }).catch(() => '')
        : '';
    const c = start
      ? judgeAgentRun(
          dir,
          start,
          exit,
          tail,
          run.pid,
          this.deps.board.clock.wall(),
          this.deps.policy.rateLimitCooldownMs,
          this.deps.agentReading(run.id),
        )
      : classifyExit(exit, readVerdict(dir), tail, run.pid);
    // Read to its end and judged: a huge output is kept bounded from now on, its verdict kept.
    if (start) {
      try {
        boundOutput(runFile(dir, 'agent.jsonl'));
      } catch (err) {
        worker.log.warn({ err }, "the agent's output could not be bounded");
      }
    }
    const judged = await this.deps.judge(run);
    // The leftovers recorded and the run settled together (one round trip on PostgreSQL).
    const task = await board.transact(async (tx) => {
      const [, settled] = await together([
        recordLeftovers(tx, run.taskId, run.id, left),
        settleRun(tx, this.deps.policy, {
          taskId: run.taskId,
          runId: run.id,
          terminating: null,
          ...c,
          ...judged,
          procGone: true,
          run,
        }),
      ]);
      return settled;
    });
    this.announced.delete(run.id);
    live.remove(worker);
    if (task) worker.log.info({ outcome: c.outcome, status: task.status }, 'run ended');
    this.deps.wake();
  }
}
