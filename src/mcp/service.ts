// Who calls the MCP endpoint and what they may do (docs/mcp.md): a run's own token gets its
// profile's tools, scoped to its task while the run is live on this host; the API token gets the
// operator's. Arguments are checked against each tool's schema; a run's calls are rate limited.
import { Ajv, type ValidateFunction } from 'ajv';
import type { AgentTool, Config } from '../config/schema.js';
import { AppError } from '../errors.js';
import { secretsEqual } from '../kanban/model/ids.js';
import type { RunRecord } from '../kanban/store/records/run.js';
import { callAgentTool, ToolRefusal, type AgentCaller, type AgentToolDeps } from './agent-tools.js';
import { callOperatorTool, type OperatorToolDeps } from './operator-tools.js';
import type { RunTokens } from './run-token.js';
import { AGENT_TOOL_SPECS, OPERATOR_TOOL_SPECS, type ToolSpec } from './tools.js';

export type McpCaller =
  | { kind: 'operator' }
  /** A run's token whose run is live here. */
  | ({ kind: 'run' } & AgentCaller)
  /** A run's token whose run ended (or moved host): its tools, each answering that it ended. */
  | { kind: 'ended'; tools: AgentTool[]; why: string };

export interface McpDeps extends AgentToolDeps, OperatorToolDeps {
  config: Pick<Config, 'workers' | 'workspaces' | 'api'>;
  tokens: RunTokens;
  /** This daemon supervises the run (its host's, on a shared board). */
  owns: (run: RunRecord) => boolean;
}

export interface ToolResult {
  text: string;
  isError: boolean;
}

const MINUTE_MS = 60_000;

export class McpService {
  private readonly validators = new Map<ToolSpec, ValidateFunction>();
  private ajv: Ajv | null = null;
  /** Each live run's calls in the last minute (their times). */
  private readonly calls = new Map<string, number[]>();

  constructor(private readonly deps: McpDeps) {}

  /**
   * Who a bearer token is, or null for no token it knows (401). The API token (or no token when
   * the API needs none) is the operator.
   */
  async caller(token: string | null): Promise<McpCaller | null> {
    const apiToken = this.deps.config.api.token;
    if (token !== null) {
      const runId = token.startsWith('gmcp_') ? this.deps.tokens.runOf(token) : null;
      if (runId !== null) return this.runCaller(runId);
      if (apiToken !== null && secretsEqual(token, apiToken)) return { kind: 'operator' };
      return null;
    }
    return apiToken === null ? { kind: 'operator' } : null;
  }

  private async runCaller(runId: string): Promise<McpCaller | null> {
    const run = await this.deps.board.runs.get(runId);
    if (!run) return null;
    const profile = this.deps.config.workers.profiles[run.profile];
    const mcp = profile?.mcp ?? null;
    if (!mcp) return { kind: 'ended', tools: [], why: `profile ${run.profile} has no MCP tools` };
    const task = await this.deps.board.tasks.get(run.taskId);
    if (run.endedAt !== null || !task || task.currentRunId !== run.id)
      return { kind: 'ended', tools: mcp.tools, why: 'this run has ended: its tools are gone' };
    if (!this.deps.owns(run))
      return { kind: 'ended', tools: mcp.tools, why: 'this run is not this host’s any more' };
    return { kind: 'run', run, task, mcp };
  }

  tools(caller: McpCaller): ToolSpec[] {
    if (caller.kind === 'operator') return OPERATOR_TOOL_SPECS;
    const names = caller.kind === 'run' ? caller.mcp.tools : caller.tools;
    return names.map((n) => AGENT_TOOL_SPECS[n]);
  }

  async call(caller: McpCaller, name: string, args: unknown): Promise<ToolResult> {
    const spec = this.tools(caller).find((t) => t.name === name);
    if (!spec) return refused(`no tool "${name}" here`);
    if (caller.kind === 'ended') return refused(caller.why);
    const problem = this.check(spec, args ?? {});
    if (problem) return refused(`${name}: ${problem}`);
    try {
      if (caller.kind === 'operator')
        return answered(await callOperatorTool(this.deps, name, args as Record<string, unknown>));
      const over = this.overLimit(caller.run.id, caller.mcp.maxCallsPerMinute);
      if (over) return refused(over);
      return answered(
        await callAgentTool(this.deps, caller, name as AgentTool, args as Record<string, unknown>),
      );
    } catch (err) {
      if (err instanceof ToolRefusal) return refused(err.message);
      if (err instanceof AppError && err.status < 500)
        return refused(`${err.code}: ${err.message}`);
      throw err;
    }
  }

  /** Why `args` do not fit the tool's schema, or null. */
  private check(spec: ToolSpec, args: unknown): string | null {
    let validate = this.validators.get(spec);
    if (!validate) {
      this.ajv ??= new Ajv({ allErrors: false, coerceTypes: false, useDefaults: false });
      validate = this.ajv.compile(JSON.parse(JSON.stringify(spec.inputSchema)) as object);
      this.validators.set(spec, validate);
    }
    if (validate(args)) return null;
    const e = validate.errors?.[0];
    if (!e) return 'invalid arguments';
    const where = e.instancePath ? e.instancePath.slice(1).replaceAll('/', '.') : 'arguments';
    return e.keyword === 'additionalProperties'
      ? `unknown argument "${String(e.params.additionalProperty)}"`
      : `${where} ${e.message ?? 'is invalid'}`;
  }

  /** A run over its calls a minute: why (its call is refused, not made to wait). */
  private overLimit(runId: string, perMinute: number): string | null {
    const now = performance.now();
    const recent = (this.calls.get(runId) ?? []).filter((at) => now - at < MINUTE_MS);
    if (recent.length >= perMinute) {
      this.calls.set(runId, recent);
      return `more than ${perMinute} calls in a minute (mcp.maxCallsPerMinute): wait before calling again`;
    }
    recent.push(now);
    this.calls.set(runId, recent);
    // Runs that ended are forgotten with the minute they last called in.
    if (this.calls.size > 1000)
      for (const [id, times] of this.calls)
        if (times.every((at) => now - at >= MINUTE_MS)) this.calls.delete(id);
    return null;
  }
}

function answered(value: unknown): ToolResult {
  return { text: JSON.stringify(value), isError: false };
}

function refused(message: string): ToolResult {
  return { text: message, isError: true };
}
