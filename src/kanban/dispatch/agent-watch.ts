// Live agent runs, watched each tick through what they print (docs/agents.md): alive means printing,
// so one silent for idleTimeoutSeconds is ended as timed_out; and a final event is the verdict
// at once, settled while the agent may still be running (it then gets killGraceSeconds to
// exit, as after a worker's API verdict).
import type { Clock } from '../../clock.js';
import { statSync } from 'node:fs';
import type { AgentConfig, Config } from '../../config/schema.js';
import { agentKind } from '../../agents/kinds.js';
import { AgentOutput } from '../../agents/output.js';
import type { AgentReading } from '../../agents/types.js';
import { judgeAgentRun, readAgentStart, type AgentJudgement } from './agent-runs.js';
import type { LiveWorker, LiveWorkers } from './live-workers.js';
import { runDir, runFile } from './run-files.js';

export interface AgentWatchDeps {
  live: LiveWorkers;
  workers: Config['workers'];
  dataDir: string;
  /** The board's: a run's start is recorded on it. */
  clock: Clock;
  /** Ends a silent agent's run as timed out, with why. */
  timeOut: (worker: LiveWorker, reason: string) => Promise<void>;
  /** Settles the run of an agent that printed its final event. */
  settle: (worker: LiveWorker, judgement: AgentJudgement) => Promise<void>;
  track: (what: string, work: () => Promise<unknown>) => void;
  /** What each live run printed so far, once a tick (its budget, budget-watch.ts). */
  readings?: (readings: { worker: LiveWorker; reading: AgentReading }[]) => void;
}

interface Watched {
  output: AgentOutput;
  /** performance.now() of the last line it printed. */
  lastOutputAt: number;
  /** Its final event was seen (at the tick before, or earlier). */
  ended: boolean;
  settled: boolean;
  timedOut: boolean;
}

export class AgentWatch {
  private readonly watched = new Map<string, Watched>();

  constructor(private readonly deps: AgentWatchDeps) {}

  /** Reads what each live agent printed since the last tick, and acts on it. */
  check(): void {
    const { live, workers } = this.deps;
    const seen = new Set<string>();
    const readings: { worker: LiveWorker; reading: AgentReading }[] = [];
    for (const worker of live.all()) {
      const agent = workers.profiles[worker.profile]?.agent;
      if (!agent) continue;
      // Kept until it leaves the live workers: its ending reads what was read here.
      seen.add(worker.runId);
      if (worker.exit !== undefined) continue;
      const w = this.watch(worker, agent.kind);
      if (w.output.poll() > 0) w.lastOutputAt = performance.now();
      const reading = w.output.reading();
      if (!reading.ending) readings.push({ worker, reading });
      const ending = reading.ending;
      // Most agents exit at once after their final event: that exit settles the run (one
      // settlement, from what was read here). One still alive a tick later is settled now.
      if (ending && !w.ended) {
        w.ended = true;
        continue;
      }
      if (ending && !w.settled) {
        this.settle(worker, w, agent);
        continue;
      }
      const silentMs = performance.now() - w.lastOutputAt;
      if (!w.settled && !w.timedOut && silentMs > agent.idleTimeoutSeconds * 1000) {
        w.timedOut = true;
        const reason = `no output for ${agent.idleTimeoutSeconds} s`;
        worker.log.warn({ silentMs: Math.round(silentMs) }, `agent timed out: ${reason}`);
        // One that could not be begun (the board busy) is tried again at the next tick.
        this.deps.track('agent idle timeout', () =>
          this.deps.timeOut(worker, reason).catch((err: unknown) => {
            w.timedOut = false;
            throw err;
          }),
        );
      }
    }
    for (const runId of this.watched.keys()) if (!seen.has(runId)) this.watched.delete(runId);
    this.deps.readings?.(readings);
  }

  /** What a watched run printed, read to its end (its leader exited), or undefined. */
  finalReading(runId: string): AgentReading | undefined {
    const w = this.watched.get(runId);
    if (!w) return undefined;
    w.output.poll();
    w.output.end();
    return w.output.reading();
  }

  private watch(worker: LiveWorker, kind: AgentConfig['kind']): Watched {
    const known = this.watched.get(worker.runId);
    if (known) return known;
    const path = runFile(runDir(this.deps.dataDir, worker.runId), 'agent.jsonl');
    // Silent since its last line (a run adopted after a restart), or since it started.
    let since = worker.startedAt;
    try {
      since = Math.max(since, statSync(path).mtimeMs);
    } catch {
      // nothing printed yet
    }
    const w: Watched = {
      output: new AgentOutput(path, agentKind(kind)),
      lastOutputAt: performance.now() - Math.max(0, this.deps.clock.wall() - since),
      ended: false,
      settled: false,
      timedOut: false,
    };
    this.watched.set(worker.runId, w);
    return w;
  }

  /** Settles the run from its final event; one that fails is tried again at the next tick. */
  private settle(worker: LiveWorker, w: Watched, agent: AgentConfig): void {
    w.settled = true;
    const dir = runDir(this.deps.dataDir, worker.runId);
    const start = readAgentStart(dir, agent);
    const judgement = judgeAgentRun(
      dir,
      start,
      null,
      '',
      worker.leader?.pid ?? null,
      this.deps.clock.wall(),
      this.deps.workers.rateLimitCooldownSeconds * 1000,
      w.output.reading(),
    );
    this.deps.track('agent verdict', () =>
      this.deps.settle(worker, judgement).catch((err: unknown) => {
        w.settled = false;
        throw err;
      }),
    );
  }
}
