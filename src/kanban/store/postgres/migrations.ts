// The board's schema on PostgreSQL: numbered, forward-only migrations, tracked in
// schema_version. The same tables and the same CHECK constraints as SQLite's (store/migrations.ts
// after its migration 2): a running task has a run and a lease and nothing else does, only a
// ready task waits for a time, a blocked task says why. Times are epoch milliseconds (bigint).
export const PG_MIGRATIONS: readonly string[] = [
  // 1: the board as SQLite's migrations 1 to 4 left it.
  `
  CREATE TABLE tasks (
    seq bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    title text NOT NULL,
    body text NOT NULL DEFAULT '',
    assignee text,
    status text NOT NULL CHECK (status IN ('todo','ready','running','blocked','done','archived')),
    priority integer NOT NULL DEFAULT 0,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    started_at bigint,
    completed_at bigint,
    max_runtime_seconds double precision,
    max_retries integer,
    consecutive_failures integer NOT NULL DEFAULT 0,
    last_failure_error text,
    result text,
    summary text,
    current_run_id text,
    block_reason text,
    not_before bigint,
    origin text NOT NULL,
    lease_expires_at bigint,
    last_heartbeat_at bigint,
    terminating text,
    CONSTRAINT running_has_run CHECK ((status = 'running') = (current_run_id IS NOT NULL)),
    CONSTRAINT running_has_lease CHECK ((status = 'running') = (lease_expires_at IS NOT NULL)),
    CONSTRAINT lease_only_running CHECK (
      status = 'running' OR (last_heartbeat_at IS NULL AND terminating IS NULL)),
    CONSTRAINT cooldown_only_ready CHECK (status = 'ready' OR not_before IS NULL),
    CONSTRAINT blocked_has_reason CHECK ((status = 'blocked') = (block_reason IS NOT NULL))
  );
  CREATE INDEX tasks_status ON tasks (status, seq);
  CREATE INDEX tasks_assignee ON tasks (assignee, seq);
  CREATE INDEX tasks_dispatch ON tasks (assignee, priority DESC, seq) WHERE status = 'ready';

  CREATE TABLE task_parents (
    task_id text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    parent_id text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    PRIMARY KEY (task_id, parent_id)
  );
  CREATE INDEX task_parents_parent ON task_parents (parent_id);

  CREATE TABLE runs (
    seq bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    task_id text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    profile text NOT NULL,
    token_hash text NOT NULL UNIQUE,
    pid integer,
    pgid integer,
    start_time bigint,
    boot_id text,
    started_at bigint NOT NULL,
    ended_at bigint,
    outcome text,
    exit_code integer,
    signal text,
    error text,
    summary text,
    cpu_percent_max double precision,
    rss_bytes_max bigint,
    log_path text NOT NULL,
    keep_descendants boolean NOT NULL DEFAULT false,
    proc_gone_at bigint,
    files_pruned_at bigint,
    group_held_until bigint
  );
  CREATE INDEX runs_task ON runs (task_id, seq);
  CREATE INDEX runs_unreaped ON runs (seq) WHERE proc_gone_at IS NULL;
  CREATE INDEX runs_prunable ON runs (ended_at) WHERE files_pruned_at IS NULL AND ended_at IS NOT NULL;

  -- Event ids come from this one row, whose row lock the writing transaction holds until it
  -- commits (events.ts): ids in commit order. A sequence hands them out in the order
  -- transactions ask, not the order they commit.
  CREATE TABLE event_counter (id integer PRIMARY KEY CHECK (id = 1), last bigint NOT NULL);
  INSERT INTO event_counter VALUES (1, 0);
  CREATE TABLE events (
    id bigint PRIMARY KEY,
    task_id text,
    run_id text,
    kind text NOT NULL,
    payload text NOT NULL,
    at bigint NOT NULL
  );
  CREATE INDEX events_task ON events (task_id, id);
  CREATE INDEX events_at ON events (at);

  CREATE TABLE comments (
    id bigserial PRIMARY KEY,
    task_id text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    author text NOT NULL,
    text text NOT NULL,
    at bigint NOT NULL
  );

  CREATE TABLE subscriptions (
    platform text NOT NULL,
    channel text NOT NULL,
    task_id text NOT NULL,
    cursor bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (platform, channel, task_id)
  );

  CREATE TABLE platform_state (
    name text PRIMARY KEY,
    state text NOT NULL,
    updated_at bigint NOT NULL
  );

  CREATE TABLE inbound_deliveries (
    platform text NOT NULL,
    delivery_id text NOT NULL,
    signature text NOT NULL,
    task_id text,
    at bigint NOT NULL,
    PRIMARY KEY (platform, delivery_id)
  );
  CREATE INDEX inbound_deliveries_at ON inbound_deliveries (at);

  CREATE TABLE write_probe (id integer PRIMARY KEY CHECK (id = 1), at bigint NOT NULL);
  `,
  // 2: parent links keep their order (SQLite reads them in rowid order); existing links are
  // numbered in the order they are stored.
  `ALTER TABLE task_parents ADD COLUMN ord bigserial NOT NULL;`,
  // 3: the host that ran each run (cluster.hostName); runs from before it have none.
  `ALTER TABLE runs ADD COLUMN host text;`,
  // 4: the daemons sharing the board, each with its lease; every run names the one that runs it.
  `
  CREATE TABLE hosts (
    id bigserial PRIMARY KEY,
    name text NOT NULL,
    started_at bigint NOT NULL,
    renewed_at bigint NOT NULL,
    lease_expires_at bigint NOT NULL,
    state text NOT NULL CHECK (state IN ('active', 'draining', 'dead')),
    running integer NOT NULL DEFAULT 0 CHECK (running >= 0),
    capacity integer NOT NULL CHECK (capacity >= 0),
    profiles text NOT NULL,
    version text NOT NULL
  );
  ALTER TABLE runs ADD COLUMN host_id bigint REFERENCES hosts (id);
  CREATE INDEX runs_open_by_host ON runs (host_id) WHERE ended_at IS NULL;
  `,
  // 5: which host polls each platform and sends its notifications; taken over from a host
  // whose lease ran out (see PgPlatformStore.hold).
  `
  CREATE TABLE platform_holders (
    platform text PRIMARY KEY,
    host_id bigint NOT NULL REFERENCES hosts (id)
  );
  `,
  // 6: runs by when they ended, for the dashboard's throughput over the last hour and day.
  `
  CREATE INDEX runs_ended ON runs (ended_at) WHERE ended_at IS NOT NULL;
  `,
  // 7: Idempotency-Key of the routes that create (docs/api.md), as on SQLite; the primary key is
  // what keeps two hosts from making two tasks for one key.
  `
  CREATE TABLE idempotency_keys (
    key text PRIMARY KEY,
    route text NOT NULL,
    digest text NOT NULL,
    status integer NOT NULL,
    answer text NOT NULL,
    at bigint NOT NULL
  );
  CREATE INDEX idempotency_keys_at ON idempotency_keys (at);
  `,
  // 8: workspaces (docs/workspaces.md), as on SQLite.
  `
  ALTER TABLE tasks ADD COLUMN workspace text;
  ALTER TABLE runs ADD COLUMN workspace text;
  ALTER TABLE tasks ADD COLUMN repo text;
  ALTER TABLE tasks ADD COLUMN instructions text;
  `,
  // 9: agents (docs/agents.md) and review (docs/workers.md), as on SQLite.
  `
  ALTER TABLE runs ADD COLUMN agent text;
  ALTER TABLE tasks ADD COLUMN model text;
  ALTER TABLE tasks ADD COLUMN review boolean;
  ALTER TABLE tasks DROP CONSTRAINT tasks_status_check;
  ALTER TABLE tasks ADD CONSTRAINT tasks_status_check
    CHECK (status IN ('todo','ready','running','review','blocked','done','archived'));
  CREATE TABLE profile_holds (
    profile text PRIMARY KEY,
    until bigint NOT NULL,
    reason text NOT NULL,
    at bigint NOT NULL
  );
  `,
  // 10: pull requests, as on SQLite.
  `
  ALTER TABLE tasks ADD COLUMN pr text;
  ALTER TABLE tasks ADD COLUMN pr_sync text;
  CREATE INDEX tasks_pr_sync ON tasks (seq) WHERE pr_sync IS NOT NULL;
  `,
  // 11: agents that talk back and people who gate them (docs/mcp.md), as on SQLite.
  `
  ALTER TABLE tasks ADD COLUMN block_kind text CHECK (block_kind IS NULL OR block_kind IN ('question'));
  ALTER TABLE tasks ADD COLUMN question text;
  ALTER TABLE tasks ADD COLUMN progress text;
  ALTER TABLE tasks ADD COLUMN approval text;
  `,
  // 12: schedules (docs/schedules.md), as on SQLite.
  `
  CREATE TABLE schedules (
    name text PRIMARY KEY,
    last_fire_at bigint,
    last_task_id text,
    paused boolean NOT NULL DEFAULT false,
    at bigint NOT NULL
  );
  `,
  // 13: budgets (docs/budgets.md), as on SQLite.
  `
  ALTER TABLE tasks ADD COLUMN budget text;
  ALTER TABLE tasks DROP CONSTRAINT tasks_block_kind_check;
  ALTER TABLE tasks ADD CONSTRAINT tasks_block_kind_check
    CHECK (block_kind IS NULL OR block_kind IN ('question', 'budget'));
  `,
  // 14: best of N (docs/attempts.md), as on SQLite.
  `
  ALTER TABLE tasks ADD COLUMN attempt_of text;
  ALTER TABLE tasks ADD COLUMN attempts text;
  ALTER TABLE tasks ADD COLUMN judge text;
  CREATE INDEX tasks_attempt_of ON tasks (attempt_of) WHERE attempt_of IS NOT NULL;
  `,
];
