// The configuration's shape: one schema that both validates the file and types the result.
import { closed as strict, Type, type Static } from '../schema-types.js';

/** The longest a Node timer can wait (2^31 − 1 ms, about 24.8 days): every duration stays below. */
const MAX_TIMER_SECONDS = 24 * 24 * 3600;
const seconds = (min = 0, max = MAX_TIMER_SECONDS) => Type.Number({ minimum: min, maximum: max });
const millis = (min = 1) => Type.Number({ minimum: min, maximum: MAX_TIMER_SECONDS * 1000 });
const days = () => Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 36_500 }), Type.Null()]);

export const BreakerSchema = Type.Object(
  {
    timeoutMs: millis(),
    errorThresholdPercentage: Type.Number({ minimum: 0, maximum: 100 }),
    resetTimeoutMs: millis(),
    volumeThreshold: Type.Integer({ minimum: 0 }),
  },
  strict,
);

/** A coding-agent CLI run as the worker (docs/agents.md), instead of a command. */
export const AgentSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal('claude'), Type.Literal('codex')]),
    bin: Type.Optional(Type.String({ minLength: 1 })),
    model: Type.Optional(Type.String({ minLength: 1, pattern: '^[^\\s]+$' })),
    models: Type.Optional(Type.Array(Type.String({ minLength: 1, pattern: '^[^\\s]+$' }))),
    args: Type.Optional(Type.Array(Type.String())),
    maxTurns: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
    idleTimeoutSeconds: Type.Optional(seconds(1)),
  },
  strict,
);

const absolutePath = Type.String({ minLength: 1, pattern: '^/' });

/** What a profile's runs may reach (docs/sandbox.md). */
export const SandboxSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal('bwrap'), Type.Literal('none')]),
    network: Type.Optional(Type.Union([Type.Literal('host'), Type.Literal('none')])),
    writable: Type.Optional(Type.Array(absolutePath)),
    readOnly: Type.Optional(Type.Array(absolutePath)),
    hidden: Type.Optional(Type.Array(absolutePath)),
    limits: Type.Optional(
      Type.Object(
        {
          memoryMax: Type.Optional(Type.Integer({ minimum: 1024 * 1024 })),
          pidsMax: Type.Optional(Type.Integer({ minimum: 1, maximum: 4_194_304 })),
          cpuWeight: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
        },
        strict,
      ),
    ),
  },
  strict,
);

/** The tools a run may be given over MCP (docs/mcp.md). */
export const AGENT_TOOLS = [
  'get_task',
  'list_tasks',
  'add_comment',
  'report_progress',
  'create_subtask',
  'ask_human',
] as const;
export type AgentTool = (typeof AGENT_TOOLS)[number];

/** An approver: the API's token holder, or a chat user as `<platform name>:<user id>`. */
const APPROVER = '^(api|[a-z0-9][a-z0-9_-]{0,62}:[^\\s]+)$';

const McpSchema = Type.Object(
  {
    enabled: Type.Boolean(),
    tools: Type.Optional(Type.Array(Type.Union(AGENT_TOOLS.map((t) => Type.Literal(t))))),
    assignees: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    maxSubtasksPerRun: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
    maxCallsPerMinute: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  },
  strict,
);

/** A ceiling per task (docs/budgets.md): dollars, input + output tokens, runs. */
export const BudgetSchema = Type.Object(
  {
    usd: Type.Optional(
      Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 1e6 }), Type.Null()]),
    ),
    tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1e12 }), Type.Null()])),
    runs: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1e6 }), Type.Null()])),
  },
  strict,
);

const DailyBudgetSchema = Type.Object(
  {
    usd: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1e6 })),
    tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1e12 })),
  },
  strict,
);

const ProfileSchema = Type.Object(
  {
    /** Exactly one of command and agent. */
    command: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
    agent: Type.Optional(AgentSchema),
    cwd: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Null()])),
    env: Type.Optional(
      Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }), Type.String(), strict),
    ),
    maxConcurrent: Type.Optional(Type.Integer({ minimum: 0 })),
    maxRuntimeSeconds: Type.Optional(Type.Union([seconds(0.001), Type.Null()])),
    keepDescendants: Type.Optional(Type.Boolean()),
    /** Where its tasks run (docs/workspaces.md): the profile's cwd, an empty directory, or a git worktree. */
    workspace: Type.Optional(
      Type.Union([Type.Literal('none'), Type.Literal('scratch'), Type.Literal('worktree')]),
    ),
    /** For a worktree: the name in workspaces.repos. */
    repo: Type.Optional(Type.String({ minLength: 1 })),
    /** Its completed runs wait in review for a person (docs/workers.md). */
    review: Type.Optional(Type.Boolean()),
    /** What its runs may reach: default bwrap for an agent, none for a command. */
    sandbox: Type.Optional(SandboxSchema),
    /** Its runs get gatehouse's MCP tools (docs/mcp.md). */
    mcp: Type.Optional(McpSchema),
    /** Its tasks' first run waits for a person (docs/mcp.md). */
    approval: Type.Optional(Type.Union([Type.Literal('before_run'), Type.Null()])),
    /** Who may approve: `api`, or `<platform>:<user id>`; absent: anyone who may use the API. */
    approvers: Type.Optional(Type.Array(Type.String({ pattern: APPROVER }), { minItems: 1 })),
    /** Whoever created a task may not approve it. */
    notSelf: Type.Optional(Type.Boolean()),
    /** Each of its tasks' budget, unless the task sets its own (docs/budgets.md). */
    budget: Type.Optional(BudgetSchema),
    /** Its runs' spend per UTC day, on every host together. */
    dailyBudget: Type.Optional(DailyBudgetSchema),
  },
  strict,
);

const repoName = '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$';
/** A schedule's name: it is in the URL of its routes and in its tasks' idempotency keys. */
export const SCHEDULE_NAME = '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$';
const envName = '^[A-Za-z_][A-Za-z0-9_]*$';

/** Who may send an agent feedback on its pull request (docs/pull-requests.md). */
const Association = Type.Union(
  ['OWNER', 'MEMBER', 'COLLABORATOR', 'CONTRIBUTOR'].map((a) => Type.Literal(a)),
);

/** The pull request a repository's tasks end in (docs/pull-requests.md). */
export const PullRequestSchema = Type.Object(
  {
    provider: Type.Union([Type.Literal('github'), Type.Literal('gitlab'), Type.Literal('gitea')]),
    api: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
    project: Type.Optional(Type.String({ pattern: '^[^\\s/]+(/[^\\s/]+)+$' })),
    tokenEnv: Type.String({ pattern: envName }),
    draft: Type.Optional(Type.Boolean()),
    doneWhen: Type.Optional(Type.Union([Type.Literal('merged'), Type.Literal('checks_passed')])),
    requiredChecks: Type.Optional(
      Type.Union([Type.Literal('protection'), Type.Array(Type.String({ minLength: 1 }))]),
    ),
    noChecksSeconds: Type.Optional(seconds(0)),
    feedback: Type.Optional(
      Type.Object(
        {
          checks: Type.Optional(Type.Boolean()),
          reviews: Type.Optional(Type.Boolean()),
          maxRounds: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
          debounceSeconds: Type.Optional(seconds(0, 3600)),
          from: Type.Optional(Type.Array(Association)),
        },
        strict,
      ),
    ),
    webhookSecretEnv: Type.Optional(Type.String({ pattern: envName })),
    pollSeconds: Type.Optional(seconds(1, 86_400)),
  },
  strict,
);

export const RepoSchema = Type.Object(
  {
    path: Type.String({ minLength: 1 }),
    base: Type.Optional(Type.String({ minLength: 1, pattern: '^[^\\s~^:?*\\[\\\\]+$' })),
    setup: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
    copy: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    push: Type.Optional(Type.Boolean()),
    escapeCheck: Type.Optional(Type.Boolean()),
    pr: Type.Optional(PullRequestSchema),
  },
  strict,
);

export const PlatformSchema = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,62}$' }),
    type: Type.Union([
      Type.Literal('webhook'),
      Type.Literal('telegram'),
      Type.Literal('matrix'),
      Type.Literal('slack'),
      Type.Literal('discord'),
    ]),
    enabled: Type.Optional(Type.Boolean()),
    homeChannel: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Null()])),
    options: Type.Record(Type.String(), Type.Unknown()),
    breaker: Type.Optional(Type.Partial(BreakerSchema, strict)),
  },
  strict,
);

/** Where the board is: SQLite in the data dir (the default), or a PostgreSQL schema. */
export const StoreSchema = Type.Union([
  Type.Object({ kind: Type.Literal('sqlite') }, strict),
  Type.Object(
    {
      kind: Type.Literal('postgres'),
      url: Type.String({ pattern: '^postgres(ql)?://[^\\s]+$' }),
      schema: Type.Optional(Type.String({ pattern: '^[a-z_][a-z0-9_]{0,62}$' })),
      poolSize: Type.Optional(Type.Integer({ minimum: 2, maximum: 1000 })),
    },
    strict,
  ),
]);

/** A task a schedule makes at each firing (docs/schedules.md). */
const ScheduledTaskSchema = Type.Object(
  {
    /** As a task's title (docs/api.md): at most 500 characters, something visible. */
    title: Type.String({ minLength: 1, maxLength: 500, pattern: '[^\\s]' }),
    body: Type.Optional(Type.String({ maxLength: 100_000 })),
    assignee: Type.Optional(Type.String({ minLength: 1 })),
    repo: Type.Optional(Type.String({ pattern: repoName })),
    priority: Type.Optional(Type.Integer({ minimum: -1000, maximum: 1000 })),
  },
  strict,
);

export const ScheduleSchema = Type.Object(
  {
    /** Five fields: minute hour day-of-month month day-of-week. */
    cron: Type.String({ minLength: 1, maxLength: 200 }),
    /** An IANA zone the expression is read in; absent: UTC. */
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    task: ScheduledTaskSchema,
    /** A firing while the previous task is still open: skipped (default) or made anyway. */
    overlap: Type.Optional(Type.Union([Type.Literal('skip'), Type.Literal('queue')])),
    enabled: Type.Optional(Type.Boolean()),
  },
  strict,
);

export const ConfigSchema = Type.Object(
  {
    dataDir: Type.String({ minLength: 1 }),
    store: StoreSchema,
    server: Type.Object(
      {
        host: Type.String({ minLength: 1 }),
        port: Type.Integer({ minimum: 0, maximum: 65535 }),
        bodyLimitBytes: Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024 }),
        requestTimeoutSeconds: Type.Number({ minimum: 1, maximum: 3600 }),
        maxConnections: Type.Integer({ minimum: 8, maximum: 1_000_000 }),
        allowedHosts: Type.Array(
          Type.String({ minLength: 1, maxLength: 253, pattern: '^[^\\s/@]+$' }),
        ),
      },
      strict,
    ),
    log: Type.Object(
      {
        level: Type.Union(
          ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) =>
            Type.Literal(l),
          ),
        ),
      },
      strict,
    ),
    api: Type.Object(
      {
        token: Type.Union([Type.String({ minLength: 16 }), Type.Null()]),
        /** How long an Idempotency-Key is remembered (docs/api.md); at most a year. */
        idempotencyHours: Type.Number({ exclusiveMinimum: 0, maximum: 8760 }),
      },
      strict,
    ),
    replace: Type.Object(
      { timeoutSeconds: seconds(0.01), killTimeoutSeconds: seconds(0.01) },
      strict,
    ),
    shutdown: Type.Object(
      {
        timeoutSeconds: seconds(0.01),
        workers: Type.Union([Type.Literal('leave'), Type.Literal('terminate')]),
      },
      strict,
    ),
    retention: Type.Object({ runDays: days(), eventDays: days() }, strict),
    /** This host on a shared board (PostgreSQL); hostName is every run's `host` on either store. */
    cluster: Type.Object(
      {
        hostName: Type.Union([
          Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' }),
          Type.Null(),
        ]),
        leaseSeconds: seconds(1, 3600),
        renewSeconds: seconds(0.1, 1800),
        reclaimGraceSeconds: seconds(0, 3600),
      },
      strict,
    ),
    crashLoop: Type.Object(
      {
        maxStarts: Type.Integer({ minimum: 1 }),
        windowSeconds: seconds(0.01),
        maxBackoffSeconds: seconds(0),
      },
      strict,
    ),
    workers: Type.Object(
      {
        defaultProfile: Type.String({ minLength: 1 }),
        maxConcurrent: Type.Integer({ minimum: 0 }),
        failureLimit: Type.Integer({ minimum: 1 }),
        tickSeconds: seconds(0.01, 60),
        claimTtlSeconds: seconds(0.01),
        heartbeatMaxStaleSeconds: seconds(0.01),
        killGraceSeconds: seconds(0),
        reclaimDeferSeconds: seconds(0.01),
        rateLimitCooldownSeconds: seconds(0),
        /** Names of the daemon's variables no worker's environment gets (docs/sandbox.md). */
        secretEnv: Type.Array(Type.String({ pattern: envName })),
        profiles: Type.Record(
          Type.String({ pattern: '^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$' }),
          ProfileSchema,
          strict,
        ),
      },
      strict,
    ),
    platforms: Type.Array(PlatformSchema),
    workspaces: Type.Object(
      {
        /** The managed root; null: <dataDir>/workspaces. */
        root: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
        repos: Type.Record(Type.String({ pattern: repoName }), RepoSchema, strict),
        /** A done task's workspace is removed after this many days; 0: never. */
        keepDays: Type.Number({ minimum: 0, maximum: 36_500 }),
        minFreeBytes: Type.Integer({ minimum: 0 }),
      },
      strict,
    ),
    /** Tasks made on a calendar (docs/schedules.md), by name. */
    schedules: Type.Record(Type.String({ pattern: SCHEDULE_NAME }), ScheduleSchema, strict),
  },
  strict,
);

export type RawConfig = Static<typeof ConfigSchema>;
export type BreakerOptions = Static<typeof BreakerSchema>;

/** An agent profile's agent, resolved (docs/agents.md). */
export interface AgentConfig {
  kind: 'claude' | 'codex';
  /** The program: the kind's command on PATH unless set. */
  bin: string;
  model: string | null;
  /** The models a task may ask for with its own `model` (the profile's model is always allowed). */
  models: string[];
  args: string[];
  maxTurns: number | null;
  idleTimeoutSeconds: number;
}

export interface Profile {
  name: string;
  /** argv, relative paths already resolved against `cwd`; an agent profile's: its bin alone. */
  command: string[];
  /** The coding agent it runs (its argv is built per run), or null: it runs `command`. */
  agent: AgentConfig | null;
  cwd: string;
  env: Record<string, string>;
  /** null: only the global cap applies. */
  maxConcurrent: number | null;
  /** null: no limit. */
  maxRuntimeSeconds: number | null;
  keepDescendants: boolean;
  /** Where its tasks run: the profile's cwd ("none"), or a workspace of the task's own. */
  workspace: 'none' | 'scratch' | 'worktree';
  /** The repository of a worktree profile (a name in workspaces.repos), else null. */
  repo: string | null;
  /** Its completed runs wait in review (docs/workers.md). */
  review: boolean;
  /** What its runs may reach (docs/sandbox.md). */
  sandbox: SandboxConfig;
  /** Its runs' MCP tools (docs/mcp.md), or null: none. */
  mcp: McpConfig | null;
  /** Whether its tasks' first run waits for a person, and who may say yes (docs/mcp.md). */
  approval: ApprovalConfig;
  /** Each of its tasks' budget unless the task has its own (docs/budgets.md), or null. */
  budget: Budget | null;
  /** Its runs' spend per UTC day, or null: none. */
  dailyBudget: DailyBudget | null;
}

/** A ceiling per task (docs/budgets.md); null: that figure has none. */
export interface Budget {
  usd: number | null;
  tokens: number | null;
  runs: number | null;
}

/** A profile's ceiling per UTC day, all its runs on every host together. */
export interface DailyBudget {
  usd: number | null;
  tokens: number | null;
}

export interface McpConfig {
  tools: AgentTool[];
  /** Profiles its subtasks may be given to; empty: only this profile. */
  assignees: string[];
  maxSubtasksPerRun: number;
  maxCallsPerMinute: number;
}

export interface ApprovalConfig {
  beforeRun: boolean;
  /** null: whoever may use the API (or a chat command) approves. */
  approvers: string[] | null;
  notSelf: boolean;
}

/** A profile's sandbox, resolved: kind none, or bubblewrap with what it adds to the view. */
export interface SandboxConfig {
  kind: 'bwrap' | 'none';
  network: 'host' | 'none';
  /** Absolute paths, beyond what gatehouse binds itself. */
  writable: string[];
  readOnly: string[];
  hidden: string[];
  limits: { memoryMax: number | null; pidsMax: number | null; cpuWeight: number | null };
}

/** A repository tasks may work in, resolved (docs/workspaces.md). */
export interface RepoConfig {
  name: string;
  /** Absolute path of its checkout. */
  path: string;
  /** The branch new worktrees start from; null: the repository's current branch. */
  base: string | null;
  setup: string[] | null;
  copy: string[];
  push: boolean;
  escapeCheck: boolean;
  /** Its tasks' work ends in a pull request (docs/pull-requests.md), or null. */
  pr: PullRequestConfig | null;
}

export type ForgeProvider = 'github' | 'gitlab' | 'gitea';
export type Association = 'OWNER' | 'MEMBER' | 'COLLABORATOR' | 'CONTRIBUTOR';

/** A repository's pull requests, resolved: its forge, and the rules a PR's task follows. */
export interface PullRequestConfig {
  provider: ForgeProvider;
  /** The API's base URL, without a trailing slash. */
  api: string;
  /** owner/name (GitLab: the project's path). */
  project: string;
  /** The daemon's variable that holds the token, and its value (read once, at start). */
  tokenEnv: string;
  token: string;
  draft: boolean;
  doneWhen: 'merged' | 'checks_passed';
  requiredChecks: 'protection' | string[];
  noChecksSeconds: number;
  feedback: {
    checks: boolean;
    reviews: boolean;
    maxRounds: number;
    debounceSeconds: number;
    from: Association[];
  };
  /** The webhook's secret (from webhookSecretEnv), or null: deliveries are refused. */
  webhookSecretEnv: string | null;
  webhookSecret: string | null;
  pollSeconds: number;
}

/** A schedule, resolved (docs/schedules.md). */
export interface ScheduleConfig {
  name: string;
  cron: string;
  /** IANA zone; UTC unless set. */
  timezone: string;
  task: {
    title: string;
    body: string;
    assignee: string | null;
    repo: string | null;
    priority: number;
  };
  overlap: 'skip' | 'queue';
  enabled: boolean;
}

export interface WorkspacesConfig {
  /** Absolute. */
  root: string;
  repos: Record<string, RepoConfig>;
  keepDays: number;
  minFreeBytes: number;
}

export interface PlatformConfig {
  name: string;
  type: 'webhook' | 'telegram' | 'matrix' | 'slack' | 'discord';
  enabled: boolean;
  homeChannel: string | null;
  options: Record<string, unknown>;
  breaker: BreakerOptions;
}

export type StoreConfig =
  { kind: 'sqlite' } | { kind: 'postgres'; url: string; schema: string; poolSize: number };

/** The validated, resolved and frozen configuration every subsystem reads. */
export interface Config extends Omit<
  RawConfig,
  'workers' | 'platforms' | 'store' | 'cluster' | 'workspaces' | 'schedules'
> {
  schedules: Record<string, ScheduleConfig>;
  workspaces: WorkspacesConfig;
  store: StoreConfig;
  /** hostName resolved: the configured name, else the machine's. */
  cluster: Omit<RawConfig['cluster'], 'hostName'> & { hostName: string };
  /** Absolute path. */
  dataDir: string;
  workers: Omit<RawConfig['workers'], 'profiles'> & { profiles: Record<string, Profile> };
  platforms: PlatformConfig[];
  /** The file it came from, or null for built-in defaults. */
  source: string | null;
  /** systemd's JOURNAL_STREAM ("dev:inode" of the journal's stream), or null. */
  journalStream: string | null;
  /** The environment workers inherit: the daemon's own, without any GATEHOUSE_* variable. */
  workerEnv: Record<string, string>;
}
